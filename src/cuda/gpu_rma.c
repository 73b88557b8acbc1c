/* gpu_rma.c: host RMA on the GPU heap and the stream-ordered forms
 * (gpu_rma.h, shmemx_cuda.h). A peer's copy of a GPU heap address is this
 * PE's IPC mapping of its heap; cudaMemcpyDefault lets UVA tell host from
 * device memory on the other side. */
#include "cuda/gpu_rma.h"

#include <shmem.h>
#include <shmemx_cuda.h>
#include <stdio.h>

#include "core/runtime.h"
#include "cuda/gpu_heap.h"

static void rma_fail(const char *call, const char *what, const char *detail)
{
    fprintf(stderr, "%s: PE %d: %s%s%s\n", call, shoal_rt.my_pe, what, detail ? ": " : "", detail ? detail : "");
    fflush(stderr);
    shmem_global_exit(1);
}

/* pe's copy of the symmetric GPU range [addr, addr + bytes), checked. */
static char *peer_range(const char *call, const void *addr, size_t bytes, int pe)
{
    char msg[160];
    if (pe < 0 || pe >= shoal_rt.n_pes) {
        snprintf(msg, sizeof msg, "PE %d is out of range (0 to %d)", pe, shoal_rt.n_pes - 1);
        rma_fail(call, msg, NULL);
    }
    if (bytes > shoal_gpu_hi - (uintptr_t)addr) {
        snprintf(msg, sizeof msg, "%zu bytes at GPU heap offset %zu run past its end (%zu bytes)", bytes,
                 (size_t)((uintptr_t)addr - shoal_gpu_lo), shoal_gpu.size);
        rma_fail(call, msg, NULL);
    }
    char *p = shoal_gpu_peer_addr(addr, pe);
    if (!p) {
        snprintf(msg, sizeof msg, "the GPU heap of PE %d (another host) is reachable only from kernels (proxy)", pe);
        rma_fail(call, msg, NULL);
    }
    return p;
}

static void copy(const char *call, void *dst, const void *src, size_t bytes)
{
    const struct shoal_cudart *c = shoal_gpu.cuda;
    cudaError_t e = c->Memcpy(dst, src, bytes, cudaMemcpyDefault);
    if (e != cudaSuccess) rma_fail(call, "cudaMemcpy failed", c->GetErrorString(e));
}

void shoal_gpu_put(const char *call, void *dest, const void *source, size_t bytes, int pe)
{
    copy(call, peer_range(call, dest, bytes, pe), source, bytes);
}

void shoal_gpu_get(const char *call, void *dest, const void *source, size_t bytes, int pe)
{
    copy(call, dest, peer_range(call, source, bytes, pe), bytes);
}

/* The stream forms: a null stream is the legacy default stream, which
 * cudaMemcpyAsync takes as 0. */
static cudaStream_t as_stream(void *stream) { return (cudaStream_t)stream; }

void shmemx_putmem_on_stream(void *dest, const void *source, size_t bytes, int pe, void *stream)
{
    const char *call = "shmemx_putmem_on_stream";
    if (bytes == 0) return;
    if (!shoal_gpu_heap_has(dest)) rma_fail(call, "dest is not in the GPU heap", NULL);
    const struct shoal_cudart *c = shoal_gpu.cuda;
    cudaError_t e = c->MemcpyAsync(peer_range(call, dest, bytes, pe), source, bytes, cudaMemcpyDefault, as_stream(stream));
    if (e != cudaSuccess) rma_fail(call, "cudaMemcpyAsync failed", c->GetErrorString(e));
}

void shmemx_getmem_on_stream(void *dest, const void *source, size_t bytes, int pe, void *stream)
{
    const char *call = "shmemx_getmem_on_stream";
    if (bytes == 0) return;
    if (!shoal_gpu_heap_has(source)) rma_fail(call, "source is not in the GPU heap", NULL);
    const struct shoal_cudart *c = shoal_gpu.cuda;
    cudaError_t e = c->MemcpyAsync(dest, peer_range(call, source, bytes, pe), bytes, cudaMemcpyDefault, as_stream(stream));
    if (e != cudaSuccess) rma_fail(call, "cudaMemcpyAsync failed", c->GetErrorString(e));
}

void shmemx_quiet_on_stream(void *stream)
{
    if (shoal_gpu.state != 1) return;
    cudaError_t e = shoal_gpu.cuda->StreamSynchronize(as_stream(stream));
    if (e != cudaSuccess) rma_fail("shmemx_quiet_on_stream", "cudaStreamSynchronize failed",
                                   shoal_gpu.cuda->GetErrorString(e));
}
