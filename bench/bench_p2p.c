/* bench_p2p: point-to-point synchronisation and atomics between PE 0 and
 * PE 1 (more PEs wait idle). Every figure is in microseconds.
 *   pingpong      shmem_long_p + shmem_long_wait_until, half round trip
 *   put_signal    8-byte shmem_putmem_signal + shmem_signal_wait_until, half
 *                 round trip (OpenSHMEM 1.5; not built against a 1.4 library)
 *   put_fence_p   the same exchange in 1.4 calls on both sides: 8-byte
 *                 shmem_putmem + shmem_fence + shmem_long_p of the flag, then
 *                 shmem_long_wait_until, half round trip
 *   fetch_add     shmem_long_atomic_fetch_add on PE 1's counter
 *   compare_swap  shmem_long_atomic_compare_swap on PE 1's counter (64-bit:
 *                 the 32-bit forms of Open MPI 4.1.4 smash the stack)
 *   hw_pingpong   the hardware floor, no SHMEM: two threads of one process
 *                 on CPUs 0 and 1 bounce a cache line with C11 atomics,
 *                 half round trip.
 *                 Measured only when the job has 1 PE (so no other PE
 *                 competes for the cores): oshrun -n 1 bench_p2p --only hw_pingpong
 * The size column is the payload: 8 bytes.
 * Usage: oshrun -n 2 bench_p2p [options]   (see bench_util.h) */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setaffinity_np */
#endif
#include <pthread.h>
#include <sched.h>
#include <shmem.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_util.h"

#if SHMEM_MAJOR_VERSION * 100 + SHMEM_MINOR_VERSION >= 105
#define HAVE_SIGNAL 1
#else
#define HAVE_SIGNAL 0
#endif

enum kind { PINGPONG, PUT_SIGNAL, PUT_FENCE_P, FETCH_ADD, COMPARE_SWAP, KINDS };
static const char *const names[KINDS] = {"pingpong", "put_signal", "put_fence_p", "fetch_add", "compare_swap"};

static long flag[2];      /* flag[0] set by PE 1 for PE 0, flag[1] by PE 0 for PE 1 */
static long payload[2];   /* payload[me] written by the other PE */
static long counter;      /* on PE 1 */
static long round_no;     /* rounds count up over the whole program, never reset */
static long errors;
#if HAVE_SIGNAL
static uint64_t sig;
#endif

/* Half round trip of n exchanges of kind between PE 0 and PE 1, in us. */
static double exchange(enum kind k, long n, int me)
{
    const int other = 1 - me;
    double t = bench_now_us();
    for (long i = 0; i < n; i++) {
        const long r = ++round_no;
        const int first = me == 0; /* PE 0 sends first, PE 1 answers */
        for (int step = 0; step < 2; step++) {
            if ((step == 0) == first) { /* send */
                long word = r * 3 + me;
                switch (k) {
                case PINGPONG: shmem_long_p(&flag[other], r, other); break;
                case PUT_FENCE_P:
                    shmem_putmem(&payload[other], &word, 8, other);
                    shmem_fence();
                    shmem_long_p(&flag[other], r, other);
                    break;
#if HAVE_SIGNAL
                case PUT_SIGNAL:
                    shmem_putmem_signal(&payload[other], &word, 8, &sig, (uint64_t)r, SHMEM_SIGNAL_SET, other);
                    break;
#endif
                default: break;
                }
            } else { /* receive */
                switch (k) {
                case PINGPONG: shmem_long_wait_until(&flag[me], SHMEM_CMP_EQ, r); break;
                case PUT_FENCE_P:
                    shmem_long_wait_until(&flag[me], SHMEM_CMP_EQ, r);
                    errors += payload[me] != r * 3 + other;
                    break;
#if HAVE_SIGNAL
                case PUT_SIGNAL:
                    shmem_signal_wait_until(&sig, SHMEM_CMP_EQ, (uint64_t)r);
                    errors += payload[me] != r * 3 + other;
                    break;
#endif
                default: break;
                }
            }
        }
    }
    return (bench_now_us() - t) / (double)n / 2;
}

/* The hardware floor: a cache line bounced between two threads. */
static _Alignas(64) atomic_long hw_ball;
static long hw_n;

