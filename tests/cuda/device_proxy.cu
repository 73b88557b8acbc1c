/* device_proxy.cu: kernels reaching the host symmetric heap through the
 * proxy (issue 18), the path PEs on other hosts take; run on shared memory
 * and over the TLS transport. Many threads post at once (ring contention):
 * puts from GPU memory, p, g, fetch_add on PE 0, put_signal that the
 * receiving host waits for, then quiet. */
#include "gpu_test.h"

#include <string.h>

#define THREADS 64
#define OPS 20
#define BYTES 3000

__global__ void proxy_kernel(char *host_dst, const char *gpu_src, unsigned long long *counter,
                             unsigned long long *fetched, long *pword, long *gout, uint64_t *sig, int next)
{
    int me = shmemx_cuda_my_pe();
    unsigned t = threadIdx.x;
    for (int i = 0; i < OPS; i++)
        fetched[t * OPS + i] = shmemx_cuda_atomic_fetch_add(counter, 1, 0);
    if (t == 1) shmemx_cuda_p(&pword[me], (long)me * 7 + 3, next);
    if (t == 2) {
        shmemx_cuda_quiet();
        *gout = shmemx_cuda_g(&pword[me], next);
    }
    if (t == 0) {
        shmemx_cuda_putmem(host_dst, gpu_src, BYTES, next);
        shmemx_cuda_fence();
        shmemx_cuda_putmem_signal(host_dst + BYTES, gpu_src, 8, sig, 1, SHMEM_SIGNAL_SET, next);
        shmemx_cuda_quiet();
    }
}

int main(void)
{
    char *gpu = (char *)gpu_test_start(SHMEM_THREAD_MULTIPLE, BYTES);
    int me = shmem_my_pe(), n = shmem_n_pes(), next = (me + 1) % n, prev = (me + n - 1) % n;
    char *host_dst = (char *)shmem_calloc(BYTES + 8, 1);
    unsigned long long *counter = (unsigned long long *)shmem_calloc(1, sizeof *counter);
    long *pword = (long *)shmem_calloc((size_t)n, sizeof(long));
    uint64_t *sig = (uint64_t *)shmem_calloc(1, sizeof(uint64_t));
    char *host = (char *)malloc(BYTES);
    for (size_t i = 0; i < BYTES; i++) host[i] = (char)test_pattern(me, i, 5);
    CUDA_OK(cudaMemcpy(gpu, host, BYTES, cudaMemcpyHostToDevice));
    unsigned long long *fetched;
    long *gout;
    CUDA_OK(cudaMalloc((void **)&fetched, THREADS * OPS * sizeof *fetched));
    CUDA_OK(cudaMalloc((void **)&gout, sizeof *gout));
    shmem_barrier_all();

    proxy_kernel<<<1, THREADS>>>(host_dst, gpu, counter, fetched, pword, gout, sig, next);
    CUDA_OK(cudaDeviceSynchronize());
    shmem_uint64_wait_until(sig, SHMEM_CMP_EQ, 1);
    size_t bad = 0;
    for (size_t i = 0; i < BYTES; i++) bad += host_dst[i] != (char)test_pattern(prev, i, 5);
    CHECK_MSG(bad == 0, "proxy put: %zu bytes wrong", bad);
    shmem_barrier_all();
    CHECK_MSG(pword[prev] == (long)prev * 7 + 3, "p: %ld", pword[prev]);
    long g = 0;
    CUDA_OK(cudaMemcpy(&g, gout, sizeof g, cudaMemcpyDeviceToHost));
    CHECK_MSG(g == (long)me * 7 + 3, "g: %ld", g);

    const size_t per_pe = THREADS * OPS, total = per_pe * (size_t)n;
    unsigned long long *all = (unsigned long long *)shmem_malloc(total * sizeof *all);
    unsigned long long *mine = (unsigned long long *)malloc(per_pe * sizeof *mine);
    CUDA_OK(cudaMemcpy(mine, fetched, per_pe * sizeof *mine, cudaMemcpyDeviceToHost));
    shmem_putmem(all + per_pe * (size_t)me, mine, per_pe * sizeof *mine, 0);
    shmem_barrier_all();
    if (me == 0) {
        CHECK_MSG(*counter == total, "counter %llu, expected %zu", *counter, total);
        char *seen = (char *)calloc(total, 1);
        for (size_t k = 0; k < total; k++) {
            CHECK_MSG(all[k] < total && !seen[all[k]], "fetch_add value %llu repeated or out of range", all[k]);
            if (all[k] < total) seen[all[k]] = 1;
        }
        free(seen);
    }
    shmem_barrier_all();
    shmem_free(all);
    free(mine);
    free(host);
    shmem_finalize();
    return test_finish();
}
