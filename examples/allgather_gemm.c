/* allgather_gemm: Y = X x W where X (M x K) is split by rows over the PEs
 * and W (K x N) by columns; each PE needs all of X to compute its columns of
 * Y (the all-gather before a column-parallel layer in tensor parallelism).
 *
 * Fused: each PE sends its rows of X tile by tile (TR rows) to every other
 * PE with put_signal, one signal per tile, and computes the product of each
 * of its own tiles right after sending it. Then it takes the other PEs'
 * shards in ring order (me-1, me-2, ...), waiting for each tile's signal
 * and multiplying it as soon as it is there: the product of one tile
 * overlaps the arrival of the next.
 * Unfused: shmem_float_fcollect all of X, then one product.
 * Both are checked against a serial product in double.
 *
 * Usage: oshrun -n 4 allgather_gemm [M N K [TR]]   (default 128 128 512 8; M a multiple of the PEs) */
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

static float input(unsigned i, unsigned j, unsigned which)
{
    uint32_t x = i * 2654435761u ^ (j + 0x9E3779B9u * which) * 0x85EBCA6Bu;
    x ^= x >> 13;
    x *= 0xC2B2AE35u;
    x ^= x >> 16;
    return (float)(x & 0xFFFF) / 32768.0f - 1.0f;
}

static double absd(double x) { return x < 0 ? -x : x; }

/* y[r][:] = x[r][:] x w for rows r of x (rows x K), w is K x nc, y rows x nc. */
static void gemm_rows(float *y, const float *x, const float *w, int rows, int K, int nc)
{
    for (int r = 0; r < rows; r++) {
        float *o = y + (size_t)r * nc;
        memset(o, 0, (size_t)nc * sizeof *o);
        for (int k = 0; k < K; k++) {
            const float xv = x[(size_t)r * K + k], *wk = w + (size_t)k * nc;
            for (int j = 0; j < nc; j++) o[j] += xv * wk[j];
        }
    }
}

int main(int argc, char **argv)
{
    shmem_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    const int M = argc > 1 ? atoi(argv[1]) : 128, N = argc > 2 ? atoi(argv[2]) : 128;
    const int K = argc > 3 ? atoi(argv[3]) : 512, TR = argc > 4 ? atoi(argv[4]) : 8;
    if (M <= 0 || N < npes || K <= 0 || TR <= 0 || M % npes) {
        if (me == 0) fprintf(stderr, "usage: allgather_gemm [M N K [TR]] with M a multiple of the PEs, N >= PEs\n");
        shmem_finalize();
        return 2;
    }
    const int rows = M / npes;                        /* rows of X per PE */
    const int tiles = (rows + TR - 1) / TR;           /* tiles per shard; the last may be short */
    const int c0 = (int)((long)N * me / npes), nc = (int)((long)N * (me + 1) / npes) - c0;

    /* Symmetric: all of X (shard p at rows p*rows), one signal per tile. */
    float *x = shmem_malloc((size_t)M * K * sizeof *x);
    uint64_t *ready = shmem_calloc((size_t)npes * tiles, sizeof *ready);
    float *xu = shmem_malloc((size_t)M * K * sizeof *xu), *xs = shmem_malloc((size_t)rows * K * sizeof *xs);
    float *w = malloc((size_t)K * nc * sizeof *w);
    float *y = malloc((size_t)M * nc * sizeof *y), *yu = malloc((size_t)M * nc * sizeof *yu);
    float *own = x + (size_t)me * rows * K;
    for (int r = 0; r < rows; r++)
        for (int k = 0; k < K; k++) own[(size_t)r * K + k] = input((unsigned)(me * rows + r), (unsigned)k, 3);
    for (int k = 0; k < K; k++)
        for (int j = 0; j < nc; j++) w[(size_t)k * nc + j] = input((unsigned)k, (unsigned)(c0 + j), 4);
    shmem_barrier_all();

    /* ---- fused ---- */
    double t0 = now();
    for (int t = 0; t < tiles; t++) {
        const int r0 = t * TR, nr = rows - r0 < TR ? rows - r0 : TR;
        const float *src = own + (size_t)r0 * K;
        for (int q = 1; q < npes; q++)
            shmem_putmem_signal_nbi(x + ((size_t)me * rows + r0) * K, src, (size_t)nr * K * sizeof *src,
                                    &ready[me * tiles + t], 1, SHMEM_SIGNAL_SET, (me + q) % npes);
        gemm_rows(y + ((size_t)me * rows + r0) * nc, src, w, nr, K, nc);
    }
    for (int q = 1; q < npes; q++) {
        const int p = (me - q + npes) % npes;
        for (int t = 0; t < tiles; t++) {
            const int r0 = t * TR, nr = rows - r0 < TR ? rows - r0 : TR;
            shmem_signal_wait_until(&ready[p * tiles + t], SHMEM_CMP_EQ, 1);
            gemm_rows(y + ((size_t)p * rows + r0) * nc, x + ((size_t)p * rows + r0) * K, w, nr, K, nc);
        }
    }
    shmem_quiet(); /* the nbi puts of the own shard are complete */
    double t_fused = now() - t0;
    shmem_barrier_all();

    /* ---- unfused ---- */
    /* A collective's source is the same symmetric object on every PE. */
    memcpy(xs, own, (size_t)rows * K * sizeof *xs);
    shmem_barrier_all();
    t0 = now();
    shmem_float_fcollect(SHMEM_TEAM_WORLD, xu, xs, (size_t)rows * K);
    double t_gather = now() - t0;
    gemm_rows(yu, xu, w, M, K, nc);
    double t_unfused = now() - t0;

    /* ---- check the own columns of Y, both ways, against a serial product ---- */
    long bad = 0;
    for (int r = 0; r < M; r++)
        for (int j = 0; j < nc; j++) {
            double ref = 0, mag = 0;
            for (int k = 0; k < K; k++) {
                double p = (double)input((unsigned)r, (unsigned)k, 3) * input((unsigned)k, (unsigned)(c0 + j), 4);
                ref += p;
                mag += absd(p);
            }
            const double tol = (double)K * FLT_EPSILON * mag + 1e-30;
            const float f = y[(size_t)r * nc + j], u = yu[(size_t)r * nc + j];
            if (absd(f - ref) > tol || absd(u - ref) > tol) {
                if (bad++ < 5)
                    fprintf(stderr, "PE %d: Y[%d][%d] fused %.7g unfused %.7g, serial %.7g (tolerance %.3g)\n", me, r,
                            c0 + j, f, u, ref, tol);
            }
        }
    if (me == 0)
        printf("allgather_gemm: %dx%dx%d on %d PEs, %d tiles of %d rows per shard: fused %.2f ms, unfused %.2f ms "
               "(gather %.2f ms + compute %.2f ms)\n",
               M, N, K, npes, tiles, TR, 1e3 * t_fused, 1e3 * t_unfused, 1e3 * t_gather, 1e3 * (t_unfused - t_gather));
    if (bad) fprintf(stderr, "PE %d: %ld element(s) of its columns differ from the serial product\n", me, bad);
    else printf("allgather_gemm: PE %d columns %d..%d match the serial product\n", me, c0, c0 + nc - 1);

    shmem_barrier_all();
    shmem_free(xs);
    shmem_free(xu);
    shmem_free(ready);
    shmem_free(x);
    free(yu);
    free(y);
    free(w);
    shmem_finalize();
    return bad ? 1 : 0;
}
