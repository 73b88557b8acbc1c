/* ofi_ops.c: put, get, atomics, fence and quiet over libfabric RMA.
 *
 * Every write and atomic asks for delivery completion, so an operation
 * counted done (ofi.h) is visible at the target: that is what quiet needs.
 * Small puts are injected (the source is copied at once) and non-fetching
 * atomics copy their operand into a slot of the context (ofi.h); larger
 * puts wait for their own completion so the source can be reused; gets and
 * fetching atomics wait for theirs. Where the provider
 * processes writes in the order posted to a peer (writes_ordered), small
 * puts are the exception: they complete once injected, the target answers
 * nothing for them, and fence and quiet make them visible with one more
 * write per PE written to (shoal_ofi_flush_writes). Transfers beyond the
 * provider's largest message are split. Where the provider needs local
 * buffers registered (FI_MR_LOCAL), memory outside the registered segments
 * goes through the context's registered bounce buffer, one chunk at a time.
 * A transfer never crosses a registered region of the target (ofi_mr.c):
 * it is split at region ends, and writes into a read-only region are
 * refused here, before anything is posted. A post that fails ends the job. */
#include <stdatomic.h>
#include <string.h>

#include "transport/ofi/ofi.h"
#include "util/log.h"


/* The registration covering [p, p+len) usable on ctx's endpoint, if any. */
static int local_desc(struct shoal_tctx *ctx, const void *p, size_t len, void **desc)
{
    *desc = NULL;
    if (!shoal_ofi.mr_local) return 1; /* any memory will do, without a descriptor */
    if (shoal_ofi.mr_endpoint && ctx != &shoal_ofi.dflt) return 0;
    const char *c = p;
    for (int s = 0; s < SHOAL_SEG_COUNT; s++)
        for (int i = 0; i < SHOAL_OFI_REGIONS; i++) {
            const struct shoal_ofi_region *r = &shoal_ofi.region[s][i];
            const char *b = shoal_ofi.local_base[s] + r->offset;
            if (shoal_ofi.mr[s][i] && c >= b && (size_t)(c - b) <= r->len && len <= r->len - (size_t)(c - b)) {
                *desc = shoal_ofi.desc[s][i];
                return 1;
            }
        }
    return 0;
}

struct target {
    fi_addr_t addr;
    uint64_t raddr;
    uint64_t key;
    size_t room; /* bytes from raddr to the end of its region */
    int pe;
};

static const char *const seg_name[SHOAL_SEG_COUNT] = {"heap", "static data"};

/* A write that touches pe's read-only span is refused whole, before any
 * byte of it is posted. */
static shoal_status_t refuse_readonly(int pe, enum shoal_segment_id seg, size_t offset, size_t len, const char *what)
{
    if (shoal_ofi_skip_ro_check) return SHOAL_OK;
    const struct shoal_ofi_region *r =
        &shoal_ofi.remote[((size_t)pe * SHOAL_SEG_COUNT + (size_t)seg) * SHOAL_OFI_REGIONS];
    for (int i = 0; i < SHOAL_OFI_REGIONS; i++) {
        if (!r[i].ro || !r[i].len || offset >= r[i].offset + r[i].len || r[i].offset >= offset + len) continue;
        return shoal_ofi_fatal("%s to PE %d: %zu byte(s) at offset %zu of its static data reach its read-only "
                               "part (RELRO, offsets %llu..%llu: const data such as pointer tables): a write there "
                               "is refused", what, pe, len, offset, (unsigned long long)r[i].offset,
                               (unsigned long long)(r[i].offset + r[i].len - 1));
    }
    return SHOAL_OK;
}

/* Where offset of pe's seg is; fails (ending the job) outside the segment. */
static shoal_status_t target_of(int pe, enum shoal_segment_id seg, size_t offset, const char *what, struct target *t)
{
    const struct shoal_ofi_region *r = shoal_ofi_remote_region(pe, seg, offset);
    *t = (struct target){.pe = pe}; /* filled even when the job is not ended below (no fatal callback) */
    if (!r)
        return shoal_ofi_fatal("%s to PE %d: offset %zu is outside that PE's %s segment", what, pe, offset,
                               seg_name[seg]);
    *t = (struct target){.addr = shoal_ofi.addr[pe], .raddr = r->base + (offset - r->offset), .key = r->key,
                         .room = (size_t)(r->len - (offset - r->offset)), .pe = pe};
    return SHOAL_OK;
}

enum rma_kind { RMA_WRITE, RMA_READ };

/* Completions a context may leave unread before a post reads them: where
 * no progress thread drains the default queue, a loop of puts without a
 * quiet would otherwise pile up their entries in the provider. */
