/* gpu_test.h: what the GPU tests share. run_gpu.sh has already printed
 * "skipped: no GPU" and not started them where there is no GPU; a test
 * started anyway skips (77) without a word. */
#ifndef SHOAL_TESTS_GPU_TEST_H
#define SHOAL_TESTS_GPU_TEST_H

#include <cuda_runtime.h>
#include <shmemx_cuda.h>

#include "harness.h"

#define CUDA_OK(call)                                                                               \
    do {                                                                                            \
        cudaError_t e_ = (call);                                                                    \
        if (e_ != cudaSuccess) {                                                                    \
            fprintf(stderr, "FAIL PE %d %s:%d: %s: %s\n", test_pe, __FILE__, __LINE__, #call,      \
                    cudaGetErrorString(e_));                                                        \
            shmem_global_exit(1);                                                                   \
        }                                                                                           \
    } while (0)

/* shmem_init_thread(level), then a GPU heap of `bytes` bound to this file's
 * kernels; exits 77 when the job has no GPU. */
static inline void *gpu_test_start(int level, size_t bytes)
{
    int provided, devices = 0;
    shmem_init_thread(level, &provided);
    test_pe = shmem_my_pe();
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        shmem_finalize();
        exit(TEST_SKIP);
    }
    void *p = shmemx_gpu_malloc(bytes);
    if (!p || shmemx_cuda_bind() != 0) {
        fprintf(stderr, "FAIL PE %d: no GPU heap although a GPU is present\n", test_pe);
        shmem_global_exit(1);
    }
    return p;
}

#endif
