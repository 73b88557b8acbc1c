/* rma.c: the byte-based RMA entry points (rma_api.h). On a direct peer a
 * put is one memcpy into the peer's mapping and a get one memcpy out of it;
 * other peers go through the transport table. Non-blocking forms complete
 * at once on the direct path, which the standard allows; on the fabric a
 * get_nbi completes at quiet.
 *
 * A transfer of zero bytes returns after the checks: it touches no memory
 * and posts nothing to the transport, so a fabric never sees a zero-length
 * operation on a null buffer. Its pointers may be null (check.h,
 * shoal_check_empty), but its PE must still be valid: the standard's annex
 * on undefined behaviour leaves accessing a non-existent PE to the
 * implementation, and a length of 0 does not make a wrong PE number right,
 * so it is reported as in any other call. */
#include "api/rma_api.h"

#include <string.h>

#include "api/check.h"
#include "transport/cpu_atomic.h"
#include "observe/observe.h"
#ifdef SHOAL_HAVE_CUDA
#include "cuda/gpu_rma.h"
#endif
#include "sync/wake.h"

static void transfer_error(const char *call, int pe, shoal_status_t st)
{
    shoal_api_fail(call, "transfer to PE %d failed: %s", pe, shoal_status_str(st));
}

int shoal_api_put_dest(const char *call, void *dest, const void *source, size_t bytes, int pe, size_t *off)
{
    int seg = shoal_check_symmetric(call, "dest", dest, bytes, off);
    shoal_check_writable(call, "dest", dest, seg, *off, bytes, pe);
    shoal_check_local(call, "source", source, bytes);
    return seg;
}

void shoal_api_put(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, size_t elem, int pe,
                   const char *call)
{
    SHOAL_HOT_ENTER(call, SHOAL_OBS_PUT, shoal_check_ctx_pe(call, ctx, pe), shoal_check_bytes(call, nelems, elem),
                    shoal_api_put(ctx, dest, source, nelems, elem, pe, call));
    pe = shoal_check_ctx_pe(call, ctx, pe);
    size_t bytes = shoal_check_bytes(call, nelems, elem), off;
    if (SHOAL_UNLIKELY(bytes == 0)) {
        shoal_check_empty(call, "dest", dest);
        return;
    }
#ifdef SHOAL_HAVE_CUDA
    if (SHOAL_UNLIKELY(shoal_gpu_heap_has(dest))) { /* issue 18: the GPU heap */
        shoal_gpu_put(call, dest, source, bytes, pe);
        return;
    }
#endif
    int seg = shoal_api_put_dest(call, dest, source, bytes, pe, &off);
    char *remote = shoal_route_direct(seg, off, pe);
    if (SHOAL_LIKELY(remote != NULL)) {
        memcpy(remote, source, bytes);
        shoal_wake(pe);
        return;
    }
    shoal_status_t st = shoal_rt.transport->put(ctx->tctx, pe, seg, off, source, bytes);
    if (st != SHOAL_OK) transfer_error(call, pe, st);
}

/* A get; nbi lets the fabric fill dest by the next quiet on ctx. */
static void get_into(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, size_t elem, int pe,
                     const char *call, int nbi)
{
    SHOAL_HOT_ENTER(call, SHOAL_OBS_GET, shoal_check_ctx_pe(call, ctx, pe), shoal_check_bytes(call, nelems, elem),
                    get_into(ctx, dest, source, nelems, elem, pe, call, nbi));
    pe = shoal_check_ctx_pe(call, ctx, pe);
    size_t bytes = shoal_check_bytes(call, nelems, elem), off;
    if (SHOAL_UNLIKELY(bytes == 0)) {
        shoal_check_empty(call, "source", source);
        return;
    }
#ifdef SHOAL_HAVE_CUDA
    if (SHOAL_UNLIKELY(shoal_gpu_heap_has(source))) { /* issue 18: the GPU heap */
        shoal_gpu_get(call, dest, source, bytes, pe);
        return;
    }
#endif
    int seg = shoal_check_symmetric(call, "source", source, bytes, &off);
    shoal_check_local(call, "dest", dest, bytes);
    const char *remote = shoal_route_direct(seg, off, pe);
    if (SHOAL_LIKELY(remote != NULL)) {
        memcpy(dest, remote, bytes);
        return;
    }
    shoal_status_t st = nbi ? shoal_rt.transport->get_nbi(ctx->tctx, pe, seg, off, dest, bytes)
                            : shoal_rt.transport->get(ctx->tctx, pe, seg, off, dest, bytes);
    if (st != SHOAL_OK) transfer_error(call, pe, st);
}

