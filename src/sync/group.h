/* group.h: a set of PEs that synchronise together: a team, or the active
 * set (PE_start, logPE_stride, PE_size) of a deprecated collective. Members
 * are world PEs start + i * stride, i < size. Their synchronisation words
 * live in symmetric memory (a team's slot in the internal area, or the
 * user's pSync array) at the same offset on every member. */
#ifndef SHOAL_SYNC_GROUP_H
#define SHOAL_SYNC_GROUP_H

#include <stddef.h>
#include <stdint.h>

struct shoal_group {
    int start, stride, size;
    int rank;              /* this PE's index in the group */
    int seg;               /* segment holding the sync words */
    size_t sync_offset;    /* offset of round 0 */
    size_t round_stride;   /* bytes between round words */
    size_t aux_offset;     /* offset of the auxiliary words */
    /* Epoch mode (teams): rounds hold the last epoch seen, never reset.
     * Counting mode (NULL; user pSync): rounds count signals and return to
     * zero when consumed, so pSync is left as the standard requires. */
    uint64_t *epoch;
    /* Teams only: dissemination and hierarchical barriers done, whose
     * parity picks their round words (sync/barrier.c). */
    uint64_t *syncs;
    /* Teams only (NULL for active sets): the team's one-shot count and the
     * offset of its one-shot lines (core/internal.h). */
    uint64_t *oneshot;
    uint64_t *oneshot_bcast;
    size_t oneshot_offset;
    /* Teams only (NULL for active sets): where the team keeps its members'
     * order by host (coll/hosts.c), made once, as a team never changes. */
    void **layout;
};

static inline int shoal_group_pe(const struct shoal_group *g, int rank) { return g->start + rank * g->stride; }

/* A user pSync holds SHOAL_GROUP_SET_ROUNDS round words, then auxiliary
 * words up to SHMEM_*_SYNC_SIZE. */
#define SHOAL_GROUP_SET_ROUNDS 32
#define SHOAL_GROUP_SET_AUX 32

struct shoal_team;
void shoal_group_from_team(struct shoal_group *g, struct shoal_team *t);
/* psync_offset: offset of pSync in segment seg (as found by routing). */
void shoal_group_from_active_set(struct shoal_group *g, int start, int stride, int size, int rank, int seg,
                                 size_t psync_offset);

/* Barrier over the group's members (no completion of puts implied). */
void shoal_group_sync(struct shoal_group *g);

/* Address of this member's own auxiliary word i. */
uint64_t *shoal_group_aux(const struct shoal_group *g, size_t i);
/* Member rank's auxiliary word i, direct or through the transport
 * (sync/word.h: a store is a signal, ordered after this PE's earlier puts
 * and awaited by no quiet). */
uint64_t shoal_group_aux_load(const struct shoal_group *g, int rank, size_t i);
void shoal_group_aux_store(const struct shoal_group *g, int rank, size_t i, uint64_t v);
uint64_t shoal_group_aux_add(const struct shoal_group *g, int rank, size_t i, uint64_t v);
/* The same for a word of one host's members. With all_direct (every PE
 * that updates it reaches rank directly) a CPU atomic even where the fabric
 * applies atomics (sync/word.h, shoal_word_add_direct). */
uint64_t shoal_group_aux_add_host(const struct shoal_group *g, int rank, size_t i, uint64_t v, int all_direct);

#endif
