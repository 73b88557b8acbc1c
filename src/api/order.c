/* order.c: fence, quiet and the world barrier. On the direct path puts are
 * complete when memcpy returns; a full CPU fence orders them (including
 * glibc's non-temporal stores) before any later store, such as a flag. */
#include <shmem.h>

#include "api/check.h"
#include "api/debug.h"
#include "api/profiling.h"
#include "coll/coll.h"
#include "observe/blocked.h"
#include "observe/observe.h"

/* The public calls pass their own name, so a message names what the
 * program called (shmem_quiet, not shmem_ctx_quiet).
 *
 * On SHMEM_CTX_INVALID (what a failed shmem_ctx_create leaves) fence and
 * quiet do nothing, as the standard says of shmem_ctx_fence and
 * shmem_ctx_quiet: there is nothing on it to order or complete. pe_quiet,
 * their per-PE form, does the same. */
static void fence(const char *call, shmem_ctx_t ctx)
{
    SHOAL_HOT_ENTER(call, SHOAL_OBS_ORDER, -1, 0, fence(call, ctx));
    if (ctx == SHMEM_CTX_INVALID) return;
    shoal_check_ctx(call, ctx);
    shoal_rt.transport->fence(ctx->tctx);
}

static void quiet(const char *call, shmem_ctx_t ctx)
{
    SHOAL_HOT_ENTER(call, SHOAL_OBS_ORDER, -1, 0, quiet(call, ctx));
    if (ctx == SHMEM_CTX_INVALID) return;
    shoal_check_ctx(call, ctx);
    /* Only a fabric's quiet can block (on the host it is a CPU fence). */
    if (shoal_rt.fabric) shoal_blocked_call(call, SHOAL_WHERE_QUIET, NULL, -1);
    shoal_rt.transport->quiet(ctx->tctx);
    if (shoal_rt.fabric) shoal_blocked_end();
}

static void pe_quiet(const char *call, shmem_ctx_t ctx, const int *target_pes, size_t npes)
{
    shoal_check_init(call);
    SHOAL_OBS_SPAN(sp, SHOAL_OBS_ORDER, call, -1, 0);
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

/* Entering a world barrier: the hang report's record and, with
 * SHMEM_DEBUG, the agreement that every PE makes this call now. */
static void world_sync(const char *call)
{
    shoal_blocked_coll(call, SHMEM_TEAM_WORLD, 0, 0, 0, 0, -1);
    if (SHOAL_UNLIKELY(shoal_rt.config.debug)) shoal_debug_coll_agree(call, SHMEM_TEAM_WORLD, 0, 0, -1);
}

SHOAL_WEAK_ALIAS(shmem_barrier_all);
void pshmem_barrier_all(void)
{
    shoal_check_init("shmem_barrier_all");
    SHOAL_OBS_SPAN(sp, SHOAL_OBS_BARRIER, "shmem_barrier_all", -1, 0);
    SHOAL_OBS_TEAM(sp, 0);
    world_sync("shmem_barrier_all");
    shoal_rt.transport->quiet(NULL);
    shoal_coll_sync_all();
    shoal_blocked_end();
}

SHOAL_WEAK_ALIAS(shmem_sync_all);
void pshmem_sync_all(void)
{
    shoal_check_init("shmem_sync_all");
    SHOAL_OBS_SPAN(sp, SHOAL_OBS_BARRIER, "shmem_sync_all", -1, 0);
    SHOAL_OBS_TEAM(sp, 0);
    world_sync("shmem_sync_all");
    shoal_coll_sync_all();
    shoal_blocked_end();
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
