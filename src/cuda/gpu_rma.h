/* gpu_rma.h: what the API layer sees of the GPU heap (issue 18): host RMA
 * on it and its end at shmem_finalize. The byte-based RMA
 * entry points (api/rma.c) ask shoal_gpu_heap_has first; an address in this
 * PE's GPU heap goes to shoal_gpu_put/get, which copy with cudaMemcpy
 * through the peer's IPC mapping. No CUDA header here: api/ includes it. */
#ifndef SHOAL_CUDA_GPU_RMA_H
#define SHOAL_CUDA_GPU_RMA_H

#include <stddef.h>
#include <stdint.h>

/* [lo, hi) of this PE's GPU heap; both 0 while there is none. */
extern uintptr_t shoal_gpu_lo, shoal_gpu_hi;

static inline int shoal_gpu_heap_has(const void *addr)
{
    return (uintptr_t)addr - shoal_gpu_lo < shoal_gpu_hi - shoal_gpu_lo;
}

/* Blocking copies (done when they return; the standard asks less). call
 * names the API function for the one-line error. */
void shoal_gpu_put(const char *call, void *dest, const void *source, size_t bytes, int pe);
void shoal_gpu_get(const char *call, void *dest, const void *source, size_t bytes, int pe);

/* Stops the proxy (before shmem_finalize's meeting: this PE's kernels are
 * done by then). */
void shoal_gpu_stop_proxy(void);
/* Unmaps the peers' heaps and frees this PE's (after the meeting). */
void shoal_gpu_release(void);

#endif
