/* check.c: the messages of failed argument checks. */
#include "api/check.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "util/log.h"

void shoal_api_fail(const char *call, const char *fmt, ...)
{
    char line[768];
    /* The bootstrap's abort (or the runtime, before there is one) prefixes
     * the PE number, so the line reads "PE n: call: problem". */
    int n = snprintf(line, sizeof line, "%s: ", call);
    va_list ap;
    va_start(ap, fmt);
    if (n > 0 && (size_t)n < sizeof line) vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    shoal_runtime_abort(1, line);
}

void shoal_api_fail_uninitialized(const char *call)
{
    if (shoal_rt.finalized) shoal_api_fail(call, "called after shmem_finalize");
    shoal_api_fail(call, "called before shmem_init (call shmem_init or shmem_init_thread first)");
}

void shoal_api_fail_pe(const char *call, int pe)
{
    shoal_api_fail(call, "PE %d is out of range: valid PEs are 0 to %d", pe, shoal_rt.n_pes - 1);
}

void shoal_api_fail_address(const char *call, const char *what, const void *addr, size_t len)
{
    const uintptr_t h = shoal_rt.seg_start[SHOAL_SEG_HEAP], d = shoal_rt.seg_start[SHOAL_SEG_DATA];
    const char *how = "is not symmetric";
    size_t off;
    if (shoal_route_segment(addr, 0, &off) >= 0) how = "runs past the end of its symmetric segment";
    if (!addr) how = "is a null pointer";
    shoal_api_fail(call,
                   "%s address %p (%zu bytes) %s: symmetric memory is the heap [%p, %p) and static data "
                   "[%p, %p)",
                   what, addr, len, how, (void *)h, (void *)(h + shoal_rt.seg_size[SHOAL_SEG_HEAP]), (void *)d,
                   (void *)(d + shoal_rt.seg_size[SHOAL_SEG_DATA]));
}

void shoal_api_fail_readonly(const char *call, const char *what, const void *addr, size_t len, int pe)
{
    const shoal_segment_t *s = &shoal_rt.seg[SHOAL_SEG_DATA];
    const char *ro = s->base + s->ro_offset;
    shoal_api_fail(call,
                   "%s address %p (%zu bytes) on PE %d lies in read-only static data [%p, %p) (RELRO: relocated "
                   "constants); write into writable globals or the symmetric heap",
                   what, addr, len, pe, (const void *)ro, (const void *)(ro + s->ro_len));
}

int shoal_api_ctx_pe_slow(const char *call, shmem_ctx_t ctx, int pe)
{
    shoal_check_ctx(call, ctx);
    const struct shoal_team *team = ctx->team;
    if (SHOAL_UNLIKELY((unsigned)pe >= (unsigned)team->size))
        shoal_api_fail(call, "PE %d is out of range for the context's team: valid PEs are 0 to %d", pe,
                       team->size - 1);
    return shoal_team_world_pe(team, pe);
}

void shoal_api_fail_ctx(const char *call, shmem_ctx_t ctx)
{
    if (ctx == SHMEM_CTX_INVALID) shoal_api_fail(call, "context is SHMEM_CTX_INVALID");
    shoal_api_fail(call, "context %p is not a valid context (never created, or already destroyed)", (void *)ctx);
}

void shoal_api_fail_bytes(const char *call, size_t nelems, size_t elem)
{
    if ((ptrdiff_t)nelems < 0)
        shoal_api_fail(call, "element count %td is negative (%zu as a size_t): it must be 0 or more",
                       (ptrdiff_t)nelems, nelems);
    shoal_api_fail(call, "%zu elements of %zu bytes overflow the address space (at most %zu elements)", nelems,
                   elem, elem ? SIZE_MAX / elem : SIZE_MAX);
}

void shoal_api_fail_null(const char *call, const char *what, size_t bytes)
{
    shoal_api_fail(call, "%s is a null pointer, but the call copies %zu bytes through it", what, bytes);
}
