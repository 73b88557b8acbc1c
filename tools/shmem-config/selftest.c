/* shoal-selftest: the program behind `shmem-config --check`. Written
 * against the standard OpenSHMEM API only. Each test checks the data it
 * moved, on every PE, and times one operation per iteration; PE 0 prints
 * each test's result and its median latency. Exit status 1 when any PE
 * saw a wrong value. */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define ITERS 400
#define REDUCE_N 16

enum { T_PUT, T_GET, T_FADD, T_BARRIER, T_REDUCE, T_COUNT };
static const char *const test_names[T_COUNT] = {
    "put (long, 8 B) + quiet", "get (long, 8 B)", "atomic fetch_add", "barrier_all", "sum_reduce (16 longs)"};

static double samples[ITERS];
static int me, npes;

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(void)
{
    qsort(samples, ITERS, sizeof samples[0], by_value);
    return samples[ITERS / 2];
}

/* Counts a wrong value; only the first one per test is described. */
static long fail(long fails, const char *test, long i, long got, long want)
{
    if (fails == 0)
        fprintf(stderr, "shoal-selftest: PE %d: %s: iteration %ld: got %ld, expected %ld\n", me, test, i, got,
                want);
    return fails + 1;
}

static long test_put(long *dest)
{
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;
    long fails = 0;
    for (long i = 0; i < ITERS; i++) {
        double t0 = now_us();
        shmem_long_p(&dest[i], me * 100000L + i, right);
        shmem_quiet();
        samples[i] = now_us() - t0;
    }
    shmem_barrier_all();
    for (long i = 0; i < ITERS; i++)
        if (dest[i] != left * 100000L + i) fails = fail(fails, "put", i, dest[i], left * 100000L + i);
    return fails;
}

static long test_get(long *value)
{
    int right = (me + 1) % npes;
    long fails = 0;
    *value = 7000 + me;
    shmem_barrier_all();
    for (long i = 0; i < ITERS; i++) {
        double t0 = now_us();
        long got = shmem_long_g(value, right);
        samples[i] = now_us() - t0;
        if (got != 7000 + right) fails = fail(fails, "get", i, got, 7000 + right);
    }
    return fails;
}

/* Every PE adds 1 to a counter on PE 0 ITERS times: each PE must fetch
 * strictly increasing values, and the total must be exact. */
static long test_fetch_add(long *counter)
{
    long fails = 0, last = -1;
    for (long i = 0; i < ITERS; i++) {
        double t0 = now_us();
        long old = shmem_long_atomic_fetch_add(counter, 1, 0);
        samples[i] = now_us() - t0;
        if (old <= last || old >= (long)npes * ITERS) fails = fail(fails, "fetch_add", i, old, last + 1);
        last = old;
    }
    shmem_barrier_all();
    long total = shmem_long_atomic_fetch(counter, 0);
    if (total != (long)npes * ITERS) fails = fail(fails, "fetch_add total", ITERS, total, (long)npes * ITERS);
    return fails;
}

/* Each PE counts its arrival on PE 0 before barrier i; after it, all n
 * arrivals of round i are visible and no PE can be past round i+1. */
static long test_barrier(long *arrivals)
{
    long fails = 0;
    for (long i = 0; i < ITERS; i++) {
        shmem_long_atomic_add(arrivals, 1, 0);
        double t0 = now_us();
        shmem_barrier_all();
        samples[i] = now_us() - t0;
        long seen = shmem_long_atomic_fetch(arrivals, 0);
        long low = (long)npes * (i + 1), high = low + npes - 1;
        if (seen < low || seen > high) fails = fail(fails, "barrier_all", i, seen, low);
    }
    return fails;
}

static long test_reduce(long *src, long *dest)
{
    long fails = 0;
    for (long i = 0; i < ITERS; i++) {
        for (int k = 0; k < REDUCE_N; k++) src[k] = me + k + i;
        double t0 = now_us();
        int rc = shmem_long_sum_reduce(SHMEM_TEAM_WORLD, dest, src, REDUCE_N);
        samples[i] = now_us() - t0;
        if (rc != 0) fails = fail(fails, "sum_reduce return code", i, rc, 0);
        for (int k = 0; k < REDUCE_N; k++) {
            long want = (long)npes * (k + i) + (long)npes * (npes - 1) / 2;
            if (dest[k] != want) fails = fail(fails, "sum_reduce", i, dest[k], want);
        }
    }
    return fails;
}

int main(void)
{
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    long *data = shmem_calloc(ITERS + 3 + 2 * REDUCE_N, sizeof(long));
    long *fails_at_0 = shmem_calloc(T_COUNT, sizeof(long)); /* failing PEs per test, on PE 0 */
    if (!data || !fails_at_0) {
        fprintf(stderr, "shoal-selftest: PE %d: shmem_calloc failed\n", me);
        shmem_global_exit(1);
    }
    if (me == 0)
        printf("shoal-selftest: Shoal %s, OpenSHMEM %d.%d, %d PEs, %d iterations per test\n", SHOAL_VERSION_STRING,
               SHMEM_MAJOR_VERSION, SHMEM_MINOR_VERSION, npes, ITERS);

    long local_fails = 0;
    double latency[T_COUNT];
    for (int t = 0; t < T_COUNT; t++) {
        long f = 0;
        shmem_barrier_all();
        switch (t) {
        case T_PUT: f = test_put(data); break;
        case T_GET: f = test_get(data + ITERS); break;
        case T_FADD: f = test_fetch_add(data + ITERS + 1); break;
        case T_BARRIER: f = test_barrier(data + ITERS + 2); break;
        case T_REDUCE: f = test_reduce(data + ITERS + 3, data + ITERS + 3 + REDUCE_N); break;
        }
        latency[t] = median();
        if (f) shmem_long_atomic_add(&fails_at_0[t], 1, 0);
        local_fails += f;
    }
    shmem_barrier_all();

    int failed_tests = 0;
    if (me == 0) {
        for (int t = 0; t < T_COUNT; t++) {
            long failing_pes = shmem_long_atomic_fetch(&fails_at_0[t], 0);
            if (failing_pes) {
                failed_tests++;
                printf("  %-26s FAILED on %ld of %d PEs\n", test_names[t], failing_pes, npes);
            } else {
                printf("  %-26s ok  %9.2f us (median, PE 0)\n", test_names[t], latency[t]);
            }
        }
        if (failed_tests)
            printf("shoal-selftest: %d of %d tests FAILED\n", failed_tests, T_COUNT);
        else
            printf("shoal-selftest: all %d tests passed\n", T_COUNT);
        fflush(stdout);
    }
    shmem_free(fails_at_0);
    shmem_free(data);
    shmem_finalize();
    return local_fails || failed_tests ? 1 : 0;
}
