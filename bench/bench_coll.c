/* bench_coll: collective latency over all PEs, in the OpenSHMEM 1.4
 * active-set forms (PE_start 0, logPE_stride 0, PE_size npes, pSync/pWrk),
 * which both Shoal and a 1.4 library provide. Every figure is in us.
 *   barrier_all  shmem_barrier_all back to back (size 0)
 *   broadcast    shmem_broadcast64 from PE 0, size bytes
 *   broadcast_set  the same on the even PEs only (PE_start 0, logPE_stride
 *                1): an active set that is not a team; the mean is over its
 *                members
 *   collect      shmem_collect64, size bytes from each PE
 *   fcollect     shmem_fcollect64, size bytes from each PE
 *   alltoall     shmem_alltoall64, size bytes to each PE
 *   sum_reduce   shmem_long_sum_to_all over size bytes of long
 *   sum_inscan   shmem_long_sum_inscan on SHMEM_TEAM_WORLD, size bytes of
 *                long (OpenSHMEM 1.6: left out where the library is older)
 * Sizes 8 B to 1 MiB. As in the OSU benchmarks, each timed call is preceded
 * by an untimed shmem_barrier_all (so pSync reuse is always legal and calls
 * do not overlap); the figure is the mean over PEs of each PE's mean time
 * per call, median over the runs.
 * Usage: oshrun -n N bench_coll [options]   (see bench_util.h) */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

#define MAX2(a, b) ((a) > (b) ? (a) : (b))
#define SYNC_N MAX2(MAX2(SHMEM_BCAST_SYNC_SIZE, SHMEM_COLLECT_SYNC_SIZE), \
                    MAX2(SHMEM_REDUCE_SYNC_SIZE, SHMEM_ALLTOALL_SYNC_SIZE))

#if SHMEM_MAJOR_VERSION * 100 + SHMEM_MINOR_VERSION >= 106
#define HAVE_SCAN 1
#else
#define HAVE_SCAN 0
#endif

enum kind { BARRIER, BROADCAST, BROADCAST_SET, COLLECT, FCOLLECT, ALLTOALL, SUM_REDUCE, SUM_INSCAN, KINDS };
static const char *const names[KINDS] = {"barrier_all", "broadcast",  "broadcast_set", "collect",
                                         "fcollect",    "alltoall",   "sum_reduce",    "sum_inscan"};

/* Whether pe takes part in kind's calls. */
static int member(enum kind k, int pe) { return k != BROADCAST_SET || pe % 2 == 0; }

static long psync[2][SYNC_N];

static void call(enum kind k, long *dst, long *src, size_t nelems, int npes, long *pwrk, long *ps)
{
    switch (k) {
    case BARRIER: shmem_barrier_all(); break;
    case BROADCAST: shmem_broadcast64(dst, src, nelems, 0, 0, 0, npes, ps); break;
    case BROADCAST_SET: shmem_broadcast64(dst, src, nelems, 0, 0, 1, (npes + 1) / 2, ps); break;
    case COLLECT: shmem_collect64(dst, src, nelems, 0, 0, npes, ps); break;
    case FCOLLECT: shmem_fcollect64(dst, src, nelems, 0, 0, npes, ps); break;
    case ALLTOALL: shmem_alltoall64(dst, src, nelems, 0, 0, npes, ps); break;
    case SUM_REDUCE: shmem_long_sum_to_all(dst, src, (int)nelems, 0, 0, npes, pwrk, ps); break;
#if HAVE_SCAN
    case SUM_INSCAN: shmem_long_sum_inscan(SHMEM_TEAM_WORLD, dst, src, nelems); break;
#endif
    default: break;
    }
}

/* This PE's mean time per call over n calls, in us. */
static double run_once(enum kind k, long n, long *dst, long *src, size_t nelems, int npes, long *pwrk)
{
    if (k == BARRIER) {
        shmem_barrier_all();
        double t = bench_now_us();
        for (long i = 0; i < n; i++) shmem_barrier_all();
        return (bench_now_us() - t) / (double)n;
    }
    double sum = 0;
    for (long i = 0; i < n; i++) {
        shmem_barrier_all();
        if (!member(k, shmem_my_pe())) continue;
        double t = bench_now_us();
        call(k, dst, src, nelems, npes, pwrk, psync[i & 1]);
        sum += bench_now_us() - t;
    }
    return sum / (double)n;
}

