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
 *   naps only where PE 0 was kept off its core longer than a spin);
 * - asleep, then serving: PE 0 computes for IDLE_MS, then gets for
 *   SERVE_MS, then sets the flag: the wait is napping when the gets begin
 *   and must go back to serving them by spinning (the transport's threads
 *   serve the first ones and move the incoming mark), so it naps fewer
 *   times than at the idle rate over IDLE_MS + SERVE_MS / 2.
 * A wait that napped through the gets as it does when idle fails.
 * Over tls and over ofi (tcp;ofi_rxm, whose progress thread serves a PE
 * asleep in a wait: a wait that never noticed took 50 us a get between 2
 * namespace hosts, against 20 spinning).
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

static long flag, longest_gap_ns[2], word;

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

static void compute(long ms)
{
    const long until = now_ns() + ms * 1000000L;
    volatile unsigned long spin = 0;
    while (now_ns() < until) spin++;
}

/* Gets for SERVE_MS; returns the longest gap between two, in ns. */
static long serve(long *gets, long *wrong)
{
    long last = now_ns(), gap = 0;
    const long until = last + SERVE_MS * 1000000L;
    while (last < until) {
        *wrong += shmem_long_g(&word, 1) != 0x5e7fe + 1;
        ++*gets;
        const long t = now_ns();
        if (t - last > gap) gap = t - last;
        last = t;
    }
    return gap;
}

/* PE 0's side of a round: idle, gets, idle, gets; tells PE 1 the longest
 * gap of each serving wait, and marks in judged[] which ones kept coming. */
static void drive(long round, long *gets, long *wrong, int judged[2])
{
    compute(IDLE_MS);
    shmem_long_p(&flag, 3 * round + 1, 1);
    const long gap = serve(gets, wrong);
    shmem_long_p(&flag, 3 * round + 2, 1);
    compute(IDLE_MS);
    const long gap2 = serve(gets, wrong);
    shmem_long_p(&longest_gap_ns[0], gap, 1);
    shmem_long_p(&longest_gap_ns[1], gap2, 1);
    shmem_fence(); /* the gaps arrive before the flag that ends the wait */
    shmem_long_p(&flag, 3 * round + 3, 1);
    judged[0] |= gap <= STALL_MS * 1000000L;
    judged[1] |= gap2 <= STALL_MS * 1000000L;
}

/* PE 1's side: the three waits, their nap rates; judges each serving wait
 * whose gets kept coming (no stall on PE 0's side), marking it in judged[]. */
static void wait_and_judge(long round, int judged[2])
{
    const uint64_t n0 = naps_now();
    const long t0 = now_ns();
    shmem_long_wait_until(&flag, SHMEM_CMP_EQ, 3 * round + 1);
    const uint64_t n1 = naps_now();
    const long t1 = now_ns();
    shmem_long_wait_until(&flag, SHMEM_CMP_EQ, 3 * round + 2);
    const uint64_t n2 = naps_now();
    const long t2 = now_ns();
    shmem_long_wait_until(&flag, SHMEM_CMP_EQ, 3 * round + 3);
    const uint64_t n3 = naps_now();
    const long t3 = now_ns();
    const double idle_rate = (double)(n1 - n0) / ((t1 - t0) / 1e6);
    const double serve_rate = (double)(n2 - n1) / ((t2 - t1) / 1e6);
    const long gap = __atomic_load_n(&longest_gap_ns[0], __ATOMIC_ACQUIRE);
    const long gap2 = __atomic_load_n(&longest_gap_ns[1], __ATOMIC_ACQUIRE);
    printf("serving_wait: round %ld: naps per ms, idle wait %.2f (%llu), wait serving gets %.2f (%llu); "
           "wait asleep when the gets began: %llu naps in %.0f ms; longest gaps between gets %.2f and %.2f ms\n",
           round + 1, idle_rate, (unsigned long long)(n1 - n0), serve_rate, (unsigned long long)(n2 - n1),
           (unsigned long long)(n3 - n2), (t3 - t2) / 1e6, gap / 1e6, gap2 / 1e6);
    CHECK_MSG(n1 > n0, "the idle wait of %.0f ms never napped", (t1 - t0) / 1e6);
    if (!judged[0] && gap <= STALL_MS * 1000000L) {
        CHECK_MSG(serve_rate < idle_rate / 4, "a wait serving gets napped %.2f times per ms, an idle one %.2f",
                  serve_rate, idle_rate);
        judged[0] = 1;
    }
    if (!judged[1] && gap2 <= STALL_MS * 1000000L) {
        const double asleep_limit = idle_rate * (IDLE_MS + SERVE_MS / 2.0);
        CHECK_MSG((double)(n3 - n2) < asleep_limit,
                  "a wait asleep when the gets began napped %llu times in %.0f ms: it went on napping through "
                  "them (limit %.0f)",
                  (unsigned long long)(n3 - n2), (t3 - t2) / 1e6, asleep_limit);
        judged[1] = 1;
    }
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
    int judged[2] = {0, 0};
    for (long round = 0; round < ROUNDS && !(judged[0] && judged[1]); round++) {
        if (me == 0) {
            long gets = 0, wrong = 0;
            drive(round, &gets, &wrong, judged);
            printf("serving_wait: round %ld: %ld gets in 2 x %d ms\n", round + 1, gets, SERVE_MS);
            CHECK_MSG(wrong == 0, "%ld of %ld gets returned a wrong value", wrong, gets);
            if (!(judged[0] && judged[1]))
                printf("serving_wait: round %ld: PE 0 was held off its core over %d ms between two gets, so a "
                       "wait had nothing to serve then: measuring again\n",
                       round + 1, STALL_MS);
        } else {
            wait_and_judge(round, judged);
        }
        /* Both PEs decide from the same gaps: they go on together. */
        shmem_barrier_all();
    }
    CHECK_MSG(judged[0] && judged[1],
              "in all %d rounds PE 0 was held off its core over %d ms between two gets: nothing measured (serving "
              "wait %s, wait asleep first %s)",
              ROUNDS, STALL_MS, judged[0] ? "judged" : "not judged", judged[1] ? "judged" : "not judged");
    shmem_finalize();
    return test_finish();
}
