/* tls_server.c: the side of the encrypted transport that serves peers.
 *
 * One acceptor thread per PE accepts on the listening socket (bound to the
 * job's interface only). Each accepted stream gets its own thread: it runs
 * the handshake under a deadline, then applies the stream's requests in
 * order to this PE's segments. A thread per stream keeps a silent or slow
 * stranger from delaying anyone else, and keeps one stream's requests in
 * order without locks. Strangers' handshakes in progress are bounded.
 *
 * Every request is checked against the segment it names: out of range, a
 * write into the read-only (RELRO) span, or a malformed header is refused.
 * A refused put's bytes are read and dropped, so the stream stays in step;
 * the refusal rides on the next reply to the initiator, which ends the job. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/sockios.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "transport/lease.h"
#include "transport/tls/tls.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/ratelimit.h"

/* Handshakes a PE runs at once, a bound on what strangers can make it
 * hold: at least every peer of the job at once (a collective's first call
 * opens every stream together: 66 PEs on one host over tls lost a PE to a
 * refusal at 32), since each stream keeps its thread anyway. */
#define HANDSHAKES_MIN 32
static int handshakes_max(void)
{
    return shoal_tls.n_pes + 8 > HANDSHAKES_MIN ? shoal_tls.n_pes + 8 : HANDSHAKES_MIN;
}
#define HANDSHAKE_SECONDS 10.0
#define DRAIN_SIZE ((size_t)64 * 1024)
/* Gets up to this size are answered in one record, and by a thread that
 * awaits an answer itself: the reply fits in the socket's send buffer (the
 * asker reads each reply before its next request), so writing it cannot
 * block. */
#define SMALL_GET 4096
/* Server threads leave their streams to a spinning waiting thread (the
 * lease, transport/lease.h; a wait about to yield or sleep hands them back
 * at once: shoal_tls_serve with spinning unset), but only while it has
 * applied a request within this long. */
#define ACTIVE_NS 1000000LL
static long long lease_since; /* when the current lease began; under serve_lock */

/* One accepted stream and its thread. A thread that ends marks itself
 * done; the acceptor (at its next stream) and stop join and free it, so no
 * thread outlives the transport. The stream's requests are applied by its
 * thread or, while this PE waits, by the waiting thread (shoal_tls_serve):
 * whoever holds lock. */
struct shoal_tls_server {
    int fd;                 /* -1 once the thread closed it */
    int done;               /* the thread is ending: join it */
    pthread_t thread;
    struct sockaddr_in from;
    SSL *ssl;               /* set once the handshake is done */
    pthread_mutex_t lock;   /* held while applying requests */
    int wake_fd;            /* eventfd: a request left to the thread (a get), or the lease ended */
    atomic_int parked;      /* the thread sleeps on wake_fd only, leaving fd to a waiter */
    atomic_int polling;     /* the thread may sleep on fd unaware of requests a waiter took */
    atomic_int sleeping;    /* the thread sleeps on fd: a settled lease wakes it to park */
    atomic_int owed;        /* a waiter applied requests and left them unacknowledged */
    struct shoal_tls_rep pending; /* the first refusal not yet reported */
    uint64_t applied;       /* counted requests read from the stream */
    uint64_t served;        /* all requests read, signals too: a waiter's lease */
    uint64_t reported;      /* applied as of the last reply written */
    uint64_t atomics;       /* non-fetching atomics applied */
    char *scratch;          /* a refused put's bytes are read into it */
    struct shoal_mux *mux;  /* a pair connection's channel ch (tls_pair.c), or NULL: fd is the stream's own */
    int ch;
    int accepted;           /* the acceptor started it: its handshake counts against the limit */
    struct shoal_tls_server *prev, *next;
};

static pthread_cond_t server_done = PTHREAD_COND_INITIALIZER;
static int wake_pipe[2] = {-1, -1};

/* Strangers' refusals: at most one line every 10 s, and the count of the
 * rest when the next one comes or the transport ends. */
static pthread_mutex_t refusals_lock = PTHREAD_MUTEX_INITIALIZER;
static struct shoal_ratelimit refusals = {.window_s = 10, .burst = 1, .start = -1};

static void refusals_left_out(unsigned n)
{
    if (n) shoal_warn("tls", "... and %u more refused streams in the last %.0f s", n, refusals.window_s);
}

static void note_refusal(const struct sockaddr_in *from, const char *reason)
{
    unsigned ended;
    pthread_mutex_lock(&refusals_lock);
    int show = shoal_ratelimit_event(&refusals, shoal_now_s(), &ended);
    pthread_mutex_unlock(&refusals_lock);
    refusals_left_out(ended);
    if (!show) return;
    char addr[SHOAL_TLS_ADDR_TEXT];
    shoal_tls_addr_text(from, addr);
    shoal_warn("tls", "refused a stream from %s: %s", addr, reason);
}

