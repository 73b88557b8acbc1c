/* barrier_floor.c: what a same-host barrier costs with no library when
 * processes outnumber cores: N processes (argument 1), one shared counter
 * and one release word; each arrival is one atomic add, the last arrival
 * stores the barrier's number, and the others yield between polls (a
 * spinning waiter would hold the core the last arrival needs). Every
 * process must run once per barrier, so on 2 cores the cost is set by the
 * kernel's context switch. Prints microseconds per barrier as bench_coll
 * does (median of 3 timed runs), so scripts/bench_shared_cores.sh can set
 * Shoal's and OSHMEM's barrier against the machine's own floor in the same
 * run. */
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

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    const int procs = argc > 1 ? atoi(argv[1]) : 4;
    const long iters = argc > 2 ? atol(argv[2]) : 20000;
    _Atomic long *shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED || procs < 2 || iters <= 0) return 1;
    _Atomic long *arrive = shared, *release = shared + LINE_LONGS; /* separate cache lines */
    int me = 0;
    for (int i = 1; i < procs && me == 0; i++) {
        pid_t child = fork();
        if (child < 0) return 1;
        if (child == 0) me = i;
    }
    double us[RUNS];
    long epoch = 0;
    for (int r = 0; r < RUNS; r++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (long i = 0; i < iters; i++) {
            epoch++;
            const long old = atomic_fetch_add_explicit(arrive, 1, memory_order_acq_rel);
            if ((old + 1) % procs == 0)
                atomic_store_explicit(release, epoch, memory_order_release);
            else
                while (atomic_load_explicit(release, memory_order_acquire) < epoch) sched_yield();
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        us[r] = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / (double)iters / 1e3;
    }
    if (me != 0) _exit(0);
    while (wait(NULL) > 0) {}
    qsort(us, RUNS, sizeof us[0], cmp_double);
    printf("barrier_all,0,%d,%.4g,us\n", procs, us[RUNS / 2]);
    return 0;
}
