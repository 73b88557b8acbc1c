/* gemm_allreduce: C = A x B with the K dimension split over the PEs, so each
 * PE holds a partial C that must be summed over all PEs (an all-reduce), as
 * in a row-parallel linear layer.
 *
 * Fused: C is cut into tiles of TR rows; tile i is owned by PE i % npes. As
 * soon as a PE has computed its partial of a tile it sends it to the owner
 * with put_signal (the signal counts arrived partials). Between tiles every
 * PE checks its own tiles; one whose npes partials are in is summed and sent
 * to every PE, again with put_signal. Communication and the remaining
 * compute overlap.
 * Unfused: compute the whole partial C, then shmem_float_sum_reduce.
 * Both are checked against a serial product computed in double.
 *
 * Usage: oshrun -n 4 gemm_allreduce [M N K [TR]]   (default 128 128 512 16) */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Deterministic inputs in [-1, 1): element (i, j) of matrix `which`. */
static float input(unsigned i, unsigned j, unsigned which)
{
    uint32_t x = i * 2654435761u ^ (j + 0x9E3779B9u * which) * 0x85EBCA6Bu;
    x ^= x >> 13;
    x *= 0xC2B2AE35u;
    x ^= x >> 16;
    return (float)(x & 0xFFFF) / 32768.0f - 1.0f;
}

static double absd(double x) { return x < 0 ? -x : x; }

/* out[r][j] = sum_k a[r][k] * b[k][j] for rows [r0, r1); a is M x kn, b kn x n. */
static void gemm_rows(float *out, const float *a, const float *b, int r0, int r1, int kn, int n)
{
    for (int r = r0; r < r1; r++) {
        float *o = out + (size_t)(r - r0) * n;
        memset(o, 0, (size_t)n * sizeof *o);
        for (int k = 0; k < kn; k++) {
            const float av = a[(size_t)r * kn + k], *bk = b + (size_t)k * n;
            for (int j = 0; j < n; j++) o[j] += av * bk[j];
        }
    }
}

