/* ofi_progress.c: completions, waits and progress. Providers with manual
 * progress (tcp;ofi_rxm) move data only while someone reads the endpoint's
 * completion objects, also for operations that target this PE. Three
 * drivers do that: callers waiting for their own operations, the runtime's
 * polling waits (shoal_ofi_progress), and one thread per PE that sleeps in
 * the kernel until the network has work, so a PE busy elsewhere still
 * serves its peers. The thread runs only for such providers (or as
 * SHMEM_FABRIC_PROGRESS_THREAD says), and stands aside while a thread of
 * the PE waits for its own operations on the default context or ended such
 * a wait lately (the own lease), or spins in one of the runtime's waits
 * (the lease).
 *
 * Failures end the job (shoal_ofi_fatal): an operation whose completion
 * carries an error, and a wait that lasts longer than SHMEM_FABRIC_TIMEOUT
 * (a peer that stopped answering without the connection noticing). */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <stdio.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "transport/lease.h"
#include "transport/ofi/ofi.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/own_wait.h"

#define OFI_CQ_BATCH 16
#define OFI_SPINS 64
#define OFI_YIELDS 256
#define OFI_SLEEP_NS 20000L
#define OFI_THREAD_POLL_NS 50000L /* progress thread without a wait object */
#define OFI_THREAD_WAIT_MS 5

void shoal_ofi_backoff(unsigned *n)
{
    if (*n < OFI_SPINS) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    } else if (*n < OFI_YIELDS) {
        sched_yield();
    } else {
        struct timespec ts = {0, OFI_SLEEP_NS};
        nanosleep(&ts, NULL);
    }
    if (*n < OFI_YIELDS) (*n)++;
}

/* Counts an entry of ctx's queue; a failure's details come first, for
 * the next fence or quiet to report (also of an uncounted write). */
static void complete(struct shoal_tctx *ctx, void *context, int err, int prov)
{
    const int tagged = !context || ((uintptr_t)context & 1);
    if (err) {
        atomic_store(&ctx->failed_prov, prov);
        atomic_store(&ctx->failed_pe, context && tagged ? shoal_ofi_tag_pe(context) : -1);
        atomic_store(&ctx->failed_err, err);
    }
    if (tagged) {
        if (!err && context && shoal_ofi_tag_counted(context))
            atomic_store_explicit(&ctx->contacted[shoal_ofi_tag_pe(context)], 1, memory_order_relaxed);
        if (err || (context && shoal_ofi_tag_counted(context))) atomic_fetch_add(err ? &ctx->failed : &ctx->done, 1);
        return;
    }
    struct shoal_ofi_op *op = context;
    if (err) {
        int none = 0;
        if (atomic_compare_exchange_strong(&op->err, &none, err)) atomic_store(&op->prov, prov);
    }
    atomic_fetch_add(err ? &ctx->failed : &ctx->done, 1);
    /* The owner may return as soon as this reaches zero: touch op no more. */
    atomic_fetch_sub_explicit(&op->pending, 1, memory_order_release);
}

static void handle(struct shoal_tctx *ctx, ssize_t n, struct fi_cq_entry *entries)
{
    for (ssize_t i = 0; i < n; i++) complete(ctx, entries[i].op_context, 0, 0);
    if (n != -FI_EAVAIL) return;
    struct fi_cq_err_entry e;
    memset(&e, 0, sizeof e);
    if (fi_cq_readerr(ctx->cq, &e, 0) == 1) {
        shoal_debug("ofi", "an operation failed: %s (%s)", fi_strerror(e.err ? e.err : FI_EIO),
                    fi_cq_strerror(ctx->cq, e.prov_errno, e.err_data, NULL, 0));
        complete(ctx, e.op_context, e.err ? e.err : FI_EIO, e.prov_errno);
    }
}

