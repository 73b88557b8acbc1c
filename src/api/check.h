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
#include "observe/observe.h"

void shoal_api_fail(const char *call, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));
void shoal_api_fail_uninitialized(const char *call) __attribute__((noreturn, cold));
void shoal_api_fail_pe(const char *call, int pe) __attribute__((noreturn, cold));
void shoal_api_fail_readonly(const char *call, const char *what, const void *addr, size_t len, int pe)
    __attribute__((noreturn, cold));
void shoal_api_fail_address(const char *call, const char *what, const void *addr, size_t len)
    __attribute__((noreturn, cold));
void shoal_api_fail_ctx(const char *call, shmem_ctx_t ctx) __attribute__((noreturn, cold));
void shoal_api_fail_bytes(const char *call, size_t nelems, size_t elem) __attribute__((noreturn, cold));
void shoal_api_fail_null(const char *call, const char *what, size_t bytes) __attribute__((noreturn, cold));

/* Whether a handle names a live context or team of this PE. They look the
 * handle up among the ones ctx.c and team.c made (never dereferencing an
 * unknown pointer), so a garbage or destroyed handle is reported, not
 * followed. SHMEM_CTX_DEFAULT and the predefined teams are known. */
int shoal_api_ctx_known(shmem_ctx_t ctx);
int shoal_api_team_known(shmem_team_t team);

#define SHOAL_LIKELY(x) __builtin_expect(!!(x), 1)
#define SHOAL_UNLIKELY(x) __builtin_expect(!!(x), 0)

static inline void shoal_check_init(const char *call)
{
    if (SHOAL_UNLIKELY(!shoal_rt.initialized)) shoal_api_fail_uninitialized(call);
}

/* The entry of the hottest calls (put, get, p, g, atomics, fence, quiet):
 * one test, the same the initialization check costs alone, covers both
 * "initialized" and "nothing observed". Only when it fails does the call
 * check initialization and, if recording, run itself again inside a span
 * (observe.h, SHOAL_OBS_WRAP; peer and bytes are worked out there only). */
#define SHOAL_HOT_ENTER(call, family, peer, bytes, self_call)                                                     \
    do {                                                                                                          \
        if (SHOAL_UNLIKELY(!__atomic_load_n(&shoal_rt.plain_calls, __ATOMIC_RELAXED))) {                          \
            shoal_check_init(call);                                                                               \
            SHOAL_OBS_WRAP((family), (call), peer, bytes, self_call);                                             \
        }                                                                                                         \
    } while (0)

static inline void shoal_check_pe(const char *call, int pe)
{
    if (SHOAL_UNLIKELY((unsigned)pe >= (unsigned)shoal_rt.n_pes)) shoal_api_fail_pe(call, pe);
}

static inline void shoal_check_ctx(const char *call, shmem_ctx_t ctx)
{
    if (SHOAL_UNLIKELY(ctx != SHMEM_CTX_DEFAULT && !shoal_api_ctx_known(ctx))) shoal_api_fail_ctx(call, ctx);
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

/* A call that moves nothing. The standard supports a null pointer with a
 * length of 0 (OpenSHMEM 1.5/1.6, annex "Undefined Behavior": "len is 0,
 * pointer is null: supported"), so a null addr passes; a non-null one must
 * still be symmetric (an empty range may sit at a segment's end), since a
 * stray pointer is a bug whatever the length. */
static inline void shoal_check_empty(const char *call, const char *what, const void *addr)
{
    size_t off;
    if (addr) shoal_check_symmetric(call, what, addr, 0, &off);
}

/* A write into [off, off+len) of seg on pe must not reach the read-only
 * (RELRO) part of static data: peers map that segment writable, so nothing
 * else would stop a put from corrupting pe's relocated constants. A write
 * of zero bytes touches nothing and is left alone. */
static inline void shoal_check_writable(const char *call, const char *what, const void *addr, int seg, size_t off,
                                        size_t len, int pe)
{
    const shoal_segment_t *s = &shoal_rt.seg[SHOAL_SEG_DATA];
    if (SHOAL_UNLIKELY(seg == SHOAL_SEG_DATA && len && s->ro_len && off < s->ro_offset + s->ro_len &&
                       s->ro_offset < off + len))
        shoal_api_fail_readonly(call, what, addr, len, pe);
}

/* nelems * elem, failing the call on overflow and on a count that is
 * negative as a ptrdiff_t (a negative int passed where a size_t is taken,
 * as nreduce of the *_to_all calls). */
static inline size_t shoal_check_bytes(const char *call, size_t nelems, size_t elem)
{
    size_t bytes;
    if (SHOAL_UNLIKELY(__builtin_mul_overflow(nelems, elem, &bytes) || (ptrdiff_t)nelems < 0))
        shoal_api_fail_bytes(call, nelems, elem);
    return bytes;
}

/* A local buffer of bytes > 0 bytes must not be a null pointer. */
static inline void shoal_check_local(const char *call, const char *what, const void *addr, size_t bytes)
{
    if (SHOAL_UNLIKELY(!addr && bytes)) shoal_api_fail_null(call, what, bytes);
}

/* A symmetric object the CPU updates atomically must be aligned to its size. */
static inline void shoal_check_aligned(const char *call, const char *what, const void *addr, size_t align)
{
    if (SHOAL_UNLIKELY((uintptr_t)addr % align))
        shoal_api_fail(call, "%s address %p is not aligned to its %zu-byte type", what, addr, align);
}

#endif
