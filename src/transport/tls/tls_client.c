/* tls_client.c: this PE's operations on the encrypted transport.
 *
 * A context holds one stream per target PE, opened at its first use. A
 * stream carries one request at a time (its lock also covers the reply),
 * so several threads on one context take turns, and threads with their own
 * contexts never meet. The exception is get_nbi, whose answers wait to be
 * read until quiet, the stream's next other request or a wait of this PE
 * (shoal_tls_get_nbi). Puts and non-fetching atomics are sent at once
 * (the target applies them without waiting for anything more from us) and
 * not answered; the target acknowledges them when it finds the stream idle.
 * Quiet reads the ACKs that have come and waits only on streams that still
 * miss some, all at once, so it costs one round trip at most, not one per
 * peer. A stream that breaks, or a refusal reported by the target, ends the
 * job with one line naming the operation and the PE. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "transport/tls/tls.h"
#include "util/clock.h"
#include "util/log.h"

#define CONNECT_SECONDS 30.0
/* Puts up to this size go out as one record with their header. */
#define SMALL_PUT 4096
/* Requests sent without reading the stream before queued ACKs are read:
 * keeps them few enough that the target never blocks writing them. */
#define UNREAD_MAX 64
/* get_nbi answer bytes one stream may leave unread (shoal_tls_get_nbi). */
#define DEFERRED_BYTES ((size_t)1 << 20)

static void failure_line(char *line, size_t len, const char *what, int pe, const char *reason)
{
    char addr[SHOAL_TLS_ADDR_TEXT];
    shoal_tls_addr_text(&shoal_tls.peer[pe].sin, addr);
    snprintf(line, len, "%s to PE %d (%s, encrypted transport) failed: %s", what, pe, addr, reason);
}

/* The peer broke the protocol or refused: this PE's failure to report. */
static __attribute__((noreturn)) void stream_failed(const char *what, int pe, const char *reason)
{
    char line[400];
    failure_line(line, sizeof line, what, pe, reason);
    shoal_tls.setup->fatal(line);
}

/* The stream could not be reached, ended or broke: most often the peer
 * has ended, and its own failure is the one to report (setup->peer_lost). */
static __attribute__((noreturn)) void stream_lost(const char *what, int pe, const char *reason)
{
    char line[400];
    failure_line(line, sizeof line, what, pe, reason);
    shoal_tls.setup->peer_lost(line);
}

static __attribute__((noreturn)) void refused(const char *what, int pe, const struct shoal_tls_rep *rep)
{
    char reason[200];
    snprintf(reason, sizeof reason, "PE %d refused %s at offset %llu", pe, shoal_tls_refusal_text(rep->status),
             (unsigned long long)rep->value);
    stream_failed(what, pe, reason);
}

static int connect_within(int fd, const struct sockaddr_in *to, double seconds)
{
    int fl = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    if (connect(fd, (const struct sockaddr *)to, sizeof *to) != 0) {
        if (errno != EINPROGRESS) return -1;
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        int r = poll(&p, 1, (int)(seconds * 1000.0));
        if (r == 0) errno = ETIMEDOUT;
        if (r <= 0) return -1;
        int soerr = 0;
        socklen_t sl = sizeof soerr;
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
        if (soerr) {
            errno = soerr;
            return -1;
        }
    }
    return 0;
}

