/* device_api.cu: the device API between PEs of one host (issue 18): puts
 * and gets in thread, warp and block forms (odd sizes, unaligned), p and
 * g, _nbi with quiet, 64-bit atomics from many threads, put_signal checked
 * chunk by chunk by the receiver inside its kernel, and the block barrier
 * (a value put before barrier k is seen after it). */
#include "gpu_test.h"

#include <string.h>

#define CHUNK 65536
#define ROUNDS 40
#define SIG_CHUNK 4096
#define BARRIERS 100
#define AMO_BLOCKS 4
#define AMO_THREADS 64

struct bufs {
    char *src, *dst_thread, *dst_warp, *dst_block, *dst_nbi, *got_block, *got_warp, *sig_data, *sig_src;
    int *ints;
    unsigned long long *counter, *lock, *winners, *swapword, *bar_vals;
    uint64_t *sig, *sig_warp;
    unsigned long long *fetched; /* AMO_BLOCKS * AMO_THREADS, this PE's fetch_add results */
    int *errors;                 /* device counters of mismatches seen in kernels */
    int *g_value;
};

__global__ void rma_kernel(struct bufs b, int next)
{
    int me = shmemx_cuda_my_pe();
    unsigned t = threadIdx.x;
    if (t == 0) shmemx_cuda_putmem(b.dst_thread, b.src, 5000, next);
    if (t < 32) shmemx_cuda_putmem_warp(b.dst_warp + 1, b.src + 1, 7777, next);
    shmemx_cuda_putmem_block(b.dst_block, b.src, CHUNK, next);
    if (t == 5) shmemx_cuda_p(&b.ints[me], me * 10 + 1, next);
    if (t == 33) {
        shmemx_cuda_putmem_nbi(b.dst_nbi, b.src + 100, 1000, next);
        shmemx_cuda_quiet();
    }
    shmemx_cuda_barrier_all_block();
    if (t == 0) *b.g_value = shmemx_cuda_g(&b.ints[me], next);
    shmemx_cuda_getmem_block(b.got_block, b.dst_block, CHUNK, next);
    if (t < 32) shmemx_cuda_getmem_warp(b.got_warp, b.dst_warp + 1, 7777, next);
    shmemx_cuda_barrier_all_block();
}

__global__ void amo_kernel(struct bufs b, int next)
{
    int me = shmemx_cuda_my_pe();
    unsigned id = blockIdx.x * blockDim.x + threadIdx.x;
    b.fetched[id] = shmemx_cuda_atomic_fetch_add(b.counter, 1, 0);
    if (shmemx_cuda_atomic_compare_swap(b.lock, 0, (unsigned long long)me * 100000 + id + 1, 0) == 0)
        shmemx_cuda_atomic_add(b.winners, 1, 0);
    if (id == 0) shmemx_cuda_atomic_swap(b.swapword, (unsigned long long)me + 1, next);
}

__global__ void signal_kernel(struct bufs b, int next, int prev)
{
    unsigned t = threadIdx.x;
    for (int i = 0; i < ROUNDS; i++) {
        shmemx_cuda_putmem_signal_block(b.sig_data + (size_t)i * SIG_CHUNK, b.sig_src + (size_t)i * SIG_CHUNK,
                                        SIG_CHUNK, b.sig, 1, SHMEM_SIGNAL_ADD, next);
        if (t < 32)
            shmemx_cuda_putmem_signal_warp(b.dst_warp + i, b.src + i, 1, b.sig_warp, (uint64_t)i + 1,
                                           SHMEM_SIGNAL_SET, next);
        if (t == 0) shmemx_cuda_signal_wait_until(b.sig, SHMEM_CMP_GE, (uint64_t)i + 1);
        __syncthreads();
        /* Chunk i from prev is complete once its signal is seen. */
        const volatile char *chunk = b.sig_data + (size_t)i * SIG_CHUNK;
        for (unsigned k = t; k < SIG_CHUNK; k += blockDim.x)
            if (chunk[k] != (char)(prev * 31 + i + (int)k)) atomicAdd(b.errors, 1);
        __syncthreads();
    }
    if (t == 0 && shmemx_cuda_signal_wait_until(b.sig_warp, SHMEM_CMP_EQ, ROUNDS) != ROUNDS) atomicAdd(b.errors + 1, 1);
    for (int k = 1; k <= BARRIERS; k++) {
        if (t == 0) shmemx_cuda_p(&b.bar_vals[0], (unsigned long long)k, next);
        shmemx_cuda_barrier_all_block();
        if (t == 0 && *(volatile unsigned long long *)&b.bar_vals[0] != (unsigned long long)k) atomicAdd(b.errors + 2, 1);
        shmemx_cuda_barrier_all_block();
    }
}