#define OFI_UNREAD_MAX 4096

/* Counts an operation about to be posted (its completion entry will count
 * it, so issued grows first: a concurrent quiet may wait for it); any but
 * a signal the provider keeps in order (ordered_signal) raises plain_mark
 * to its count. */
static void count_post(struct shoal_tctx *ctx, int ordered_signal)
{
    const uint64_t count = atomic_fetch_add(&ctx->issued, 1) + 1;
    if (count - atomic_load_explicit(&ctx->done, memory_order_relaxed) > OFI_UNREAD_MAX) shoal_ofi_drain(ctx);
    if (ordered_signal) return;
    uint_fast64_t mark = atomic_load_explicit(&ctx->plain_mark, memory_order_relaxed);
    while (mark < count && !atomic_compare_exchange_weak(&ctx->plain_mark, &mark, count)) {
    }
}

/* Posts one RMA message of len bytes to pe, retrying while the provider's
 * queue is full. A write complete once injected (FI_INJECT_COMPLETE) that
 * nobody waits for is not counted (ofi.h, completion model), once pe has
 * been reached (contacted). */
static ssize_t post_rma_msg(struct shoal_tctx *ctx, enum rma_kind kind, int pe, struct fi_msg_rma *msg, size_t len,
                            uint64_t flags, struct shoal_ofi_op *op, int ordered_signal)
{
    const int counted = op || !(flags & FI_INJECT_COMPLETE) ||
                        !atomic_load_explicit(&ctx->contacted[pe], memory_order_relaxed);
    msg->context = op ? (void *)op : shoal_ofi_tag(pe, counted);
    if (op) atomic_fetch_add(&op->pending, 1);
    if (counted) {
        flags |= FI_COMPLETION;
        count_post(ctx, ordered_signal);
    }
    ssize_t ret;
    unsigned n = 0, polls = 0;
    long long start = 0;
    const char *call = kind == RMA_WRITE ? "fi_writemsg" : "fi_readmsg";
    for (;;) {
        ret = kind == RMA_WRITE ? fi_writemsg(ctx->ep, msg, flags) : fi_readmsg(ctx->ep, msg, flags);
        if (ret != -FI_EAGAIN) break;
        shoal_ofi_poll(ctx);
        shoal_ofi_backoff(&n);
        shoal_ofi_deadline(&start, ++polls, call, pe);
    }
    if (ret) {
        if (counted) atomic_fetch_sub(&ctx->issued, 1);
        if (op) atomic_fetch_sub(&op->pending, 1);
        shoal_ofi_fatal("%s of %zu bytes to PE %d failed: %s (%zd)", call, len, pe, fi_strerror((int)-ret), ret);
    }
    return ret;
}

/* Posts one RMA between buf and t. */
static ssize_t post_rma(struct shoal_tctx *ctx, enum rma_kind kind, struct target t, void *buf, size_t len,
                        void *desc, uint64_t flags, struct shoal_ofi_op *op, int ordered_signal)
{
    struct iovec iov = {.iov_base = buf, .iov_len = len};
    struct fi_rma_iov rma = {.addr = t.raddr, .len = len, .key = t.key};
    struct fi_msg_rma msg = {.msg_iov = &iov, .desc = &desc, .iov_count = 1, .addr = t.addr, .rma_iov = &rma,
                             .rma_iov_count = 1};
    return post_rma_msg(ctx, kind, t.pe, &msg, len, flags, op, ordered_signal);
}

/* Where fence or quiet follow small puts, the flush costs one more message
 * to each PE and its processing there (put 8 B + quiet, 2 PEs on one host:
 * 32-34 us answered, 49-51 flushed at every call); where they do not
 * (p + wait_until) the answer is the cost. So a flush that found puts to
 * make visible has the context's next SHOAL_OFI_ANSWERED_AFTER_FLUSH small
 * puts answered, as before, and then tries again: in a put + quiet loop
 * one quiet in that many flushes. */
/* Whether this small put is to be answered (and counts it). */
static int answered_first(struct shoal_tctx *ctx)
{
    int left = atomic_load_explicit(&ctx->answered_left, memory_order_relaxed);
    while (left > 0 && !atomic_compare_exchange_weak(&ctx->answered_left, &left, left - 1)) {
    }
    return left > 0;
}

/* A put to pe completed unanswered: the next fence or quiet flushes pe.
 * The PE's mark before the context's, which a flush clears first. */
static void mark_unflushed(struct shoal_tctx *ctx, int pe)
{
    if (atomic_load_explicit(&ctx->unflushed[pe], memory_order_relaxed)) return;
    atomic_store(&ctx->unflushed[pe], 1);
    atomic_store(&ctx->any_unflushed, 1);
}

