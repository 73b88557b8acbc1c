/* serving_wait.c: a wait whose PE keeps receiving requests serves them by
 * spinning, instead of napping while the streams' threads wake for each
 * (sync/backoff.h, shoal_backoff_incoming). 2 PEs over a transport between
 * hosts (SHMEM_TRANSPORT=tls), linked with the internal layers to read the
 * waits' nap counter. PE 1 waits twice on a flag:
 * - idle: PE 0 computes for IDLE_MS, then sets the flag; this wait must
 *   nap (its spin runs out), which also gives the rate at which a wait that
 *   does nothing naps here;
 * - serving: PE 0 gets a word of PE 1's (checked) for SERVE_MS, then sets
 *   the flag; this wait must nap at under a quarter of the idle rate (it
 *   naps only where PE 0 was kept off its core longer than a spin).
 * A wait that napped through the gets as it does when idle fails. */
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "harness.h"
#include "sync/backoff.h"

#define IDLE_MS 150
#define SERVE_MS 300

static long flag, word;

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
    long gets = 0, wrong = 0;
    if (me == 0) {
        long until = now_ns() + IDLE_MS * 1000000L;
        volatile unsigned long spin = 0;
        while (now_ns() < until) spin++;
        shmem_long_p(&flag, 1, 1);
        until = now_ns() + SERVE_MS * 1000000L;
        while (now_ns() < until) {
            wrong += shmem_long_g(&word, 1) != 0x5e7fe + 1;
            gets++;
        }
        shmem_long_p(&flag, 2, 1);
        printf("serving_wait: %ld gets in %d ms\n", gets, SERVE_MS);
        CHECK_MSG(wrong == 0, "%ld of %ld gets returned a wrong value", wrong, gets);
    } else {
        const uint64_t n0 = naps_now();
        const long t0 = now_ns();
        shmem_long_wait_until(&flag, SHMEM_CMP_EQ, 1);
        const uint64_t n1 = naps_now();
        const long t1 = now_ns();
        shmem_long_wait_until(&flag, SHMEM_CMP_EQ, 2);
        const uint64_t n2 = naps_now();
        const long t2 = now_ns();
        const double idle_rate = (double)(n1 - n0) / ((t1 - t0) / 1e6);
        const double serve_rate = (double)(n2 - n1) / ((t2 - t1) / 1e6);
        printf("serving_wait: naps per ms, idle wait %.2f (%llu), wait serving gets %.2f (%llu)\n", idle_rate,
               (unsigned long long)(n1 - n0), serve_rate, (unsigned long long)(n2 - n1));
        CHECK_MSG(n1 > n0, "the idle wait of %.0f ms never napped", (t1 - t0) / 1e6);
        CHECK_MSG(serve_rate < idle_rate / 4, "a wait serving gets napped %.2f times per ms, an idle one %.2f",
                  serve_rate, idle_rate);
    }
    shmem_finalize();
    return test_finish();
}