/* Whether [offset, offset+len) of seg may be read (write = 0) or written. */
static enum shoal_tls_refusal check_range(unsigned seg, uint64_t offset, uint64_t len, int write)
{
    if (seg >= SHOAL_SEG_COUNT) return SHOAL_TLS_BAD_REQUEST;
    const shoal_segment_t *s = shoal_tls.setup->local[seg];
    if (!s->base || offset > s->size || len > s->size - offset) return SHOAL_TLS_OUT_OF_RANGE;
    if (write && len && s->ro_len && offset < s->ro_offset + s->ro_len && s->ro_offset < offset + len)
        return SHOAL_TLS_READ_ONLY;
    return 0;
}

/* A signal refused: a barrier's or collective's word (transport.h), which
 * the API never lets outside a symmetric segment, so the sender's layout
 * differs from ours. Its reader is this PE, whose wait would never see it,
 * and the sender reads no reply to a signal: this PE ends the job. */
static __attribute__((noreturn)) void signal_refused(const struct shoal_tls_server *s, enum shoal_tls_refusal no,
                                                     unsigned seg, uint64_t offset, uint64_t len)
{
    struct sockaddr_in from = {0};
    socklen_t size = sizeof from;
    char addr[SHOAL_TLS_ADDR_TEXT] = "?", line[400];
    if (getpeername(s->fd, (struct sockaddr *)&from, &size) == 0) shoal_tls_addr_text(&from, addr);
    const shoal_segment_t *mine = seg < SHOAL_SEG_COUNT ? shoal_tls.setup->local[seg] : NULL;
    snprintf(line, sizeof line,
             "refused a barrier's or collective's signal from the PE at %s: %llu bytes at offset %llu of segment "
             "%u, %s (its size %zu): the PEs' symmetric layouts differ",
             addr, (unsigned long long)len, (unsigned long long)offset, seg,
             shoal_tls_refusal_text(no), mine ? mine->size : 0);
    shoal_tls.setup->fatal(line);
}

static int drain(SSL *ssl, uint64_t len, char *scratch)
{
    while (len) {
        size_t n = len < DRAIN_SIZE ? (size_t)len : DRAIN_SIZE;
        if (shoal_tls_read(ssl, scratch, n) != 0) return -1;
        len -= n;
    }
    return 0;
}

/* Writes the answer to the request just applied (for a get, data follows
 * unless refused), or instead the refusal of an earlier one, which ends the
 * job at the initiator. Either way every request so far is accounted for. */
static int answer(struct shoal_tls_server *s, struct shoal_tls_rep rep, const void *data, size_t len)
{
    if (s->pending.status) {
        rep = s->pending;
        rep.kind = SHOAL_TLS_EARLIER;
        s->pending = (struct shoal_tls_rep){0, 0, 0};
        data = NULL;
    }
    s->reported = s->applied;
    if (rep.status) data = NULL;
    if (data && len <= SMALL_GET) {
        /* One record, one system call. */
        char buf[sizeof rep + SMALL_GET];
        memcpy(buf, &rep, sizeof rep);
        memcpy(buf + sizeof rep, data, len);
        return shoal_tls_write(s->ssl, buf, sizeof rep + len);
    }
    if (!data) return shoal_tls_write(s->ssl, &rep, sizeof rep);
    if (shoal_tls_write_more(s->ssl, &rep, sizeof rep) != 0) return -1;
    return shoal_tls_write(s->ssl, data, len);
}

/* Says every request so far is applied (with the first refusal among them). */
static int acknowledge(struct shoal_tls_server *s)
{
    struct shoal_tls_rep ack = {0, SHOAL_TLS_ACK, s->applied};
    if (s->pending.status) ack = (struct shoal_tls_rep){s->pending.status, SHOAL_TLS_ACK, s->pending.value};
    s->pending = (struct shoal_tls_rep){0, 0, 0};
    s->reported = s->applied;
    return shoal_tls_write(s->ssl, &ack, sizeof ack);
}

/* 1, 2, 4 or 8 bytes at an address aligned to their size: moved with one
 * atomic access (shoal_untorn_store/load), as the direct path's p and g are. */
static int word_sized(const void *p, uint64_t len)
{
    return (len == 1 || len == 2 || len == 4 || len == 8) && (uintptr_t)p % len == 0;
}

/* Reads a put's data (checked) into this PE's memory. */
static int receive_put(SSL *ssl, const struct shoal_tls_req *q)
{
    char *dst = shoal_tls.setup->local[q->seg]->base + q->offset;
    if (word_sized(dst, q->len)) {
        /* A p of a word: stored whole, so a PE polling it never sees half. */
        uint64_t word = 0;
        if (shoal_tls_read(ssl, &word, q->len) != 0) return -1;
        shoal_untorn_store(dst, &word, q->len);
    } else if (shoal_tls_read(ssl, dst, q->len) != 0) {
        return -1;
    }
    /* A later request's effects (a flag, a signal) must not be seen first. */
    atomic_thread_fence(memory_order_release);
    return 0;
}

