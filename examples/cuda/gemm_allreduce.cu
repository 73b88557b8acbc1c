/* gemm_allreduce.cu: C = A x B with K split over the PEs, each PE's partial
 * product summed over all PEs (an all-reduce), computed on the GPU.
 *
 * Fused: one kernel. Each block computes tiles of this PE's partial C and,
 * as soon as a tile is finished, pushes it from inside the kernel to every
 * PE's receive buffer with a block-wide put_signal (the signal counts the
 * partials of that tile). Then each block waits for the npes partials of
 * its tiles and sums them in PE order, so every PE ends with the same C.
 * Unfused: a GEMM kernel, then the partial goes to the host heap and
 * shmem_float_sum_reduce sums it, then back to the GPU.
 * Both are checked against a serial product in double on the host, and
 * their times printed (best of --reps runs).
 *
 * Usage: oshrun -n 2 gemm_allreduce [M N K [reps]]   (default 256 256 512 3) */
#include <cuda_runtime.h>
#include <math.h>
#include <shmemx_cuda.h>
#include <stdio.h>
#include <stdlib.h>

#define TILE 32

#define CUDA_OK(call)                                                                          \
    do {                                                                                       \
        cudaError_t e_ = (call);                                                               \
        if (e_ != cudaSuccess) {                                                               \
            fprintf(stderr, "PE %d: %s: %s\n", shmem_my_pe(), #call, cudaGetErrorString(e_)); \
            shmem_global_exit(1);                                                              \
        }                                                                                      \
    } while (0)

static float input(unsigned i, unsigned j, unsigned which)
{
    uint32_t x = i * 2654435761u ^ (j + 0x9E3779B9u * which) * 0x85EBCA6Bu;
    x ^= x >> 13;
    x *= 0xC2B2AE35u;
    x ^= x >> 16;
    return (float)(x & 0xFFFF) / 32768.0f - 1.0f;
}

/* out (TILE x TILE, row-major, stride TILE) = tile (ti, tj) of a (M x kn) x b (kn x N). */
__device__ void tile_gemm(float *out, const float *a, const float *b, int ti, int tj, int kn, int N)
{
    __shared__ float as[TILE][TILE], bs[TILE][TILE];
    int tx = threadIdx.x % TILE, ty = threadIdx.x / TILE; /* blockDim.x = TILE * TILE / 4: 4 rows each */
    float acc[4] = {0, 0, 0, 0};
    for (int k0 = 0; k0 < kn; k0 += TILE) {
        for (int r = ty; r < TILE; r += TILE / 4) {
            as[r][tx] = a[(size_t)(ti * TILE + r) * kn + k0 + tx];
            bs[r][tx] = b[(size_t)(k0 + r) * N + tj * TILE + tx];
        }
        __syncthreads();
        for (int k = 0; k < TILE; k++)
            for (int q = 0; q < 4; q++) acc[q] += as[ty + q * (TILE / 4)][k] * bs[k][tx];
        __syncthreads();
    }
    for (int q = 0; q < 4; q++) out[(ty + q * (TILE / 4)) * TILE + tx] = acc[q];
}

/* recv: npes x tiles x TILE*TILE floats (GPU heap); sig: one word per tile. */
__global__ void fused(float *c, float *recv, uint64_t *sig, float *stage, const float *a, const float *b, int M, int N,
                      int kn, uint64_t round)
{
    const int me = shmemx_cuda_my_pe(), npes = shmemx_cuda_n_pes();
    const int tn = N / TILE, tiles = (M / TILE) * tn;
    const size_t tile_elems = TILE * TILE;
    float *mine = stage + (size_t)blockIdx.x * tile_elems;
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
        tile_gemm(mine, a, b, t / tn, t % tn, kn, N);
        __syncthreads();
        /* The finished tile goes to every PE at once, while other tiles compute. */
        for (int k = 0; k < npes; k++) {
            int pe = (me + k) % npes;
            shmemx_cuda_putmem_signal_block(recv + ((size_t)me * tiles + t) * tile_elems, mine,
                                            tile_elems * sizeof(float), &sig[t], 1, SHMEM_SIGNAL_ADD, pe);
        }
    }
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
        if (threadIdx.x == 0) shmemx_cuda_signal_wait_until(&sig[t], SHMEM_CMP_GE, round * (uint64_t)npes);
        __syncthreads();
        int ti = t / tn, tj = t % tn;
        for (size_t e = threadIdx.x; e < tile_elems; e += blockDim.x) {
            float s = 0;
            /* Past L1: the peers wrote these while this kernel ran. */
            for (int p = 0; p < npes; p++) s += __ldcg(&recv[((size_t)p * tiles + t) * tile_elems + e]);
            c[(size_t)(ti * TILE + e / TILE) * N + tj * TILE + e % TILE] = s;
        }
    }
}

