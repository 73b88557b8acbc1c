/* fused_overlap: GEMM + all-reduce fused tile by tile (put_signal to the
 * tile's owner, reduce, put_signal the sum to every PE, as in
 * examples/gemm_allreduce.c) against compute-then-shmem_float_sum_reduce,
 * for square sizes S (C = A x B, S x S x S, K split over the PEs).
 * Standard OpenSHMEM only, so it builds with any implementation.
 *
 * For each size, each figure is the median over the runs of the slowest
 * PE's time (max-reduced):
 *   compute   the partial product alone, up to a barrier: the time with no
 *             communication at all (it includes waiting for the slowest PE,
 *             as the other figures do)
 *   reduce    shmem_float_sum_reduce of the partial alone
 *   unfused   compute, then sum_reduce
 *   fcomm     the fused pipeline's communication alone (same puts, sums
 *             and signals, tiles not computed)
 *   fused     the fused pipeline
 *   hidden    1 - (fused - compute) / (unfused - compute), clamped to
 *             [0, 1]: the share of the communication time that the unfused
 *             version adds to the computation and that fusion hides behind
 *             it ("-" when the unfused version adds nothing measurable)
 * The fused result is checked against the unfused one (relative 1e-4).
 *
 * Usage: oshrun -n 4 fused_overlap [-r RUNS] [-t TILE_ROWS] [SIZE...]
 *        (default: 7 runs, 16-row tiles, sizes 128 256 384 512) */
#define _POSIX_C_SOURCE 200809L
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_RUNS 101

static int me, npes;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static float input(unsigned i, unsigned j, unsigned which)
{
    uint32_t x = i * 2654435761u ^ (j + 0x9E3779B9u * which) * 0x85EBCA6Bu;
    x ^= x >> 13;
    x *= 0xC2B2AE35u;
    x ^= x >> 16;
    return (float)(x & 0xFFFF) / 32768.0f - 1.0f;
}

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

struct problem {
    int S, TR, T, owned, kn;
    size_t tile;
    float *a, *b, *part, *sum, *cp;  /* private */
    float *recv, *c, *cu;            /* symmetric */
    uint64_t *arrived, *done;        /* symmetric, cumulative over epochs */
    float *tmax, *tval;              /* symmetric scratch for the max-reduce of times */
    char *reduced;
};

/* One fused run; epoch counts runs from 1. Without compute the partial
 * tiles are taken from cp (computed before) instead of being computed. */
static void fused(struct problem *p, uint64_t epoch, int compute)
{
    const int T = p->T, TR = p->TR, S = p->S;
    int left = 0;
    memset(p->reduced, 0, (size_t)p->owned);
    for (int i = me; i < T; i += npes) left++;
    for (int step = 0; step <= T; step++) {
        if (step < T) {
            const int i = (step + me) % T, owner = i % npes, slot = i / npes;
            const float *src = p->cp + (size_t)i * p->tile;
            if (compute) {
                gemm_rows(p->part, p->a, p->b, i * TR, (i + 1) * TR, p->kn, S);
                src = p->part;
            }
            shmem_putmem_signal(p->recv + ((size_t)slot * npes + (size_t)me) * p->tile, src, p->tile * sizeof *src,
                                &p->arrived[slot], 1, SHMEM_SIGNAL_ADD, owner);
        }
        for (int slot = 0; slot < p->owned && left; slot++) {
            const int i = slot * npes + me;
            if (i >= T || p->reduced[slot]) continue;
            const uint64_t want = epoch * (uint64_t)npes;
            if (step < T && shmem_signal_fetch(&p->arrived[slot]) < want) continue;
            shmem_signal_wait_until(&p->arrived[slot], SHMEM_CMP_GE, want);
            const float *in = p->recv + (size_t)slot * npes * p->tile;
            memcpy(p->sum, in, p->tile * sizeof *p->sum);
            for (int q = 1; q < npes; q++)
                for (size_t e = 0; e < p->tile; e++) p->sum[e] += in[(size_t)q * p->tile + e];
            for (int q = 0; q < npes; q++)
                shmem_putmem_signal(p->c + (size_t)i * p->tile, p->sum, p->tile * sizeof *p->sum, &p->done[i], epoch,
                                    SHMEM_SIGNAL_SET, (me + q) % npes);
            p->reduced[slot] = 1;
            left--;
        }
    }
    shmem_uint64_wait_until_all(p->done, (size_t)T, NULL, SHMEM_CMP_EQ, epoch);
}