/* Applies one request. Returns -1 when the stream is broken or closed. */
static int serve_one(struct shoal_tls_server *s)
{
    SSL *ssl = s->ssl;
    struct shoal_tls_rep *pending = &s->pending;
    char *scratch = s->scratch;
    struct shoal_tls_req q;
    if (shoal_tls_read(ssl, &q, sizeof q) != 0) return -1;
    /* A signal is neither counted nor acknowledged (tls_client.c). */
    const int signal = (q.op == SHOAL_TLS_AMO || q.op == SHOAL_TLS_PUT_SIGNAL) && q.uncounted;
    if (!signal) s->applied++;
    s->served++;
    struct shoal_tls_rep rep = {0, SHOAL_TLS_ANSWER, 0};
    switch (q.op) {
    case SHOAL_TLS_PUT: {
        enum shoal_tls_refusal no = check_range(q.seg, q.offset, q.len, 1);
        if (no) {
            if (!pending->status) *pending = (struct shoal_tls_rep){no, 0, q.offset};
            return drain(ssl, q.len, scratch);
        }
        return receive_put(ssl, &q);
    }
    case SHOAL_TLS_PUT_SIGNAL: {
        enum shoal_tls_refusal no = check_range(q.seg, q.offset, q.len, 1);
        if (no && signal) signal_refused(s, no, q.seg, q.offset, q.len);
        if (!no) no = check_range(q.elem, q.cond, 8, 1);
        if (!no && (q.cond % 8 || (q.amo_op != SHOAL_AMO_SET && q.amo_op != SHOAL_AMO_ADD)))
            no = SHOAL_TLS_BAD_REQUEST;
        if (no && signal) signal_refused(s, no, q.elem, q.cond, 8);
        if (no) {
            if (!pending->status) *pending = (struct shoal_tls_rep){no, 0, q.offset};
            return drain(ssl, q.len, scratch);
        }
        if (receive_put(ssl, &q) != 0) return -1;
        shoal_cpu_amo(shoal_tls.setup->local[q.elem]->base + q.cond, 8, (enum shoal_amo_op)q.amo_op, q.operand, 0);
        return 0;
    }
    case SHOAL_TLS_GET: {
        enum shoal_tls_refusal no = check_range(q.seg, q.offset, q.len, 0);
        rep.status = no;
        rep.value = q.offset;
        atomic_thread_fence(memory_order_acquire);
        const char *src = no ? NULL : shoal_tls.setup->local[q.seg]->base + q.offset;
        if (src && word_sized(src, q.len)) {
            /* A g of a word: loaded whole, never half of a concurrent store. */
            uint64_t word = 0;
            shoal_untorn_load(&word, src, q.len);
            return answer(s, rep, &word, q.len);
        }
        return answer(s, rep, src, q.len);
    }
    case SHOAL_TLS_AMO: {
        enum shoal_tls_refusal no = check_range(q.seg, q.offset, q.elem, q.amo_op != SHOAL_AMO_FETCH);
        if (!no && ((q.elem != 4 && q.elem != 8) || q.offset % q.elem || q.amo_op > SHOAL_AMO_XOR ||
                    (signal && q.fetch)))
            no = SHOAL_TLS_BAD_REQUEST;
        if (!no) {
            char *p = shoal_tls.setup->local[q.seg]->base + q.offset;
            rep.value = shoal_cpu_amo(p, q.elem, (enum shoal_amo_op)q.amo_op, q.operand, q.cond);
        } else if (signal) {
            signal_refused(s, no, q.seg, q.offset, q.elem);
        } else if (!q.fetch) {
            if (!pending->status) *pending = (struct shoal_tls_rep){no, 0, q.offset};
        } else {
            rep = (struct shoal_tls_rep){no, SHOAL_TLS_ANSWER, q.offset};
        }
        if (q.fetch) return answer(s, rep, NULL, 0);
        if (signal) return 0;
        s->atomics++;
        return 0;
    }
    default:
        /* Nothing after an unknown header can be trusted to be in step. */
        shoal_error("tls", "malformed request (op %u) on a stream: closing it", q.op);
        return -1;
    }
}

static void wake(struct shoal_tls_server *s)
{
    uint64_t one = 1;
    if (write(s->wake_fd, &one, sizeof one) < 0) shoal_debug("tls", "eventfd: %s", strerror(errno));
}

/* Ends the lease early: parked threads return to their sockets. Called
 * with serve_lock held. */
static void end_lease(void)
{
    atomic_store(&shoal_tls.served_ns, 0); /* before parked is read */
    for (struct shoal_tls_server *s = shoal_tls.servers; s; s = s->next)
        if (atomic_load(&s->parked)) wake(s);
}