/* Makes ctx's unanswered puts visible: to each PE they went to, one
 * delivery-complete write of the PE's flush word, which its provider
 * processes after them (FI_ORDER_RMA_WAW), so its completion says they are
 * in. Counted like any operation: the caller's wait for everything posted
 * waits for them. (An 8-byte read instead, ordered by FI_ORDER_RMA_RAW,
 * cost more: put + quiet 41-45 -> 64-67 us on one host.) A put marked
 * after the scan below raised any_unflushed after it was cleared, and is
 * flushed next time; one posted before the flush began is covered. */
void shoal_ofi_flush_writes(struct shoal_tctx *ctx)
{
    static const uint64_t zero = 0;
    if (!atomic_load(&ctx->any_unflushed)) return;
    pthread_mutex_lock(&ctx->flush_lock);
    atomic_store(&ctx->any_unflushed, 0);
    atomic_store_explicit(&ctx->answered_left, SHOAL_OFI_ANSWERED_AFTER_FLUSH, memory_order_relaxed);
    for (int pe = 0; pe < shoal_ofi.n_pes; pe++) {
        if (!atomic_load_explicit(&ctx->unflushed[pe], memory_order_relaxed) ||
            !atomic_exchange(&ctx->unflushed[pe], 0))
            continue;
        struct target t;
        if (target_of(pe, SHOAL_SEG_HEAP, shoal_ofi.flush_word, "quiet", &t) != SHOAL_OK)
            continue; /* the job is ending */
        post_rma(ctx, RMA_WRITE, t, (void *)&zero, sizeof zero, NULL, FI_INJECT | FI_DELIVERY_COMPLETE, NULL, 0);
    }
    pthread_mutex_unlock(&ctx->flush_lock);
}

/* Moves len bytes through the bounce buffer, waiting for each chunk. */
static shoal_status_t rma_bounce(struct shoal_tctx *ctx, enum rma_kind kind, int pe, enum shoal_segment_id seg,
                                 size_t offset, char *buf, size_t len)
{
    shoal_status_t st = SHOAL_OK;
    pthread_mutex_lock(&ctx->bounce_lock);
    for (size_t done = 0; done < len && st == SHOAL_OK;) {
        size_t chunk = len - done < SHOAL_OFI_BOUNCE_SIZE ? len - done : SHOAL_OFI_BOUNCE_SIZE;
        if (chunk > shoal_ofi.max_msg) chunk = shoal_ofi.max_msg;
        struct target t;
        st = target_of(pe, seg, offset + done, kind == RMA_WRITE ? "put" : "get", &t);
        if (st != SHOAL_OK) break;
        if (chunk > t.room) chunk = t.room;
        if (kind == RMA_WRITE) memcpy(ctx->bounce, buf + done, chunk);
        struct shoal_ofi_op op = {0, 0, 0};
        uint64_t flags = kind == RMA_WRITE ? FI_DELIVERY_COMPLETE : 0;
        if (post_rma(ctx, kind, t, ctx->bounce, chunk, ctx->bounce_desc, flags, &op, 0))
            st = SHOAL_ERR_SYS;
        else
            st = shoal_ofi_wait_op(ctx, &op, kind == RMA_WRITE ? "put" : "get", pe);
        if (st == SHOAL_OK && kind == RMA_READ) memcpy(buf + done, ctx->bounce, chunk);
        done += chunk;
    }
    pthread_mutex_unlock(&ctx->bounce_lock);
    return st;
}

/* Posts [buf, buf+len) in chunks the provider accepts (injected ones of at
 * most the inject size); with op, every chunk reports to it. */
static shoal_status_t rma_chunks(struct shoal_tctx *ctx, enum rma_kind kind, int pe, enum shoal_segment_id seg,
                                 size_t offset, char *buf, size_t len, void *desc, uint64_t flags,
                                 struct shoal_ofi_op *op, int ordered_signal)
{
    const size_t most = flags & FI_INJECT ? shoal_ofi.inject_size : shoal_ofi.max_msg;
    for (size_t done = 0; done < len;) {
        size_t chunk = len - done < most ? len - done : most;
        struct target t;
        shoal_status_t st = target_of(pe, seg, offset + done, kind == RMA_WRITE ? "put" : "get", &t);
        if (st != SHOAL_OK) return st;
        if (chunk > t.room) chunk = t.room;
        if (post_rma(ctx, kind, t, buf + done, chunk, desc, flags, op, ordered_signal)) return SHOAL_ERR_SYS;
        done += chunk;
    }
    return SHOAL_OK;
}

