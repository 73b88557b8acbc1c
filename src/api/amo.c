/* amo.c: the byte-based atomic entry point (amo_api.h). */
#include "api/amo_api.h"


#include "api/check.h"
#include "observe/observe.h"
#include "sync/wake.h"

void shoal_api_amo(shmem_ctx_t ctx, enum shoal_amo_op op, void *dest, void *fetched, const void *operand,
                   const void *cond, size_t elem, int pe, const char *call)
{
    SHOAL_HOT_ENTER(call, SHOAL_OBS_AMO, shoal_check_ctx_pe(call, ctx, pe), elem,
                    shoal_api_amo(ctx, op, dest, fetched, operand, cond, elem, pe, call));
    pe = shoal_check_ctx_pe(call, ctx, pe);
    if (SHOAL_UNLIKELY(elem != 4 && elem != 8))
        shoal_api_fail(call, "atomics on %zu-byte elements are not supported (4 or 8 bytes)", elem);
    size_t off;
    int seg = shoal_check_symmetric(call, "dest", dest, elem, &off);
    if (op != SHOAL_AMO_FETCH) shoal_check_writable(call, "dest", dest, seg, off, elem, pe);
    if (SHOAL_UNLIKELY((uintptr_t)dest % elem))
        shoal_api_fail(call, "dest address %p is not aligned to its %zu-byte type", dest, elem);
    uint64_t value = operand ? shoal_elem_load(operand, elem) : 0, expected = cond ? shoal_elem_load(cond, elem) : 0, old;
    shoal_status_t st = shoal_route_amo(ctx->tctx, seg, off, pe, elem, op, value, expected, fetched ? &old : NULL);
    if (SHOAL_UNLIKELY(st != SHOAL_OK)) shoal_api_fail(call, "atomic on PE %d failed: %s", pe, shoal_status_str(st));
    if (op != SHOAL_AMO_FETCH) shoal_wake(pe);
    if (fetched) shoal_elem_store(fetched, old, elem);
}