int shoal_tls_dial(int pe, double deadline, int *lost, char *reason, size_t len)
{
    *lost = 0;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(reason, len, "socket: %s%s", strerror(errno),
                 errno == EMFILE ? " (raise the limit on open files, ulimit -n)" : "");
        return -1;
    }
    /* At least a second for each try, even past the deadline. */
    const double left = deadline - shoal_now_s();
    if (connect_within(fd, &shoal_tls.peer[pe].sin, left > 1.0 ? left : 1.0) != 0) {
        snprintf(reason, len, "connect: %s", strerror(errno));
        close(fd);
        *lost = 1;
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

/* Sleeps a growing, jittered pause before the next try to open a stream to
 * pe; ends the job with reason when that would pass the deadline. */
static void pause_before_retry(unsigned *pause_us, unsigned *jitter, double deadline, int pe, const char *reason)
{
    if (shoal_now_s() + *pause_us * 1e-6 >= deadline) stream_failed("the TLS handshake", pe, reason);
    *jitter = *jitter * 1103515245u + 12345u;
    usleep(*pause_us + (*jitter >> 8) % *pause_us);
    if (*pause_us < 100000) *pause_us *= 2;
}

/* Opens c's stream to pe. Called with c->lock held. A handshake the peer
 * broke off (it refuses streams past its limit of handshakes at once,
 * tls_server.c) is tried again after a growing, jittered pause, until
 * CONNECT_SECONDS have passed: a burst of streams must not end the job. */
static void open_stream(struct shoal_tls_conn *c, int pe, int paired)
{
    char reason[200];
    const double deadline = shoal_now_s() + CONNECT_SECONDS;
    unsigned pause_us = 1000, jitter = (unsigned)shoal_tls.my_pe * 2654435761u + (unsigned)pe;
    int fd;
    SSL *ssl;
    int sigpipe = 1;
    /* The default context's stream rides the pair's one connection. */
    while (paired) {
        int lost = 0;
        if (shoal_tls_pair_open(c, pe, deadline, &lost, reason, sizeof reason) == 0) {
            if (!__atomic_exchange_n(&shoal_tls.ktls_checked, 1, __ATOMIC_RELAXED))
                shoal_debug("tls", "streams are encrypted by OpenSSL in user space, paired on one connection per PE pair");
            return;
        }
        if (lost) stream_lost("opening a stream", pe, reason);
        pause_before_retry(&pause_us, &jitter, deadline, pe, reason);
    }
    for (;;) {
        int lost;
        fd = shoal_tls_dial(pe, deadline, &lost, reason, sizeof reason);
        if (fd < 0) (lost ? stream_lost : stream_failed)("opening a stream", pe, reason);
        const double left = deadline - shoal_now_s();
        sigpipe = 1;
        ssl = shoal_tls_handshake(fd, 0, left > 1.0 ? left : 1.0, &sigpipe, reason, sizeof reason);
        if (ssl) break;
        close(fd);
        pause_before_retry(&pause_us, &jitter, deadline, pe, reason);
    }
    c->fd = fd;
    c->sigpipe = sigpipe;
    c->ssl = ssl;
    /* Every stream is set up alike; the first one tells (SHMEM_DEBUG). */
    if (!__atomic_exchange_n(&shoal_tls.ktls_checked, 1, __ATOMIC_RELAXED))
        shoal_debug("tls", "streams are encrypted by %s", shoal_tls_is_ktls(ssl) ? "the kernel (kernel TLS)"
                                                                                : "OpenSSL in user space");
}

/* SIGPIPE as a stream operation found it, when it had to block it. */
struct pipe_guard {
    sigset_t old;
    int blocked;
};

/* t's stream to pe, made (not yet opened) at first use. */
static struct shoal_tls_conn *conn_of(struct shoal_tctx *t, int pe)
{
    struct shoal_tls_conn *c = __atomic_load_n(&t->conn[pe], __ATOMIC_ACQUIRE);
    if (c) return c;
    pthread_mutex_lock(&t->make_lock);
    if (!(c = t->conn[pe])) {
        if (!(c = calloc(1, sizeof *c))) stream_failed("opening a stream", pe, "out of memory");
        pthread_mutex_init(&c->lock, NULL);
        c->fd = -1;
        __atomic_store_n(&t->conn[pe], c, __ATOMIC_RELEASE);
        t->used[t->n_used] = pe;
        __atomic_store_n(&t->n_used, t->n_used + 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&t->make_lock);
    return c;
}

/* Locks the context's stream to pe (opening it at first use), with SIGPIPE
 * blocked in this thread until unlock_stream where a write to it may raise
 * one (its handshake; kernel TLS). get_nbi answers may still be unread. */
static struct shoal_tls_conn *lock_with_deferred(shoal_tctx_t *ctx, int pe, struct pipe_guard *g)
{
    struct shoal_tctx *t = ctx ? ctx : &shoal_tls.dflt;
    struct shoal_tls_conn *c = conn_of(t, pe);
    pthread_mutex_lock(&c->lock);
    g->blocked = !c->ssl || c->sigpipe;
    if (g->blocked) shoal_tls_sigpipe_block(&g->old);
    if (!c->ssl) open_stream(c, pe, t == &shoal_tls.dflt && pe != shoal_tls.my_pe && shoal_tls_pair_enabled());
    return c;
}

static void unlock_stream(struct shoal_tls_conn *c, const struct pipe_guard *g)
{
    pthread_mutex_unlock(&c->lock);
    if (g->blocked) shoal_tls_sigpipe_restore(&g->old);
}

/* more: the message goes on (its data follows), so nothing is sent yet. */
static void send_or_fail(struct shoal_tls_conn *c, const void *buf, size_t len, int more, const char *what, int pe)
{
    if ((more ? shoal_tls_write_more : shoal_tls_write)(c->ssl, buf, len) == 0) return;
    char reason[200];
    shoal_tls_reason(c->ssl, 0, reason, sizeof reason);
    stream_lost(what, pe, reason);
}

/* Reads of at least this many bytes on a pair connection take in the other
 * channel's bytes for its sleeping reader (tls_mux.h, reading), which then
 * leaves the socket alone: else each segment of a large answer woke that
 * reader to take it in (2 namespace hosts x 1 PE, 1 MiB get_nbi windows:
 * 205,000 poll(2) calls a second). Not smaller ones: the end of each such
 * read wakes that reader to watch the socket again. */
#define READ_THROUGH_MIN ((size_t)64 * 1024)

static void recv_or_fail(struct shoal_tls_conn *c, void *buf, size_t len, const char *what, int pe)
{
    /* An answer usually comes within tens of microseconds. On a pair
     * connection the wait leases the streams (shoal_tls_serve): a thread
     * asleep on the shared socket would wake for the answer too. */
    const int through = c->mux && len >= READ_THROUGH_MIN;
    if (through) shoal_mux_reading_begin(c->mux, c->ch);
    shoal_tls_await(c->ssl, c->fd, c->mux ? 2 : 1);
    const int failed = shoal_tls_read(c->ssl, buf, len) != 0;
    if (through) shoal_mux_reading_end(c->mux, c->ch);
    if (!failed) return;
    char reason[200];
    shoal_tls_reason(c->ssl, 0, reason, sizeof reason);
    stream_lost(what, pe, reason);
}

/* Takes in an ACK read from c. */
static void take_ack(struct shoal_tls_conn *c, const struct shoal_tls_rep *rep, const char *what, int pe)
{
    if (rep->status) refused(what, pe, rep);
    if (rep->value > c->sent || rep->value < c->acked) stream_failed(what, pe, "an acknowledgement out of step");
    __atomic_store_n(&c->acked, rep->value, __ATOMIC_RELAXED);
}

/* Reads the answer to request number seq, taking in the ACKs before it.
 * The answer says that every request before it was applied too. */
static void read_answer(struct shoal_tls_conn *c, struct shoal_tls_rep *rep, uint64_t seq, const char *what, int pe)
{
    for (;;) {
        recv_or_fail(c, rep, sizeof *rep, what, pe);
        if (rep->kind != SHOAL_TLS_ACK) break;
        take_ack(c, rep, "a put or atomic before it", pe);
    }
    c->unread = 0;
    if (rep->kind == SHOAL_TLS_EARLIER) refused("a put or atomic before it", pe, rep);
    if (rep->kind != SHOAL_TLS_ANSWER) stream_failed(what, pe, "a malformed answer");
    if (rep->status) refused(what, pe, rep);
    if (seq > c->acked) __atomic_store_n(&c->acked, seq, __ATOMIC_RELAXED);
}

/* Reads the oldest get_nbi answer on c into its destination. */
static void complete_oldest(struct shoal_tls_conn *c, int pe)
{
    const struct shoal_tls_deferred_get *d = &c->deferred[c->deferred_first];
    struct shoal_tls_rep rep;
    read_answer(c, &rep, d->seq, "get", pe);
    recv_or_fail(c, d->dst, d->len, "get", pe);
    c->deferred_first = (c->deferred_first + 1) % SHOAL_TLS_DEFERRED_MAX;
    c->deferred_bytes -= d->len;
    /* Release: a quiet that finds none left without taking the lock
     * (another thread drained them) sees the data too. */
    __atomic_store_n(&c->deferred_count, c->deferred_count - 1, __ATOMIC_RELEASE);
    atomic_fetch_sub_explicit(&shoal_tls.deferred_gets, 1, memory_order_relaxed);
}

/* The stream locked with every get_nbi answer read: any reply read next is
 * in order, and a request written next cannot block behind a target that
 * is itself blocked writing answers this PE has not read. */
static struct shoal_tls_conn *lock_stream(shoal_tctx_t *ctx, int pe, struct pipe_guard *g)
{
    struct shoal_tls_conn *c = lock_with_deferred(ctx, pe, g);
    while (c->deferred_count) complete_oldest(c, pe);
    return c;
}

/* Reads the ACKs that have arrived, without waiting. */
static void read_acks(struct shoal_tls_conn *c, const char *what, int pe)
{
    for (;;) {
        if (!shoal_tls_arrived(c->ssl, c->fd)) break;
        struct shoal_tls_rep rep;
        recv_or_fail(c, &rep, sizeof rep, what, pe);
        if (rep.kind != SHOAL_TLS_ACK) stream_failed(what, pe, "an answer nothing asked for");
        take_ack(c, &rep, what, pe);
    }
    c->unread = 0;
}

/* Writes a request header and its len bytes of data. */
static void send_request(struct shoal_tls_conn *c, const struct shoal_tls_req *q, const void *data, size_t len,
                         const char *what, int pe)
{
    if (len <= SMALL_PUT) {
        /* One record for header and data: one system call, one tag. */
        char buf[sizeof *q + SMALL_PUT];
        memcpy(buf, q, sizeof *q);
        if (len) memcpy(buf + sizeof *q, data, len);
        send_or_fail(c, buf, sizeof *q + len, 0, what, pe);
    } else {
        send_or_fail(c, q, sizeof *q, 1, what, pe);
        send_or_fail(c, data, len, 0, what, pe);
    }
}

/* Counts a request just written that has no answer. */
static void sent_unanswered(struct shoal_tls_conn *c, const char *what, int pe)
{
    __atomic_store_n(&c->sent, c->sent + 1, __ATOMIC_RELAXED);
    if (++c->unread >= UNREAD_MAX) read_acks(c, what, pe);
}

/* Sends a counted request that has no answer (a put, with or without a
 * signal) on ctx's stream to pe; quiet waits for its acknowledgement. */
static shoal_status_t send_counted(shoal_tctx_t *ctx, int pe, const struct shoal_tls_req *q, const void *data,
                                   size_t len, const char *what)
{
    struct pipe_guard g;
    struct shoal_tls_conn *c = lock_stream(ctx, pe, &g);
    send_request(c, q, data, len, what, pe);
    sent_unanswered(c, what, pe);
    unlock_stream(c, &g);
    shoal_tls_pay_acks();
    return SHOAL_OK;
}

shoal_status_t shoal_tls_put(shoal_tctx_t *ctx, int pe, enum shoal_segment_id seg, size_t offset, const void *src,
                             size_t len)
{
    if (!len) return SHOAL_OK;
    struct shoal_tls_req q = {.op = SHOAL_TLS_PUT, .seg = (uint8_t)seg, .offset = offset, .len = len};
    return send_counted(ctx, pe, &q, src, len, "put");
}

shoal_status_t shoal_tls_get(shoal_tctx_t *ctx, int pe, enum shoal_segment_id seg, size_t offset, void *dst,
                             size_t len)
{
    if (!len) return SHOAL_OK;
    struct shoal_tls_req q = {.op = SHOAL_TLS_GET, .seg = (uint8_t)seg, .offset = offset, .len = len};
    struct shoal_tls_rep rep;
    struct pipe_guard g;
    struct shoal_tls_conn *c = lock_stream(ctx, pe, &g);
    send_or_fail(c, &q, sizeof q, 0, "get", pe);
    __atomic_store_n(&c->sent, c->sent + 1, __ATOMIC_RELAXED);
    read_answer(c, &rep, c->sent, "get", pe);
    recv_or_fail(c, dst, len, "get", pe);
    unlock_stream(c, &g);
    shoal_tls_pay_acks();
    return SHOAL_OK;
}

/* A get whose answer is read later: at quiet, by the next other request on
 * the stream, or by a wait of this PE once it arrives. Requests go out at
 * once, so the target seals the next answer while this PE opens the one
 * before. DEFERRED_BYTES bounds what one stream leaves unread (the newest
 * get always stays): a target blocks writing no more than that. */
shoal_status_t shoal_tls_get_nbi(shoal_tctx_t *ctx, int pe, enum shoal_segment_id seg, size_t offset, void *dst,
                                 size_t len)
{
    if (!len) return SHOAL_OK;
    const struct shoal_tls_req q = {.op = SHOAL_TLS_GET, .seg = (uint8_t)seg, .deferred = 1, .offset = offset,
                                    .len = len};
    struct pipe_guard g;
    struct shoal_tls_conn *c = lock_with_deferred(ctx, pe, &g);
    if (c->deferred_count == SHOAL_TLS_DEFERRED_MAX) complete_oldest(c, pe);
    send_or_fail(c, &q, sizeof q, 0, "get", pe);
    __atomic_store_n(&c->sent, c->sent + 1, __ATOMIC_RELAXED);
    c->deferred[(c->deferred_first + c->deferred_count) % SHOAL_TLS_DEFERRED_MAX] =
        (struct shoal_tls_deferred_get){dst, len, c->sent};
    c->deferred_bytes += len;
    __atomic_store_n(&c->deferred_count, c->deferred_count + 1, __ATOMIC_RELAXED);
    atomic_fetch_add_explicit(&shoal_tls.deferred_gets, 1, memory_order_relaxed);
    while (c->deferred_bytes > DEFERRED_BYTES && c->deferred_count > 1) complete_oldest(c, pe);
    unlock_stream(c, &g);
    shoal_tls_pay_acks();
    return SHOAL_OK;
}

/* Reads the get_nbi answers already arriving on t's streams; streams
 * another thread holds are left to it. */
static void drain_context(struct shoal_tctx *t)
{
    const int n = t->conn ? __atomic_load_n(&t->n_used, __ATOMIC_ACQUIRE) : 0;
    for (int i = 0; i < n; i++) {
        const int pe = t->used[i];
        struct shoal_tls_conn *c = t->conn[pe];
        if (!__atomic_load_n(&c->deferred_count, __ATOMIC_RELAXED) || pthread_mutex_trylock(&c->lock) != 0)
            continue;
        struct pipe_guard g = {.blocked = c->sigpipe};
        if (g.blocked) shoal_tls_sigpipe_block(&g.old);
        while (c->deferred_count && shoal_tls_arrived(c->ssl, c->fd)) complete_oldest(c, pe);
        unlock_stream(c, &g);
    }
}

void shoal_tls_drain_gets(void)
{
    if (!atomic_load_explicit(&shoal_tls.deferred_gets, memory_order_relaxed)) return;
    drain_context(&shoal_tls.dflt);
    if (pthread_mutex_trylock(&shoal_tls.ctx_lock) != 0) return;
    for (struct shoal_tctx *t = shoal_tls.live; t; t = t->live_next) drain_context(t);
    pthread_mutex_unlock(&shoal_tls.ctx_lock);
}

shoal_status_t shoal_tls_amo(shoal_tctx_t *ctx, int pe, enum shoal_segment_id seg, size_t offset, size_t elem,
                             enum shoal_amo_op op, uint64_t operand, uint64_t cond, uint64_t *fetched)
{
    struct shoal_tls_req q = {.op = SHOAL_TLS_AMO, .seg = (uint8_t)seg, .elem = (uint8_t)elem,
                              .amo_op = (uint8_t)op, .fetch = fetched != NULL, .offset = offset,
                              .operand = operand, .cond = cond};
    struct pipe_guard g;
    struct shoal_tls_conn *c = lock_stream(ctx, pe, &g);
    send_or_fail(c, &q, sizeof q, 0, "atomic", pe);
    if (fetched) {
        struct shoal_tls_rep rep;
        __atomic_store_n(&c->sent, c->sent + 1, __ATOMIC_RELAXED);
        read_answer(c, &rep, c->sent, "atomic", pe);
        *fetched = rep.value;
    } else {
        sent_unanswered(c, "atomic", pe);
    }
    unlock_stream(c, &g);
    shoal_tls_pay_acks();
    return SHOAL_OK;
}

/* Signals ride the default context's stream behind this PE's earlier
 * requests, but are not counted: the target neither counts nor
 * acknowledges them, so no quiet waits for them (a barrier_all's quiet
 * would otherwise wait on the previous barrier's last round). A target
 * that refuses one ends the job itself (tls_server.c, signal_refused), so
 * no quiet looks for a refusal either. */
static shoal_status_t send_uncounted(int pe, const struct shoal_tls_req *q, const void *data, size_t len,
                                     const char *what)
{
    struct pipe_guard g;
    struct shoal_tls_conn *c = lock_stream(NULL, pe, &g);
    send_request(c, q, data, len, what, pe);
    unlock_stream(c, &g);
    shoal_tls_pay_acks();
    return SHOAL_OK;
}

shoal_status_t shoal_tls_signal(int pe, enum shoal_segment_id seg, size_t offset, enum shoal_amo_op op,
                                uint64_t operand)
{
    const struct shoal_tls_req q = {.op = SHOAL_TLS_AMO, .seg = (uint8_t)seg, .elem = 8, .amo_op = (uint8_t)op,
                                    .uncounted = 1, .offset = offset, .operand = operand};
    return send_uncounted(pe, &q, NULL, 0, "a signal");
}

/* A put and a signal in one request (and, up to SMALL_PUT, one record):
 * uncounted for a collective's line, counted on ctx for shmem_put_signal,
 * whose quiet must cover it like a put. */
shoal_status_t shoal_tls_put_signal(shoal_tctx_t *ctx, int counted, int pe, enum shoal_segment_id seg, size_t offset,
                                    const void *src, size_t len, enum shoal_segment_id sig_seg, size_t sig_offset,
                                    enum shoal_amo_op op, uint64_t operand)
{
    const struct shoal_tls_req q = {.op = SHOAL_TLS_PUT_SIGNAL, .seg = (uint8_t)seg, .elem = (uint8_t)sig_seg,
                                    .amo_op = (uint8_t)op, .uncounted = !counted, .offset = offset, .len = len,
                                    .operand = operand, .cond = sig_offset};
    return counted ? send_counted(ctx, pe, &q, src, len, "a put with a signal")
                   : send_uncounted(pe, &q, src, len, "a put with a signal");
}

/* One stream is applied in order by one thread at the target: nothing to
 * wait for. The CPU fence orders this PE's own loads and stores. */
void shoal_tls_fence(shoal_tctx_t *ctx)
{
    (void)ctx;
    atomic_thread_fence(memory_order_seq_cst);
}

/* Whether quiet must look at c: requests unacknowledged, or get_nbi answers
 * unread or still being read by another thread (its answer counts as the
 * ACK before its data is in). */
static int unacked(struct shoal_tls_conn *c)
{
    return __atomic_load_n(&c->deferred_count, __ATOMIC_ACQUIRE) ||
           __atomic_load_n(&c->acked, __ATOMIC_RELAXED) != __atomic_load_n(&c->sent, __ATOMIC_RELAXED);
}

void shoal_tls_quiet(shoal_tctx_t *ctx)
{
    struct shoal_tctx *t = ctx ? ctx : &shoal_tls.dflt;
    atomic_thread_fence(memory_order_seq_cst);
    /* Which streams this call waits on (and holds locked): another thread's
     * quiet on the same context may be waiting on others. By their place
     * in t->used: streams made after this load came after the call. */
    const int n = __atomic_load_n(&t->n_used, __ATOMIC_ACQUIRE);
    unsigned char small[256], *mine = small;
    if (n > (int)sizeof small && !(mine = malloc((size_t)n))) stream_failed("quiet", shoal_tls.my_pe, "out of memory");
    /* SIGPIPE blocked from the first stream whose writes may raise it. */
    sigset_t old;
    int blocked = 0;
    sigemptyset(&old);
    /* Locks are taken in the order the streams were made, the same for
     * every quiet, and a get holds one at most: no cycle. */
    const char *what = "a put or atomic completed by quiet";
    for (int i = 0; i < n; i++) {
        const int pe = t->used[i];
        struct shoal_tls_conn *c = t->conn[pe];
        mine[i] = 0;
        if (!unacked(c)) continue;
        pthread_mutex_lock(&c->lock);
        if (c->sigpipe && !blocked) {
            shoal_tls_sigpipe_block(&old);
            blocked = 1;
        }
        while (c->deferred_count) complete_oldest(c, pe);
        if (c->acked != c->sent) read_acks(c, what, pe);
        if (c->acked != c->sent)
            mine[i] = 1; /* lock kept until the last ACK is read */
        else
            pthread_mutex_unlock(&c->lock);
    }
    /* The targets acknowledge by themselves once they have applied all,
     * or on their next request after a wait in which they applied ours.
     * One that applied them in a wait and went on computing says nothing:
     * a stream whose ACK has not come within the spin is asked with a
     * flush (a get of nothing, whose answer covers all before it), which
     * wakes the target's thread for that stream. */
    const struct shoal_tls_req flush = {.op = SHOAL_TLS_GET, .seg = SHOAL_SEG_HEAP};
    shoal_tls_pay_acks();
    for (int i = 0; i < n; i++) {
        if (!mine[i]) continue;
        const int pe = t->used[i];
        struct shoal_tls_conn *c = t->conn[pe];
        int asked = 0;
        while (c->acked != c->sent) {
            if (!asked && !shoal_tls_await(c->ssl, c->fd, c->mux ? 2 : 1)) {
                send_or_fail(c, &flush, sizeof flush, 0, "quiet", pe);
                __atomic_store_n(&c->sent, c->sent + 1, __ATOMIC_RELAXED);
                asked = 1;
            }
            struct shoal_tls_rep rep;
            recv_or_fail(c, &rep, sizeof rep, what, pe);
            if (asked && rep.kind != SHOAL_TLS_ACK) {
                /* The flush's answer: everything before it is applied. */
                if (rep.kind == SHOAL_TLS_EARLIER || rep.status) refused(what, pe, &rep);
                if (rep.kind != SHOAL_TLS_ANSWER) stream_failed("quiet", pe, "a malformed answer");
                __atomic_store_n(&c->acked, c->sent, __ATOMIC_RELAXED);
                break;
            }
            if (rep.kind != SHOAL_TLS_ACK) stream_failed("quiet", pe, "an answer nothing asked for");
            take_ack(c, &rep, what, pe);
        }
        c->unread = 0;
        pthread_mutex_unlock(&c->lock);
    }
    if (blocked) shoal_tls_sigpipe_restore(&old);
    if (mine != small) free(mine);
}

static shoal_status_t ctx_init(struct shoal_tctx *t)
{
    t->conn = calloc((size_t)shoal_tls.n_pes, sizeof *t->conn);
    t->used = malloc((size_t)shoal_tls.n_pes * sizeof *t->used);
    if (!t->conn || !t->used) {
        free(t->conn);
        free(t->used);
        t->conn = NULL;
        t->used = NULL;
        return SHOAL_ERR_NOMEM;
    }
    t->n_used = 0;
    pthread_mutex_init(&t->make_lock, NULL);
    return SHOAL_OK;
}

/* Closes t's streams: the targets' threads see the end and finish. */
static void ctx_close(struct shoal_tctx *t)
{
    if (!t->conn) return;
    for (int i = 0; i < t->n_used; i++) {
        struct shoal_tls_conn *c = t->conn[t->used[i]];
        if (c->ssl) {
            /* No close_notify: the target may have closed its side already,
             * and the end of the stream says all there is to say. */
            shoal_tls_lib.free_(c->ssl);
            if (!c->mux) close(c->fd); /* a pair connection's ends with the transport */
        }
        pthread_mutex_destroy(&c->lock);
        free(c);
    }
    pthread_mutex_destroy(&t->make_lock);
    free(t->conn);
    free(t->used);
    t->conn = NULL;
    t->used = NULL;
    t->n_used = 0;
}

shoal_status_t shoal_tls_ctx_open_default(void)
{
    return ctx_init(&shoal_tls.dflt);
}

shoal_status_t shoal_tls_ctx_create(shoal_tctx_t **out)
{
    struct shoal_tctx *t = calloc(1, sizeof *t);
    if (!t) return SHOAL_ERR_NOMEM;
    shoal_status_t st = ctx_init(t);
    if (st != SHOAL_OK) {
        free(t);
        return st;
    }
    pthread_mutex_lock(&shoal_tls.ctx_lock);
    t->live_next = shoal_tls.live;
    if (t->live_next) t->live_next->live_prev = t;
    shoal_tls.live = t;
    pthread_mutex_unlock(&shoal_tls.ctx_lock);
    *out = t;
    return SHOAL_OK;
}

void shoal_tls_ctx_destroy(shoal_tctx_t *ctx)
{
    if (!ctx) return;
    shoal_tls_quiet(ctx);
    pthread_mutex_lock(&shoal_tls.ctx_lock);
    if (ctx->live_prev) ctx->live_prev->live_next = ctx->live_next; else shoal_tls.live = ctx->live_next;
    if (ctx->live_next) ctx->live_next->live_prev = ctx->live_prev;
    pthread_mutex_unlock(&shoal_tls.ctx_lock);
    ctx_close(ctx);
    free(ctx);
}

void shoal_tls_ctx_close_all(void)
{
    pthread_mutex_lock(&shoal_tls.ctx_lock);
    while (shoal_tls.live) {
        struct shoal_tctx *t = shoal_tls.live;
        shoal_tls.live = t->live_next;
        ctx_close(t);
        free(t);
    }
    pthread_mutex_unlock(&shoal_tls.ctx_lock);
    ctx_close(&shoal_tls.dflt);
}
