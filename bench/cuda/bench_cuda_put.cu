/* bench_cuda_put.cu: device-initiated puts between 2 PEs sharing one GPU
 * (issue 18) against host-driven cudaMemcpy into the peer's IPC mapping
 * (what cudaMemcpyPeer does between devices), in the same run.
 *   bandwidth: PE 0 writes S bytes to PE 1, R times: a kernel of blocks that
 *     each put a slice with shmemx_cuda_putmem_nbi_block then quiet, against
 *     R cudaMemcpyAsync calls; both timed with CUDA events, the two sides
 *     alternated over several trials, medians reported;
 *   latency: a ping-pong of 8-byte shmemx_cuda_p between the PEs' kernels
 *     (both kernels are resident at once only with MPS; without it the
 *     driver time-slices the two processes), against a host ping-pong of
 *     8-byte cudaMemcpy into the peer's memory with shmem flags.
 * Output: one line per figure, "name value unit", for scripts/gpu_check.sh.
 * Usage: oshrun -n 2 bench_cuda_put [--tiny] */
#include <cuda_runtime.h>
#include <shmemx_cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CUDA_OK(call)                                                                          \
    do {                                                                                       \
        cudaError_t e_ = (call);                                                               \
        if (e_ != cudaSuccess) {                                                               \
            fprintf(stderr, "PE %d: %s: %s\n", shmem_my_pe(), #call, cudaGetErrorString(e_)); \
            shmem_global_exit(1);                                                              \
        }                                                                                      \
    } while (0)

#define TRIALS 5

__global__ void put_kernel(char *dst, const char *src, size_t bytes, int reps, int pe)
{
    size_t slice = (bytes + gridDim.x - 1) / gridDim.x, off = slice * blockIdx.x;
    size_t len = off < bytes ? (bytes - off < slice ? bytes - off : slice) : 0;
    for (int r = 0; r < reps; r++)
        if (len) shmemx_cuda_putmem_nbi_block(dst + off, src + off, len, pe);
    if (threadIdx.x == 0) shmemx_cuda_quiet();
}

__global__ void pingpong_kernel(unsigned long long *flag, int iters, int me)
{
    int peer = 1 - me;
    for (unsigned long long i = 1; i <= (unsigned long long)iters; i++) {
        if (me == 0) {
            shmemx_cuda_p(flag, i, peer);
            while (*(volatile unsigned long long *)flag != i) { }
        } else {
            while (*(volatile unsigned long long *)flag != i) { }
            shmemx_cuda_p(flag, i, peer);
        }
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

int main(int argc, char **argv)
{
    int provided, tiny = argc > 1 && strcmp(argv[1], "--tiny") == 0;
    shmem_init_thread(SHMEM_THREAD_SINGLE, &provided);
    int me = shmem_my_pe();
    if (shmem_n_pes() != 2) {
        if (me == 0) fprintf(stderr, "bench_cuda_put: run with 2 PEs\n");
        shmem_finalize();
        return 1;
    }
    const size_t max = tiny ? 1 << 16 : 64 << 20;
    char *src = (char *)shmemx_gpu_malloc(max), *dst = (char *)shmemx_gpu_malloc(max);
    unsigned long long *flag = (unsigned long long *)shmemx_gpu_malloc(64);
    if (!src || !dst || !flag || shmemx_cuda_bind() != 0) {
        if (me == 0) fprintf(stderr, "bench_cuda_put: no GPU heap\n");
        shmem_finalize();
        return 1;
    }
    CUDA_OK(cudaMemset(src, me + 1, max));
    char *peer_dst = (char *)shmemx_gpu_ptr(dst, 1);
    cudaEvent_t e0, e1;
    CUDA_OK(cudaEventCreate(&e0));
    CUDA_OK(cudaEventCreate(&e1));
    int sms = 0;
    CUDA_OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    shmem_barrier_all();

    if (me == 0) {
        for (size_t bytes = 4096; bytes <= max; bytes *= 16) {
            int reps = tiny ? 2 : 20, blocks = bytes < (1 << 20) ? 1 : 2 * sms;
            double dev[TRIALS], cpy[TRIALS];
            for (int trial = 0; trial < TRIALS; trial++)
                for (int side = 0; side < 2; side++) {
                    /* Alternate which side goes first. */
                    int which = (trial + side) % 2;
                    float ms = 0;
                    CUDA_OK(cudaEventRecord(e0));
                    if (which == 0)
                        put_kernel<<<blocks, 512>>>(dst, src, bytes, reps, 1);
                    else
                        for (int r = 0; r < reps; r++) CUDA_OK(cudaMemcpyAsync(peer_dst, src, bytes, cudaMemcpyDefault));
                    CUDA_OK(cudaEventRecord(e1));
                    CUDA_OK(cudaEventSynchronize(e1));
                    CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
                    double gbps = (double)bytes * reps / (ms * 1e-3) / 1e9;
                    if (which == 0) dev[trial] = gbps; else cpy[trial] = gbps;
                }
            double d = median(dev, TRIALS), c = median(cpy, TRIALS);
            printf("put_bw_%zu device_put %.2f GB/s cudaMemcpy %.2f GB/s ratio %.2f\n", bytes, d, c, d / c);
        }
        fflush(stdout);
    }
    shmem_barrier_all();

    /* Latency: device ping-pong, then the host-driven one. */
    int iters = tiny ? 10 : 1000;
    CUDA_OK(cudaMemset(flag, 0, 64));
    shmem_barrier_all();
    double t0 = shmemx_wtime();
    pingpong_kernel<<<1, 1>>>(flag, iters, me);
    CUDA_OK(cudaDeviceSynchronize());
    double dev_lat = (shmemx_wtime() - t0) / iters / 2;
    shmem_barrier_all();
    long *hflag = (long *)shmem_calloc(1, sizeof(long));
    unsigned long long one = 1;
    shmem_barrier_all();
    t0 = shmemx_wtime();
    for (long i = 1; i <= iters; i++) {
        if (me == 0) {
            shmem_putmem(flag, &one, sizeof one, 1); /* cudaMemcpy into PE 1's GPU memory */
            shmem_long_p(hflag, i, 1);
            shmem_long_wait_until(hflag, SHMEM_CMP_EQ, i);
        } else {
            shmem_long_wait_until(hflag, SHMEM_CMP_EQ, i);
            shmem_putmem(flag, &one, sizeof one, 0);
            shmem_long_p(hflag, i, 0);
        }
    }
    double host_lat = (shmemx_wtime() - t0) / iters / 2;
    if (me == 0)
        printf("put_latency_8 device_p %.2f us host_cudaMemcpy %.2f us ratio %.2f\n", dev_lat * 1e6, host_lat * 1e6,
               host_lat / dev_lat);
    shmem_barrier_all();
    shmem_free(hflag);
    shmemx_gpu_free(flag);
    shmemx_gpu_free(dst);
    shmemx_gpu_free(src);
    shmem_finalize();
    return 0;
}
