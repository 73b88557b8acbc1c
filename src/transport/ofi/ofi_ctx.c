/* ofi_ctx.c: transport contexts. Each owns an endpoint and a completion
 * queue (an entry for every counted operation: ofi.h), so its quiet waits
 * for its own operations only. All endpoints share the domain, address
 * vector and segment registrations. */
#include <stdlib.h>
#include <string.h>

#include "transport/ofi/ofi.h"
#include "util/log.h"

shoal_status_t shoal_ofi_ctx_open(struct shoal_tctx *ctx, int is_default)
{
    struct fi_info *info = shoal_ofi.info;
    int ret;
    const char *call;
    memset(ctx, 0, sizeof *ctx);
    atomic_init(&ctx->issued, 0);
    atomic_init(&ctx->done, 0);
    atomic_init(&ctx->failed, 0);
    atomic_init(&ctx->plain_mark, 0);
    atomic_init(&ctx->settled, 0);
    pthread_mutex_init(&ctx->bounce_lock, NULL);
    pthread_mutex_init(&ctx->flush_lock, NULL);
    atomic_init(&ctx->any_unflushed, 0);
    atomic_init(&ctx->answered_left, 0);
    ctx->unflushed = calloc((size_t)shoal_ofi.n_pes, sizeof *ctx->unflushed);
    ctx->contacted = calloc((size_t)shoal_ofi.n_pes, sizeof *ctx->contacted);
    if (!ctx->unflushed || !ctx->contacted) {
        shoal_ofi_ctx_close(ctx);
        return SHOAL_ERR_NOMEM;
    }
    /* The default context's queue has a wait object so the progress thread
     * can sleep in fi_cq_sread until the network has something for it. */
    struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_CONTEXT, .wait_obj = FI_WAIT_NONE};
    if (is_default) {
        /* A file descriptor first: the runtime's waits poll it to tell
         * peers' traffic (ofi_progress.c, shoal_ofi_incoming). */
        cq_attr.wait_obj = FI_WAIT_FD;
        ret = fi_cq_open(shoal_ofi.domain, &cq_attr, &ctx->cq, NULL);
        int fd = -1;
        if (ret == 0 && fi_control(&ctx->cq->fid, FI_GETWAIT, &fd) == 0 && fd >= 0) shoal_ofi.wait_fd = fd;
        if (ret) {
            cq_attr.wait_obj = FI_WAIT_UNSPEC;
            ret = fi_cq_open(shoal_ofi.domain, &cq_attr, &ctx->cq, NULL);
        }
        shoal_ofi.cq_wait = ret == 0;
        if (ret) cq_attr.wait_obj = FI_WAIT_NONE;
    }
    if (!ctx->cq) {
        ret = fi_cq_open(shoal_ofi.domain, &cq_attr, &ctx->cq, NULL);
        if (ret) {
            call = "fi_cq_open";
            goto fail;
        }
    }
    ret = fi_endpoint(shoal_ofi.domain, info, &ctx->ep, NULL);
    call = "fi_endpoint";
    if (ret) goto fail;
    ret = fi_ep_bind(ctx->ep, &shoal_ofi.av->fid, 0);
    call = "fi_ep_bind(av)";
    if (ret) goto fail;
    ret = fi_ep_bind(ctx->ep, &ctx->cq->fid, FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION);
    call = "fi_ep_bind(cq)";
    if (ret) goto fail;
    if (shoal_ofi.write_cntr) {
        ret = fi_ep_bind(ctx->ep, &shoal_ofi.write_cntr->fid, FI_WRITE);
        call = "fi_ep_bind(write counter)";
        if (ret) goto fail;
    }
    ret = fi_enable(ctx->ep);
    call = "fi_enable";
    if (ret) goto fail;
    ctx->slots = aligned_alloc(64, SHOAL_OFI_SLOTS * sizeof *ctx->slots);
    if (!ctx->slots) {
        shoal_ofi_ctx_close(ctx);
        return SHOAL_ERR_NOMEM;
    }
    memset(ctx->slots, 0, SHOAL_OFI_SLOTS * sizeof *ctx->slots);
    if (shoal_ofi.mr_local) {
        shoal_status_t reg = shoal_ofi_mr_reg(ctx->slots, SHOAL_OFI_SLOTS * sizeof *ctx->slots, FI_READ | FI_WRITE,
                                              ctx->ep, &ctx->slots_mr);
        if (reg != SHOAL_OK) {
            shoal_ofi_ctx_close(ctx);
            return reg;
        }
        ctx->slots_desc = fi_mr_desc(ctx->slots_mr);
        ctx->bounce = aligned_alloc(4096, SHOAL_OFI_BOUNCE_SIZE);
        if (!ctx->bounce) {
            shoal_ofi_ctx_close(ctx);
            return SHOAL_ERR_NOMEM;
        }
        shoal_status_t st = shoal_ofi_mr_reg(ctx->bounce, SHOAL_OFI_BOUNCE_SIZE, FI_READ | FI_WRITE, ctx->ep,
                                             &ctx->bounce_mr);
        if (st != SHOAL_OK) {
            shoal_ofi_ctx_close(ctx);
            return st;
        }
        ctx->bounce_desc = fi_mr_desc(ctx->bounce_mr);
    }
    return SHOAL_OK;
