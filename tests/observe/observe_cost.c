/* observe_cost.c: what recording costs per call (docs/observability.md,
 * "What it costs"): the best of 7 runs of N (default 2000000) 8-byte
 * shmem_putmem to this PE, in nanoseconds of the thread's CPU time, which
 * a loaded machine's preemptions do not inflate. Run it with SHMEM_TRACE
 * and SHMEM_STATS unset, set, and against another build of the library.
 * A measurement, not a test: nothing is asserted. */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    const long n = argc > 1 ? atol(argv[1]) : 2000000;
    shmem_init();
    long *dst = shmem_malloc(64);
    long v = 1;
    double best = 1e30;
    for (int r = 0; r < 7 && n > 0; r++) {
        double t0 = cpu_ns();
        for (long i = 0; i < n; i++) shmem_putmem(dst, &v, sizeof v, shmem_my_pe());
        double t = (cpu_ns() - t0) / (double)n;
        if (t < best) best = t;
    }
    if (shmem_my_pe() == 0) printf("%.2f ns per 8-byte shmem_putmem (CPU time, best of 7 x %ld)\n", best, n);
    shmem_free(dst);
    shmem_finalize();
    return 0;
}