void shoal_api_get(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, size_t elem, int pe,
                   const char *call)
{
    get_into(ctx, dest, source, nelems, elem, pe, call, 0);
}

void shoal_api_put_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, size_t elem, int pe,
                       const char *call)
{
    shoal_api_put(ctx, dest, source, nelems, elem, pe, call);
}

void shoal_api_get_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, size_t elem, int pe,
                       const char *call)
{
    get_into(ctx, dest, source, nelems, elem, pe, call, 1);
}

void shoal_api_p(shmem_ctx_t ctx, void *dest, const void *value, size_t elem, int pe, const char *call)
{
    SHOAL_HOT_ENTER(call, SHOAL_OBS_PUT, shoal_check_ctx_pe(call, ctx, pe), elem,
                    shoal_api_p(ctx, dest, value, elem, pe, call));
    pe = shoal_check_ctx_pe(call, ctx, pe);
    size_t off;
    int seg = shoal_check_symmetric(call, "dest", dest, elem, &off);
    shoal_check_writable(call, "dest", dest, seg, off, elem, pe);
    char *remote = shoal_route_direct(seg, off, pe);
    if (SHOAL_LIKELY(remote != NULL)) {
        shoal_untorn_store(remote, value, elem);
        shoal_wake(pe);
        return;
    }
    shoal_status_t st = shoal_rt.transport->put(ctx->tctx, pe, seg, off, value, elem);
    if (st != SHOAL_OK) transfer_error(call, pe, st);
}

void shoal_api_g(shmem_ctx_t ctx, void *value, const void *source, size_t elem, int pe, const char *call)
{
    SHOAL_HOT_ENTER(call, SHOAL_OBS_GET, shoal_check_ctx_pe(call, ctx, pe), elem,
                    shoal_api_g(ctx, value, source, elem, pe, call));
    pe = shoal_check_ctx_pe(call, ctx, pe);
    size_t off;
    int seg = shoal_check_symmetric(call, "source", source, elem, &off);
    const char *remote = shoal_route_direct(seg, off, pe);
    if (SHOAL_LIKELY(remote != NULL)) {
        shoal_untorn_load(value, remote, elem);
        return;
    }
    shoal_status_t st = shoal_rt.transport->get(ctx->tctx, pe, seg, off, value, elem);
    if (st != SHOAL_OK) transfer_error(call, pe, st);
}

/* The symmetric extent touched by count runs of run elements, the k-th run
 * starting stride*k elements from base. Fails the call if any of it is not
 * symmetric, or (write_pe >= 0: a put to that PE) is read-only; returns the
 * segment and the offset of base. */
static int check_strided(const char *call, const char *what, const void *base, ptrdiff_t stride, size_t count,
                         size_t run, size_t elem, int write_pe, size_t *base_off)
{
    ptrdiff_t span;
    size_t run_bytes = shoal_check_bytes(call, run, elem);
    if (__builtin_mul_overflow((ptrdiff_t)(count - 1), stride, &span) ||
        __builtin_mul_overflow(span, (ptrdiff_t)elem, &span))
        shoal_api_fail(call, "%s stride %td over %zu elements overflows the address space", what, stride, count);
    const char *lo = (const char *)base + (span < 0 ? span : 0);
    size_t extent = (size_t)(span < 0 ? -span : span) + run_bytes;
    size_t lo_off;
    int seg = shoal_check_symmetric(call, what, lo, extent, &lo_off);
    if (write_pe >= 0) shoal_check_writable(call, what, lo, seg, lo_off, extent, write_pe);
    *base_off = lo_off + (size_t)(span < 0 ? -span : 0);
    return seg;
}