static size_t count_bad(const char *got, size_t len, int pe, size_t first)
{
    size_t bad = 0;
    for (size_t i = 0; i < len; i++) bad += got[i] != (char)test_pattern(pe, first + i, 1);
    return bad;
}

int main(void)
{
    char *heap = (char *)gpu_test_start(SHMEM_THREAD_SINGLE, 64);
    int me = shmem_my_pe(), n = shmem_n_pes(), next = (me + 1) % n, prev = (me + n - 1) % n;
    struct bufs b;
    b.src = (char *)shmemx_gpu_malloc(CHUNK);
    b.dst_thread = (char *)shmemx_gpu_malloc(CHUNK);
    b.dst_warp = (char *)shmemx_gpu_malloc(CHUNK);
    b.dst_block = (char *)shmemx_gpu_malloc(CHUNK);
    b.dst_nbi = (char *)shmemx_gpu_malloc(CHUNK);
    b.sig_data = (char *)shmemx_gpu_malloc((size_t)ROUNDS * SIG_CHUNK);
    b.ints = (int *)shmemx_gpu_malloc((size_t)n * sizeof(int));
    b.counter = (unsigned long long *)shmemx_gpu_malloc(8 * sizeof(unsigned long long));
    b.lock = b.counter + 1;
    b.winners = b.counter + 2;
    b.swapword = b.counter + 3;
    b.bar_vals = b.counter + 4;
    b.sig = (uint64_t *)(b.counter + 5);
    b.sig_warp = (uint64_t *)(b.counter + 6);
    CUDA_OK(cudaMalloc((void **)&b.got_block, CHUNK));
    CUDA_OK(cudaMalloc((void **)&b.got_warp, CHUNK));
    CUDA_OK(cudaMalloc((void **)&b.sig_src, (size_t)ROUNDS * SIG_CHUNK));
    CUDA_OK(cudaMalloc((void **)&b.fetched, AMO_BLOCKS * AMO_THREADS * sizeof(unsigned long long)));
    CUDA_OK(cudaMalloc((void **)&b.errors, 3 * sizeof(int)));
    CUDA_OK(cudaMalloc((void **)&b.g_value, sizeof(int)));
    CUDA_OK(cudaMemset(b.errors, 0, 3 * sizeof(int)));
    CUDA_OK(cudaMemset(b.counter, 0, 8 * sizeof(unsigned long long)));
    char *host = (char *)malloc((size_t)ROUNDS * SIG_CHUNK), *got = (char *)malloc(CHUNK);
    for (size_t i = 0; i < CHUNK; i++) host[i] = (char)test_pattern(me, i, 1);
    CUDA_OK(cudaMemcpy(b.src, host, CHUNK, cudaMemcpyHostToDevice));
    for (size_t i = 0; i < (size_t)ROUNDS * SIG_CHUNK; i++)
        host[i] = (char)(me * 31 + (int)(i / SIG_CHUNK) + (int)(i % SIG_CHUNK));
    CUDA_OK(cudaMemcpy(b.sig_src, host, (size_t)ROUNDS * SIG_CHUNK, cudaMemcpyHostToDevice));
    shmem_barrier_all();

    rma_kernel<<<1, 128>>>(b, next);
    CUDA_OK(cudaDeviceSynchronize());
    shmem_barrier_all();
    CUDA_OK(cudaMemcpy(got, b.dst_thread, 5000, cudaMemcpyDeviceToHost));
    CHECK_MSG(count_bad(got, 5000, prev, 0) == 0, "thread put");
    CUDA_OK(cudaMemcpy(got, b.dst_warp + 1, 7777, cudaMemcpyDeviceToHost));
    CHECK_MSG(count_bad(got, 7777, prev, 1) == 0, "warp put");
    CUDA_OK(cudaMemcpy(got, b.dst_block, CHUNK, cudaMemcpyDeviceToHost));
    CHECK_MSG(count_bad(got, CHUNK, prev, 0) == 0, "block put");
    CUDA_OK(cudaMemcpy(got, b.dst_nbi, 1000, cudaMemcpyDeviceToHost));
    CHECK_MSG(count_bad(got, 1000, prev, 100) == 0, "nbi put");
    CUDA_OK(cudaMemcpy(got, b.got_block, CHUNK, cudaMemcpyDeviceToHost));
    CHECK_MSG(count_bad(got, CHUNK, me, 0) == 0, "block get");
    CUDA_OK(cudaMemcpy(got, b.got_warp, 7777, cudaMemcpyDeviceToHost));
    CHECK_MSG(count_bad(got, 7777, me, 1) == 0, "warp get");
    int ints_prev = 0, gv = 0;
    CUDA_OK(cudaMemcpy(&ints_prev, &b.ints[prev], sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(&gv, b.g_value, sizeof(int), cudaMemcpyDeviceToHost));
    CHECK_MSG(ints_prev == prev * 10 + 1, "p: %d", ints_prev);
    CHECK_MSG(gv == me * 10 + 1, "g: %d", gv);

    amo_kernel<<<AMO_BLOCKS, AMO_THREADS>>>(b, next);
    CUDA_OK(cudaDeviceSynchronize());
    shmem_barrier_all();
    /* PE 0 gathers every PE's fetched values through the host heap. */
    const size_t per_pe = AMO_BLOCKS * AMO_THREADS, total = per_pe * (size_t)n;
    unsigned long long *all = (unsigned long long *)shmem_malloc(total * sizeof(unsigned long long));
    unsigned long long *mine = (unsigned long long *)malloc(per_pe * sizeof(unsigned long long));
    CUDA_OK(cudaMemcpy(mine, b.fetched, per_pe * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
    shmem_putmem(all + per_pe * (size_t)me, mine, per_pe * sizeof(unsigned long long), 0);
    shmem_barrier_all();
    unsigned long long words[8];
    CUDA_OK(cudaMemcpy(words, b.counter, sizeof words, cudaMemcpyDeviceToHost));
    CHECK_MSG(words[3] == (unsigned long long)prev + 1, "swap left %llu", words[3]);
    if (me == 0) {
        CHECK_MSG(words[0] == total, "counter %llu, expected %zu", words[0], total);
        CHECK_MSG(words[2] == 1, "%llu compare_swap winners", words[2]);
        char *seen = (char *)calloc(total, 1);
        for (size_t k = 0; k < total; k++) {
            CHECK_MSG(all[k] < total && !seen[all[k]], "fetch_add value %llu repeated or out of range", all[k]);
            if (all[k] < total) seen[all[k]] = 1;
        }
        free(seen);
    }

    signal_kernel<<<1, 256>>>(b, next, prev);
    CUDA_OK(cudaDeviceSynchronize());
    int errors[3];
    CUDA_OK(cudaMemcpy(errors, b.errors, sizeof errors, cudaMemcpyDeviceToHost));
    CHECK_MSG(errors[0] == 0, "%d bytes seen wrong after their signal", errors[0]);
    CHECK_MSG(errors[1] == 0, "warp signal not %d", ROUNDS);
    CHECK_MSG(errors[2] == 0, "%d barriers let a value put before them go unseen", errors[2]);
    shmem_barrier_all();

    (void)heap;
    shmem_free(all);
    free(mine);
    free(host);
    free(got);
    shmem_finalize();
    return test_finish();
}
