/* gpu_heap.h: the symmetric heap in GPU memory (one per PE), the peers'
 * heaps mapped through CUDA IPC, and the proxy for peers on other hosts.
 * Made by the first shmemx_gpu_malloc (collective); torn down by
 * shmem_finalize. */
#ifndef SHOAL_CUDA_GPU_HEAP_H
#define SHOAL_CUDA_GPU_HEAP_H

#include <stddef.h>
#include <stdint.h>

#include "cuda/gpu_load.h"
#include "cuda/gpu_rma.h"

struct shoal_gpu_heap {
    int state;                  /* 0 not tried, 1 ready, -1 no GPU heap on this job */
    const struct shoal_cudart *cuda;
    char *base;                 /* this PE's heap (device address) */
    size_t size;
    char **peer_base;           /* host copy: each PE's heap mapped here, NULL off-host */
    char **peer_base_dev;       /* the same array in GPU memory, for kernels */
    int remote_peers;           /* PEs on other hosts: served by the proxy */
};

extern struct shoal_gpu_heap shoal_gpu;

/* pe's copy of the GPU heap address addr, as this PE reaches it; NULL if
 * pe is on another host. */
static inline char *shoal_gpu_peer_addr(const void *addr, int pe)
{
    char *b = shoal_gpu.peer_base[pe];
    return b ? b + ((uintptr_t)addr - shoal_gpu_lo) : NULL;
}

#endif