/* Whether an answer of len bytes goes into the socket's send buffer now
 * whole, so writing it cannot block: the kernel counts a queued byte at
 * most about twice (its buffers' overhead), and records add 22 bytes per
 * 16 KiB. Two system calls, made only for answers that could block. */
static int answer_fits(int fd, uint64_t len)
{
    int queued = 0, room = 0;
    socklen_t size = sizeof room;
    if (ioctl(fd, SIOCOUTQ, &queued) != 0 || getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &room, &size) != 0) return 0;
    const uint64_t wire = sizeof(struct shoal_tls_rep) + len + (len / 16384 + 1) * 22;
    return queued >= 0 && room > 0 && 2 * ((uint64_t)queued + wire) <= (uint64_t)room;
}

/* Applies every request already here, buffered in OpenSSL or waiting in
 * the socket. Called with s->lock held. -1 when the stream has ended.
 * Without gets, a large get is left to the stream's thread (woken for
 * it): the caller awaits an answer itself, and a large reply written while
 * the asker does the same to us would leave both blocked in writes. So
 * is a get_nbi's answer (deferred): the asker may read it only much later,
 * and a waiter blocked writing it would hold serve_lock and stop this PE's
 * every wait meanwhile. Either is answered here when the socket has room
 * for it all, since that write cannot block.
 * Requests found applied and unanswered are acknowledged when the stream
 * is idle: at once with eager (the stream's thread) or after an atomic (a
 * barrier's or lock's signal, whose sender quiets next), else on a call
 * that found nothing new, so that a waiting thread first returns to what
 * it waits for (the flag a put just set) and acknowledges after. */
static int serve_ready(struct shoal_tls_server *s, int gets, int eager)
{
    int applied = 0;
    uint64_t atomics = s->atomics;
    for (;;) {
        if (!shoal_tls_pending(s->ssl)) {
            /* A waiter that applied a put would not acknowledge it now
             * anyway (below): it returns to what it waits for at once, and
             * looks at the socket again on its next call, one system call
             * fewer between the put's arrival and the wait seeing it. */
            if (!eager && applied && s->atomics == atomics) return 0;
            if (!shoal_tls_arrived(s->ssl, s->fd)) {
                if ((eager || !applied || s->atomics != atomics) && s->applied != s->reported) return acknowledge(s);
                return 0;
            }
        }
        if (!eager) {
            struct shoal_tls_req q = {0};
            size_t n = 0;
            if (!shoal_tls_lib.peek_ex(s->ssl, &q, sizeof q, &n)) return -1;
            const int may_block =
                n >= sizeof q && q.op == SHOAL_TLS_GET && (q.deferred || (!gets && q.len > SMALL_GET));
            if (may_block && !answer_fits(s->fd, q.len)) {
                wake(s);
                return 0;
            }
        }
        if (serve_one(s) != 0) return -1;
        applied = 1;
    }
}

/* Streams whose sockets one poll(2) looks at before a waiter serves them
 * (shoal_tls_serve); any beyond are looked at one by one. */
#define LOOKS_MAX 64

/* A stream a waiter may serve: handshake done, its thread not ending. */
static int servable(const struct shoal_tls_server *s) { return s->ssl && !s->done && s->fd >= 0; }

/* Which of the streams a waiter is about to serve have something to read
 * (or ended): one poll(2) for them all, where looking through each stream
 * costs a system call per stream on every poll of the wait (docs/design.md:
 * 4 namespace hosts x 1 PE, barrier 231-253 -> 191-227 us). Returns how
 * many streams looks[] covers: 0 for one stream or none, whose own read
 * looks as cheaply and takes what came in the same call. */
static int look_at_streams(struct pollfd *looks)
{
    int n = 0;
    for (struct shoal_tls_server *s = shoal_tls.servers; s && n < LOOKS_MAX; s = s->next)
        if (servable(s)) looks[n++] = (struct pollfd){.fd = s->fd, .events = POLLIN};
    if (n < 2) return 0;
    /* A failed poll looks like data everywhere: each stream's read tells. */
    if (poll(looks, (nfds_t)n, 0) < 0)
        for (int i = 0; i < n; i++) looks[i].revents = POLLIN;
    return n;
}

/* The waiting thread's lease on the streams (transport/lease.h). */
static long long lease_left(long long park_ns) { return shoal_lease_left(&shoal_tls.served_ns, park_ns); }

/* How an accepted stream opens, by its first byte within the handshake's
 * deadline: 1 with a pair preamble (tls_pair.c), 0 otherwise (a TLS
 * handshake: a record of type 22), -1 with nothing by then. */
static int opens_pair(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    unsigned char first = 0;
    if (poll(&p, 1, (int)(HANDSHAKE_SECONDS * 1000)) <= 0) return -1;
    return recv(fd, &first, 1, MSG_PEEK | MSG_DONTWAIT) == 1 && first == SHOAL_TLS_PAIR_FIRST;
}

