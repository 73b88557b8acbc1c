/* sync.c: barrier algorithms over a group.
 *
 * dissemination: shoal_group_sync, ceil(log2 N) rounds of one remote flag
 *   each (sync/barrier.c states its invariants).
 * linear, epoch mode (teams): one counter and one release word, both on
 *   rank 0. Every member adds one to ARRIVE, which only grows (n per
 *   barrier); the member whose add completes a multiple of n arrived last
 *   and stores the epoch in rank 0's RELEASE, then rings every member that
 *   sleeps (sync/wake.h); the others wait for that word. Two steps and no
 *   member waits on another's turn: what counts when PEs outnumber cores,
 *   where each step may wait for a preempted PE (auto picks it there).
 *   Barrier k+1's adds cannot start before barrier k's last add (nobody
 *   leaves k before it), so the counter's multiples of n mark barriers.
 *   Where PEs outnumber cores (shoal_backoff_crowd_team), each member also
 *   stores the epoch in its own ARRIVED word as it arrives: a waiter whose missing members all last ran
 *   on other CPUs spins rather than yield (sync/backoff.h, crowded cores).
 * linear, counting mode (pSync): a central counter. Members other than
 *   rank 0 add one to rank 0's
 *   ARRIVE word and wait on their own RELEASE word; rank 0 waits until
 *   ARRIVE holds N-1, takes N-1 back off it, then releases each member.
 *   Rank 0 takes the arrivals back before releasing anyone, and nobody can
 *   arrive at the next barrier before being released from this one, so the
 *   counter only ever holds arrivals of one barrier. Release words have a
 *   single writer (rank 0): in epoch mode it stores the barrier's epoch
 *   (shared with the dissemination barrier, so the two mix freely on one
 *   team: epochs only grow); in counting mode (pSync) it adds one and the
 *   member takes it back, so pSync ends as it started.
 * hier: members of a host meet at its leader, leaders run a dissemination
 *   between hosts (hier.c).
 *
 * Every barrier opens with a full fence: stores of this PE, non-temporal
 * ones from a large memcpy included, are visible before any member leaves. */
#include <shmem.h>
#include <stdint.h>

#include "coll/coll.h"
#include "coll/peer.h"
#include "sync/backoff.h"
#include "sync/group.h"
#include "sync/wake.h"

_Static_assert((int)SHOAL_COLL_AUX_CHUNK + SHOAL_COLL_TREE_CHUNKS <= (int)SHOAL_COLL_AUX_ARRIVED &&
                   (int)SHOAL_COLL_AUX_ARRIVED < (int)SHOAL_COLL_AUX_DEBUG,
               "a team's ARRIVED word overlaps the tree's chunks or the debug records");

struct flat_wait {
    const struct shoal_group *g;
    uint64_t epoch;
};

/* Whether a member that has not arrived last ran on cpu (or may have). */
static int flat_missing_here(const void *arg, int cpu)
{
    const struct flat_wait *f = arg;
    const struct shoal_group *g = f->g;
    for (int r = 0; r < g->size; r++) {
        const int pe = shoal_group_pe(g, r);
        const uint64_t *arrived =
            shoal_route_direct(g->seg, g->aux_offset + SHOAL_COLL_AUX_ARRIVED * sizeof(uint64_t), pe);
        if (__atomic_load_n(arrived, __ATOMIC_RELAXED) < f->epoch && shoal_backoff_may_run_on(pe, cpu)) return 1;
    }
    return 0;
}

static void flat_barrier(struct shoal_group *g, uint64_t epoch)
{
    const int n = g->size;
    if (shoal_backoff_crowd_team(n)) {
        shoal_backoff_note_cpu();
        __atomic_store_n(shoal_group_aux(g, SHOAL_COLL_AUX_ARRIVED), epoch, __ATOMIC_RELAXED);
    }
    const uint64_t old = shoal_group_aux_add(g, 0, SHOAL_COLL_AUX_ARRIVE, 1);
    if ((old + 1) % (uint64_t)n == 0) {
        shoal_group_aux_store(g, 0, SHOAL_COLL_AUX_RELEASE, epoch);
        for (int r = 1; r < n; r++) shoal_wake(shoal_group_pe(g, r));
        return;
    }
    struct shoal_backoff b = {0};
    const uint64_t *release = shoal_route_direct(g->seg, g->aux_offset + SHOAL_COLL_AUX_RELEASE * sizeof(uint64_t),
                                                 shoal_group_pe(g, 0));
    const struct flat_wait f = {g, epoch};
    SHOAL_BACKOFF_WHILE_MEMBERS(&b, __atomic_load_n(release, __ATOMIC_ACQUIRE) < epoch, n,
                                flat_missing_here, &f);
}

static void linear_barrier(struct shoal_group *g)
{
    const int n = g->size;
    const uint64_t epoch = g->epoch ? ++*g->epoch : 0;
    if (n == 1) return;
    if (g->epoch && shoal_coll_all_direct(g)) {
        flat_barrier(g, epoch);
        return;
    }
    struct shoal_backoff b = {0};
    if (g->rank != 0) {
        shoal_group_aux_add(g, 0, SHOAL_COLL_AUX_ARRIVE, 1);
        const uint64_t *release = shoal_group_aux(g, SHOAL_COLL_AUX_RELEASE);
        if (g->epoch) {
            while (__atomic_load_n(release, __ATOMIC_ACQUIRE) < epoch) shoal_backoff_wait(&b);
        } else {
            while (__atomic_load_n(release, __ATOMIC_ACQUIRE) == 0) shoal_backoff_wait(&b);
            shoal_group_aux_add(g, g->rank, SHOAL_COLL_AUX_RELEASE, (uint64_t)-1);
        }
        shoal_backoff_end(&b);
        return;
    }
    const uint64_t *arrive = shoal_group_aux(g, SHOAL_COLL_AUX_ARRIVE);
    SHOAL_BACKOFF_WHILE(&b, __atomic_load_n(arrive, __ATOMIC_ACQUIRE) < (uint64_t)(n - 1));
    shoal_group_aux_add(g, 0, SHOAL_COLL_AUX_ARRIVE, (uint64_t)-(int64_t)(n - 1));
    for (int r = 1; r < n; r++) {
        if (g->epoch)
            shoal_group_aux_store(g, r, SHOAL_COLL_AUX_RELEASE, epoch);
        else
            shoal_group_aux_add(g, r, SHOAL_COLL_AUX_RELEASE, 1);
    }
}

static void barrier_algo(struct shoal_group *g, enum shoal_coll_algo algo)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (algo == SHOAL_ALGO_LINEAR)
        linear_barrier(g);
    else if (algo == SHOAL_ALGO_HIER)
        shoal_coll_barrier_hier(g);
    else
        shoal_group_sync(g);
}

void shoal_coll_barrier(struct shoal_group *g)
{
    barrier_algo(g, shoal_coll_choose(SHOAL_COLL_BARRIER, g, 0));
}

void shoal_coll_sync_all(void)
{
    struct shoal_group world;
    shoal_group_from_team(&world, SHMEM_TEAM_WORLD);
    shoal_coll_barrier(&world);
}
