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
/* Auxiliary words: the collectives' flags (coll/peer.h lays them out). */
#define SHOAL_SYNC_AUX 128

/* Recursive-doubling reductions of small vectors across hosts
 * (coll/rd.c): a member's partner of each round puts its partial result
 * into the round's line here, then raises the tag; two sets of lines
 * alternate between calls. 16 rounds (65536 members), plus the lines of
 * the steps that fold in and out the members past a power of two. */
#define SHOAL_RD_BYTES 256
#define SHOAL_RD_ROUNDS 16
#define SHOAL_RD_LINES (SHOAL_RD_ROUNDS + 2)
/* A call's data end where the tag begins (coll/lines.h): data and tag are
 * one contiguous write, which a fabric can send as one injected message. */
struct shoal_rd_line {
    _Alignas(64) unsigned char data[SHOAL_RD_BYTES];
    uint64_t tag; /* epoch of the call whose data the line holds */
};
_Static_assert(offsetof(struct shoal_rd_line, tag) == SHOAL_RD_BYTES, "a line's tag follows its data");

/* One team's synchronisation words: one cache line per barrier round (each
 * line has a single remote writer), then auxiliary words for collectives,
 * the recursive-doubling lines and this member's count of such calls (only
 * ever read by itself). All of it is cleared when a team takes the slot. */
struct shoal_team_sync {
    uint64_t round[SHOAL_SYNC_ROUNDS][8];
    uint64_t aux[SHOAL_SYNC_AUX];
    struct shoal_rd_line rd[2][SHOAL_RD_LINES];
    uint64_t rd_calls;
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

/* shmem_finalize, explicit or at exit (api/finalize.c): every PE counts
 * itself in on PE 0 and waits for PE 0's release. A PE finalizing at exit
 * watches whether the PEs that have not arrived sit blocked in Shoal waits
 * (they may be waiting for it), from the counts their waits publish. */
struct shoal_finalize_words {
    _Alignas(64) uint64_t arrived; /* on PE 0: arrivals, plus 1 << 32 for each at exit */
    uint64_t report_claim;         /* on PE 0: nonzero once a PE took the stuck-job report */
    _Alignas(64) uint64_t state;   /* this PE: 0 running, 1 in shmem_finalize, 2 finalizing at exit */
    uint64_t release;              /* this PE: set by PE 0 once every PE arrived */
    /* this PE: waits that went to sleep, and sleeps taken (sync/backoff.h) */
    _Alignas(64) uint64_t waits[2];
};

/* This PE's sleeping waits (sync/wake.h): a flag writers check after a
 * store into this PE, and the futex word they ring. */
struct shoal_wake_word {
    _Alignas(64) uint32_t sleepers;
    uint32_t bell;
    /* CPU this PE last ran on + 1, as it last published it (0: unknown);
     * written only when it changes (sync/backoff.h, shoal_backoff_note_cpu). */
    uint32_t cpu;
};

struct shoal_internal_area {
    /* Team slots in use on this PE; peers read it when agreeing on a slot. */
    _Alignas(64) uint64_t team_slots_used[SHOAL_TEAM_SLOTS_MAX / 64];
    _Alignas(64) struct shoal_team_sync team_sync[SHOAL_TEAM_SLOTS_MAX];
    _Alignas(64) struct shoal_team_oneshot team_oneshot[SHOAL_TEAM_SLOTS_MAX];
    _Alignas(64) struct shoal_finalize_words finalize;
    _Alignas(64) struct shoal_wake_word wake;
    /* Written by peers' transports to flush their writes (transport.h,
     * flush_word); never read. */
    _Alignas(64) uint64_t flush_sink;
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
