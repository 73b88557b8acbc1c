/* gemm_reducescatter: C = A x B with K split over the PEs, the sum of the
 * partials scattered by rows: PE d ends up with its block of rows of C only
 * (the reduce-scatter after a row-parallel layer in tensor parallelism).
 *
 * Fused: each PE computes its partial tile by tile (TR rows), visiting the
 * row blocks of the other PEs first in ring order (me+1, me+2, ...) and its
 * own last, and sends each tile to its owner with put_signal into a slot of
 * its own (the signal counts arrived partials). Between tiles a PE sums
 * those of its own tiles whose partials are all in, so the reduction of
 * early tiles overlaps the computation of later ones.
 * Unfused: compute the whole partial, shmem_float_sum_reduce all of C, keep
 * the own rows. Both are checked against a serial product in double.
 *
 * Usage: oshrun -n 4 gemm_reducescatter [M N K [TR]]   (default 128 128 512 16) */
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

/* Tiles are dealt out in contiguous blocks: PE p owns tiles [first(p), first(p+1)). */
static int first_tile(int p, int T, int npes) { return (int)((long)T * p / npes); }

int main(int argc, char **argv)
{
    shmem_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    const int M = argc > 1 ? atoi(argv[1]) : 128, N = argc > 2 ? atoi(argv[2]) : 128;
    const int K = argc > 3 ? atoi(argv[3]) : 512, TR = argc > 4 ? atoi(argv[4]) : 16;
    if (M <= 0 || N <= 0 || K < npes || TR <= 0 || M % TR) {
        if (me == 0) fprintf(stderr, "usage: gemm_reducescatter [M N K [TR]] with TR dividing M and K >= PEs\n");
        shmem_finalize();
        return 2;
    }
    const int T = M / TR, maxown = (T + npes - 1) / npes;
    const size_t tile = (size_t)TR * N;
    const int k0 = (int)((long)K * me / npes), k1 = (int)((long)K * (me + 1) / npes), kn = k1 - k0;
    const int my_first = first_tile(me, T, npes), my_tiles = first_tile(me + 1, T, npes) - my_first;

    float *a = malloc((size_t)M * kn * sizeof *a), *b = malloc((size_t)kn * N * sizeof *b);
    float *part = malloc(tile * sizeof *part);
    float *mine = calloc((size_t)maxown * tile, sizeof *mine); /* the fused result: own rows */
    for (int r = 0; r < M; r++)
        for (int k = 0; k < kn; k++) a[(size_t)r * kn + k] = input((unsigned)r, (unsigned)(k0 + k), 1);
    for (int k = 0; k < kn; k++)
        for (int j = 0; j < N; j++) b[(size_t)k * N + j] = input((unsigned)(k0 + k), (unsigned)j, 2);

    float *recv = shmem_malloc((size_t)maxown * npes * tile * sizeof *recv); /* [own tile][sender][tile] */
    uint64_t *arrived = shmem_calloc((size_t)maxown, sizeof *arrived);
    float *cp = shmem_malloc((size_t)M * N * sizeof *cp), *cu = shmem_malloc((size_t)M * N * sizeof *cu);
    char *reduced = calloc((size_t)maxown, 1);
    shmem_barrier_all();

    /* ---- fused ---- */
    double t0 = now();
    int pending = my_tiles;
    for (int s = 1; s <= npes; s++) {
        const int d = (me + s) % npes, f = first_tile(d, T, npes), nt = first_tile(d + 1, T, npes) - f;
        for (int lt = 0; lt <= nt; lt++) {
            if (lt < nt) {
                const int i = f + lt;
                gemm_rows(part, a, b, i * TR, (i + 1) * TR, kn, N);
                shmem_putmem_signal(recv + ((size_t)lt * npes + (size_t)me) * tile, part, tile * sizeof *part,
                                    &arrived[lt], 1, SHMEM_SIGNAL_ADD, d);
            }
            /* Sum the own tiles that are complete; at the very end, wait for the rest. */
            const int last = s == npes && lt == nt;
            for (int o = 0; o < my_tiles && pending; o++) {
                if (reduced[o]) continue;
                if (!last && shmem_signal_fetch(&arrived[o]) < (uint64_t)npes) continue;
                shmem_signal_wait_until(&arrived[o], SHMEM_CMP_GE, (uint64_t)npes);
                const float *in = recv + (size_t)o * npes * tile;
                float *out = mine + (size_t)o * tile;
                memcpy(out, in, tile * sizeof *out);
                for (int p = 1; p < npes; p++)
                    for (size_t e = 0; e < tile; e++) out[e] += in[(size_t)p * tile + e];
                reduced[o] = 1;
                pending--;
            }
        }
    }
    double t_fused = now() - t0;
    shmem_barrier_all();

    /* ---- unfused ---- */
    t0 = now();
    gemm_rows(cp, a, b, 0, M, kn, N);
    double t_compute = now() - t0;
    shmem_float_sum_reduce(SHMEM_TEAM_WORLD, cu, cp, (size_t)M * N);
    double t_unfused = now() - t0;

    /* ---- check the own rows of both against a serial product ---- */
    long bad = 0;
    for (int r = my_first * TR; r < (my_first + my_tiles) * TR; r++)
        for (int j = 0; j < N; j++) {
            double ref = 0, mag = 0;
            for (int k = 0; k < K; k++) {
                double p = (double)input((unsigned)r, (unsigned)k, 1) * input((unsigned)k, (unsigned)j, 2);
                ref += p;
                mag += absd(p);
            }
            const double tol = (double)(K + npes) * FLT_EPSILON * mag + 1e-30;
            const float f = mine[(size_t)(r - my_first * TR) * N + j], u = cu[(size_t)r * N + j];
            if (absd(f - ref) > tol || absd(u - ref) > tol) {
                if (bad++ < 5)
                    fprintf(stderr, "PE %d: C[%d][%d] fused %.7g unfused %.7g, serial %.7g (tolerance %.3g)\n", me, r,
                            j, f, u, ref, tol);
            }
        }
    if (me == 0)
        printf("gemm_reducescatter: %dx%dx%d on %d PEs, %d tiles of %d rows: fused %.2f ms, unfused %.2f ms "
               "(compute %.2f ms + reduce %.2f ms)\n",
               M, N, K, npes, T, TR, 1e3 * t_fused, 1e3 * t_unfused, 1e3 * t_compute, 1e3 * (t_unfused - t_compute));
    if (bad) fprintf(stderr, "PE %d: %ld element(s) of its rows differ from the serial product\n", me, bad);
    else printf("gemm_reducescatter: PE %d rows %d..%d match the serial product\n", me, my_first * TR,
                (my_first + my_tiles) * TR - 1);

    shmem_barrier_all();
    shmem_free(cu);
    shmem_free(cp);
    shmem_free(arrived);
    shmem_free(recv);
    free(reduced);
    free(mine);
    free(part);
    free(b);
    free(a);
    shmem_finalize();
    return bad ? 1 : 0;
}
