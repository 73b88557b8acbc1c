/* serving_wait.c: a wait whose PE keeps receiving requests serves them by
 * spinning, instead of napping while the streams' threads wake for each
 * (sync/backoff.h, shoal_backoff_incoming). 2 PEs over a transport between
 * hosts (SHMEM_TRANSPORT=tls), linked with the internal layers to read the
 * waits' nap counter. In each round PE 1 waits twice on a flag:
 * - idle: PE 0 computes for IDLE_MS, then sets the flag; this wait must
 *   nap (its spin runs out), which also gives the rate at which a wait that
 *   does nothing naps here;
 * - serving: PE 0 gets a word of PE 1's (checked) for SERVE_MS, then sets
 *   the flag; this wait must nap at under a quarter of the idle rate (it
 *   naps only where PE 0 was kept off its core longer than a spin).
 * A wait that napped through the gets as it does when idle fails.
 *
 * The serving wait is judged only where the gets kept coming. A machine
 * that takes a PE's core away for longer than a wait spins (a virtual
 * machine whose host caps its CPU time: two threads spinning on its 2
 * cores each lost 100 ms at a time, about every 2 s) leaves the wait with
 * nothing to serve, and a wait then must nap. PE 0 measures the longest
 * time between two of its gets; a round where it exceeds STALL_MS is
 * reported and measured again, up to ROUNDS times. */
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "harness.h"
#include "sync/backoff.h"

#define IDLE_MS 150
#define SERVE_MS 300
#define ROUNDS 8
/* Below the shortest spin of a wait (65,536 polls, a progress call every
 * 16): a gap this short cannot have made the wait nap. */
#define STALL_MS 5

static long flag, longest_gap_ns, word;

static long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static uint64_t naps_now(void)
{
    const uint64_t *naps = __atomic_load_n(&shoal_backoff_naps, __ATOMIC_RELAXED);
    return naps ? __atomic_load_n(&naps[1], __ATOMIC_RELAXED) : 0;
}

/* PE 0's side of a round: idle, then gets; tells PE 1 its longest gap.
 * Returns whether the gets kept coming (the round is judged). */
static int drive(long round, long *gets, long *wrong)
{
    long until = now_ns() + IDLE_MS * 1000000L;
    volatile unsigned long spin = 0;
    while (now_ns() < until) spin++;
    shmem_long_p(&flag, 2 * round + 1, 1);
    long last = now_ns(), gap = 0;
    until = last + SERVE_MS * 1000000L;
    while (last < until) {
        *wrong += shmem_long_g(&word, 1) != 0x5e7fe + 1;
        ++*gets;
        const long t = now_ns();
        if (t - last > gap) gap = t - last;
        last = t;
    }
    shmem_long_p(&longest_gap_ns, gap, 1);
    shmem_fence(); /* the gap arrives before the flag that ends the wait */
    shmem_long_p(&flag, 2 * round + 2, 1);
    return gap <= STALL_MS * 1000000L;
}

/* PE 1's side: the two waits, their nap rates. Returns whether the round
 * measured a wait that kept serving (no stall on PE 0's side). */
static int wait_and_judge(long round)
{
    const uint64_t n0 = naps_now();
    const long t0 = now_ns();
    shmem_long_wait_until(&flag, SHMEM_CMP_EQ, 2 * round + 1);
    const uint64_t n1 = naps_now();
    const long t1 = now_ns();
    shmem_long_wait_until(&flag, SHMEM_CMP_EQ, 2 * round + 2);
    const uint64_t n2 = naps_now();
    const long t2 = now_ns();
    const double idle_rate = (double)(n1 - n0) / ((t1 - t0) / 1e6);
    const double serve_rate = (double)(n2 - n1) / ((t2 - t1) / 1e6);
    const long gap = __atomic_load_n(&longest_gap_ns, __ATOMIC_ACQUIRE);
    printf("serving_wait: round %ld: naps per ms, idle wait %.2f (%llu), wait serving gets %.2f (%llu); "
           "longest gap between gets %.2f ms\n",
           round + 1, idle_rate, (unsigned long long)(n1 - n0), serve_rate, (unsigned long long)(n2 - n1), gap / 1e6);
    CHECK_MSG(n1 > n0, "the idle wait of %.0f ms never napped", (t1 - t0) / 1e6);
    if (gap > STALL_MS * 1000000L) return 0;
    CHECK_MSG(serve_rate < idle_rate / 4, "a wait serving gets napped %.2f times per ms, an idle one %.2f",
              serve_rate, idle_rate);
    return 1;
}

int main(void)
{
    shmem_init();
    const int me = shmem_my_pe();
    test_pe = me;
    if (shmem_n_pes() != 2) {
        if (me == 0) printf("serving_wait: needs 2 PEs; skipped\n");
        shmem_finalize();
        return TEST_SKIP;
    }
    word = 0x5e7fe + me;
    shmem_barrier_all();
    int judged = 0;
    for (long round = 0; round < ROUNDS && !judged; round++) {
        if (me == 0) {
            long gets = 0, wrong = 0;
            judged = drive(round, &gets, &wrong);
            printf("serving_wait: round %ld: %ld gets in %d ms\n", round + 1, gets, SERVE_MS);
            CHECK_MSG(wrong == 0, "%ld of %ld gets returned a wrong value", wrong, gets);
            if (!judged)
                printf("serving_wait: round %ld: PE 0 was held off its core over %d ms between two gets, so the "
                       "wait had nothing to serve then: measuring again\n",
                       round + 1, STALL_MS);
        } else {
            judged = wait_and_judge(round);
        }
        /* Both PEs decide from the same gap: they go on together. */
        shmem_barrier_all();
    }
    CHECK_MSG(judged, "in all %d rounds PE 0 was held off its core over %d ms between two gets: nothing measured",
              ROUNDS, STALL_MS);
    shmem_finalize();
    return test_finish();
}