/* Reads what ctx's queue holds, a batch more while batches come full. */
void shoal_ofi_drain(struct shoal_tctx *ctx)
{
    struct fi_cq_entry entries[OFI_CQ_BATCH];
    ssize_t n;
    do {
        n = fi_cq_read(ctx->cq, entries, OFI_CQ_BATCH);
        if (n > 0 || n == -FI_EAVAIL) handle(ctx, n, entries);
    } while (n == OFI_CQ_BATCH);
}

/* One step of a thread waiting for ctx: its own endpoint, and the default
 * one, through which peers reach this PE. With manual progress a peer's
 * connection request or operation moves only while that endpoint is
 * progressed, and the peer may be waiting on this PE in turn: two PEs each
 * retrying a post on a new private context, each draining only that
 * context, waited for each other forever without the progress thread.
 * Where the thread runs it serves the default endpoint, and waiters leave
 * it to it: draining it (and the open contexts) from every waiting thread
 * as well, and the thread polling the open contexts instead of sleeping in
 * the kernel, made api.threads_ctx under CPU load 1.3x to 2x slower. */
void shoal_ofi_poll(struct shoal_tctx *ctx)
{
    shoal_ofi_drain(ctx);
    if (ctx != &shoal_ofi.dflt && !shoal_ofi.thread_started && shoal_ofi.dflt.cq) shoal_ofi_drain(&shoal_ofi.dflt);
}

/* The program's own contexts, for waits when no progress thread runs: with
 * manual progress, what was posted on one (a put, a non-fetching atomic,
 * the connection it opens to a peer) may move only while that endpoint is
 * progressed, and its owner may be waiting elsewhere. Never blocks on the
 * list. */
static void drain_live(void)
{
    if (pthread_mutex_trylock(&shoal_ofi.ctx_lock)) return;
    for (struct shoal_tctx *c = shoal_ofi.live; c; c = c->live_next)
        if (atomic_load_explicit(&c->ready, memory_order_acquire)) shoal_ofi_drain(c);
    pthread_mutex_unlock(&shoal_ofi.ctx_lock);
}

/* The lease (transport/lease.h). A runtime wait that spins drives the
 * default endpoint itself (shoal_ofi_progress every few polls), so peers'
 * operations to this PE are applied in the waiting thread; the progress
 * thread asleep in fi_cq_sread would still be woken by each of them, to
 * find nothing left (2 PEs on one host: ping-pong 42 us with those
 * wake-ups, 23 us parked). A wait that was satisfied lets the lease lapse;
 * one about to yield or sleep ends it (shoal_ofi_rest). */
static void take_lease(void)
{
    const long long now = shoal_now_ns();
    if (!atomic_load_explicit(&shoal_ofi.served_ns, memory_order_relaxed))
        atomic_store_explicit(&shoal_ofi.lease_since, now, memory_order_relaxed);
    atomic_store(&shoal_ofi.served_ns, now); /* before in_sread is read */
    if (now - atomic_load_explicit(&shoal_ofi.lease_since, memory_order_relaxed) >= SHOAL_LEASE_SETTLED_NS &&
        atomic_load(&shoal_ofi.in_sread) && atomic_exchange(&shoal_ofi.in_sread, 0))
        (void)fi_cq_signal(shoal_ofi.dflt.cq);
}

/* An ending lease wakes the thread if it is parked (lease.h: one of the
 * two sees the other). */
