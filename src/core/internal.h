/* internal.h: layout of the runtime's internal symmetric area, the last
 * SHOAL_INTERNAL_AREA bytes of every PE's heap. Same offsets on every PE,
 * so a PE reaches a peer's copy through the usual routing. Pages are
 * touched only when used, so unused team slots cost no memory. */
#ifndef SHOAL_CORE_INTERNAL_H
#define SHOAL_CORE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "core/runtime.h"

/* Most teams a job may hold at once (SHMEM_TEAMS_MAX may lower it). */
#define SHOAL_TEAM_SLOTS_MAX 256
/* Rounds of a dissemination over up to 2^32 members. */
#define SHOAL_SYNC_ROUNDS 32
#define SHOAL_SYNC_AUX 64

/* One team's synchronisation words: one cache line per barrier round (each
 * line has a single remote writer), then auxiliary words for collectives. */
struct shoal_team_sync {
    uint64_t round[SHOAL_SYNC_ROUNDS][8];
    uint64_t aux[SHOAL_SYNC_AUX];
};

/* One-shot collectives of small vectors (coll/reduce_small.c): every member
 * writes its contribution into its own line of every member's copy, tagged
 * with the call's count; two sets of lines alternate between calls, and
 * `done` tells writers when a set may be reused. */
#define SHOAL_ONESHOT_MEMBERS 64
#define SHOAL_ONESHOT_BYTES 112
struct shoal_oneshot_line {
    uint64_t tag; /* count of the one-shot call whose data this line holds */
    /* 16-byte aligned: long double and double complex are combined in place. */
    _Alignas(16) unsigned char data[SHOAL_ONESHOT_BYTES];
};
_Static_assert(sizeof(struct shoal_oneshot_line) == 128, "a one-shot line is two cache lines");
struct shoal_team_oneshot {
    struct shoal_oneshot_line line[2][SHOAL_ONESHOT_MEMBERS];
    _Alignas(64) uint64_t done; /* count of the last one-shot call this member finished reading */
};

struct shoal_internal_area {
    /* Team slots in use on this PE; peers read it when agreeing on a slot. */
    _Alignas(64) uint64_t team_slots_used[SHOAL_TEAM_SLOTS_MAX / 64];
    _Alignas(64) struct shoal_team_sync team_sync[SHOAL_TEAM_SLOTS_MAX];
    _Alignas(64) struct shoal_team_oneshot team_oneshot[SHOAL_TEAM_SLOTS_MAX];
};

_Static_assert(sizeof(struct shoal_internal_area) <= SHOAL_INTERNAL_AREA,
               "the internal area layout exceeds SHOAL_INTERNAL_AREA");

static inline size_t shoal_internal_offset_of(size_t field_offset)
{
    return shoal_rt.internal_offset + field_offset;
}

static inline struct shoal_internal_area *shoal_internal_local(void)
{
    return (struct shoal_internal_area *)shoal_rt.internal;
}

#endif