int main(int argc, char **argv)
{
    shmem_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    const int M = argc > 1 ? atoi(argv[1]) : 128, N = argc > 2 ? atoi(argv[2]) : 128;
    const int K = argc > 3 ? atoi(argv[3]) : 512, TR = argc > 4 ? atoi(argv[4]) : 16;
    if (M <= 0 || N <= 0 || K < npes || TR <= 0 || M % TR) {
        if (me == 0) fprintf(stderr, "usage: gemm_allreduce [M N K [TR]] with TR dividing M and K >= PEs\n");
        shmem_finalize();
        return 2;
    }
    const int T = M / TR;                             /* tiles */
    const int owned = (T + npes - 1) / npes;          /* most tiles one PE owns */
    const size_t tile = (size_t)TR * N;               /* floats per tile */
    const int k0 = (int)((long)K * me / npes), k1 = (int)((long)K * (me + 1) / npes), kn = k1 - k0;

    /* This PE's slices: the columns k0..k1 of A and the rows k0..k1 of B. */
    float *a = malloc((size_t)M * kn * sizeof *a), *b = malloc((size_t)kn * N * sizeof *b);
    float *part = malloc(tile * sizeof *part), *sum = malloc(tile * sizeof *sum);
    for (int r = 0; r < M; r++)
        for (int k = 0; k < kn; k++) a[(size_t)r * kn + k] = input((unsigned)r, (unsigned)(k0 + k), 1);
    for (int k = 0; k < kn; k++)
        for (int j = 0; j < N; j++) b[(size_t)k * N + j] = input((unsigned)(k0 + k), (unsigned)j, 2);

    /* Symmetric: partials of the tiles this PE owns, one slot per sender;
     * the result on every PE; one signal per owned tile and per tile. */
    float *recv = shmem_malloc((size_t)owned * npes * tile * sizeof *recv);
    float *c = shmem_malloc((size_t)M * N * sizeof *c);
    uint64_t *arrived = shmem_calloc((size_t)owned, sizeof *arrived);
    uint64_t *done = shmem_calloc((size_t)T, sizeof *done);
    float *cp = shmem_malloc((size_t)M * N * sizeof *cp), *cu = shmem_malloc((size_t)M * N * sizeof *cu);
    char *reduced = calloc((size_t)owned, 1);
    shmem_barrier_all();

    /* ---- fused ---- */
    double t0 = now();
    int left = 0; /* owned tiles not yet reduced */
    for (int i = me; i < T; i += npes) left++;
    for (int step = 0; step <= T; step++) {
        if (step < T) {
            /* PE p starts at tile p, so at each step the owners differ. */
            const int i = (step + me) % T, owner = i % npes, slot = i / npes;
            gemm_rows(part, a, b, i * TR, (i + 1) * TR, kn, N);
            shmem_putmem_signal(recv + ((size_t)slot * npes + (size_t)me) * tile, part, tile * sizeof *part,
                                &arrived[slot], 1, SHMEM_SIGNAL_ADD, owner);
        }
        /* Reduce every owned tile whose partials are all in; after the last
         * step, wait for the rest. */
        for (int slot = 0; slot < owned && left; slot++) {
            const int i = slot * npes + me;
            if (i >= T || reduced[slot]) continue;
            if (step < T && shmem_signal_fetch(&arrived[slot]) < (uint64_t)npes) continue;
            shmem_signal_wait_until(&arrived[slot], SHMEM_CMP_GE, (uint64_t)npes);
            const float *in = recv + (size_t)slot * npes * tile;
            memcpy(sum, in, tile * sizeof *sum);
            for (int p = 1; p < npes; p++)
                for (size_t e = 0; e < tile; e++) sum[e] += in[(size_t)p * tile + e];
            for (int q = 0; q < npes; q++) {
                const int pe = (me + q) % npes;
                shmem_putmem_signal(c + (size_t)i * tile, sum, tile * sizeof *sum, &done[i], 1, SHMEM_SIGNAL_SET, pe);
            }
            reduced[slot] = 1;
            left--;
        }
    }
    shmem_uint64_wait_until_all(done, (size_t)T, NULL, SHMEM_CMP_EQ, 1);
    double t_fused = now() - t0;
    shmem_barrier_all();

    /* ---- unfused: compute everything, then reduce ---- */
    t0 = now();
    gemm_rows(cp, a, b, 0, M, kn, N);
    double t_compute = now() - t0;
    shmem_float_sum_reduce(SHMEM_TEAM_WORLD, cu, cp, (size_t)M * N);
    double t_unfused = now() - t0;

    /* ---- check the rows r = me (mod npes) of both against a serial product ---- */
    long bad = 0;
    double worst = 0;
    for (int r = me; r < M; r += npes)
        for (int j = 0; j < N; j++) {
            double ref = 0, mag = 0;
            for (int k = 0; k < K; k++) {
                double p = (double)input((unsigned)r, (unsigned)k, 1) * input((unsigned)k, (unsigned)j, 2);
                ref += p;
                mag += absd(p);
            }
            /* float summation of K + npes terms in any order: |error| <= n * eps * sum|terms| */
            const double tol = (double)(K + npes) * FLT_EPSILON * mag + 1e-30;
            const double ef = absd(c[(size_t)r * N + j] - ref), eu = absd(cu[(size_t)r * N + j] - ref);
            if (ef > tol || eu > tol) {
                if (bad++ < 5)
                    fprintf(stderr, "PE %d: C[%d][%d] fused %.7g unfused %.7g, serial %.7g (tolerance %.3g)\n", me, r,
                            j, c[(size_t)r * N + j], cu[(size_t)r * N + j], ref, tol);
            }
            if (ef / (mag + 1e-30) > worst) worst = ef / (mag + 1e-30);
        }
    if (me == 0)
        printf("gemm_allreduce: %dx%dx%d on %d PEs, %d tiles of %d rows: fused %.2f ms, unfused %.2f ms "
               "(compute %.2f ms + reduce %.2f ms); largest relative error %.1e\n",
               M, N, K, npes, T, TR, 1e3 * t_fused, 1e3 * t_unfused, 1e3 * t_compute, 1e3 * (t_unfused - t_compute),
               worst);
    if (bad) fprintf(stderr, "PE %d: %ld element(s) of C differ from the serial product\n", me, bad);
    else if (me == 0) printf("gemm_allreduce: fused and unfused results match the serial product\n");

    shmem_barrier_all();
    shmem_free(cu);
    shmem_free(cp);
    shmem_free(done);
    shmem_free(arrived);
    shmem_free(c);
    shmem_free(recv);
    free(reduced);
    free(sum);
    free(part);
    free(b);
    free(a);
    shmem_finalize();
    return bad ? 1 : 0;
}