/* The slowest PE's time. */
static double slowest(struct problem *p, double t)
{
    *p->tval = (float)t;
    shmem_float_max_reduce(SHMEM_TEAM_WORLD, p->tmax, p->tval, 1);
    return *p->tmax;
}

static int run_size(int S, int TR, int runs, int *bad)
{
    struct problem P = {.S = S, .TR = TR};
    struct problem *p = &P;
    p->T = S / TR;
    p->owned = (p->T + npes - 1) / npes;
    p->tile = (size_t)TR * S;
    const int k0 = (int)((long)S * me / npes);
    p->kn = (int)((long)S * (me + 1) / npes) - k0;
    const size_t all = (size_t)S * S;
    p->a = malloc((size_t)S * p->kn * sizeof(float));
    p->b = malloc((size_t)p->kn * S * sizeof(float));
    p->part = malloc(p->tile * sizeof(float));
    p->sum = malloc(p->tile * sizeof(float));
    p->reduced = malloc((size_t)p->owned);
    p->recv = shmem_malloc((size_t)p->owned * npes * p->tile * sizeof(float));
    p->c = shmem_malloc(all * sizeof(float));
    p->cp = shmem_malloc(all * sizeof(float));
    p->cu = shmem_malloc(all * sizeof(float));
    p->arrived = shmem_calloc((size_t)p->owned, sizeof(uint64_t));
    p->done = shmem_calloc((size_t)p->T, sizeof(uint64_t));
    p->tmax = shmem_malloc(2 * sizeof(float));
    p->tval = p->tmax + 1;
    if (!p->recv || !p->c || !p->cp || !p->cu || !p->arrived || !p->done || !p->tmax) {
        if (me == 0) fprintf(stderr, "fused_overlap: symmetric heap too small for size %d\n", S);
        return 1;
    }
    for (int r = 0; r < S; r++)
        for (int k = 0; k < p->kn; k++) p->a[(size_t)r * p->kn + k] = input((unsigned)r, (unsigned)(k0 + k), 1);
    for (int k = 0; k < p->kn; k++)
        for (int j = 0; j < S; j++) p->b[(size_t)k * S + j] = input((unsigned)(k0 + k), (unsigned)j, 2);

    double tc[MAX_RUNS], tr[MAX_RUNS], tu[MAX_RUNS], tfc[MAX_RUNS], tf[MAX_RUNS];
    uint64_t epoch = 0;
    /* One warm-up of each, then the timed runs. Odd runs measure in the
     * reverse order, so neither version always goes first on a machine
     * whose load drifts. */
    double *times[5] = {tc, tr, tu, tfc, tf};
    for (int run = -1; run < runs; run++) {
        for (int m = 0; m < 5; m++) {
            const int what = (run & 1) ? 4 - m : m;
            shmem_barrier_all();
            const double t0 = now();
            switch (what) {
            case 0: /* compute */
                gemm_rows(p->cp, p->a, p->b, 0, S, p->kn, S);
                shmem_barrier_all();
                break;
            case 1: /* reduce */
                shmem_float_sum_reduce(SHMEM_TEAM_WORLD, p->cu, p->cp, all);
                break;
            case 2: /* unfused */
                gemm_rows(p->cp, p->a, p->b, 0, S, p->kn, S);
                shmem_float_sum_reduce(SHMEM_TEAM_WORLD, p->cu, p->cp, all);
                break;
            case 3: /* fused communication alone, tiles taken from cp */
                fused(p, ++epoch, 0);
                break;
            default: /* fused */
                fused(p, ++epoch, 1);
                break;
            }
            const double t = slowest(p, now() - t0);
            if (run >= 0) times[what][run] = t;
        }
    }
    for (size_t e = 0; e < all; e++) {
        float d = p->c[e] - p->cu[e], m = p->cu[e] < 0 ? -p->cu[e] : p->cu[e];
        if ((d < 0 ? -d : d) > 1e-4f * (m + 1.0f)) {
            if ((*bad)++ < 3) fprintf(stderr, "PE %d: size %d: C[%zu] fused %g, unfused %g\n", me, S, e, p->c[e], p->cu[e]);
        }
    }
    qsort(tc, (size_t)runs, sizeof(double), cmp_double);
    qsort(tr, (size_t)runs, sizeof(double), cmp_double);
    qsort(tu, (size_t)runs, sizeof(double), cmp_double);
    qsort(tfc, (size_t)runs, sizeof(double), cmp_double);
    qsort(tf, (size_t)runs, sizeof(double), cmp_double);
    const double c = tc[runs / 2], r = tr[runs / 2], u = tu[runs / 2], fc = tfc[runs / 2], f = tf[runs / 2];
    char hidden[16] = "-";
    if (u - c > 1e-6) {
        double h = 1 - (f - c) / (u - c);
        snprintf(hidden, sizeof hidden, "%.0f%%", 100 * (h < 0 ? 0 : h > 1 ? 1 : h));
    }
    if (me == 0)
        printf("%6d %4d %6d %10.3f %10.3f %10.3f %10.3f %10.3f %8.2f %7s\n", S, npes, p->T, 1e3 * c, 1e3 * r,
               1e3 * u, 1e3 * fc, 1e3 * f, f > 0 ? u / f : 0, hidden);
    fflush(stdout);
    shmem_barrier_all();
    shmem_free(p->tmax);
    shmem_free(p->done);
    shmem_free(p->arrived);
    shmem_free(p->cu);
    shmem_free(p->cp);
    shmem_free(p->c);
    shmem_free(p->recv);
    free(p->reduced);
    free(p->sum);
    free(p->part);
    free(p->b);
    free(p->a);
    return 0;
}

