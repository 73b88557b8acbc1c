/* order.c: fence, quiet and the world barrier. On the direct path puts are
 * complete when memcpy returns; a full CPU fence orders them (including
 * glibc's non-temporal stores) before any later store, such as a flag. */
#include <shmem.h>

#include "api/check.h"
#include "api/profiling.h"
#include "coll/coll.h"

/* The public calls pass their own name, so a message names what the
 * program called (shmem_quiet, not shmem_ctx_quiet).
 *
 * On SHMEM_CTX_INVALID (what a failed shmem_ctx_create leaves) fence and
 * quiet do nothing, as the standard says of shmem_ctx_fence and
 * shmem_ctx_quiet: there is nothing on it to order or complete. pe_quiet,
 * their per-PE form, does the same. */
static void fence(const char *call, shmem_ctx_t ctx)
{
    shoal_check_init(call);
    if (ctx == SHMEM_CTX_INVALID) return;
    shoal_check_ctx(call, ctx);
    shoal_rt.transport->fence(ctx->tctx);
}

static void quiet(const char *call, shmem_ctx_t ctx)
{
    shoal_check_init(call);
    if (ctx == SHMEM_CTX_INVALID) return;
    shoal_check_ctx(call, ctx);
    shoal_rt.transport->quiet(ctx->tctx);
}

static void pe_quiet(const char *call, shmem_ctx_t ctx, const int *target_pes, size_t npes)
{
    shoal_check_init(call);
    if (ctx == SHMEM_CTX_INVALID) return;
    shoal_check_ctx(call, ctx);
    if (npes && !target_pes) shoal_api_fail(call, "target_pes is a null pointer with npes %zu", npes);
    for (size_t i = 0; i < npes; i++) shoal_check_ctx_pe(call, ctx, target_pes[i]);
    shoal_rt.transport->quiet(ctx->tctx);
}

SHOAL_WEAK_ALIAS(shmem_ctx_fence);
void pshmem_ctx_fence(shmem_ctx_t ctx) { fence("shmem_ctx_fence", ctx); }
SHOAL_WEAK_ALIAS(shmem_ctx_quiet);
void pshmem_ctx_quiet(shmem_ctx_t ctx) { quiet("shmem_ctx_quiet", ctx); }
SHOAL_WEAK_ALIAS(shmem_ctx_pe_quiet);
void pshmem_ctx_pe_quiet(shmem_ctx_t ctx, const int *target_pes, size_t npes)
{
    pe_quiet("shmem_ctx_pe_quiet", ctx, target_pes, npes);
}
SHOAL_WEAK_ALIAS(shmem_fence);
void pshmem_fence(void) { fence("shmem_fence", SHMEM_CTX_DEFAULT); }
SHOAL_WEAK_ALIAS(shmem_quiet);
void pshmem_quiet(void) { quiet("shmem_quiet", SHMEM_CTX_DEFAULT); }
SHOAL_WEAK_ALIAS(shmem_pe_quiet);
void pshmem_pe_quiet(const int *target_pes, size_t npes) { pe_quiet("shmem_pe_quiet", SHMEM_CTX_DEFAULT, target_pes, npes); }

SHOAL_WEAK_ALIAS(shmem_barrier_all);
void pshmem_barrier_all(void)
{
    shoal_check_init("shmem_barrier_all");
    shoal_rt.transport->quiet(NULL);
    shoal_coll_sync_all();
}

SHOAL_WEAK_ALIAS(shmem_sync_all);
void pshmem_sync_all(void)
{
    shoal_check_init("shmem_sync_all");
    shoal_coll_sync_all();
}

/* Deprecated cache calls: hosts Shoal runs on are cache coherent. */
SHOAL_WEAK_ALIAS(shmem_clear_cache_inv);
void pshmem_clear_cache_inv(void) {}
SHOAL_WEAK_ALIAS(shmem_clear_cache_line_inv);
void pshmem_clear_cache_line_inv(void *dest) { (void)dest; }
SHOAL_WEAK_ALIAS(shmem_set_cache_inv);
void pshmem_set_cache_inv(void) {}
SHOAL_WEAK_ALIAS(shmem_set_cache_line_inv);
void pshmem_set_cache_line_inv(void *dest) { (void)dest; }
SHOAL_WEAK_ALIAS(shmem_udcflush);
void pshmem_udcflush(void) {}
SHOAL_WEAK_ALIAS(shmem_udcflush_line);
void pshmem_udcflush_line(void *dest) { (void)dest; }
