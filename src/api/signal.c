/* signal.c: put-with-signal and the signal calls. A signal is a uint64_t
 * symmetric object updated atomically; the data of a put_signal are written
 * before it with release ordering, so whoever sees the signal sees the data. */
#include <string.h>

#include "api/check.h"
#include "api/profiling.h"
#include "observe/blocked.h"
#include "api/rma_api.h"
#include "api/signal_api.h"
#ifdef SHOAL_HAVE_CUDA
#include "cuda/gpu_rma.h"
#endif
#include "observe/observe.h"
#include "sync/backoff.h"
#include "sync/wait.h"

/* glibc's memcpy switches to non-temporal stores for large copies (the
 * threshold is tunable down to about 16 KiB); those are not ordered by a
 * release store, so a full fence goes first. */
#define SIGNAL_FENCE_BYTES (16 * 1024)

static void check_sig_op(const char *call, int sig_op)
{
    if (SHOAL_UNLIKELY(sig_op != SHMEM_SIGNAL_SET && sig_op != SHMEM_SIGNAL_ADD))
        shoal_api_fail(call, "signal operator %d is neither SHMEM_SIGNAL_SET (%d) nor SHMEM_SIGNAL_ADD (%d)", sig_op,
                       SHMEM_SIGNAL_SET, SHMEM_SIGNAL_ADD);
}

/* The checks of the signal word on world PE pe; its segment and offset. */
static int signal_word(const char *call, uint64_t *sig_addr, int pe, size_t *off)
{
    int seg = shoal_check_symmetric(call, "sig_addr", sig_addr, sizeof *sig_addr, off);
    shoal_check_writable(call, "sig_addr", sig_addr, seg, *off, sizeof *sig_addr, pe);
    if (SHOAL_UNLIKELY((uintptr_t)sig_addr % sizeof *sig_addr))
        shoal_api_fail(call, "sig_addr %p is not 8-byte aligned", (void *)sig_addr);
    return seg;
}

/* pe is a world PE (already translated from the context's team). */
static void signal_update(const char *call, shmem_ctx_t ctx, uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)
{
    size_t off;
    int seg = signal_word(call, sig_addr, pe, &off);
    uint64_t *remote = shoal_rt.amo_fabric ? NULL : shoal_route_direct(seg, off, pe);
    if (SHOAL_LIKELY(remote != NULL)) {
        /* The trace's flow arrow is keyed by what the word holds after the
         * update. Each branch reports its own: merging them into one
         * variable is miscompiled by GCC 12.2 at -O2 (twice the old value). */
        if (sig_op == SHMEM_SIGNAL_SET) {
            __atomic_store_n(remote, signal, __ATOMIC_RELEASE);
            SHOAL_OBS_SIGNAL_SENT(pe, seg, off, signal);
        } else {
            uint64_t now = __atomic_add_fetch(remote, signal, __ATOMIC_RELEASE);
            SHOAL_OBS_SIGNAL_SENT(pe, seg, off, now);
        }
        shoal_wake(pe);
        return;
    }
    shoal_status_t st = shoal_rt.transport->amo(ctx->tctx, pe, seg, off, 8,
                                                sig_op == SHMEM_SIGNAL_SET ? SHOAL_AMO_SET : SHOAL_AMO_ADD, signal, 0,
                                                NULL);
    if (st != SHOAL_OK) shoal_api_fail(call, "signal to PE %d failed: %s", pe, shoal_status_str(st));
    if (sig_op == SHMEM_SIGNAL_SET) SHOAL_OBS_SIGNAL_SENT(pe, seg, off, signal); /* an add's result is unknown here */
}

/* A peer reached through a transport that carries a put and its signal in
 * one message (tls): one request where a put and an atomic would be two,
 * each a system call and a record. Observed runs (SHMEM_STATS, traces,
 * profiling) keep the separate put, whose own event they record. Returns 0
 * where this does not apply. */
static int put_signal_fused(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, size_t elem,
                            uint64_t *sig_addr, uint64_t signal, int sig_op, int pe, const char *call)
{
    const struct shoal_transport_ops *t = shoal_rt.transport;
    if (!t->put_signal || shoal_rt.peers[pe].direct || !__atomic_load_n(&shoal_rt.plain_calls, __ATOMIC_RELAXED))
        return 0;
    const size_t bytes = shoal_check_bytes(call, nelems, elem);
    if (!bytes) return 0;
#ifdef SHOAL_HAVE_CUDA
    if (shoal_gpu_heap_has(dest)) return 0;
#endif
    size_t off, sig_off;
    const int seg = shoal_api_put_dest(call, dest, source, bytes, pe, &off);
    const int sig_seg = signal_word(call, sig_addr, pe, &sig_off);
    shoal_status_t st = t->put_signal(ctx->tctx, 1, pe, (enum shoal_segment_id)seg, off, source, bytes,
                                      (enum shoal_segment_id)sig_seg, sig_off,
                                      sig_op == SHMEM_SIGNAL_SET ? SHOAL_AMO_SET : SHOAL_AMO_ADD, signal);
    if (st != SHOAL_OK) shoal_api_fail(call, "put with signal to PE %d failed: %s", pe, shoal_status_str(st));
    if (sig_op == SHMEM_SIGNAL_SET) SHOAL_OBS_SIGNAL_SENT(pe, sig_seg, sig_off, signal);
    return 1;
}