int main(int argc, char **argv)
{
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    int runs = 7, TR = 16, sizes[32], nsizes = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-r") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-t") && i + 1 < argc)
            TR = atoi(argv[++i]);
        else if (nsizes < 32)
            sizes[nsizes++] = atoi(argv[i]);
    }
    if (!nsizes) {
        const int def[] = {128, 256, 384, 512};
        for (int i = 0; i < 4; i++) sizes[nsizes++] = def[i];
    }
    if (runs < 1 || runs > MAX_RUNS || TR < 1) {
        if (me == 0) fprintf(stderr, "usage: fused_overlap [-r RUNS (1..%d)] [-t TILE_ROWS] [SIZE...]\n", MAX_RUNS);
        shmem_finalize();
        return 2;
    }
    if (me == 0)
        printf("# fused_overlap: GEMM (S x S x S, K split over PEs) + all-reduce; ms, median of %d runs, slowest PE\n"
               "#  size  PEs  tiles    compute     reduce    unfused      fcomm      fused  speedup  hidden\n",
               runs);
    int bad = 0;
    for (int s = 0; s < nsizes; s++) {
        if (sizes[s] < npes || sizes[s] % TR) {
            if (me == 0) fprintf(stderr, "fused_overlap: size %d skipped (a multiple of %d, at least the PEs)\n",
                                 sizes[s], TR);
            continue;
        }
        if (run_size(sizes[s], TR, runs, &bad)) bad++;
    }
    shmem_finalize();
    return bad ? 1 : 0;
}
