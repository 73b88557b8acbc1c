/* check.h: argument checks of the public layer. Cheap checks are always on;
 * a failed check prints one line naming the call, the PE, the value and the
 * limit, then ends the whole job (shoal_api_fail). */
#ifndef SHOAL_API_CHECK_H
#define SHOAL_API_CHECK_H

#include <shmem.h>
#include <stddef.h>

#include "core/ctx.h"
#include "core/route.h"
#include "core/team.h"
#include "core/runtime.h"

void shoal_api_fail(const char *call, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));
void shoal_api_fail_uninitialized(const char *call) __attribute__((noreturn, cold));
void shoal_api_fail_pe(const char *call, int pe) __attribute__((noreturn, cold));
void shoal_api_fail_address(const char *call, const char *what, const void *addr, size_t len)
    __attribute__((noreturn, cold));
void shoal_api_fail_ctx(const char *call, shmem_ctx_t ctx) __attribute__((noreturn, cold));

#define SHOAL_LIKELY(x) __builtin_expect(!!(x), 1)
#define SHOAL_UNLIKELY(x) __builtin_expect(!!(x), 0)

static inline void shoal_check_init(const char *call)
{
    if (SHOAL_UNLIKELY(!shoal_rt.initialized)) shoal_api_fail_uninitialized(call);
}

static inline void shoal_check_pe(const char *call, int pe)
{
    if (SHOAL_UNLIKELY((unsigned)pe >= (unsigned)shoal_rt.n_pes)) shoal_api_fail_pe(call, pe);
}

static inline void shoal_check_ctx(const char *call, shmem_ctx_t ctx)
{
    if (SHOAL_UNLIKELY(!shoal_ctx_valid(ctx))) shoal_api_fail_ctx(call, ctx);
}

int shoal_api_ctx_pe_slow(const char *call, shmem_ctx_t ctx, int pe);

/* The world PE that pe names on ctx: PE numbers of a context's operations
 * count in the context's team. Fails the call for a bad context or PE. */
static inline int shoal_check_ctx_pe(const char *call, shmem_ctx_t ctx, int pe)
{
    if (SHOAL_LIKELY(ctx == SHMEM_CTX_DEFAULT)) {
        shoal_check_pe(call, pe);
        return pe;
    }
    return shoal_api_ctx_pe_slow(call, ctx, pe);
}

/* Segment of the symmetric range [addr, addr+len); fails the call if the
 * range is not inside one symmetric segment. */
static inline int shoal_check_symmetric(const char *call, const char *what, const void *addr, size_t len,
                                        size_t *offset)
{
    int seg = shoal_route_segment(addr, len, offset);
    if (SHOAL_UNLIKELY(seg < 0)) shoal_api_fail_address(call, what, addr, len);
    return seg;
}

/* nelems * elem, failing the call on overflow. */
static inline size_t shoal_check_bytes(const char *call, size_t nelems, size_t elem)
{
    size_t bytes;
    if (SHOAL_UNLIKELY(__builtin_mul_overflow(nelems, elem, &bytes)))
        shoal_api_fail(call, "%zu elements of %zu bytes overflow the address space", nelems, elem);
    return bytes;
}

#endif