__global__ void gemm(float *c, const float *a, const float *b, int N, int kn)
{
    __shared__ float out[TILE * TILE];
    const int tn = N / TILE, t = blockIdx.x, ti = t / tn, tj = t % tn;
    tile_gemm(out, a, b, ti, tj, kn, N);
    __syncthreads();
    for (int e = threadIdx.x; e < TILE * TILE; e += blockDim.x)
        c[(size_t)(ti * TILE + e / TILE) * N + tj * TILE + e % TILE] = out[e];
}

static int check(const char *what, const float *c, const double *ref, int M, int N, int K)
{
    int bad = 0;
    for (size_t i = 0; i < (size_t)M * N; i++)
        if (fabs(c[i] - ref[i]) > 1e-4 * K) {
            if (bad++ < 5) fprintf(stderr, "PE %d %s: C[%zu] = %g, expected %g\n", shmem_my_pe(), what, i, c[i], ref[i]);
        }
    return bad;
}

int main(int argc, char **argv)
{
    int provided;
    shmem_init_thread(SHMEM_THREAD_SINGLE, &provided);
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    const int M = argc > 1 ? atoi(argv[1]) : 256, N = argc > 2 ? atoi(argv[2]) : 256;
    const int K = argc > 3 ? atoi(argv[3]) : 512, reps = argc > 4 ? atoi(argv[4]) : 3;
    if (M % TILE || N % TILE || K % (TILE * npes) || reps < 1) {
        if (me == 0) fprintf(stderr, "gemm_allreduce: M, N multiples of %d, K of %d, reps >= 1\n", TILE, TILE * npes);
        shmem_finalize();
        return 1;
    }
    const int kn = K / npes, k0 = me * kn, tiles = (M / TILE) * (N / TILE);
    const size_t tile_bytes = TILE * TILE * sizeof(float);
    float *recv = (float *)shmemx_gpu_malloc((size_t)npes * tiles * tile_bytes);
    uint64_t *sig = (uint64_t *)shmemx_gpu_malloc((size_t)tiles * sizeof(uint64_t));
    if (!recv || !sig || shmemx_cuda_bind() != 0) {
        if (me == 0) fprintf(stderr, "gemm_allreduce: no GPU heap (no GPU, or SHMEM_GPU_SYMMETRIC_SIZE too small)\n");
        shmem_finalize();
        return 1;
    }
    CUDA_OK(cudaMemset(sig, 0, (size_t)tiles * sizeof(uint64_t)));

    /* This PE's slice: A[:, k0:k0+kn] and B[k0:k0+kn, :]. */
    float *ha = (float *)malloc((size_t)M * kn * sizeof(float)), *hb = (float *)malloc((size_t)kn * N * sizeof(float));
    for (int i = 0; i < M; i++)
        for (int k = 0; k < kn; k++) ha[(size_t)i * kn + k] = input((unsigned)i, (unsigned)(k0 + k), 1);
    for (int k = 0; k < kn; k++)
        for (int j = 0; j < N; j++) hb[(size_t)k * N + j] = input((unsigned)(k0 + k), (unsigned)j, 2);
    float *a, *b, *c, *stage;
    int sms = 0;
    CUDA_OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const int grid = tiles < 2 * sms ? tiles : 2 * sms;
    CUDA_OK(cudaMalloc((void **)&a, (size_t)M * kn * sizeof(float)));
    CUDA_OK(cudaMalloc((void **)&b, (size_t)kn * N * sizeof(float)));
    CUDA_OK(cudaMalloc((void **)&c, (size_t)M * N * sizeof(float)));
    CUDA_OK(cudaMalloc((void **)&stage, (size_t)grid * tile_bytes));
    CUDA_OK(cudaMemcpy(a, ha, (size_t)M * kn * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(b, hb, (size_t)kn * N * sizeof(float), cudaMemcpyHostToDevice));

    /* The serial reference, in double, over the whole K. */
    double *ref = (double *)calloc((size_t)M * N, sizeof(double));
    for (int i = 0; i < M; i++)
        for (int k = 0; k < K; k++) {
            double av = input((unsigned)i, (unsigned)k, 1);
            for (int j = 0; j < N; j++) ref[(size_t)i * N + j] += av * input((unsigned)k, (unsigned)j, 2);
        }
    float *hc = (float *)malloc((size_t)M * N * sizeof(float));
    float *sym = (float *)shmem_malloc((size_t)M * N * sizeof(float));
    double best_fused = 1e30, best_unfused = 1e30;
    int bad = 0;
    for (int r = 1; r <= reps; r++) {
        /* Fused; the receive buffers are free again once every PE is past the previous round. */
        shmem_barrier_all();
        double t0 = shmemx_wtime();
        fused<<<grid, TILE * TILE / 4>>>(c, recv, sig, stage, a, b, M, N, kn, (uint64_t)r);
        CUDA_OK(cudaDeviceSynchronize());
        shmem_barrier_all();
        double t1 = shmemx_wtime();
        if (t1 - t0 < best_fused) best_fused = t1 - t0;
        CUDA_OK(cudaMemcpy(hc, c, (size_t)M * N * sizeof(float), cudaMemcpyDeviceToHost));
        bad += check("fused", hc, ref, M, N, K);
        CUDA_OK(cudaMemset(c, 0, (size_t)M * N * sizeof(float)));

        /* Unfused: GEMM, then Shoal's all-reduce on the host heap. */
        shmem_barrier_all();
        t0 = shmemx_wtime();
        gemm<<<tiles, TILE * TILE / 4>>>(c, a, b, N, kn);
        CUDA_OK(cudaMemcpy(sym, c, (size_t)M * N * sizeof(float), cudaMemcpyDeviceToHost));
        shmem_float_sum_reduce(SHMEM_TEAM_WORLD, sym, sym, (size_t)M * N);
        CUDA_OK(cudaMemcpy(c, sym, (size_t)M * N * sizeof(float), cudaMemcpyHostToDevice));
        shmem_barrier_all();
        t1 = shmemx_wtime();
        if (t1 - t0 < best_unfused) best_unfused = t1 - t0;
        CUDA_OK(cudaMemcpy(hc, c, (size_t)M * N * sizeof(float), cudaMemcpyDeviceToHost));
        bad += check("unfused", hc, ref, M, N, K);
    }
    int total_bad = 0;
    int *bads = (int *)shmem_calloc(1, sizeof(int));
    shmem_int_atomic_add(bads, bad, 0);
    shmem_barrier_all();
    total_bad = shmem_int_g(bads, 0);
    if (me == 0) {
        printf("gemm_allreduce: %d PEs, M=%d N=%d K=%d, best of %d: fused %.3f ms, unfused (GEMM then "
               "shmem_float_sum_reduce) %.3f ms, ratio %.2f; %s\n", npes, M, N, K, reps, best_fused * 1e3,
               best_unfused * 1e3, best_unfused / best_fused, total_bad ? "MISMATCH" : "checked against the serial product");
    }
    shmem_free(bads);
    shmem_free(sym);
    shmemx_gpu_free(sig);
    shmemx_gpu_free(recv);
    free(ha);
    free(hb);
    free(hc);
    free(ref);
    shmem_finalize();
    return total_bad ? 1 : 0;
}
