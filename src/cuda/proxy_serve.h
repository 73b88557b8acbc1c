/* proxy_serve.h: the proxy thread. It takes requests from a proxy ring in
 * ticket order and executes them with Shoal's host API (shmem_putmem,
 * 64-bit atomics, shmem_putmem_signal, fence, quiet) on the default
 * context, so the program must run at SHMEM_THREAD_MULTIPLE when its own
 * threads use Shoal while the proxy runs. */
#ifndef SHOAL_CUDA_PROXY_SERVE_H
#define SHOAL_CUDA_PROXY_SERVE_H

#include <pthread.h>

#include "cuda/proxy_ring.h"

struct shoal_proxy {
    shmemx_proxy_ring_t *ring;
    /* Copies bytes where either side may be GPU memory (the GPU runtime
     * sets it; NULL: producers name host memory only). 0 on success. */
    int (*copy)(void *dst, const void *src, size_t bytes);
    /* 1 when addr lies in the GPU heap, which the host API cannot reach on
     * another host (NULL: never). */
    int (*in_gpu_heap)(const void *addr);
    pthread_t thread;
    int running;
    int stop;          /* atomic: set by shoal_proxy_stop */
    char *bounce;      /* staging for copy, grown on demand */
    size_t bounce_size;
};

/* Executes the next request if one is ready; returns 1 if it did. */
int shoal_proxy_serve_one(struct shoal_proxy *p);
/* Starts the thread serving p->ring. */
shoal_status_t shoal_proxy_start(struct shoal_proxy *p);
/* Serves what producers already posted, then ends the thread. */
void shoal_proxy_stop(struct shoal_proxy *p);

#endif