static void *serve_stream(void *arg)
{
    struct shoal_tls_server *s = arg;
    char reason[200];
    sigset_t unused;
    shoal_tls_sigpipe_block(&unused); /* for the thread's whole life */
    int sigpipe = 0, pair_pe = -1, opening = s->mux ? 1 : opens_pair(s->fd);
    SSL *ssl = NULL;
    if (opening < 0) snprintf(reason, sizeof reason, "handshake timed out after %.0f s", HANDSHAKE_SECONDS);
    if (opening > 0 && !s->mux) {
        s->mux = shoal_tls_pair_accept(s->fd, HANDSHAKE_SECONDS, &pair_pe, reason, sizeof reason);
        s->ch = 0;
    }
    if (s->mux) {
        /* A channel this PE dialed waits for its peer's first bytes. */
        ssl = shoal_tls_handshake_mux(s->mux, s->ch, 1, HANDSHAKE_SECONDS, !s->accepted, reason, sizeof reason);
        if (pair_pe >= 0) shoal_tls_pair_accepted(pair_pe, s->mux, ssl != NULL);
    } else if (opening == 0) {
        sigpipe = 1;
        ssl = shoal_tls_handshake(s->fd, 1, HANDSHAKE_SECONDS, &sigpipe, reason, sizeof reason);
    }
    if (s->accepted) atomic_fetch_sub(&shoal_tls.handshakes, 1);
    /* Refusing a PE's dial because ours is on its way is routine. */
    const int routine = opening > 0 && !s->mux && pair_pe >= 0;
    s->scratch = ssl ? malloc(DRAIN_SIZE) : NULL;
    if (!ssl) {
        if (!atomic_load(&shoal_tls.stopping) && !routine && s->accepted) note_refusal(&s->from, reason);
    } else if (s->scratch) {
        pthread_mutex_lock(&shoal_tls.serve_lock);
        s->ssl = ssl;
        pthread_mutex_unlock(&shoal_tls.serve_lock);
        prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0); /* parking ends on time */
        int left_to_reader = 0; /* the last sleep left the socket to the other channel's reader */
        for (;;) {
            /* Set before looking at the stream: a waiter that applies what
             * we did not see, and leaves it unacknowledged, wakes us. */
            atomic_store(&s->polling, 1);
            pthread_mutex_lock(&s->lock);
            const uint64_t before = s->served;
            atomic_fetch_add_explicit(&shoal_tls.working, 1, memory_order_relaxed);
            int rc = serve_ready(s, 1, 1);
            atomic_fetch_sub_explicit(&shoal_tls.working, 1, memory_order_relaxed);
            const int applied = s->served != before;
            pthread_mutex_unlock(&s->lock);
            if (rc != 0) break;
            if (applied) atomic_store_explicit(&shoal_tls.applied_ns, shoal_now_ns(), memory_order_relaxed);
            long long park_ns = SHOAL_LEASE_MIN_NS, left = lease_left(park_ns);
            if (left) {
                /* A waiting thread applies this stream: sleep until its
                 * lease ends (or a large get is left to us), not on the
                 * socket, whose every request would wake us for nothing.
                 * A lease renewed meanwhile sends us back to sleep without
                 * touching the stream the waiter is applying. */
                atomic_store(&s->polling, 0); /* the timeout brings us back */
                int r = 0;
                for (;;) {
                    atomic_store(&s->parked, 1);
                    if ((left = lease_left(park_ns))) {
                        struct timespec ts = {left / 1000000000LL, left % 1000000000LL};
                        struct pollfd p = {.fd = s->wake_fd, .events = POLLIN};
                        r = ppoll(&p, 1, &ts, NULL);
                    }
                    atomic_store(&s->parked, 0);
                    if (!left || r != 0) break;
                    park_ns = shoal_lease_longer(park_ns);
                }
                uint64_t count;
                if (r > 0 && read(s->wake_fd, &count, sizeof count) < 0)
                    shoal_debug("tls", "eventfd: %s", strerror(errno));
                continue;
            }
            /* Nothing left: a busy stream's next request follows within
             * microseconds, so poll a little before sleeping in poll(2),
             * which a request found meanwhile skips (a system call fewer
             * per request; a wake-up left on wake_fd is read next time). */
            /* Not while the other channel's reader takes in for us, nor
             * right after its read ended and woke us with nothing for us:
             * the socket then holds the rest of its message, not requests,
             * and polling would only find that (tls_client.c, READ_THROUGH_MIN). */
            const int idle = (s->mux && shoal_mux_other_reading(s->mux, s->ch)) || (left_to_reader && !applied);
            left_to_reader = 0;
            if (!idle && shoal_tls_await(NULL, s->fd, 0)) continue;
            /* A thread asleep on the socket while a waiter applies its
             * requests is woken by each of them and finds nothing to read
             * (the waiter was first): it never leaves poll(2) to see the
             * lease, yet each request costs its sender a wake-up and the
             * waiter's core two context switches. So a waiter whose lease
             * has lasted SHOAL_LEASE_SETTLED_NS wakes it, once, to park
             * (shoal_tls_serve), and a thread looks at the lease after
             * raising sleeping (sequentially consistent, as with parked):
             * one of the two sees the other. */
            atomic_store(&s->sleeping, 1);
            if (lease_left(SHOAL_LEASE_MIN_NS)) {
                atomic_store(&s->sleeping, 0);
                continue;
            }
            /* On a pair connection the other channel's reader may take in
             * this one's bytes: it wakes us through the mux. */
            int socket_too = 1;
            const int mux_fd = s->mux ? shoal_mux_sleep_begin(s->mux, s->ch, &socket_too) : -1;
            struct pollfd p[3] = {{.fd = socket_too ? s->fd : -1, .events = POLLIN},
                                  {.fd = s->wake_fd, .events = POLLIN},
                                  {.fd = mux_fd, .events = POLLIN}};
            const int slept = s->mux && mux_fd < 0 ? 1 : poll(p, s->mux ? 3 : 2, -1);
            if (s->mux) shoal_mux_sleep_end(s->mux, s->ch);
            left_to_reader = !socket_too;
            atomic_store(&s->sleeping, 0);
            if (slept < 0 && errno != EINTR) break;
            uint64_t count;
            if (p[1].revents && read(s->wake_fd, &count, sizeof count) < 0)
                shoal_debug("tls", "eventfd: %s", strerror(errno));
        }
    }
    pthread_mutex_lock(&shoal_tls.serve_lock);
    if (!s->mux) close(s->fd); /* a pair connection's ends with the transport */
    s->fd = -1;
    s->done = 1;
    pthread_cond_broadcast(&server_done);
    pthread_mutex_unlock(&shoal_tls.serve_lock);
    if (ssl) shoal_tls_lib.free_(ssl);
    return NULL;
}