void shoal_api_put_signal(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, size_t elem,
                          uint64_t *sig_addr, uint64_t signal, int sig_op, int pe, const char *call)
{
    check_sig_op(call, sig_op);
    shoal_check_init(call);
    const int world_pe = shoal_check_ctx_pe(call, ctx, pe);
    SHOAL_OBS_SPAN(sp, SHOAL_OBS_SIGNAL, call, world_pe, (uint64_t)nelems * elem);
    if (put_signal_fused(ctx, dest, source, nelems, elem, sig_addr, signal, sig_op, world_pe, call)) return;
    shoal_api_put(ctx, dest, source, nelems, elem, pe, call);
    /* Through the fabric the signal may overtake the data unless fenced. */
    if (nelems * elem >= SIGNAL_FENCE_BYTES || !shoal_rt.peers[world_pe].direct || shoal_rt.amo_fabric)
        shoal_rt.transport->fence(ctx->tctx);
    signal_update(call, ctx, sig_addr, signal, sig_op, world_pe);
}

SHOAL_WEAK_ALIAS(shmem_signal_fetch);
uint64_t pshmem_signal_fetch(const uint64_t *sig_addr)
{
    static const char *call = "shmem_signal_fetch";
    shoal_check_init(call);
    size_t off;
    shoal_check_symmetric(call, "sig_addr", sig_addr, sizeof *sig_addr, &off);
    shoal_check_aligned(call, "sig_addr", sig_addr, sizeof *sig_addr);
    return __atomic_load_n(sig_addr, __ATOMIC_ACQUIRE);
}

static void signal_call(const char *call, shmem_ctx_t ctx, uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)
{
    shoal_check_init(call);
    pe = shoal_check_ctx_pe(call, ctx, pe);
    SHOAL_OBS_SPAN(sp, SHOAL_OBS_SIGNAL, call, pe, sizeof *sig_addr);
    signal_update(call, ctx, sig_addr, signal, sig_op, pe);
}

SHOAL_WEAK_ALIAS(shmem_ctx_signal_add);
void pshmem_ctx_signal_add(shmem_ctx_t ctx, uint64_t *sig_addr, uint64_t signal, int pe)
{
    signal_call("shmem_ctx_signal_add", ctx, sig_addr, signal, SHMEM_SIGNAL_ADD, pe);
}

SHOAL_WEAK_ALIAS(shmem_ctx_signal_set);
void pshmem_ctx_signal_set(shmem_ctx_t ctx, uint64_t *sig_addr, uint64_t signal, int pe)
{
    signal_call("shmem_ctx_signal_set", ctx, sig_addr, signal, SHMEM_SIGNAL_SET, pe);
}

SHOAL_WEAK_ALIAS(shmem_signal_add);
void pshmem_signal_add(uint64_t *sig_addr, uint64_t signal, int pe)
{
    signal_call("shmem_signal_add", SHMEM_CTX_DEFAULT, sig_addr, signal, SHMEM_SIGNAL_ADD, pe);
}

SHOAL_WEAK_ALIAS(shmem_signal_set);
void pshmem_signal_set(uint64_t *sig_addr, uint64_t signal, int pe)
{
    signal_call("shmem_signal_set", SHMEM_CTX_DEFAULT, sig_addr, signal, SHMEM_SIGNAL_SET, pe);
}

SHOAL_WEAK_ALIAS(shmem_signal_wait_until);
uint64_t pshmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value)
{
    static const char *call = "shmem_signal_wait_until";
    shoal_check_init(call);
    if (SHOAL_UNLIKELY(!shoal_cmp_valid(cmp)))
        shoal_api_fail(call, "comparison %d is not one of SHMEM_CMP_EQ, NE, GT, GE, LT, LE (%d to %d)", cmp,
                       SHMEM_CMP_EQ, SHMEM_CMP_LE);
    size_t off;
    shoal_check_symmetric(call, "sig_addr", sig_addr, sizeof *sig_addr, &off);
    shoal_check_aligned(call, "sig_addr", sig_addr, sizeof *sig_addr);
    SHOAL_OBS_SPAN(sp, SHOAL_OBS_WAIT, call, -1, sizeof *sig_addr);
    const struct shoal_scalar u64 = {.size = 8, .is_signed = 0};
    struct shoal_backoff b = {0};
    shoal_blocked_wait(call, sig_addr, 8, 0, cmp, cmp_value, 0);
    for (;;) {
        uint64_t v = __atomic_load_n(sig_addr, __ATOMIC_ACQUIRE);
        if (shoal_cmp_holds(u64, cmp, v, cmp_value)) {
            SHOAL_OBS_WAIT_SEEN(sp, sig_addr, v);
            shoal_backoff_end(&b);
            shoal_blocked_end();
            return v;
        }
        shoal_backoff_wait(&b);
    }
}