shoal_status_t shoal_ofi_put(shoal_tctx_t *tctx, int pe, enum shoal_segment_id seg, size_t offset, const void *src,
                             size_t len)
{
    struct shoal_tctx *ctx = shoal_ofi_ctx_ready(tctx);
    void *desc;
    if (len == 0) return SHOAL_OK;
    if (!ctx) return SHOAL_ERR_SYS;
    shoal_status_t ro = refuse_readonly(pe, seg, offset, len, "put");
    if (ro != SHOAL_OK) return ro;
    const int registered = local_desc(ctx, src, len, &desc);
    /* Injected data is copied at once and needs no registration. */
    if (len <= shoal_ofi.inject_size) {
        /* The target's answer to a delivery-complete write was on the path
         * of every p + wait_until: 2 PEs on one host, ping-pong 18.3-22.4
         * -> 10.9-13.0 us (docs/design.md). */
        const int unanswered = shoal_ofi.writes_ordered && !answered_first(ctx);
        const uint64_t done = unanswered ? FI_INJECT_COMPLETE : FI_DELIVERY_COMPLETE;
        shoal_status_t st = rma_chunks(ctx, RMA_WRITE, pe, seg, offset, (char *)src, len, desc, FI_INJECT | done, NULL,
                                       0);
        if (st == SHOAL_OK && unanswered) mark_unflushed(ctx, pe);
        return st;
    }
    if (!registered) return rma_bounce(ctx, RMA_WRITE, pe, seg, offset, (char *)src, len);
    struct shoal_ofi_op op = {0, 0, 0};
    shoal_status_t st = rma_chunks(ctx, RMA_WRITE, pe, seg, offset, (char *)src, len, desc, FI_DELIVERY_COMPLETE,
                                   &op, 0);
    /* Chunks already posted still read src: wait for them even on failure. */
    shoal_status_t w = shoal_ofi_wait_op(ctx, &op, "put", pe);
    return st != SHOAL_OK ? st : w;
}

/* A read into dst; blocking waits for it, otherwise the next quiet does. */
static shoal_status_t read_into(shoal_tctx_t *tctx, int pe, enum shoal_segment_id seg, size_t offset, void *dst,
                                size_t len, int blocking)
{
    struct shoal_tctx *ctx = shoal_ofi_ctx_ready(tctx);
    void *desc;
    if (len == 0) return SHOAL_OK;
    if (!ctx) return SHOAL_ERR_SYS;
    /* Unregistered memory on a provider that needs it: complete it now. */
    if (!local_desc(ctx, dst, len, &desc)) return rma_bounce(ctx, RMA_READ, pe, seg, offset, dst, len);
    if (!blocking) return rma_chunks(ctx, RMA_READ, pe, seg, offset, dst, len, desc, 0, NULL, 0);
    struct shoal_ofi_op op = {0, 0, 0};
    shoal_status_t st = rma_chunks(ctx, RMA_READ, pe, seg, offset, dst, len, desc, 0, &op, 0);
    shoal_status_t w = shoal_ofi_wait_op(ctx, &op, "get", pe);
    return st != SHOAL_OK ? st : w;
}

shoal_status_t shoal_ofi_get(shoal_tctx_t *tctx, int pe, enum shoal_segment_id seg, size_t offset, void *dst,
                             size_t len)
{
    return read_into(tctx, pe, seg, offset, dst, len, 1);
}

shoal_status_t shoal_ofi_get_nbi(shoal_tctx_t *tctx, int pe, enum shoal_segment_id seg, size_t offset, void *dst,
                                 size_t len)
{
    return read_into(tctx, pe, seg, offset, dst, len, 0);
}

static enum fi_op fabric_op(enum shoal_amo_op op)
{
    switch (op) {
    case SHOAL_AMO_FETCH: return FI_ATOMIC_READ;
    case SHOAL_AMO_SET:
    case SHOAL_AMO_SWAP: return FI_ATOMIC_WRITE;
    case SHOAL_AMO_CSWAP: return FI_CSWAP;
    case SHOAL_AMO_ADD: return FI_SUM;
    case SHOAL_AMO_AND: return FI_BAND;
    case SHOAL_AMO_OR: return FI_BOR;
    case SHOAL_AMO_XOR: return FI_BXOR;
    }
    return FI_ATOMIC_OP_LAST;
}

/* Operand, compare and result of one atomic, each as wide as the element. */
struct amo_bufs {
    uint64_t operand, compare, result;
};

