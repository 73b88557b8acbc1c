/* bench_p2p: point-to-point synchronisation, atomics and locks between PE 0
 * and its partner PE npes/2 (PE 1 at 2 PEs; with PEs placed in blocks per
 * host, the first PE of the other host at 2 hosts x 2 PEs); the others
 * wait idle. Every figure is in microseconds.
 *   pingpong      shmem_long_p + shmem_long_wait_until, half round trip
 *   put_signal    8-byte shmem_putmem_signal + shmem_signal_wait_until, half
 *                 round trip (OpenSHMEM 1.5; not built against a 1.4 library)
 *   put_fence_p   the same exchange in 1.4 calls on both sides: 8-byte
 *                 shmem_putmem + shmem_fence + shmem_long_p of the flag, then
 *                 shmem_long_wait_until, half round trip
 *   fetch_add     shmem_long_atomic_fetch_add on the partner's counter
 *   compare_swap  shmem_long_atomic_compare_swap on the partner's counter (64-bit:
 *                 the 32-bit forms of Open MPI 4.1.4 smash the stack)
 *   lock_uncontended  shmem_set_lock + shmem_clear_lock by one PE while the
 *                 other waits in a barrier: PE 0 alone, then its partner
 *                 alone, the mean of the two (a library may keep the lock
 *                 on either PE, so one of them may be the remote side)
 *   lock_contended    PE 0 and its partner both loop on shmem_set_lock +
 *                 shmem_clear_lock: the job's time per acquisition (the
 *                 time for both PEs' n pairs over 2n). The warm-up counts
 *                 in the critical section on PE 0 with get + put, checked.
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

enum kind { PINGPONG, PUT_SIGNAL, PUT_FENCE_P, FETCH_ADD, COMPARE_SWAP, LOCK_UNCONTENDED, LOCK_CONTENDED, KINDS };
static const char *const names[KINDS] = {"pingpong",     "put_signal",       "put_fence_p",   "fetch_add",
                                         "compare_swap", "lock_uncontended", "lock_contended"};

static long flag[2];      /* flag[0] set by the partner for PE 0, flag[1] by PE 0 for the partner */
static long payload[2];   /* payload[side] written by the other PE */
static long counter;      /* on the partner */
static long lock;         /* the lock of the lock figures */
static long in_lock;      /* on PE 0: counted under the lock in the lock warm-up */
static long round_no;     /* rounds count up over the whole program, never reset */
static long errors;
#if HAVE_SIGNAL
static uint64_t sig;
#endif

/* Half round trip of n exchanges of kind between PE 0 and its partner, in
 * us. side: 0 on PE 0, 1 on the partner; other: the other PE's number. */
static double exchange(enum kind k, long n, int side, int other)
{
    const int peer_side = 1 - side;
    double t = bench_now_us();
    for (long i = 0; i < n; i++) {
        const long r = ++round_no;
        const int first = side == 0; /* PE 0 sends first, the partner answers */
        for (int step = 0; step < 2; step++) {
            if ((step == 0) == first) { /* send */
                long word = r * 3 + side;
                switch (k) {
                case PINGPONG: shmem_long_p(&flag[peer_side], r, other); break;
                case PUT_FENCE_P:
                    shmem_putmem(&payload[peer_side], &word, 8, other);
                    shmem_fence();
                    shmem_long_p(&flag[peer_side], r, other);
                    break;
#if HAVE_SIGNAL
                case PUT_SIGNAL:
                    shmem_putmem_signal(&payload[peer_side], &word, 8, &sig, (uint64_t)r, SHMEM_SIGNAL_SET, other);
                    break;
#endif
                default: break;
                }
            } else { /* receive */
                switch (k) {
                case PINGPONG: shmem_long_wait_until(&flag[side], SHMEM_CMP_EQ, r); break;
                case PUT_FENCE_P:
                    shmem_long_wait_until(&flag[side], SHMEM_CMP_EQ, r);
                    errors += payload[side] != r * 3 + peer_side;
                    break;
#if HAVE_SIGNAL
                case PUT_SIGNAL:
                    shmem_signal_wait_until(&sig, SHMEM_CMP_EQ, (uint64_t)r);
                    errors += payload[side] != r * 3 + peer_side;
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

/* Mean latency of n atomics of kind issued by PE 0 on the partner's counter, in us. */
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

/* n set_lock + clear_lock pairs; with count, each critical section adds 1
 * to in_lock on PE 0 by get + put (a lost update shows a broken lock). */
static double lock_pairs(long n, int count)
{
    double t = bench_now_us();
    for (long i = 0; i < n; i++) {
        shmem_set_lock(&lock);
        if (count) {
            long v = shmem_long_g(&in_lock, 0);
            shmem_long_p(&in_lock, v + 1, 0);
            shmem_quiet();
        }
        shmem_clear_lock(&lock);
    }
    return bench_now_us() - t;
}

/* One run of a lock figure on every PE (collective: barriers inside); the
 * figure is PE 0's return value. */
static double partner_us; /* on PE 0: the partner's time alone with the lock */
static double lock_run(enum kind k, long n, int me, int partner)
{
    if (k == LOCK_UNCONTENDED) {
        shmem_barrier_all();
        const double mine = me == 0 ? lock_pairs(n, 0) : 0;
        shmem_barrier_all();
        if (me == partner) shmem_double_p(&partner_us, lock_pairs(n, 0), 0);
        shmem_barrier_all(); /* completes the shmem_double_p */
        return (mine + partner_us) / 2 / (double)n;
    }
    shmem_barrier_all();
    const double t = bench_now_us();
    if (me == 0 || me == partner) lock_pairs(n, 0);
    shmem_barrier_all();
    return (bench_now_us() - t) / (double)(2 * n);
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
    const int partner = npes / 2, side = me == 0 ? 0 : 1, other = me == 0 ? partner : 0;
    const int pair = me == 0 || me == partner;
    long counted = 0; /* what in_lock must hold on PE 0 */
    for (int k = 0; k < KINDS; k++) {
        if (!bench_want(&o, names[k]) || (k == PUT_SIGNAL && !HAVE_SIGNAL)) continue;
        const long n = o.iters;
        double v[BENCH_MAX_RUNS];
        shmem_barrier_all();
        if (k == FETCH_ADD || k == COMPARE_SWAP) {
            if (me == 0) {
                atomics(k, n / 4 + 1, partner);
                for (int r = 0; r < o.runs; r++) v[r] = atomics(k, n, partner);
            }
        } else if (k == LOCK_UNCONTENDED || k == LOCK_CONTENDED) {
            /* Warm-up: both contend and count under the lock, checked. */
            if (pair) lock_pairs(n / 4 + 1, 1);
            counted += 2 * (n / 4 + 1);
            shmem_barrier_all();
            if (me == 0 && in_lock != counted) {
                fprintf(stderr, "bench_p2p: lock let %ld of %ld updates through\n", in_lock, counted);
                errors++;
            }
            for (int r = 0; r < o.runs; r++) v[r] = lock_run(k, n, me, partner);
        } else if (pair) {
            exchange(k, n / 4 + 1, side, other);
            for (int r = 0; r < o.runs; r++) v[r] = exchange(k, n, side, other);
        }
        if (me == 0) bench_report(me, names[k], 8, npes, bench_median(v, o.runs), "us");
    }
    shmem_barrier_all();
    if (errors) fprintf(stderr, "bench_p2p: PE %d: %ld wrong values seen\n", me, errors);
    shmem_finalize();
    return errors ? 1 : 0;
}