int main(int argc, char **argv)
{
    bench_opts o = {.min_size = 8, .max_size = 1 << 20, .step = 4, .iters = 200, .scale_from = 65536, .runs = 5};
    if (bench_parse(argc, argv, &o)) return 2;
    shmem_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    char name[SHMEM_MAX_NAME_LEN];
    shmem_info_get_name(name);
    bench_header(me, "bench_coll", &o, npes, name, SHMEM_MAJOR_VERSION, SHMEM_MINOR_VERSION);
    const size_t max_longs = o.max_size / sizeof(long) ? o.max_size / sizeof(long) : 1;
    long *src = shmem_malloc(max_longs * sizeof(long) * (size_t)npes);
    long *dst = shmem_malloc(max_longs * sizeof(long) * (size_t)npes);
    long *pwrk = shmem_malloc(MAX2(max_longs / 2 + 1, SHMEM_REDUCE_MIN_WRKDATA_SIZE) * sizeof(long));
    /* On PE 0: pe_mean[pe * runs + r] is PE pe's mean time per call in run r. */
    double *pe_mean = shmem_malloc(sizeof(double) * (size_t)npes * (size_t)o.runs);
    if (!src || !dst || !pwrk || !pe_mean) {
        fprintf(stderr, "bench_coll: PE %d: cannot allocate the buffers\n", me);
        shmem_global_exit(1);
    }
    for (size_t i = 0; i < max_longs * (size_t)npes; i++) src[i] = me + (long)i;
    memset(dst, 0, max_longs * sizeof(long) * (size_t)npes);
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < SYNC_N; i++) psync[s][i] = SHMEM_SYNC_VALUE;
    shmem_barrier_all();
    for (int k = 0; k < KINDS; k++) {
        if (!bench_want(&o, names[k]) || (k == SUM_INSCAN && !HAVE_SCAN)) continue;
        for (size_t size = k == BARRIER ? 0 : o.min_size; ; size = bench_next_size(&o, size)) {
            const size_t nelems = size / sizeof(long) ? size / sizeof(long) : 1;
            const long n = bench_iters(&o, size);
            double v[BENCH_MAX_RUNS];
            run_once(k, n / 4 + 1, dst, src, nelems, npes, pwrk); /* warm-up */
            for (int r = 0; r < o.runs; r++) {
                double mine = run_once(k, n, dst, src, nelems, npes, pwrk);
                shmem_double_p(&pe_mean[me * o.runs + r], mine, 0);
            }
            shmem_barrier_all(); /* completes the shmem_double_p calls */
            if (me == 0) {
                int members = 0;
                for (int pe = 0; pe < npes; pe++) members += member(k, pe);
                for (int r = 0; r < o.runs; r++) {
                    v[r] = 0;
                    for (int pe = 0; pe < npes; pe++)
                        if (member(k, pe)) v[r] += pe_mean[pe * o.runs + r] / members;
                }
                bench_report(me, names[k], size, npes, bench_median(v, o.runs), "us");
            }
            if (k == BARRIER || bench_next_size(&o, size) == 0) break;
        }
    }
    /* The data must be right, or the figures mean nothing. */
    int bad = 0;
    shmem_barrier_all();
    shmem_long_sum_to_all(dst, src, (int)max_longs, 0, 0, npes, pwrk, psync[0]);
    for (size_t i = 0; i < max_longs; i++) bad |= dst[i] != (long)npes * (npes - 1) / 2 + (long)npes * (long)i;
    shmem_barrier_all();
    shmem_broadcast64(dst, src, max_longs, 0, 0, 0, npes, psync[1]);
    for (size_t i = 0; me != 0 && i < max_longs; i++) bad |= dst[i] != (long)i;
    memset(dst, 0, max_longs * sizeof(long));
    shmem_barrier_all();
    if (member(BROADCAST_SET, me)) shmem_broadcast64(dst, src, max_longs, 0, 0, 1, (npes + 1) / 2, psync[0]);
    for (size_t i = 0; me != 0 && member(BROADCAST_SET, me) && i < max_longs; i++) bad |= dst[i] != (long)i;
    if (bad) fprintf(stderr, "bench_coll: PE %d: wrong collective result\n", me);
    shmem_barrier_all();
    shmem_free(pe_mean);
    shmem_free(pwrk);
    shmem_free(dst);
    shmem_free(src);
    shmem_finalize();
    return bad;
}