/* Pins the calling thread to one CPU; no effect where that fails. */
static void pin_to(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    (void)pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void *hw_partner(void *arg)
{
    (void)arg;
    pin_to(1);
    for (long i = 1; i <= hw_n; i++) {
        while (atomic_load_explicit(&hw_ball, memory_order_acquire) != 2 * i - 1) {}
        atomic_store_explicit(&hw_ball, 2 * i, memory_order_release);
    }
    return NULL;
}

static double hw_pingpong(long n)
{
    pthread_t th;
    atomic_store(&hw_ball, 0);
    hw_n = n;
    cpu_set_t before;
    pthread_getaffinity_np(pthread_self(), sizeof before, &before);
    if (pthread_create(&th, NULL, hw_partner, NULL)) return 0;
    pin_to(0);
    double t = bench_now_us();
    for (long i = 1; i <= n; i++) {
        atomic_store_explicit(&hw_ball, 2 * i - 1, memory_order_release);
        while (atomic_load_explicit(&hw_ball, memory_order_acquire) != 2 * i) {}
    }
    t = bench_now_us() - t;
    pthread_join(th, NULL);
    (void)pthread_setaffinity_np(pthread_self(), sizeof before, &before);
    return t / (double)n / 2;
}

/* Mean latency of n atomics of kind issued by PE 0 on PE 1's counter, in us. */
static double atomics(enum kind k, long n, int peer)
{
    double t = bench_now_us();
    if (k == FETCH_ADD) {
        long last = 0;
        for (long i = 0; i < n; i++) last = shmem_long_atomic_fetch_add(&counter, 1, peer);
        (void)last;
    } else {
        long v = shmem_long_atomic_fetch_add(&counter, 0, peer);
        t = bench_now_us();
        for (long i = 0; i < n; i++) {
            long old = shmem_long_atomic_compare_swap(&counter, v, v + 1, peer);
            errors += old != v;
            v++;
        }
    }
    return (bench_now_us() - t) / (double)n;
}

int main(int argc, char **argv)
{
    bench_opts o = {.min_size = 8, .max_size = 8, .step = 2, .iters = 20000, .scale_from = 8, .runs = 7};
    if (bench_parse(argc, argv, &o)) return 2;
    shmem_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    char name[SHMEM_MAX_NAME_LEN];
    shmem_info_get_name(name);
    bench_header(me, "bench_p2p", &o, npes, name, SHMEM_MAJOR_VERSION, SHMEM_MINOR_VERSION);
    if (npes == 1 && bench_want(&o, "hw_pingpong")) {
        double v[BENCH_MAX_RUNS];
        hw_pingpong(o.iters / 4 + 1);
        for (int r = 0; r < o.runs; r++) v[r] = hw_pingpong(o.iters);
        bench_report(me, "hw_pingpong", 8, npes, bench_median(v, o.runs), "us");
        shmem_finalize();
        return 0;
    }
    if (npes < 2) {
        if (me == 0) fprintf(stderr, "bench_p2p: needs 2 PEs\n");
        shmem_finalize();
        return 77;
    }
    const int pair = me < 2;
    for (int k = 0; k < KINDS; k++) {
        if (!bench_want(&o, names[k]) || (k == PUT_SIGNAL && !HAVE_SIGNAL)) continue;
        const long n = o.iters;
        double v[BENCH_MAX_RUNS];
        shmem_barrier_all();
        if (k == FETCH_ADD || k == COMPARE_SWAP) {
            if (me == 0) {
                atomics(k, n / 4 + 1, 1);
                for (int r = 0; r < o.runs; r++) v[r] = atomics(k, n, 1);
            }
        } else if (pair) {
            exchange(k, n / 4 + 1, me);
            for (int r = 0; r < o.runs; r++) v[r] = exchange(k, n, me);
        }
        if (me == 0) bench_report(me, names[k], 8, npes, bench_median(v, o.runs), "us");
    }
    shmem_barrier_all();
    if (errors) fprintf(stderr, "bench_p2p: PE %d: %ld wrong values seen\n", me, errors);
    shmem_finalize();
    return errors ? 1 : 0;
}
