/* pingpong_floor.c: what a same-host ping-pong costs with no library at
 * all: two processes on CPUs 0 and 1, one shared cache line each way,
 * release stores and acquiring spins. Prints the half round trip in
 * microseconds as bench_p2p does (median of 3 timed runs), so
 * scripts/bench_shared_cores.sh can set Shoal's and OSHMEM's ping-pong
 * against the machine's own floor in the same run. */
#ifndef _GNU_SOURCE /* the benchmark scripts pass -D_GNU_SOURCE */
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { RUNS = 3, LINE_LONGS = 16 };

static void pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    (void)sched_setaffinity(0, sizeof set, &set); /* best effort: taskset may already have chosen */
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    const long iters = argc > 1 ? atol(argv[1]) : 200000;
    _Atomic long *shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED || iters <= 0) return 1;
    _Atomic long *ping = shared, *pong = shared + LINE_LONGS; /* separate cache lines */
    const long total = iters * RUNS;
    pid_t child = fork();
    if (child < 0) return 1;
    pin(child == 0 ? 1 : 0);
    if (child == 0) {
        for (long i = 1; i <= total; i++) {
            while (atomic_load_explicit(ping, memory_order_acquire) != i) {}
            atomic_store_explicit(pong, i, memory_order_release);
        }
        _exit(0);
    }
    double us[RUNS];
    for (int r = 0; r < RUNS; r++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (long i = r * iters + 1; i <= (r + 1) * iters; i++) {
            atomic_store_explicit(ping, i, memory_order_release);
            while (atomic_load_explicit(pong, memory_order_acquire) != i) {}
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        us[r] = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / (double)iters / 2 / 1e3;
    }
    waitpid(child, NULL, 0);
    qsort(us, RUNS, sizeof us[0], cmp_double);
    printf("pingpong,8,2,%.4g,us\n", us[RUNS / 2]);
    return 0;
}
