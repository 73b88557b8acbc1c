/* gpu_heap.c: the GPU heap's life and shmemx_gpu_malloc/free (gpu_heap.h).
 *
 * At the first shmemx_gpu_malloc every PE cudaMallocs SHMEM_GPU_SYMMETRIC_SIZE
 * bytes and exports an IPC handle; the handles and host keys go round in
 * one bootstrap allgather, and each PE opens the handles of its host's
 * peers (one GPU shared by several processes included). Allocations are
 * carved by Shoal's deterministic allocator, so equal call sequences give
 * equal offsets. The heap's last granule holds the block barrier's counter. */
#include "cuda/gpu_heap.h"

#include <shmem.h>
#include <shmemx_cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/runtime.h"
#include "cuda/proxy_serve.h"
#include "heap/alloc.h"

struct shoal_gpu_heap shoal_gpu;
uintptr_t shoal_gpu_lo, shoal_gpu_hi;

#define PROXY_RING_SLOTS 1024

static shoal_alloc_t *gpu_alloc;
static size_t barrier_offset;          /* the block barrier's arrival counter */
static void *ring_mem;                 /* pinned, mapped: the proxy ring */
static unsigned long long *ticket_dev; /* device: ring tickets, then the barrier epoch */
static struct shoal_proxy proxy;
static cudaStream_t proxy_stream;

struct gpu_card {
    cudaIpcMemHandle_t handle;
    char node_key[SHOAL_NODE_KEY_MAX];
    int ok;
};

static void gpu_fail(const char *call, const char *fmt, const char *detail)
{
    fprintf(stderr, "%s: PE %d: ", call, shoal_rt.my_pe);
    fprintf(stderr, fmt, detail);
    fputc('\n', stderr);
    fflush(stderr);
    shmem_global_exit(1);
}

static int in_gpu_heap(const void *addr)
{
    return (uintptr_t)addr >= shoal_gpu_lo && (uintptr_t)addr < shoal_gpu_hi;
}

/* The proxy's copies run on a stream of their own that does not wait for
 * the default stream, so they progress while the posting kernel runs. */
static int proxy_copy(void *dst, const void *src, size_t bytes)
{
    const struct shoal_cudart *c = shoal_gpu.cuda;
    if (c->MemcpyAsync(dst, src, bytes, cudaMemcpyDefault, proxy_stream) != cudaSuccess) return -1;
    return c->StreamSynchronize(proxy_stream) == cudaSuccess ? 0 : -1;
}

/* This PE's part of the heap: device memory, its handle, the ring. */
static int make_local(struct gpu_card *mine, char *why, size_t whylen)
{
    const struct shoal_cudart *c = shoal_cudart_load(why, whylen);
    int devices = 0;
    if (!c) return -1;
    shoal_gpu.cuda = c;
    if (c->GetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        snprintf(why, whylen, "no GPU");
        return -1;
    }
    size_t size = shoal_rt.config.gpu_symmetric_size;
    cudaError_t e = c->Malloc((void **)&shoal_gpu.base, size);
    if (e == cudaSuccess) e = c->Memset(shoal_gpu.base, 0, size);
    if (e == cudaSuccess) e = c->IpcGetMemHandle(&mine->handle, shoal_gpu.base);
    if (e == cudaSuccess) e = c->Malloc((void **)&ticket_dev, 2 * sizeof *ticket_dev);
    if (e == cudaSuccess) e = c->Memset(ticket_dev, 0, 2 * sizeof *ticket_dev);
    if (e == cudaSuccess) e = c->StreamCreateWithFlags(&proxy_stream, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
        snprintf(why, whylen, "%s", c->GetErrorString(e));
        return -1;
    }
    shoal_gpu.size = size;
    return 0;
}

