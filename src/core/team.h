/* team.h: teams. A team is a strided set of world PEs (start + i*stride,
 * i < size; the stride may be negative, the team then runs downwards):
 * splits of strided teams and both axes of a 2-D split are strided again,
 * so translation is arithmetic. Each team owns a slot of
 * synchronisation words in the internal area, the same slot on every
 * member (agreed when the team is made). SHMEM_TEAM_WORLD uses slot 0 and
 * SHMEM_TEAM_SHARED slot 1. */
#ifndef SHOAL_CORE_TEAM_H
#define SHOAL_CORE_TEAM_H

#include <shmem.h>
#include <stdint.h>

#include "util/status.h"

struct shoal_ctx;

#define SHOAL_TEAM_MAGIC 0x5445414Du

struct shoal_team {
    uint32_t magic;   /* SHOAL_TEAM_MAGIC while the team is alive */
    int start, stride, size;
    int my_rank;      /* this PE's rank in the team */
    int slot;         /* synchronisation slot in the internal area */
    uint64_t epoch;   /* barriers done on this team (same on all members) */
    uint64_t oneshot; /* one-shot collectives done on this team (same on all members) */
    uint64_t oneshot_bcast; /* count of the last one-shot broadcast */
    uint64_t syncs;   /* dissemination and hierarchical barriers done (same on all members) */
    shmem_team_config_t config;
    long config_mask;
    int contexts;     /* contexts created from this team and alive */
    struct shoal_ctx *ctx_list; /* those contexts, destroyed with the team */
    int predefined;   /* world and shared cannot be destroyed */
    /* Members ordered by host (coll/hosts.c): one malloc'd block, made at
     * the first collective that needs it and freed with the team. */
    void *coll_layout;
};

/* Sets up SHMEM_TEAM_WORLD and SHMEM_TEAM_SHARED (init). */
void shoal_team_init_predefined(void);
void shoal_team_fini_predefined(void);

static inline int shoal_team_valid(const struct shoal_team *t) { return t && t->magic == SHOAL_TEAM_MAGIC; }
static inline int shoal_team_world_pe(const struct shoal_team *t, int rank) { return t->start + rank * t->stride; }
/* Rank of world PE pe in t, or -1 if pe is not a member. */
int shoal_team_rank_of(const struct shoal_team *t, int pe);

/* The team slot bitmap of this PE (in the internal area). */
int shoal_team_slot_used(int pe, int slot);
void shoal_team_slot_set(int slot, int used);
/* Largest number of slots the job may use (SHMEM_TEAMS_MAX). */
int shoal_team_slot_limit(void);

#endif
