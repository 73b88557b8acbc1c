/* leader_wake: across hosts, a host's leader waiting for its members in a
 * hierarchical barrier or reduce sleeps until a member's arrival rings its
 * bell (sync/wake.h), not on a timer that wakes it every 1-100 us to poll
 * on cores its host's busy PEs need. Linked with the internal layers to
 * read the wake counters. Run by the netns tests at 2 hosts x 2 PEs, over
 * tls and over libfabric (SHMEM_ENCRYPT=off), whose threads serve peers;
 * other layouts skip (77).
 * Each round the members compute 300 ms outside Shoal while the leaders
 * enter the collective at once, every futex sleep stretched to 5 s
 * (shoal_backoff_futex_fixed_ns), so that only a ring ends one in time.
 * Each leader must have slept on its bell and been rung during the call,
 * and have left it within 2 s; the reduce's sum is checked everywhere. */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>

#include "api_util.h"
#include "core/runtime.h"
#include "sync/backoff.h"
#include "sync/wake.h"

static long src, dst;

/* The lowest PE of this PE's host, and how many PEs the host has. */
static int host_leader(int me, int npes, int *members)
{
    int leader = -1;
    *members = 0;
    for (int pe = 0; pe < npes; pe++) {
        if (shoal_rt.peers[pe].node != shoal_rt.peers[me].node) continue;
        if (leader < 0) leader = pe;
        ++*members;
    }
    return leader;
}

enum call { BARRIER, SUM_REDUCE };

static void round_of(enum call call, int me, int leader)
{
    const char *what = call == BARRIER ? "barrier_all" : "sum_reduce";
    shmem_barrier_all();
    const uint64_t sleeps = __atomic_load_n(&shoal_wake_stats.sleeps, __ATOMIC_RELAXED);
    const uint64_t rung = __atomic_load_n(&shoal_wake_stats.rung_waits, __ATOMIC_RELAXED);
    __atomic_store_n(&shoal_backoff_futex_fixed_ns, 5000000000l, __ATOMIC_RELAXED);
    if (me != leader) test_compute_for(0.3);
    const double t0 = test_now_s();
    src = me + 1;
    dst = -1;
    if (call == BARRIER)
        shmem_barrier_all();
    else
        shmem_long_sum_reduce(SHMEM_TEAM_WORLD, &dst, &src, 1);
    const double took = test_now_s() - t0;
    __atomic_store_n(&shoal_backoff_futex_fixed_ns, 0, __ATOMIC_RELAXED);
    const long n = shmem_n_pes();
    if (call == SUM_REDUCE) CHECK_MSG(dst == n * (n + 1) / 2, "PE %d: %s gave %ld, want %ld", me, what, dst, n * (n + 1) / 2);
    if (me != leader) return;
    CHECK_MSG(__atomic_load_n(&shoal_wake_stats.sleeps, __ATOMIC_RELAXED) > sleeps,
              "leader PE %d: its %s wait for its members never slept on its bell", me, what);
    CHECK_MSG(__atomic_load_n(&shoal_wake_stats.rung_waits, __ATOMIC_RELAXED) > rung,
              "leader PE %d: no member's arrival rang its bell during the %s", me, what);
    CHECK_MSG(took < 2.0, "leader PE %d: the %s took %.2f s with members 0.3 s late (a 5 s timer ended its sleep?)",
              me, what, took);
}

int main(void)
{
    setenv("SHMEM_COLL_ALGORITHM", "barrier:hier,reduce:hier", 1);
    shmem_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    int members;
    const int leader = host_leader(me, npes, &members);
    /* Two hosts of two PEs each, the transport's threads serving peers. */
    if (shoal_rt.n_nodes != 2 || npes != 4 || members != 2 || !shoal_backoff_progress_optional) {
        if (me == 0)
            printf("leader_wake: needs 2 hosts x 2 PEs over a transport whose threads serve peers (%d hosts, %d PEs)\n",
                   shoal_rt.n_nodes, npes);
        shmem_finalize();
        return TEST_SKIP;
    }
    for (int r = 0; r < 2; r++) round_of(BARRIER, me, leader);
    round_of(SUM_REDUCE, me, leader);
    shmem_barrier_all();
    shmem_finalize();
    return test_finish();
}