static ssize_t post_amo(struct shoal_tctx *ctx, const struct fi_msg_atomic *msg, enum shoal_amo_op op,
                        struct amo_bufs *b, void *desc, int fetching, uint64_t flags, int pe, int signal)
{
    struct fi_ioc res = {.addr = &b->result, .count = 1}, cmp = {.addr = &b->compare, .count = 1};
    ssize_t ret;
    unsigned n = 0, polls = 0;
    long long start = 0;
    const char *call = !fetching                ? "fi_atomicmsg"
                       : op == SHOAL_AMO_CSWAP ? "fi_compare_atomicmsg"
                                               : "fi_fetch_atomicmsg";
    count_post(ctx, signal && shoal_ofi.atomics_ordered);
    for (;;) {
        if (!fetching)
            ret = fi_atomicmsg(ctx->ep, msg, flags);
        else if (op == SHOAL_AMO_CSWAP)
            ret = fi_compare_atomicmsg(ctx->ep, msg, &cmp, &desc, 1, &res, &desc, 1, flags);
        else
            ret = fi_fetch_atomicmsg(ctx->ep, msg, &res, &desc, 1, flags);
        if (ret != -FI_EAGAIN) break;
        shoal_ofi_poll(ctx);
        shoal_ofi_backoff(&n);
        shoal_ofi_deadline(&start, ++polls, call, pe);
    }
    if (ret) {
        atomic_fetch_sub(&ctx->issued, 1);
        shoal_ofi_fatal("%s to PE %d failed: %s (%zd)", call, pe, fi_strerror((int)-ret), ret);
    }
    return ret;
}

/* A free slot of ctx (ofi.h), claimed; waits for one to complete when all
 * are in use. */
static struct shoal_ofi_slot *take_slot(struct shoal_tctx *ctx, int pe)
{
    unsigned n = 0, polls = 0;
    long long start = 0;
    for (;;) {
        struct shoal_ofi_slot *s = &ctx->slots[atomic_fetch_add(&ctx->slot_next, 1) % SHOAL_OFI_SLOTS];
        int idle = 0;
        if (atomic_compare_exchange_strong(&s->op.pending, &idle, 1)) {
            atomic_store(&s->op.err, 0);
            return s;
        }
        shoal_ofi_poll(ctx);
        shoal_ofi_backoff(&n);
        shoal_ofi_deadline(&start, ++polls, "an atomic", pe);
    }
}

/* Posts a non-fetching atomic of count elements of type dt at raddr of t,
 * from a slot holding the bytes at data: the caller returns at once, and
 * the completion counts it and frees the slot. */
static shoal_status_t post_from_slot(struct shoal_tctx *ctx, const struct target *t, uint64_t raddr,
                                     const void *data, size_t bytes, enum fi_datatype dt, size_t count,
                                     enum fi_op fop, enum shoal_amo_op op, int signal)
{
    struct shoal_ofi_slot *slot = take_slot(ctx, t->pe);
    memcpy(slot->data, data, bytes);
    struct fi_ioc ioc = {.addr = slot->data, .count = count};
    struct fi_rma_ioc rma = {.addr = raddr, .count = count, .key = t->key};
    void *desc = ctx->slots_desc;
    struct fi_msg_atomic msg = {.msg_iov = &ioc, .desc = &desc, .iov_count = 1, .addr = t->addr, .rma_iov = &rma,
                                .rma_iov_count = 1, .datatype = dt, .op = fop, .context = &slot->op};
    struct amo_bufs unused;
    return post_amo(ctx, &msg, op, &unused, desc, 0, FI_DELIVERY_COMPLETE | FI_COMPLETION, t->pe, signal)
               ? SHOAL_ERR_SYS
               : SHOAL_OK;
}