static void end_lease(void)
{
    if (!atomic_load_explicit(&shoal_ofi.served_ns, memory_order_relaxed)) return;
    atomic_store(&shoal_ofi.served_ns, 0);
    if (atomic_load(&shoal_ofi.parked)) {
        atomic_fetch_add(&shoal_ofi.lease_gen, 1);
        syscall(SYS_futex, &shoal_ofi.lease_gen, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    }
}

/* The thread parks until the lease ends or lapses. */
static void park(void)
{
    for (long long park_ns = SHOAL_LEASE_MIN_NS;; park_ns = shoal_lease_longer(park_ns)) {
        atomic_store(&shoal_ofi.parked, 1);
        const int gen = atomic_load(&shoal_ofi.lease_gen);
        const long long left = shoal_lease_left(&shoal_ofi.served_ns, park_ns);
        if (left) {
            struct timespec ts = {left / 1000000000LL, left % 1000000000LL};
            syscall(SYS_futex, &shoal_ofi.lease_gen, FUTEX_WAIT_PRIVATE, gen, &ts, NULL, 0);
        }
        atomic_store(&shoal_ofi.parked, 0);
        if (!left || atomic_load(&shoal_ofi.lease_gen) != gen) return;
    }
}

/* Reaps the default endpoint's completions (driving its progress) and,
 * without the thread, the program's other contexts. */
static void serve(void)
{
    if (shoal_ofi.dflt.cq) shoal_ofi_drain(&shoal_ofi.dflt);
    if (!shoal_ofi.thread_started) drain_live();
}

/* Whether the network holds data for this PE's default endpoint, looked at
 * before a wait drives it. Providers report no completion for operations
 * that target this PE, so this is how a wait tells that it serves peers
 * (the incoming mark, sync/backoff.h): in a wait whose own operations are
 * complete, what arrives is peers' requests (or what ends the wait).
 * fi_trywait first: it says whether the wait object holds something and
 * resets its signal, which would otherwise leave the descriptor readable
 * for good (an idle PE then spun through whole barriers); the descriptor
 * then says whether new bytes wait. The waiter drives progress right
 * after, so a signal it takes from the progress thread is served anyway. */
static void note_incoming(void)
{
    /* Every 4th call: two system calls each, and a serving wait needs to
     * notice only once per few hundred polls (its spin is thousands). */
    static _Thread_local unsigned calls;
    if (shoal_ofi.wait_fd < 0 || (calls++ & 3) != 0) return;
    struct fid *cq = &shoal_ofi.dflt.cq->fid;
    struct pollfd p = {.fd = shoal_ofi.wait_fd, .events = POLLIN};
    if (fi_trywait(shoal_ofi.fabric, &cq, 1) == -FI_EAGAIN || poll(&p, 1, 0) > 0)
        atomic_fetch_add_explicit(&shoal_ofi.incoming, 1, memory_order_relaxed);
}

long long shoal_ofi_incoming(void) { return atomic_load_explicit(&shoal_ofi.incoming, memory_order_relaxed); }

void shoal_ofi_progress(void)
{
    if (shoal_ofi.thread_started && shoal_ofi.cq_wait) take_lease();
    note_incoming();
    serve();
}

void shoal_ofi_rest(void)
{
    end_lease();
    serve();
}

/* A thread of this PE waits for its own operations on the default context:
 * it progresses the endpoint itself, continuously (no sleep longer than the
 * backoff's), so the progress thread keeps out of its way. Returns when
 * the wait began, for own_wait_end. */
static long long own_wait_begin(struct shoal_tctx *ctx)
{
    shoal_own_wait_begins();
    if (ctx != &shoal_ofi.dflt) return 0;
    atomic_fetch_add_explicit(&shoal_ofi.own_waits, 1, memory_order_relaxed);
    return shoal_now_ns();
}

/* The thread keeps out of the endpoint while the PE's own waits end less
 * than this apart (the PE works through operations of its own, which it
 * progresses itself), and comes back this long after the last one at the
 * latest. Waking it at the end of every wait, to nap and then sleep in
 * fi_cq_sread, put its wake-ups and its competition for the endpoint on
 * the path of each operation: 2 PEs on one host, put 8 B + quiet 43-46 us
 * with the thread against 27-28 with the initiator's thread off, get
 * 30-31 against 21-22 (docs/design.md). */
#define OFI_OWN_LEASE_NS 200000LL

/* Only a wait longer than the lease wakes the thread (sequentially
 * consistent with stand_by's store of standing_by and load of own_waits:
 * one of the two sees the other): after a shorter one the thread's own
 * timeout brings it back as soon, without a system call here. */
static void own_wait_end(struct shoal_tctx *ctx, long long began)
{
    if (ctx != &shoal_ofi.dflt) return;
    const long long now = shoal_now_ns();
    atomic_store_explicit(&shoal_ofi.own_ns, now, memory_order_relaxed);
    if (atomic_fetch_sub(&shoal_ofi.own_waits, 1) == 1 && now - began > OFI_OWN_LEASE_NS &&
        atomic_load(&shoal_ofi.standing_by))
        syscall(SYS_futex, &shoal_ofi.own_waits, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* While the PE waits for its own operations, or ended one within the
 * lease, the thread sleeps on a timer: the lease's rest, or while waits
 * last, the lease, doubled up to OFI_THREAD_WAIT_MS for as long as the PE
 * keeps waiting (one long wait wakes it at its end; short waits one after
 * another do not, so a PE that turns from them to computing is served
 * again within OFI_THREAD_WAIT_MS). Where PEs outnumber cores a thread
 * napping 30 us at a time took a core's turn from the PEs at each nap
 * (api_coll at 8 PEs on 2 cores: 83 s, 41 s without the thread). Back to
 * the lease's length after each short wait, it woke every 200 us beside a
 * PE's loop of operations and delayed the ones it woke into (2 PEs on one
 * host, fetch_add: 90th percentile 44-53 us, 32-43 doubling; all off
 * 24-27). Returns 0 when the PE is neither waiting nor within the lease. */
static int stand_by(unsigned *naps)
{
    const long long ended = atomic_load_explicit(&shoal_ofi.own_ns, memory_order_relaxed);
    const long long idle = shoal_now_ns() - ended;
    atomic_store(&shoal_ofi.standing_by, 1);
    const int waits = atomic_load(&shoal_ofi.own_waits);
    if (waits > 0) {
        long long ns = OFI_OWN_LEASE_NS << (*naps < 5 ? *naps : 5);
        if (ns > OFI_THREAD_WAIT_MS * 1000000LL) ns = OFI_THREAD_WAIT_MS * 1000000LL;
        (*naps)++;
        struct timespec ts = {ns / 1000000000LL, ns % 1000000000LL};
        syscall(SYS_futex, &shoal_ofi.own_waits, FUTEX_WAIT_PRIVATE, waits, &ts, NULL, 0);
    }
    atomic_store(&shoal_ofi.standing_by, 0);
    if (waits > 0) return 1;
    *naps = 0;
    if (idle >= OFI_OWN_LEASE_NS) return 0;
    const long long left = OFI_OWN_LEASE_NS - idle;
    struct timespec nap = {0, (long)left};
    nanosleep(&nap, NULL);
    return 1;
}

/* A peer that does not answer for this long is taken for dead or stuck. */
shoal_status_t shoal_ofi_deadline(long long *start, unsigned polls, const char *what, int pe)
{
    if ((polls & 1023) != 0 || *start < 0) return SHOAL_OK;
    long long t = shoal_now_ns();
    if (*start == 0) {
        *start = t;
        return SHOAL_OK;
    }
    if (t - *start <= shoal_ofi.timeout_ns) return SHOAL_OK;
    *start = -1; /* without a fatal callback: reported once, the wait goes on */
    long long s = shoal_ofi.timeout_ns / 1000000000LL;
    if (pe >= 0)
        return shoal_ofi_fatal("%s to PE %d has not completed after %lld s (SHMEM_FABRIC_TIMEOUT=%lld): that PE "
                               "stopped answering", what, pe, s, s);
    return shoal_ofi_fatal("%s has not completed after %lld s (SHMEM_FABRIC_TIMEOUT=%lld): a peer stopped "
                           "answering", what, s, s);
}

/* The provider's words for an error, when it has any. */
static const char *prov_text(struct shoal_tctx *ctx, int prov, char *buf, size_t len)
{
    buf[0] = 0;
    if (prov) fi_cq_strerror(ctx->cq, prov, NULL, buf, len);
    return buf;
}

shoal_status_t shoal_ofi_wait_op(struct shoal_tctx *ctx, struct shoal_ofi_op *op, const char *what, int pe)
{
    unsigned n = 0, polls = 0;
    long long start = 0;
    const long long began = own_wait_begin(ctx);
    while (atomic_load_explicit(&op->pending, memory_order_acquire) > 0) {
        shoal_ofi_poll(ctx);
        if (atomic_load_explicit(&op->pending, memory_order_acquire) <= 0) break;
        shoal_ofi_backoff(&n);
        shoal_ofi_deadline(&start, ++polls, what, pe);
    }
    own_wait_end(ctx, began);
    int err = atomic_load(&op->err);
    if (!err) return SHOAL_OK;
    char text[128];
    prov_text(ctx, atomic_load(&op->prov), text, sizeof text);
    return shoal_ofi_lost("%s to PE %d failed: %s%s%s%s", what, pe, fi_strerror(err), text[0] ? " (" : "", text,
                          text[0] ? ")" : "");
}

/* Completions arrive in any order, so a count reached does not say which
 * operations completed: the wait ends when everything posted on ctx so far
 * (issued grows before each post) has completed. */
shoal_status_t shoal_ofi_wait_all(struct shoal_tctx *ctx, const char *what)
{
    unsigned n = 0, polls = 0;
    long long start = 0;
    const long long began = own_wait_begin(ctx);
    for (;;) {
        shoal_ofi_poll(ctx);
        const uint64_t posted = atomic_load(&ctx->issued);
        uint64_t done = atomic_load(&ctx->done), failed = atomic_load(&ctx->failed);
        const uint64_t issued = atomic_load(&ctx->issued);
        if (done + failed >= issued) {
            /* Nothing posted meanwhile: every operation counted so far is
             * done, not just as many as were issued (ofi.h, settled). */
            uint_fast64_t settled = atomic_load(&ctx->settled);
            while (posted == issued && settled < issued &&
                   !atomic_compare_exchange_weak(&ctx->settled, &settled, issued)) {
            }
            own_wait_end(ctx, began);
            uint64_t before = atomic_exchange(&ctx->errors_reported, failed);
            if (failed <= before) return SHOAL_OK;
            /* complete() stored the details before it counted the failure. */
            int err = atomic_load(&ctx->failed_err), pe = atomic_load(&ctx->failed_pe);
            char text[128], who[32] = "";
            prov_text(ctx, atomic_load(&ctx->failed_prov), text, sizeof text);
            if (pe >= 0) snprintf(who, sizeof who, " to PE %d", pe);
            return shoal_ofi_lost("%s: %llu fabric operation(s)%s failed: %s%s%s%s", what,
                                  (unsigned long long)(failed - before), who, err ? fi_strerror(err) : "error",
                                  text[0] ? " (" : "", text, text[0] ? ")" : "");
        }
        shoal_ofi_backoff(&n);
        shoal_ofi_deadline(&start, ++polls, what, -1);
    }
}

/* The thread's sleep on ctx's wait object, then a read of its queue (which
 * progresses the endpoint); *woken says whether the network (or a signal)
 * ended the sleep before its timeout. fi_cq_sread would do both, but it
 * goes back to sleep when what woke it completes nothing of this PE's, and
 * that is the event the incoming mark needs. */
static ssize_t sleep_and_read(struct shoal_tctx *ctx, struct fi_cq_entry *entries, int *woken)
{
    struct fid *cq = &ctx->cq->fid;
    const int ready = shoal_ofi.wait_fd >= 0 ? fi_trywait(shoal_ofi.fabric, &cq, 1) : -FI_ENOSYS;
    if (ready == FI_SUCCESS) {
        struct pollfd p = {.fd = shoal_ofi.wait_fd, .events = POLLIN};
        *woken = poll(&p, 1, OFI_THREAD_WAIT_MS) > 0;
    } else if (ready == -FI_EAGAIN) {
        *woken = 1; /* something came already */
    } else {
        return fi_cq_sread(ctx->cq, entries, OFI_CQ_BATCH, NULL, OFI_THREAD_WAIT_MS);
    }
    return fi_cq_read(ctx->cq, entries, OFI_CQ_BATCH);
}

/* Sleeps on the queue's wait object when it has one (woken by network
 * activity, which it then progresses), else polls with a short sleep. While
 * a thread of the PE waits for its own operation on the default context it
 * progresses the endpoint itself, continuously: the thread then sleeps
 * until that wait and the own lease after it end (stand_by), so it neither
 * takes a core from the PE's operations nor contends with them for the
 * endpoint's lock. For the runtime's waits it parks only
 * while they spin (the lease): standing aside for their whole length missed
 * peers' requests whenever their backoff slept (ping-pong 6x slower). */
static void *progress_main(void *arg)
{
    (void)arg;
    struct shoal_tctx *ctx = &shoal_ofi.dflt;
    struct fi_cq_entry entries[OFI_CQ_BATCH];
    int blocking = shoal_ofi.cq_wait;
    unsigned naps = 0;
    while (!atomic_load_explicit(&shoal_ofi.stop, memory_order_acquire)) {
        if (stand_by(&naps)) continue;
        if (blocking) {
            /* Raised before the lease is read (as parked): a lease that
             * settles while we sleep breaks the sleep (take_lease). */
            atomic_store(&shoal_ofi.in_sread, 1);
            if (shoal_lease_left(&shoal_ofi.served_ns, SHOAL_LEASE_MIN_NS)) {
                atomic_store(&shoal_ofi.in_sread, 0);
                park();
                continue;
            }
            int woken = 0;
            ssize_t n = sleep_and_read(ctx, entries, &woken);
            /* Still raised: no lease broke the sleep, the network did. */
            const int by_network = atomic_exchange(&shoal_ofi.in_sread, 0) && woken;
            /* Woken with nothing of the PE's own: a peer's operation (which
             * completes nothing here), now served by this thread. A runtime
             * wait napping meanwhile sees the mark move and goes back to
             * spinning, which serves the next ones itself (sync/backoff.h,
             * incoming); it never sees them otherwise, as this thread takes
             * the wait object's signal first. */
            if (by_network && n == -FI_EAGAIN) atomic_fetch_add_explicit(&shoal_ofi.incoming, 1, memory_order_relaxed);
            if (n > 0 || n == -FI_EAVAIL) handle(ctx, n, entries);
            /* A provider that cannot block here would make this loop spin. */
            if (n < 0 && n != -FI_EAGAIN && n != -FI_EAVAIL && n != -FI_ETIMEDOUT && n != -FI_ECANCELED) {
                shoal_debug("ofi", "fi_cq_sread: %s; the progress thread polls instead", fi_strerror((int)-n));
                blocking = 0;
            }
        } else {
            shoal_ofi_drain(ctx);
            struct timespec ts = {0, OFI_THREAD_POLL_NS};
            nanosleep(&ts, NULL);
        }
    }
    return NULL;
}

shoal_status_t shoal_ofi_thread_start(void)
{
    atomic_store(&shoal_ofi.stop, 0);
    if (!shoal_ofi.want_thread) return SHOAL_OK;
    int ret = pthread_create(&shoal_ofi.thread, NULL, progress_main, NULL);
    if (ret) {
        shoal_error("ofi", "cannot start the progress thread: %s", strerror(ret));
        return SHOAL_ERR_SYS;
    }
    shoal_ofi.thread_started = 1;
    return SHOAL_OK;
}

void shoal_ofi_thread_stop(void)
{
    if (!shoal_ofi.thread_started) return;
    atomic_store_explicit(&shoal_ofi.stop, 1, memory_order_release);
    if (shoal_ofi.cq_wait) (void)fi_cq_signal(shoal_ofi.dflt.cq);
    pthread_join(shoal_ofi.thread, NULL);
    shoal_ofi.thread_started = 0;
}
