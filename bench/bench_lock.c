/* bench_lock: OpenSHMEM distributed locks. Every figure is in microseconds
 * per acquisition (shmem_set_lock + shmem_clear_lock).
 *   lock_uncontended  the last PE sets and clears one lock in a loop while
 *                     the other PEs wait in a barrier (on Shoal the lock's
 *                     home is PE 0, so this crosses to another PE)
 *   lock_contended    every PE loops set/clear on the same lock; total time
 *                     over all PEs' acquisitions
 * --iters is the number of acquisitions per run (for lock_contended shared
 * among the PEs). The size column is the lock variable: 8 bytes.
 * Usage: oshrun -n N bench_lock [options]   (see bench_util.h) */
#include <shmem.h>

#include "bench_util.h"

static long lock;
static double uncontended_result; /* measured on the last PE */

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
    if (bench_want(&o, "lock_uncontended")) {
        uncontended(o.iters / 4 + 1, me, npes);
        for (int r = 0; r < o.runs; r++) v[r] = uncontended(o.iters, me, npes);
        /* The last PE measured; PE 0 prints. */
        if (me == npes - 1) uncontended_result = bench_median(v, o.runs);
        shmem_barrier_all();
        double got = 0;
        if (me == 0) shmem_getmem(&got, &uncontended_result, sizeof got, npes - 1);
        bench_report(me, "lock_uncontended", 8, npes, got, "us");
    }
    if (bench_want(&o, "lock_contended")) {
        contended(o.iters / 4 + 1, npes);
        for (int r = 0; r < o.runs; r++) v[r] = contended(o.iters, npes);
        bench_report(me, "lock_contended", 8, npes, bench_median(v, o.runs), "us");
    }
    shmem_finalize();
    return 0;
}