static shoal_status_t amo(shoal_tctx_t *tctx, int pe, enum shoal_segment_id seg, size_t offset, size_t elem,
                          enum shoal_amo_op op, uint64_t operand, uint64_t cond, uint64_t *fetched, int signal)
{
    struct shoal_tctx *ctx = shoal_ofi_ctx_ready(tctx);
    if (!ctx) return SHOAL_ERR_SYS;
    struct target t;
    shoal_status_t tst = op == SHOAL_AMO_FETCH ? SHOAL_OK : refuse_readonly(pe, seg, offset, elem, "atomic");
    if (tst == SHOAL_OK) tst = target_of(pe, seg, offset, "atomic", &t);
    if (tst != SHOAL_OK) return tst;
    /* SET returns nothing; FETCH and CSWAP always need their answer. */
    const int fetching = op == SHOAL_AMO_FETCH || op == SHOAL_AMO_CSWAP || (fetched && op != SHOAL_AMO_SET);
    if (!fetching) {
        /* Not injected: the provider then reports its completion. */
        uint64_t value;
        shoal_elem_store(&value, operand, elem);
        if (fetched) *fetched = 0;
        return post_from_slot(ctx, &t, t.raddr, &value, elem, elem == 4 ? FI_UINT32 : FI_UINT64, 1, fabric_op(op), op,
                              signal);
    }
    const int bounce = shoal_ofi.mr_local;
    struct amo_bufs local, *b = &local;
    void *desc = NULL;
    if (bounce) {
        pthread_mutex_lock(&ctx->bounce_lock);
        b = (struct amo_bufs *)ctx->bounce;
        desc = ctx->bounce_desc;
    }
    shoal_elem_store(&b->operand, operand, elem);
    shoal_elem_store(&b->compare, cond, elem);
    struct fi_ioc ioc = {.addr = &b->operand, .count = 1};
    struct fi_rma_ioc rma = {.addr = t.raddr, .count = 1, .key = t.key};
    struct shoal_ofi_op wait = {0, 0, 0};
    struct fi_msg_atomic msg = {.msg_iov = &ioc, .desc = &desc, .iov_count = 1, .addr = t.addr, .rma_iov = &rma,
                                .rma_iov_count = 1, .datatype = elem == 4 ? FI_UINT32 : FI_UINT64,
                                .op = fabric_op(op), .context = &wait};
    const uint64_t flags = (op == SHOAL_AMO_FETCH ? 0 : FI_DELIVERY_COMPLETE) | FI_COMPLETION;
    atomic_store(&wait.pending, 1);
    shoal_status_t st = SHOAL_OK;
    if (post_amo(ctx, &msg, op, b, desc, fetching, flags, pe, signal))
        st = SHOAL_ERR_SYS;
    else
        st = shoal_ofi_wait_op(ctx, &wait, "atomic", pe);
    if (fetched) *fetched = st == SHOAL_OK ? shoal_elem_load(&b->result, elem) : 0;
    if (bounce) pthread_mutex_unlock(&ctx->bounce_lock);
    return st;
}

shoal_status_t shoal_ofi_amo(shoal_tctx_t *tctx, int pe, enum shoal_segment_id seg, size_t offset, size_t elem,
                             enum shoal_amo_op op, uint64_t operand, uint64_t cond, uint64_t *fetched)
{
    return amo(tctx, pe, seg, offset, elem, op, operand, cond, fetched, 0);
}

/* On the default context; fence and quiet do not wait for it where the
 * provider keeps atomics in order (ofi.h, plain_mark), so a barrier does
 * not wait out the round trip of the previous barrier's signals. */
shoal_status_t shoal_ofi_signal(int pe, enum shoal_segment_id seg, size_t offset, enum shoal_amo_op op,
                                uint64_t operand)
{
    return amo(NULL, pe, seg, offset, 8, op, operand, 0, NULL, 1);
}

/* Data and signal as atomics, which the provider applies in order
 * (FI_ORDER_ATOMIC_WAW): the data as atomic writes of up to the inject size
 * each, copied into slots (ofi.h), then the signal. Between an RMA write
 * and an atomic tcp;ofi_rxm promises no order (no FI_ORDER_WAW), so a put
 * needs a fence, a wait for its round trip, before its signal. Larger data
 * take that way: an atomic write is applied element by element and holds
 * its slot until the target answers. */
shoal_status_t shoal_ofi_put_signal(shoal_tctx_t *tctx, int counted, int pe, enum shoal_segment_id seg,
                                    size_t offset, const void *src, size_t len, enum shoal_segment_id sig_seg,
                                    size_t sig_offset, enum shoal_amo_op op, uint64_t operand)
{
    shoal_tctx_t *on = counted ? tctx : NULL;
    struct shoal_tctx *ctx = shoal_ofi_ctx_ready(on);
    if (!ctx) return SHOAL_ERR_SYS;
    struct target t = {0};
    shoal_status_t st = len ? refuse_readonly(pe, seg, offset, len, "put with signal") : SHOAL_OK;
    if (st == SHOAL_OK && len) st = target_of(pe, seg, offset, "put with signal", &t);
    if (st != SHOAL_OK) return st;
    const int as_atomics = len <= shoal_ofi.signal_data_max && len <= t.room;
    if (!as_atomics) {
        st = shoal_ofi_put(on, pe, seg, offset, src, len);
        if (st != SHOAL_OK) return st;
        shoal_ofi_fence(on);
    }
    for (size_t done = 0; as_atomics && done < len;) {
        const size_t most = shoal_ofi.inject_size < SHOAL_OFI_SLOT_BYTES ? shoal_ofi.inject_size : SHOAL_OFI_SLOT_BYTES;
        const size_t chunk = len - done < most ? len - done : most;
        /* Whole words where target and length allow: fewer elements to apply. */
        const int words = (t.raddr + done) % 8 == 0 && chunk % 8 == 0;
        st = post_from_slot(ctx, &t, t.raddr + done, (const char *)src + done, chunk, words ? FI_UINT64 : FI_UINT8,
                            words ? chunk / 8 : chunk, FI_ATOMIC_WRITE, SHOAL_AMO_SET, !counted);
        if (st != SHOAL_OK) return st;
        done += chunk;
    }
    return amo(on, pe, sig_seg, sig_offset, 8, op, operand, 0, NULL, !counted);
}

