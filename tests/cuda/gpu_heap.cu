/* gpu_heap.cu: the GPU heap from the host (issue 18): symmetric offsets,
 * every peer of this host mapped, shmem_putmem/getmem on GPU memory (both
 * directions, odd sizes), the stream forms, free and reuse, a full heap
 * giving NULL on every PE. */
#include "gpu_test.h"

#include <string.h>

#define BYTES (1 << 20)

int main(void)
{
    char *buf = (char *)gpu_test_start(SHMEM_THREAD_SINGLE, BYTES);
    int me = shmem_my_pe(), n = shmem_n_pes(), next = (me + 1) % n, prev = (me + n - 1) % n;
    CHECK(shmemx_gpu_available());
    for (int pe = 0; pe < n; pe++) CHECK_MSG(shmemx_gpu_ptr(buf, pe) != NULL, "PE %d not mapped", pe);
    CHECK(shmemx_gpu_ptr(buf, me) == buf);

    /* Symmetric: the same offset on every PE (compared through the host heap). */
    shmemx_cuda_state_t st;
    CHECK(shmemx_gpu_state(&st) == 0);
    long long *offs = (long long *)shmem_calloc((size_t)n, sizeof(long long));
    long long mine = (long long)(buf - st.heap_base);
    for (int pe = 0; pe < n; pe++) shmem_longlong_p(&offs[me], mine, pe);
    shmem_barrier_all();
    for (int pe = 0; pe < n; pe++) CHECK_MSG(offs[pe] == mine, "PE %d offset %lld, mine %lld", pe, offs[pe], mine);

    /* Host puts into the next PE's GPU memory, gets back from the previous one. */
    const size_t sizes[] = {1, 7, 4096, 65535, BYTES / 2};
    char *host = (char *)malloc(BYTES), *back = (char *)malloc(BYTES);
    unsigned salt = 0;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++, salt++) {
        size_t len = sizes[k];
        for (size_t i = 0; i < len; i++) host[i] = (char)test_pattern(me, i, salt);
        shmem_putmem(buf + 3, host, len, next);
        shmem_barrier_all();
        CUDA_OK(cudaMemcpy(back, buf + 3, len, cudaMemcpyDeviceToHost));
        size_t bad = 0;
        for (size_t i = 0; i < len; i++) bad += back[i] != (char)test_pattern(prev, i, salt);
        CHECK_MSG(bad == 0, "put of %zu bytes: %zu wrong", len, bad);
        memset(back, 0, len);
        shmem_getmem(back, buf + 3, len, next); /* next holds what this PE put */
        bad = 0;
        for (size_t i = 0; i < len; i++) bad += back[i] != (char)test_pattern(me, i, salt);
        CHECK_MSG(bad == 0, "get of %zu bytes: %zu wrong", len, bad);
        shmem_barrier_all();
    }

    /* Stream forms, from device memory to device memory. */
    cudaStream_t s;
    CUDA_OK(cudaStreamCreate(&s));
    char *dev;
    CUDA_OK(cudaMalloc((void **)&dev, 4096));
    for (int i = 0; i < 4096; i++) host[i] = (char)test_pattern(me, (size_t)i, 99);
    CUDA_OK(cudaMemcpy(dev, host, 4096, cudaMemcpyHostToDevice));
    shmemx_putmem_on_stream(buf + BYTES / 2, dev, 4096, next, s);
    shmemx_quiet_on_stream(s);
    shmem_barrier_all();
    shmemx_getmem_on_stream(dev, buf + BYTES / 2, 4096, me, s);
    shmemx_quiet_on_stream(s);
    CUDA_OK(cudaMemcpy(back, dev, 4096, cudaMemcpyDeviceToHost));
    size_t bad = 0;
    for (int i = 0; i < 4096; i++) bad += back[i] != (char)test_pattern(prev, (size_t)i, 99);
    CHECK_MSG(bad == 0, "stream put: %zu wrong", bad);

    /* Free and allocate again: same place; too much: NULL everywhere. */
    shmemx_gpu_free(buf);
    char *again = (char *)shmemx_gpu_malloc(BYTES);
    CHECK(again == buf);
    CHECK(shmemx_gpu_malloc((size_t)1 << 40) == NULL);
    shmemx_gpu_free(again);

    CUDA_OK(cudaFree(dev));
    CUDA_OK(cudaStreamDestroy(s));
    free(host);
    free(back);
    shmem_free(offs);
    shmem_finalize();
    return test_finish();
}