fail:;
    shoal_status_t st = shoal_ofi_fail(call, ret);
    shoal_ofi_ctx_close(ctx);
    return st;
}

static void close_one(struct fid *fid, const char *what)
{
    int ret = fid ? fi_close(fid) : 0;
    if (ret) shoal_ofi_fail(what, ret);
}

void shoal_ofi_ctx_close(struct shoal_tctx *ctx)
{
    close_one(ctx->bounce_mr ? &ctx->bounce_mr->fid : NULL, "fi_close(bounce mr)");
    close_one(ctx->ep ? &ctx->ep->fid : NULL, "fi_close(ep)");
    close_one(ctx->cq ? &ctx->cq->fid : NULL, "fi_close(cq)");
    close_one(ctx->slots_mr ? &ctx->slots_mr->fid : NULL, "fi_close(slots mr)");
    free(ctx->bounce);
    free(ctx->slots);
    free(ctx->unflushed);
    free(ctx->contacted);
    pthread_mutex_destroy(&ctx->bounce_lock);
    pthread_mutex_destroy(&ctx->flush_lock);
    memset(ctx, 0, sizeof *ctx);
}

#define OFI_POOL_MAX 64

/* The live list: under ctx_lock. */
static void live_add(struct shoal_tctx *ctx)
{
    ctx->live_prev = NULL;
    ctx->live_next = shoal_ofi.live;
    if (shoal_ofi.live) shoal_ofi.live->live_prev = ctx;
    shoal_ofi.live = ctx;
}

static void live_remove(struct shoal_tctx *ctx)
{
    if (ctx->live_prev) ctx->live_prev->live_next = ctx->live_next;
    else shoal_ofi.live = ctx->live_next;
    if (ctx->live_next) ctx->live_next->live_prev = ctx->live_prev;
    ctx->live_prev = ctx->live_next = NULL;
}

shoal_status_t shoal_ofi_ctx_create(shoal_tctx_t **out)
{
    pthread_mutex_lock(&shoal_ofi.ctx_lock);
    struct shoal_tctx *ctx = shoal_ofi.pool;
    if (ctx) {
        shoal_ofi.pool = ctx->next;
        shoal_ofi.pooled--;
        ctx->next = NULL;
        live_add(ctx);
    }
    pthread_mutex_unlock(&shoal_ofi.ctx_lock);
    if (!ctx) ctx = calloc(1, sizeof *ctx); /* opened at first use */
    if (!ctx) return SHOAL_ERR_NOMEM;
    *out = ctx;
    return SHOAL_OK;
}

struct shoal_tctx *shoal_ofi_ctx_ready(shoal_tctx_t *ctx)
{
    if (!ctx) return &shoal_ofi.dflt;
    if (atomic_load_explicit(&ctx->ready, memory_order_acquire)) return ctx;
    pthread_mutex_lock(&shoal_ofi.ctx_lock);
    shoal_status_t st = SHOAL_OK;
    if (!atomic_load_explicit(&ctx->ready, memory_order_relaxed)) {
        st = shoal_ofi_ctx_open(ctx, 0);
        if (st == SHOAL_OK) {
            live_add(ctx);
            atomic_store_explicit(&ctx->ready, 1, memory_order_release);
        }
    }
    pthread_mutex_unlock(&shoal_ofi.ctx_lock);
    return st == SHOAL_OK ? ctx : NULL;
}

/* shmem_ctx_destroy quiets first; waiting again here is cheap and keeps an
 * endpoint from being reused or closed under its own operations. */
void shoal_ofi_ctx_destroy(shoal_tctx_t *ctx)
{
    if (!ctx) return;
    if (!atomic_load(&ctx->ready)) {
        free(ctx);
        return;
    }
    shoal_ofi_flush_writes(ctx); /* its puts made visible, as quiet would */
    shoal_ofi_wait_all(ctx, "ctx_destroy");
    pthread_mutex_lock(&shoal_ofi.ctx_lock);
    live_remove(ctx);
    if (shoal_ofi.pooled < OFI_POOL_MAX) {
        ctx->next = shoal_ofi.pool;
        shoal_ofi.pool = ctx;
        shoal_ofi.pooled++;
        ctx = NULL;
    }
    pthread_mutex_unlock(&shoal_ofi.ctx_lock);
    if (ctx) {
        shoal_ofi_ctx_close(ctx);
        free(ctx);
    }
}

void shoal_ofi_pool_close(void)
{
    while (shoal_ofi.pool) {
        struct shoal_tctx *ctx = shoal_ofi.pool;
        shoal_ofi.pool = ctx->next;
        shoal_ofi_ctx_close(ctx);
        free(ctx);
    }
    shoal_ofi.pooled = 0;
    /* The handles stay the program's; only their endpoints go. */
    while (shoal_ofi.live) {
        struct shoal_tctx *ctx = shoal_ofi.live;
        shoal_ofi.live = ctx->live_next;
        shoal_ofi_wait_all(ctx, "finalize");
        shoal_ofi_ctx_close(ctx);
    }
}