/* Where writes are ordered, data and flag as writes the target does not
 * answer: a flag's reader compares for its exact value, and the flag's
 * write is processed after the data's (FI_ORDER_RMA_WAW), so a flag that
 * lands in pieces shows that value only once all of it and the data
 * landed. Like signals, fence and quiet do not wait for them; each has a
 * reader that waits for it, so every one is in before the job ends.
 * An atomic write instead is answered by ofi_rxm: 2 PEs on one host,
 * barrier_all 37.7-39.9 -> 20.3 us (docs/design.md). Data up to
 * SHOAL_OFI_FLAG_INJECT_MAX are injected with the flag; larger data from
 * registered memory (a tree broadcast's chunks) are one write that
 * completes once sent, not once the target answered, and is waited for
 * after the flag is posted, so the flag leaves right behind it. */
#define SHOAL_OFI_FLAG_INJECT_MAX 256

/* Data of up to SHOAL_OFI_FLAG_INJECT_MAX bytes and their flag as one
 * write with two targets, the flag last (ofi.h, flag_one_write): one
 * message to send and to process instead of two, or of five at 256 bytes
 * in injected pieces (2 PEs on one host, sum_to_all and fcollect64 of 8 B:
 * 25-30 -> 16-18 us; of 256 B: 36-38 -> 17). Injected where it fits; else
 * sent from src and the flag's stack copy, waited for until the provider
 * let go of them (FI_INJECT_COMPLETE: copied out, not answered). Returns
 * 0, posting nothing, where the data cross a region's end or would need a
 * registration: the caller then sends two writes. */
static int flag_in_one_write(struct shoal_tctx *ctx, int pe, enum shoal_segment_id seg, size_t offset,
                             const void *src, size_t len, enum shoal_segment_id flag_seg, size_t flag_offset,
                             uint64_t value, uint64_t flags, shoal_status_t *st)
{
    struct target d, f;
    *st = target_of(pe, seg, offset, "put with signal", &d);
    if (*st == SHOAL_OK) *st = target_of(pe, flag_seg, flag_offset, "signal", &f);
    /* Past the inject size the source must be registered where the
     * provider asks for that (mr_local): injected pieces instead. */
    const int inject = len + sizeof value <= shoal_ofi.inject_size;
    if (*st == SHOAL_OK && (len > d.room || (!inject && shoal_ofi.mr_local))) return 0;
    if (*st != SHOAL_OK) return 1;
    if (inject && flag_seg == seg && flag_offset == offset + len) {
        /* The flag right after the data (a collective's line, coll/lines.h):
         * one target, which ofi_rxm injects straight into its connection;
         * a write of two targets it always sends through its own buffer
         * and a completion. */
        unsigned char line[SHOAL_OFI_FLAG_INJECT_MAX + sizeof value];
        memcpy(line, src, len);
        memcpy(line + len, &value, sizeof value);
        if (post_rma(ctx, RMA_WRITE, d, line, len + sizeof value, NULL, flags, NULL, 1)) *st = SHOAL_ERR_SYS;
        return 1;
    }
    struct iovec iov[2] = {{.iov_base = (void *)src, .iov_len = len}, {.iov_base = &value, .iov_len = sizeof value}};
    struct fi_rma_iov rma[2] = {{.addr = d.raddr, .len = len, .key = d.key},
                                {.addr = f.raddr, .len = sizeof value, .key = f.key}};
    void *desc[2] = {NULL, NULL};
    struct fi_msg_rma msg = {.msg_iov = iov, .desc = desc, .iov_count = 2, .addr = d.addr, .rma_iov = rma,
                             .rma_iov_count = 2};
    if (inject) {
        if (post_rma_msg(ctx, RMA_WRITE, pe, &msg, len + sizeof value, flags, NULL, 1)) *st = SHOAL_ERR_SYS;
        return 1;
    }
    struct shoal_ofi_op sent = {0, 0, 0};
    if (post_rma_msg(ctx, RMA_WRITE, pe, &msg, len + sizeof value, FI_INJECT_COMPLETE, &sent, 1)) *st = SHOAL_ERR_SYS;
    else *st = shoal_ofi_wait_op(ctx, &sent, "put with signal", pe);
    return 1;
}