/* Called by this PE's waits (gets = 1) and by a thread awaiting an answer
 * (gets = 0): applies what peers have sent, in the waiting thread, so a wait
 * never depends on a server thread getting a core (two PEs spinning on two
 * cores would otherwise starve them, and two PEs in quiet would each wait
 * for the other's server thread to wake). Streams another thread is
 * applying are skipped. A spinning caller takes the lease: the streams'
 * threads park instead of sleeping on their sockets, where every request
 * the caller applies would also wake them (a wake-up on another core costs
 * the sender several microseconds). Any other caller ends it. */
void shoal_tls_serve(int gets, int spinning)
{
    if (pthread_mutex_trylock(&shoal_tls.serve_lock) != 0) return;
    const long long now = shoal_now_ns();
    /* The lease only while requests come: a waiter whose peers are silent
     * leaves its streams' threads asleep on their sockets, where nothing
     * wakes them, rather than parked on a timer that does. */
    const int leased = spinning > 1 ||
                       (spinning && now - atomic_load_explicit(&shoal_tls.applied_ns, memory_order_relaxed) < ACTIVE_NS);
    if (leased) {
        if (!atomic_load_explicit(&shoal_tls.served_ns, memory_order_relaxed)) lease_since = now;
        atomic_store(&shoal_tls.served_ns, now); /* before sleeping is read */
    } else if (atomic_load_explicit(&shoal_tls.served_ns, memory_order_relaxed))
        end_lease();
    uint64_t applied = 0;
    /* Streams are published under serve_lock after their handshake counted
     * them: a stream below whose writes may raise SIGPIPE is counted here. */
    sigset_t old;
    sigemptyset(&old);
    const int block = atomic_load(&shoal_tls.sigpipe_streams) > 0;
    if (block) shoal_tls_sigpipe_block(&old);
    /* The list cannot change while serve_lock is held: looks[i] is the
     * i-th stream below. */
    struct pollfd looks[LOOKS_MAX];
    const int looked = look_at_streams(looks);
    int i = 0;
    for (struct shoal_tls_server *s = shoal_tls.servers; s; s = s->next) {
        if (!servable(s)) continue;
        const int quiet = i < looked && !looks[i].revents;
        i++;
        /* Loaded first: the exchange writes the line, and this runs on
         * every poll of a spinning wait while the flag is almost always 0. */
        if (leased && now - lease_since >= SHOAL_LEASE_SETTLED_NS && atomic_load(&s->sleeping) &&
            atomic_exchange(&s->sleeping, 0))
            wake(s); /* to park */
        if (pthread_mutex_trylock(&s->lock) != 0) continue;
        /* Nothing came, nothing buffered, nothing to acknowledge: what
         * serve_ready would find, without its read. */
        if (quiet && s->applied == s->reported && !shoal_tls_pending(s->ssl)) {
            pthread_mutex_unlock(&s->lock);
            continue;
        }
        /* A broken stream is left to its thread, which sees it end. */
        const uint64_t before = s->served;
        int rc = serve_ready(s, gets, 0);
        applied += s->served - before;
        int unacked = s->applied != s->reported;
        pthread_mutex_unlock(&s->lock);
        if (rc != 0) {
            shutdown(s->fd, SHUT_RDWR);
            wake(s);
        } else if (unacked && leased) {
            /* A spinning wait (the lease) may end on what it just applied:
             * the ACK waits for our next call, or for this PE's next request
             * (shoal_tls_pay_acks), since waking the stream's thread now
             * would put a context switch beside the program's next step (a
             * ping-pong's answer). A parked thread sends it when its lease
             * ends, and an initiator whose quiet finds it missing asks with
             * a flush, which wakes a thread asleep on the socket. */
            atomic_store(&s->owed, 1);
            atomic_store(&shoal_tls.acks_owed, 1);
        } else if (unacked && atomic_load(&s->polling)) {
            /* A wait that sleeps between calls: the thread sees to it. */
            wake(s);
        }
    }
    if (applied) atomic_store_explicit(&shoal_tls.applied_ns, now, memory_order_relaxed);
    if (block) shoal_tls_sigpipe_restore(&old);
    pthread_mutex_unlock(&shoal_tls.serve_lock);
}

