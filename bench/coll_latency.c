/* coll_latency: latency of the collectives on SHMEM_TEAM_WORLD: team sync
 * (barrier without completion), 8-byte and 1 MiB long sum reduction, and
 * 8-byte and 1 MiB broadcast from PE 0. Each call is issued back to back,
 * as applications do. Standard OpenSHMEM 1.5 only, so it builds with any
 * implementation.
 * Usage: oshrun -n N coll_latency [iterations]
 * Each figure is the median of 7 runs of PE 0's mean time per call; 1 MiB
 * operations run iterations/100 times (at least 10). */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RUNS 7
#define BIG_LONGS (1 << 17) /* 1 MiB of long */

enum { SYNC, RED8, RED1M, BC8, BC1M, KINDS };
static const char *const names[KINDS] = {"team_sync", "long sum_reduce 8 B", "long sum_reduce 1 MiB",
                                         "broadcastmem 8 B", "broadcastmem 1 MiB"};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Mean microseconds per call of kind over n calls. */
static double time_kind(int kind, long n, long *src, long *dst)
{
    double t = now();
    for (long i = 0; i < n; i++) {
        switch (kind) {
        case SYNC: shmem_team_sync(SHMEM_TEAM_WORLD); break;
        case RED8: shmem_long_sum_reduce(SHMEM_TEAM_WORLD, dst, src, 1); break;
        case RED1M: shmem_long_sum_reduce(SHMEM_TEAM_WORLD, dst, src, BIG_LONGS); break;
        case BC8: shmem_broadcastmem(SHMEM_TEAM_WORLD, dst, src, 8, 0); break;
        case BC1M: shmem_broadcastmem(SHMEM_TEAM_WORLD, dst, src, BIG_LONGS * sizeof(long), 0); break;
        }
    }
    return (now() - t) / (double)n * 1e6;
}

int main(int argc, char **argv)
{
    shmem_init();
    int me = shmem_my_pe();
    long iters = argc > 1 ? atol(argv[1]) : 10000;
    if (iters < 1) iters = 1;
    long big_iters = iters / 100 > 10 ? iters / 100 : 10;
    long *src = shmem_malloc(BIG_LONGS * sizeof(long));
    long *dst = shmem_malloc(BIG_LONGS * sizeof(long));
    for (long i = 0; i < BIG_LONGS; i++) src[i] = me + i;
    memset(dst, 0, BIG_LONGS * sizeof(long));
    double us[KINDS][RUNS];
    shmem_barrier_all();
    for (int k = 0; k < KINDS; k++) {
        long n = k == RED1M || k == BC1M ? big_iters : iters;
        time_kind(k, n / 10 + 1, src, dst); /* warm up pages and caches */
        for (int r = 0; r < RUNS; r++) {
            shmem_barrier_all();
            us[k][r] = time_kind(k, n, src, dst);
        }
    }
    /* The data must be right, or the figures mean nothing. */
    int npes = shmem_n_pes(), bad = 0;
    shmem_long_sum_reduce(SHMEM_TEAM_WORLD, dst, src, BIG_LONGS);
    for (long i = 0; i < BIG_LONGS; i++)
        bad |= dst[i] != (long)npes * (npes - 1) / 2 + (long)npes * i;
    if (me == 0) {
        printf("pes=%d iterations=%ld runs=%d (median of PE 0's mean per call)\n", npes, iters, RUNS);
        for (int k = 0; k < KINDS; k++) {
            qsort(us[k], RUNS, sizeof us[k][0], cmp_double);
            printf("%-24s %10.2f us\n", names[k], us[k][RUNS / 2]);
        }
    }
    if (bad) fprintf(stderr, "PE %d: wrong sum reduction result\n", me);
    shmem_finalize();
    return bad;
}