shoal_status_t shoal_ofi_flag(int pe, enum shoal_segment_id seg, size_t offset, const void *src, size_t len,
                              enum shoal_segment_id flag_seg, size_t flag_offset, uint64_t value)
{
    void *desc = NULL;
    struct shoal_tctx *ctx = shoal_ofi_ctx_ready(NULL);
    if (!ctx) return SHOAL_ERR_SYS;
    const int injected = len <= SHOAL_OFI_FLAG_INJECT_MAX;
    if (!shoal_ofi.writes_ordered || (!injected && !local_desc(ctx, src, len, &desc)))
        return len ? shoal_ofi_put_signal(NULL, 0, pe, seg, offset, src, len, flag_seg, flag_offset, SHOAL_AMO_SET,
                                          value)
                   : shoal_ofi_signal(pe, flag_seg, flag_offset, SHOAL_AMO_SET, value);
    shoal_status_t st = refuse_readonly(pe, flag_seg, flag_offset, sizeof value, "signal");
    if (st == SHOAL_OK && len) st = refuse_readonly(pe, seg, offset, len, "put with signal");
    const uint64_t flags = FI_INJECT | FI_INJECT_COMPLETE;
    if (st == SHOAL_OK && len && shoal_ofi.flag_one_write && injected &&
        flag_in_one_write(ctx, pe, seg, offset, src, len, flag_seg, flag_offset, value, flags, &st))
        return st;
    struct shoal_ofi_op sent = {0, 0, 0};
    if (st == SHOAL_OK)
        st = injected ? rma_chunks(ctx, RMA_WRITE, pe, seg, offset, (char *)src, len, NULL, flags, NULL, 1)
                      : rma_chunks(ctx, RMA_WRITE, pe, seg, offset, (char *)src, len, desc, FI_TRANSMIT_COMPLETE,
                                   &sent, 1);
    struct target f;
    if (st == SHOAL_OK) st = target_of(pe, flag_seg, flag_offset, "signal", &f);
    if (st == SHOAL_OK && post_rma(ctx, RMA_WRITE, f, &value, sizeof value, NULL, flags, NULL, 1)) st = SHOAL_ERR_SYS;
    /* Chunks already posted still read src: wait for them even on failure. */
    shoal_status_t w = injected ? SHOAL_OK : shoal_ofi_wait_op(ctx, &sent, "put with signal", pe);
    return st != SHOAL_OK ? st : w;
}

/* Whether every operation but signals is known complete (ofi.h). */
static int only_signals(struct shoal_tctx *ctx) { return atomic_load(&ctx->plain_mark) <= atomic_load(&ctx->settled); }

/* Both start with a full CPU fence: this PE's direct loads and stores are
 * ordered with the fabric operations too. Waiting for every outstanding
 * operation orders the earlier ones before any later one. */
void shoal_ofi_fence(shoal_tctx_t *tctx)
{
    atomic_thread_fence(memory_order_seq_cst);
    struct shoal_tctx *ctx = tctx ? tctx : &shoal_ofi.dflt;
    if (!atomic_load_explicit(&ctx->ready, memory_order_acquire)) return;
    shoal_ofi_flush_writes(ctx);
    if (!only_signals(ctx)) (void)shoal_ofi_wait_all(ctx, "fence");
}

void shoal_ofi_quiet(shoal_tctx_t *tctx)
{
    atomic_thread_fence(memory_order_seq_cst);
    struct shoal_tctx *ctx = tctx ? tctx : &shoal_ofi.dflt;
    if (atomic_load_explicit(&ctx->ready, memory_order_acquire)) {
        shoal_ofi_flush_writes(ctx);
        /* A program may loop on quiet and a local flag: quiet drives
         * progress even with nothing to wait for, as it always did; on the
         * default context only every 8th time where the progress thread
         * serves peers meanwhile. Every barrier_all starts with a quiet,
         * and an empty drive is two or three epoll_wait calls (2
         * namespace hosts x 2 PEs on 2 cores, 8 alternations, medians:
         * barrier 34.5 -> 29.7 us, fcollect 33.2 -> 30.7; one host, 2
         * PEs: barrier 12.0 -> 10.8). */
        if (only_signals(ctx)) {
            static _Thread_local unsigned calls;
            if (!(shoal_ofi.thread_started && ctx == &shoal_ofi.dflt) || (++calls & 7) == 0) shoal_ofi_poll(ctx);
        } else {
            (void)shoal_ofi_wait_all(ctx, "quiet");
        }
    }
    atomic_thread_fence(memory_order_seq_cst);
}