/* Sends the ACKs that waits left owed (shoal_tls_serve), after this PE's
 * own request went out. Streams busy with another thread are left to it:
 * whoever holds a stream acknowledges it when idle. */
void shoal_tls_pay_acks(void)
{
    if (!atomic_load_explicit(&shoal_tls.acks_owed, memory_order_relaxed)) return;
    if (pthread_mutex_trylock(&shoal_tls.serve_lock) != 0) return;
    atomic_store(&shoal_tls.acks_owed, 0);
    sigset_t old;
    sigemptyset(&old);
    const int block = atomic_load(&shoal_tls.sigpipe_streams) > 0;
    if (block) shoal_tls_sigpipe_block(&old);
    for (struct shoal_tls_server *s = shoal_tls.servers; s; s = s->next) {
        if (!atomic_exchange(&s->owed, 0)) continue;
        if (!s->ssl || s->done || s->fd < 0 || pthread_mutex_trylock(&s->lock) != 0) continue;
        const int rc = s->applied != s->reported ? acknowledge(s) : 0;
        pthread_mutex_unlock(&s->lock);
        if (rc != 0) {
            shutdown(s->fd, SHUT_RDWR);
            wake(s);
        }
    }
    if (block) shoal_tls_sigpipe_restore(&old);
    pthread_mutex_unlock(&shoal_tls.serve_lock);
}

void shoal_tls_serve_release(void)
{
    if (!atomic_load_explicit(&shoal_tls.served_ns, memory_order_relaxed)) return;
    pthread_mutex_lock(&shoal_tls.serve_lock);
    end_lease();
    pthread_mutex_unlock(&shoal_tls.serve_lock);
}

/* Joins and frees the threads that have ended (all of them with all set,
 * waiting for the rest, whose streams the caller has shut down). */
static void reap(int all)
{
    pthread_mutex_lock(&shoal_tls.serve_lock);
    for (;;) {
        struct shoal_tls_server *s = shoal_tls.servers;
        while (s && !s->done) s = s->next;
        if (!s) {
            if (!all || !shoal_tls.servers) break;
            pthread_cond_wait(&server_done, &shoal_tls.serve_lock);
            continue;
        }
        if (s->prev) s->prev->next = s->next; else shoal_tls.servers = s->next;
        if (s->next) s->next->prev = s->prev;
        pthread_mutex_unlock(&shoal_tls.serve_lock);
        pthread_join(s->thread, NULL);
        pthread_mutex_destroy(&s->lock);
        close(s->wake_fd);
        free(s->scratch);
        free(s);
        pthread_mutex_lock(&shoal_tls.serve_lock);
    }
    pthread_mutex_unlock(&shoal_tls.serve_lock);
}

/* A stream this PE cannot serve leaves its initiator retrying its
 * handshake in vain until the deadline, each try a line here: the job ends
 * at once instead, naming the limit that was reached. A stranger's
 * connection (at most handshakes_max at once) meets it only where the
 * job's next stream to this PE would. */
static __attribute__((noreturn)) void cannot_serve(const char *what, int err, const char *limits)
{
    int served = 0;
    pthread_mutex_lock(&shoal_tls.serve_lock);
    for (const struct shoal_tls_server *s = shoal_tls.servers; s; s = s->next) served += !s->done;
    pthread_mutex_unlock(&shoal_tls.serve_lock);
    char line[400];
    snprintf(line, sizeof line, "cannot serve another peer's stream beside the %d it serves: %s: %s (%s)", served,
             what, strerror(err), limits);
    shoal_tls.setup->fatal(line);
}

/* A server for fd's stream (or channel ch of m), on its own thread; the
 * job ends where none can start. */