/* Maps the peers of this host; starts the proxy at SHMEM_THREAD_MULTIPLE. */
static void map_peers(const struct gpu_card *cards)
{
    const struct shoal_cudart *c = shoal_gpu.cuda;
    const int n = shoal_rt.n_pes, me = shoal_rt.my_pe;
    shoal_gpu.peer_base = calloc((size_t)n, sizeof *shoal_gpu.peer_base);
    if (!shoal_gpu.peer_base) gpu_fail("shmemx_gpu_malloc", "%s", "out of memory for the peer table");
    for (int pe = 0; pe < n; pe++) {
        if (pe == me) {
            shoal_gpu.peer_base[pe] = shoal_gpu.base;
        } else if (strcmp(cards[pe].node_key, cards[me].node_key) == 0) {
            void *p = NULL;
            cudaError_t e = c->IpcOpenMemHandle(&p, cards[pe].handle, cudaIpcMemLazyEnablePeerAccess);
            if (e != cudaSuccess) gpu_fail("shmemx_gpu_malloc", "cannot map a peer's GPU heap: %s", c->GetErrorString(e));
            shoal_gpu.peer_base[pe] = p;
        } else {
            shoal_gpu.remote_peers++;
        }
    }
    cudaError_t e = c->Malloc((void **)&shoal_gpu.peer_base_dev, (size_t)n * sizeof(char *));
    if (e == cudaSuccess)
        e = c->Memcpy(shoal_gpu.peer_base_dev, shoal_gpu.peer_base, (size_t)n * sizeof(char *), cudaMemcpyHostToDevice);
    if (e != cudaSuccess) gpu_fail("shmemx_gpu_malloc", "cannot copy the peer table: %s", c->GetErrorString(e));
    /* Kernels reach other hosts, and the host heap anywhere, through the
     * proxy thread, which calls the host API beside the program's threads. */
    if (shoal_gpu.remote_peers && shoal_rt.thread_level != SHMEM_THREAD_MULTIPLE)
        gpu_fail("shmemx_gpu_malloc", "%s",
                 "PEs on other hosts are reached through a proxy thread, which needs "
                 "shmem_init_thread(SHMEM_THREAD_MULTIPLE)");
    if (shoal_rt.thread_level != SHMEM_THREAD_MULTIPLE) return;
    e = c->HostAlloc(&ring_mem, shoal_proxy_ring_bytes(PROXY_RING_SLOTS), cudaHostAllocMapped | cudaHostAllocPortable);
    if (e != cudaSuccess) gpu_fail("shmemx_gpu_malloc", "cannot allocate the proxy ring: %s", c->GetErrorString(e));
    shoal_proxy_ring_init(ring_mem, PROXY_RING_SLOTS, &proxy.ring);
    proxy.copy = proxy_copy;
    proxy.in_gpu_heap = in_gpu_heap;
    if (shoal_proxy_start(&proxy) != SHOAL_OK) gpu_fail("shmemx_gpu_malloc", "%s", "cannot start the proxy thread");
}

/* Every PE makes its heap; all agree whether the job has one. */
static void heap_setup(void)
{
    const int n = shoal_rt.n_pes;
    struct gpu_card mine = {.ok = 1};
    char why[256] = "";
    memcpy(mine.node_key, shoal_rt.boot->node_key, sizeof mine.node_key);
    if (make_local(&mine, why, sizeof why) != 0) mine.ok = 0;
    struct gpu_card *cards = calloc((size_t)n, sizeof *cards);
    if (!cards) gpu_fail("shmemx_gpu_malloc", "%s", "out of memory for the IPC handles");
    if (shoal_rt.boot->ops->allgather(shoal_rt.boot, &mine, sizeof mine, cards) != SHOAL_OK)
        gpu_fail("shmemx_gpu_malloc", "%s", "the bootstrap's exchange of GPU heap handles failed");
    int all_ok = 1;
    for (int pe = 0; pe < n; pe++) all_ok &= cards[pe].ok;
    if (!all_ok) {
        /* A job without a GPU on every PE has no GPU heap: NULL everywhere. */
        if (shoal_gpu.base) shoal_gpu.cuda->Free(shoal_gpu.base);
        shoal_gpu.base = NULL;
        shoal_gpu.state = -1;
        free(cards);
        return;
    }
    map_peers(cards);
    free(cards);
    barrier_offset = shoal_gpu.size - SHOAL_ALLOC_GRANULE;
    if (shoal_alloc_create(barrier_offset, &gpu_alloc) != SHOAL_OK)
        gpu_fail("shmemx_gpu_malloc", "%s", "cannot create the GPU heap's allocator");
    shoal_gpu_lo = (uintptr_t)shoal_gpu.base;
    shoal_gpu_hi = shoal_gpu_lo + shoal_gpu.size;
    shoal_gpu.state = 1;
}

