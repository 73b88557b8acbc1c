/* rma_latency: 8-byte put and get latency between PE 0 and PE 1, and 1 MiB
 * put bandwidth next to this host's memcpy bandwidth, measured in the same
 * run. Standard OpenSHMEM only, so it builds with any implementation.
 * Usage: oshrun -n 2 rma_latency [iterations]   (each figure: median of 7 runs) */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RUNS 7
#define BIG (1 << 20)

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

static double median(double *v)
{
    qsort(v, RUNS, sizeof *v, cmp_double);
    return v[RUNS / 2];
}

int main(int argc, char **argv)
{
    shmem_init();
    int me = shmem_my_pe();
    long iters = argc > 1 ? atol(argv[1]) : 100000;
    long big_iters = iters / 100 > 10 ? iters / 100 : 10;
    char *small = shmem_malloc(64);
    char *big = shmem_malloc(BIG);
    char *local = malloc(BIG), *local2 = malloc(BIG);
    memset(local, 1, BIG);
    memset(local2, 2, BIG);
    memset(big, 3, BIG);
    double put_ns[RUNS], get_ns[RUNS], put_bw[RUNS], memcpy_bw[RUNS];
    int peer = shmem_n_pes() > 1 ? 1 : 0;
    shmem_barrier_all();
    for (int r = 0; r < RUNS; r++) {
        if (me == 0) {
            double t = now();
            for (long i = 0; i < iters; i++) {
                shmem_putmem(small, local, 8, peer);
                shmem_quiet();
            }
            put_ns[r] = (now() - t) / iters * 1e9;
            t = now();
            for (long i = 0; i < iters; i++) shmem_getmem(local, small, 8, peer);
            get_ns[r] = (now() - t) / iters * 1e9;
            t = now();
            for (long i = 0; i < big_iters; i++) {
                shmem_putmem(big, local, BIG, peer);
                shmem_quiet();
            }
            put_bw[r] = (double)BIG * big_iters / (now() - t) / 1e9;
            t = now();
            for (long i = 0; i < big_iters; i++) {
                memcpy(local2, local, BIG);
                __asm__ __volatile__("" ::: "memory");
            }
            memcpy_bw[r] = (double)BIG * big_iters / (now() - t) / 1e9;
        }
        shmem_barrier_all();
    }
    if (me == 0) {
        printf("pes=%d iterations=%ld runs=%d (medians)\n", shmem_n_pes(), iters, RUNS);
        printf("put 8 B latency      %8.1f ns\n", median(put_ns));
        printf("get 8 B latency      %8.1f ns\n", median(get_ns));
        double bw = median(put_bw), mc = median(memcpy_bw);
        printf("put 1 MiB bandwidth  %8.2f GB/s\n", bw);
        printf("memcpy 1 MiB         %8.2f GB/s\n", mc);
        printf("put / memcpy         %8.2f\n", bw / mc);
    }
    free(local);
    free(local2);
    shmem_free(big);
    shmem_free(small);
    shmem_finalize();
    return 0;
}