static void start_server(int fd, const struct sockaddr_in *from, struct shoal_mux *m, int ch)
{
    struct shoal_tls_server *s = calloc(1, sizeof *s);
    if (!s) cannot_serve("its state", ENOMEM, "the memory of this PE");
    s->fd = fd;
    if (from) s->from = *from;
    s->mux = m;
    s->ch = ch;
    s->accepted = m == NULL;
    s->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (s->wake_fd < 0)
        cannot_serve("eventfd", errno, "a served stream holds a socket and an eventfd: raise the limit on open files, "
                                       "ulimit -n");
    pthread_mutex_init(&s->lock, NULL);
    pthread_mutex_lock(&shoal_tls.serve_lock);
    s->next = shoal_tls.servers;
    if (s->next) s->next->prev = s;
    shoal_tls.servers = s;
    int rc = pthread_create(&s->thread, NULL, serve_stream, s);
    if (rc != 0) {
        shoal_tls.servers = s->next;
        if (s->next) s->next->prev = NULL;
    }
    pthread_mutex_unlock(&shoal_tls.serve_lock);
    if (rc == 0) return;
    close(s->wake_fd);
    pthread_mutex_destroy(&s->lock);
    free(s);
    cannot_serve("its thread", rc,
                 "a served stream is a thread: raise ulimit -u, kernel.pid_max or kernel.threads-max, and "
                 "vm.max_map_count past 2 mappings per thread (docs/scaling.md)");
}

void shoal_tls_server_channel(struct shoal_mux *m, int ch) { start_server(shoal_mux_fd(m), NULL, m, ch); }

static void start_stream(int fd, const struct sockaddr_in *from)
{
    if (atomic_fetch_add(&shoal_tls.handshakes, 1) >= handshakes_max()) {
        atomic_fetch_sub(&shoal_tls.handshakes, 1);
        note_refusal(from, "too many handshakes in progress");
        close(fd);
        return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    start_server(fd, from, NULL, 0);
}

static void *accept_loop(void *arg)
{
    (void)arg;
    struct pollfd p[2] = {{.fd = shoal_tls.listen_fd, .events = POLLIN}, {.fd = wake_pipe[0], .events = POLLIN}};
    while (!atomic_load(&shoal_tls.stopping)) {
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR) continue;
            shoal_error("tls", "poll on the listening socket failed: %s", strerror(errno));
            break;
        }
        if (p[1].revents) break;
        if (!(p[0].revents & POLLIN)) continue;
        struct sockaddr_in from;
        socklen_t fl = sizeof from;
        int fd = accept4(shoal_tls.listen_fd, (struct sockaddr *)&from, &fl, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE)
                shoal_error("tls", "cannot accept a peer's stream: %s (raise the limit on open files, ulimit -n)",
                            strerror(errno));
            continue;
        }
        reap(0);
        start_stream(fd, &from);
    }
    return NULL;
}

shoal_status_t shoal_tls_server_start(char *err, size_t errlen)
{
    if (pipe2(wake_pipe, O_CLOEXEC) != 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return SHOAL_ERR_SYS;
    }
    int rc = pthread_create(&shoal_tls.acceptor, NULL, accept_loop, NULL);
    if (rc != 0) {
        snprintf(err, errlen, "cannot start the transport's acceptor thread: %s", strerror(rc));
        return SHOAL_ERR_SYS;
    }
    shoal_tls.acceptor_started = 1;
    return SHOAL_OK;
}

/* Every peer has stopped sending (the caller synchronised with them): wake
 * the threads blocked in reads and wait until each has ended. */
void shoal_tls_server_stop(void)
{
    atomic_store(&shoal_tls.stopping, 1);
    if (shoal_tls.acceptor_started) {
        char c = 1;
        if (write(wake_pipe[1], &c, 1) < 0) shoal_debug("tls", "waking the acceptor: %s", strerror(errno));
        pthread_join(shoal_tls.acceptor, NULL);
        shoal_tls.acceptor_started = 0;
    }
    shoal_tls_serve_release(); /* parked threads see their streams end now, not at the lease's */
    pthread_mutex_lock(&shoal_tls.serve_lock);
    for (struct shoal_tls_server *s = shoal_tls.servers; s; s = s->next)
        if (s->fd >= 0) shutdown(s->fd, SHUT_RDWR);
    pthread_mutex_unlock(&shoal_tls.serve_lock);
    reap(1);
    for (int i = 0; i < 2; i++)
        if (wake_pipe[i] >= 0) close(wake_pipe[i]);
    wake_pipe[0] = wake_pipe[1] = -1;
    if (shoal_tls.listen_fd >= 0) close(shoal_tls.listen_fd);
    shoal_tls.listen_fd = -1;
    pthread_mutex_lock(&refusals_lock);
    unsigned left_out = shoal_ratelimit_flush(&refusals, shoal_now_s(), 1);
    pthread_mutex_unlock(&refusals_lock);
    refusals_left_out(left_out);
}