static void strided_copy(char *dst, ptrdiff_t dst_step, const char *src, ptrdiff_t src_step, size_t count,
                         size_t run_bytes)
{
    if (run_bytes == 8) {
        for (size_t i = 0; i < count; i++, dst += dst_step, src += src_step) memcpy(dst, src, 8);
    } else if (run_bytes == 4) {
        for (size_t i = 0; i < count; i++, dst += dst_step, src += src_step) memcpy(dst, src, 4);
    } else {
        for (size_t i = 0; i < count; i++, dst += dst_step, src += src_step) memcpy(dst, src, run_bytes);
    }
}

static void strided_transfer(int is_put, shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst,
                             ptrdiff_t sst, size_t run, size_t count, size_t elem, int pe, const char *call)
{
    shoal_check_init(call);
    pe = shoal_check_ctx_pe(call, ctx, pe);
    SHOAL_OBS_SPAN(sp, is_put ? SHOAL_OBS_PUT : SHOAL_OBS_GET, call, pe, (uint64_t)run * count * elem);
    const void *sym = is_put ? (const void *)dest : source;
    ptrdiff_t sym_stride = is_put ? dst : sst;
    if (count == 0 || run == 0) {
        shoal_check_empty(call, is_put ? "dest" : "source", sym);
        return;
    }
    size_t off;
    int seg = check_strided(call, is_put ? "dest" : "source", sym, sym_stride, count, run, elem, is_put ? pe : -1,
                            &off);
    size_t run_bytes = run * elem;
    shoal_check_local(call, is_put ? "source" : "dest", is_put ? source : (const void *)dest, run_bytes);
    char *remote = shoal_route_direct(seg, off, pe);
    if (SHOAL_LIKELY(remote != NULL)) {
        if (is_put)
        {
            strided_copy(remote, dst * (ptrdiff_t)elem, source, sst * (ptrdiff_t)elem, count, run_bytes);
            shoal_wake(pe);
        } else
            strided_copy(dest, dst * (ptrdiff_t)elem, remote, sst * (ptrdiff_t)elem, count, run_bytes);
        return;
    }
    for (size_t k = 0; k < count; k++) {
        ptrdiff_t sym_k = (ptrdiff_t)k * sym_stride * (ptrdiff_t)elem;
        shoal_status_t st;
        if (is_put)
            st = shoal_rt.transport->put(ctx->tctx, pe, seg, (size_t)((ptrdiff_t)off + sym_k),
                                         (const char *)source + (ptrdiff_t)k * sst * (ptrdiff_t)elem, run_bytes);
        else
            st = shoal_rt.transport->get(ctx->tctx, pe, seg, (size_t)((ptrdiff_t)off + sym_k),
                                         (char *)dest + (ptrdiff_t)k * dst * (ptrdiff_t)elem, run_bytes);
        if (st != SHOAL_OK) transfer_error(call, pe, st);
    }
}

void shoal_api_iput(shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,
                    size_t nelems, size_t elem, int pe, const char *call)
{
    strided_transfer(1, ctx, dest, source, dst, sst, 1, nelems, elem, pe, call);
}

void shoal_api_iget(shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,
                    size_t nelems, size_t elem, int pe, const char *call)
{
    strided_transfer(0, ctx, dest, source, dst, sst, 1, nelems, elem, pe, call);
}

void shoal_api_ibput(shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,
                     size_t bsize, size_t nblocks, size_t elem, int pe, const char *call)
{
    strided_transfer(1, ctx, dest, source, dst, sst, bsize, nblocks, elem, pe, call);
}

void shoal_api_ibget(shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,
                     size_t bsize, size_t nblocks, size_t elem, int pe, const char *call)
{
    strided_transfer(0, ctx, dest, source, dst, sst, bsize, nblocks, elem, pe, call);
}
