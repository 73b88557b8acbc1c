/* spread: PEs stacked on one CPU move themselves to one with fewer
 * (sync/spread.h). 4 PEs on 2 CPUs (taskset), the auto policy; linked with
 * the internal layers to place the PEs.
 * 1. The guard: with no awake PE counted, the kernel reports tasks running
 *    (this one); with more PEs than could run, none other.
 * 2. PEs 0-2 move to the first CPU, PE 3 to the second: each then runs
 *    there, and its affinity is the whole mask again (a move, not a
 *    binding); a thread pinned to one CPU is not moved.
 * 3. In barriers (crowded waits), within 60 ms the PEs run 2 + 2: PE 0
 *    reads each PE's CPU every 100 barriers (0.3-2.1 ms here). Without the
 *    moves, 8 of 10 runs failed: the kernel's balancer spread them only
 *    after 115-166 ms, when it did (spread.h).
 * Skips (77) unless the PEs share exactly 2 CPUs and their collectives
 * wait crowded (4 PEs, SHMEM_WAIT_POLICY auto). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* CPU_SET, sched_getcpu */
#endif
#include <sched.h>
#include <shmem.h>
#include <stdio.h>

#include "api_util.h"
#include "sync/backoff.h"
#include "sync/spread.h"

#define LIMIT_S 0.06

static int cpus[4];
static int verdict; /* on every PE, from PE 0: 0 go on, 1 spread, 2 out of time */

int main(void)
{
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes();
    test_pe = me;
    cpu_set_t mask;
    const int have_mask = sched_getaffinity(0, sizeof mask, &mask) == 0;
    if (n != 4 || !have_mask || CPU_COUNT(&mask) != 2 || !shoal_backoff_crowd_team(n)) {
        if (me == 0)
            printf("SKIP: needs 4 PEs on exactly 2 CPUs (taskset -c 0,1) with crowded waits (%d PEs, %d CPUs)\n", n,
                   have_mask ? CPU_COUNT(&mask) : -1);
        shmem_finalize();
        return TEST_SKIP;
    }
    int first = -1, second = -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &mask)) {
            if (first < 0)
                first = c;
            else if (second < 0)
                second = c;
        }

    /* 1 */
    CHECK_MSG(shoal_spread_others_running(0) == 1, "no task counted running, yet this PE runs");
    CHECK_MSG(shoal_spread_others_running(1 << 20) == 0, "other tasks counted beside 2^20 awake PEs");

    /* 2 */
    const int want = me < 3 ? first : second;
    /* The kernel may move a PE on between its move and the look: retried. */
    int moved = -1, ran = -1;
    for (int tries = 0; tries < 3 && ran != want; tries++) {
        moved = shoal_spread_move_to(want);
        ran = sched_getcpu();
    }
    CHECK_MSG(moved == 0 && ran == want, "runs on CPU %d after its move to CPU %d (%d)", ran, want, moved);
    cpu_set_t after;
    CHECK(sched_getaffinity(0, sizeof after, &after) == 0 && CPU_EQUAL(&after, &mask));
    /* A thread the program pinned to one CPU is not moved. */
    cpu_set_t pinned;
    CPU_ZERO(&pinned);
    CPU_SET(want, &pinned);
    if (sched_setaffinity(0, sizeof pinned, &pinned) == 0) {
        const int other = want == first ? second : first;
        CHECK_MSG(shoal_spread_move_to(other) == -1, "a thread pinned to CPU %d was moved", want);
        CHECK(sched_getaffinity(0, sizeof after, &after) == 0 && CPU_EQUAL(&after, &pinned));
        CHECK(sched_setaffinity(0, sizeof mask, &mask) == 0);
    }
    shmem_barrier_all();

    /* 3 */
    const double start = test_now_s();
    long barriers = 0;
    int on_first = 0;
    while (!verdict) {
        for (int i = 0; i < 100; i++, barriers++) shmem_barrier_all();
        shmem_int_p(&cpus[me], sched_getcpu(), 0);
        shmem_barrier_all();
        if (me == 0) {
            on_first = 0;
            for (int pe = 0; pe < n; pe++) on_first += cpus[pe] == first;
            const int v = on_first == 2 ? 1 : test_now_s() - start > LIMIT_S ? 2 : 0;
            for (int pe = 0; pe < n; pe++) shmem_int_p(&verdict, v, pe);
        }
        shmem_barrier_all();
    }
    const double ms = (test_now_s() - start) * 1e3;
    if (me == 0) {
        CHECK_MSG(verdict == 1, "after %ld barriers in %.0f ms the PEs still ran %d + %d (CPUs %d %d %d %d)",
                  barriers, ms, on_first, n - on_first, cpus[0], cpus[1], cpus[2], cpus[3]);
        if (verdict == 1) printf("spread: 2 + 2 after %ld barriers, %.1f ms\n", barriers, ms);
    }
    shmem_finalize();
    return test_finish();
}
