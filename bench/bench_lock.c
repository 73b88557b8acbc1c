/* bench_lock: OpenSHMEM distributed locks. Every figure is in microseconds
 * per acquisition (shmem_set_lock + shmem_clear_lock).
 *   lock_uncontended  the last PE sets and clears one lock in a loop while
 *                     the other PEs wait in a barrier (on Shoal the lock's
 *                     home is PE 0, so this crosses to another PE)
 *   lock_contended    every PE loops set/clear on the same lock; total time
 *                     over all PEs' acquisitions
 *   lock_round_trips  lock_uncontended in round trips: divided by the time
 *                     of one blocking atomic fetch from the last PE to PE 0,
 *                     measured just after it (unit rt)
 * --iters is the number of acquisitions per run (for lock_contended shared
 * among the PEs). The size column is the lock variable: 8 bytes.
 * Usage: oshrun -n N bench_lock [options]   (see bench_util.h) */
#include <shmem.h>

#include "bench_util.h"

static long lock;
static long probe; /* fetched from PE 0 to time a round trip */
static double uncontended_result, round_trip_result; /* measured on the last PE */

static double uncontended(long n, int me, int npes)
{
    double t = 0;
    shmem_barrier_all();
    if (me == npes - 1) {
        t = bench_now_us();
        for (long i = 0; i < n; i++) {
            shmem_set_lock(&lock);
            shmem_clear_lock(&lock);
        }
        t = (bench_now_us() - t) / (double)n;
    }
    shmem_barrier_all();
    return t;
}

/* us per blocking atomic fetch from the last PE to PE 0 (one round trip,
 * as each of the lock's remote atomics is), on the last PE; 0 elsewhere. */
static double round_trip(long n, int me, int npes)
{
    double t = 0;
    shmem_barrier_all();
    if (me == npes - 1) {
        long sink = 0;
        t = bench_now_us();
        for (long i = 0; i < n; i++) sink += shmem_long_atomic_fetch(&probe, 0);
        t = (bench_now_us() - t) / (double)n;
        if (sink != 0) t = -1; /* probe stays 0: a wrong value shows */
    }
    shmem_barrier_all();
    return t;
}

/* A value the last PE measured, for PE 0 to print. */
static double from_last(double *result, double v, int me, int npes)
{
    if (me == npes - 1) *result = v;
    shmem_barrier_all();
    double got = 0;
    if (me == 0) shmem_getmem(&got, result, sizeof got, npes - 1);
    return got;
}

static double contended(long n, int npes)
{
    const long per = n / npes > 0 ? n / npes : 1;
    shmem_barrier_all();
    double t = bench_now_us();
    for (long i = 0; i < per; i++) {
        shmem_set_lock(&lock);
        shmem_clear_lock(&lock);
    }
    shmem_barrier_all();
    return (bench_now_us() - t) / (double)(per * npes);
}

int main(int argc, char **argv)
{
    bench_opts o = {.min_size = 8, .max_size = 8, .step = 2, .iters = 2000, .scale_from = 8, .runs = 7};
    if (bench_parse(argc, argv, &o)) return 2;
    shmem_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    char name[SHMEM_MAX_NAME_LEN];
    shmem_info_get_name(name);
    bench_header(me, "bench_lock", &o, npes, name, SHMEM_MAJOR_VERSION, SHMEM_MINOR_VERSION);
    double v[BENCH_MAX_RUNS];
    const int want_rt = bench_want(&o, "lock_round_trips");
    if (bench_want(&o, "lock_uncontended") || want_rt) {
        double rt[BENCH_MAX_RUNS];
        uncontended(o.iters / 4 + 1, me, npes);
        /* Alternating, so that a change of load hurts both alike. */
        for (int r = 0; r < o.runs; r++) {
            v[r] = uncontended(o.iters, me, npes);
            if (want_rt) rt[r] = round_trip(o.iters, me, npes);
        }
        /* The last PE measured; PE 0 prints. */
        const double lock_us = bench_median(v, o.runs);
        const double got = from_last(&uncontended_result, lock_us, me, npes);
        if (bench_want(&o, "lock_uncontended")) bench_report(me, "lock_uncontended", 8, npes, got, "us");
        if (want_rt) {
            const double rt_us = me == npes - 1 ? bench_median(rt, o.runs) : 0;
            const double trips = from_last(&round_trip_result, rt_us > 0 ? lock_us / rt_us : -1, me, npes);
            bench_report(me, "lock_round_trips", 8, npes, trips, "rt");
        }
    }
    if (bench_want(&o, "lock_contended")) {
        contended(o.iters / 4 + 1, npes);
        for (int r = 0; r < o.runs; r++) v[r] = contended(o.iters, npes);
        bench_report(me, "lock_contended", 8, npes, bench_median(v, o.runs), "us");
    }
    shmem_finalize();
    return 0;
}
