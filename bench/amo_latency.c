/* amo_latency: latency of PE 0's 64-bit fetch_add and compare_swap on PE 1's
 * counter, of a shmem_long_p / shmem_long_wait_until ping-pong (half round
 * trip) and of a put_signal / signal_wait_until ping-pong with an 8-byte
 * payload (half round trip). Standard OpenSHMEM only, so it builds with any
 * implementation.
 * Usage: oshrun -n 2 amo_latency [iterations]   (each figure: median of 7 runs) */
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define RUNS 7

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
    const int me = shmem_my_pe();
    const long iters = argc > 1 ? atol(argv[1]) : 100000;
    const long pp_iters = iters / 4 > 10 ? iters / 4 : 10;
    const int peer = shmem_n_pes() > 1 ? 1 : 0, pair = shmem_n_pes() > 1 && me < 2;
    int64_t *counter = shmem_calloc(1, sizeof(int64_t));
    long *ping = shmem_calloc(1, sizeof(long)), *pong = shmem_calloc(1, sizeof(long));
    uint64_t *payload = shmem_calloc(2, sizeof(uint64_t));
    uint64_t *sig = shmem_calloc(1, sizeof(uint64_t));
    double fadd_ns[RUNS], cswap_ns[RUNS], pp_ns[RUNS], sig_ns[RUNS];
    long errors = 0;
    shmem_barrier_all();
    for (int r = 0; r < RUNS; r++) {
        /* fetch_add and compare_swap: PE 0 on PE 1's counter. */
        if (me == 0) {
            double t = now();
            int64_t last = 0;
            for (long i = 0; i < iters; i++) last = shmem_int64_atomic_fetch_add(counter, 1, peer);
            fadd_ns[r] = (now() - t) / iters * 1e9;
            int64_t v = last + 1;
            t = now();
            for (long i = 0; i < iters; i++) {
                int64_t old = shmem_int64_atomic_compare_swap(counter, v, v + 1, peer);
                errors += old != v;
                v++;
            }
            cswap_ns[r] = (now() - t) / iters * 1e9;
            shmem_int64_atomic_set(counter, 0, peer);
        }
        shmem_barrier_all();
        /* p + wait_until ping-pong: round i sends i + 1 both ways. */
        *ping = 0;
        *pong = 0;
        shmem_barrier_all();
        if (pair) {
            double t = now();
            for (long i = 1; i <= pp_iters; i++) {
                if (me == 0) {
                    shmem_long_p(ping, i, peer);
                    shmem_long_wait_until(pong, SHMEM_CMP_EQ, i);
                } else {
                    shmem_long_wait_until(ping, SHMEM_CMP_EQ, i);
                    shmem_long_p(pong, i, 0);
                }
            }
            pp_ns[r] = (now() - t) / pp_iters / 2 * 1e9;
        } else {
            pp_ns[r] = 0;
        }
        shmem_barrier_all();
        /* put_signal ping-pong: 8-byte payload, the signal counts the rounds. */
        *sig = 0;
        shmem_barrier_all();
        if (pair) {
            const int other = me == 0 ? peer : 0;
            double t = now();
            for (long i = 1; i <= pp_iters; i++) {
                uint64_t word = (uint64_t)i * 3;
                if (me == 0) {
                    shmem_putmem_signal(&payload[0], &word, 8, sig, 1, SHMEM_SIGNAL_ADD, other);
                    shmem_signal_wait_until(sig, SHMEM_CMP_GE, (uint64_t)i);
                    errors += payload[1] != (uint64_t)i * 3;
                } else {
                    shmem_signal_wait_until(sig, SHMEM_CMP_GE, (uint64_t)i);
                    errors += payload[0] != (uint64_t)i * 3;
                    shmem_putmem_signal(&payload[1], &word, 8, sig, 1, SHMEM_SIGNAL_ADD, other);
                }
            }
            sig_ns[r] = (now() - t) / pp_iters / 2 * 1e9;
        } else {
            sig_ns[r] = 0;
        }
        shmem_barrier_all();
    }
    if (me == 0) {
        printf("pes=%d iterations=%ld ping-pong rounds=%ld runs=%d (medians)\n", shmem_n_pes(), iters, pp_iters, RUNS);
        printf("fetch_add 64-bit latency          %8.1f ns\n", median(fadd_ns));
        printf("compare_swap 64-bit latency       %8.1f ns\n", median(cswap_ns));
        printf("p + wait_until ping-pong (half)   %8.1f ns\n", median(pp_ns));
        printf("put_signal ping-pong 8 B (half)   %8.1f ns\n", median(sig_ns));
    }
    if (errors) fprintf(stderr, "PE %d: %ld wrong values seen\n", me, errors);
    shmem_free(sig);
    shmem_free(payload);
    shmem_free(pong);
    shmem_free(ping);
    shmem_free(counter);
    shmem_finalize();
    return errors ? 1 : 0;
}