void *shmemx_gpu_malloc(size_t size)
{
    if (!shoal_rt.initialized) gpu_fail("shmemx_gpu_malloc", "%s", "called before shmem_init");
    pthread_mutex_lock(&shoal_rt.heap_lock);
    if (shoal_gpu.state == 0) heap_setup();
    size_t off = 0;
    int ok = shoal_gpu.state == 1 && size > 0 && shoal_alloc_alloc(gpu_alloc, size, 0, &off) == SHOAL_OK;
    pthread_mutex_unlock(&shoal_rt.heap_lock);
    shmem_barrier_all();
    return ok ? shoal_gpu.base + off : NULL;
}

void shmemx_gpu_free(void *ptr)
{
    if (!ptr) return;
    if (!in_gpu_heap(ptr)) gpu_fail("shmemx_gpu_free", "%s", "the pointer is not in the GPU heap");
    shmem_barrier_all();
    pthread_mutex_lock(&shoal_rt.heap_lock);
    shoal_status_t st = shoal_alloc_free(gpu_alloc, (size_t)((char *)ptr - shoal_gpu.base));
    pthread_mutex_unlock(&shoal_rt.heap_lock);
    if (st != SHOAL_OK) gpu_fail("shmemx_gpu_free", "%s", "the pointer is not the start of a GPU allocation");
}

int shmemx_gpu_available(void) { return shoal_gpu.state == 1; }

void *shmemx_gpu_ptr(const void *dest, int pe)
{
    if (shoal_gpu.state != 1 || !in_gpu_heap(dest) || pe < 0 || pe >= shoal_rt.n_pes) return NULL;
    return shoal_gpu_peer_addr(dest, pe);
}

int shmemx_gpu_state(shmemx_cuda_state_t *out)
{
    if (shoal_gpu.state != 1) return -1;
    memset(out, 0, sizeof *out);
    out->my_pe = shoal_rt.my_pe;
    out->n_pes = shoal_rt.n_pes;
    out->heap_base = shoal_gpu.base;
    out->heap_size = shoal_gpu.size;
    out->peer_base = shoal_gpu.peer_base_dev;
    /* With UVA (every 64-bit CUDA platform) pinned mapped memory has the
     * same address on the host and in kernels. */
    out->ring = proxy.ring;
    out->ticket = ticket_dev;
    out->barrier_words = (uint64_t *)(shoal_gpu.base + barrier_offset);
    out->barrier_epoch = (uint64_t *)(ticket_dev + 1);
    return 0;
}

void shoal_gpu_stop_proxy(void) { shoal_proxy_stop(&proxy); }

void shoal_gpu_release(void)
{
    if (shoal_gpu.state != 1) return;
    const struct shoal_cudart *c = shoal_gpu.cuda;
    c->DeviceSynchronize();
    for (int pe = 0; pe < shoal_rt.n_pes; pe++)
        if (pe != shoal_rt.my_pe && shoal_gpu.peer_base[pe]) c->IpcCloseMemHandle(shoal_gpu.peer_base[pe]);
    c->Free(shoal_gpu.peer_base_dev);
    c->Free(shoal_gpu.base);
    c->Free(ticket_dev);
    c->StreamDestroy(proxy_stream);
    if (ring_mem) c->FreeHost(ring_mem);
    ring_mem = NULL;
    proxy.ring = NULL;
    free(shoal_gpu.peer_base);
    shoal_alloc_destroy(gpu_alloc);
    memset(&shoal_gpu, 0, sizeof shoal_gpu);
    shoal_gpu_lo = shoal_gpu_hi = 0;
    shoal_gpu.state = -1; /* no second heap after finalize */
}
