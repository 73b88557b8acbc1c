/* tls_pair.c: one TCP connection per pair of PEs for both PEs' streams of
 * the default context (tls_mux.h says why).
 *
 * The first of two PEs to need its stream dials the other and, before any
 * TLS, sends a preamble: SHOAL_TLS_PAIR_FIRST, "HP1", its PE number (32
 * bits, little-endian). The other answers one byte, ACCEPT or REFUSE.
 * Channel 0 of an accepted connection carries the dialer's stream (a TLS
 * session, the dialer its client), channel 1 the acceptor's, once it needs
 * it. When both dial at once, the lower PE refuses the higher one's dial
 * (it has its own in flight): the higher one then waits a moment for the
 * lower one's, which it accepts. So each pair ends up with one connection.
 *
 * The preamble is not authenticated: a connection counts as the peer's
 * only once the dialer has finished a TLS handshake on channel 0 with the
 * job's key (shoal_tls_pair_accepted). Until then this PE accepts more
 * openings claiming the same PE, and its own stream waits for them only
 * briefly before dialing: a stranger claiming a PE number neither blocks
 * that PE nor gets any access. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "transport/tls/tls.h"
#include "util/clock.h"
#include "util/log.h"

#define PREAMBLE 8
#define ACCEPT 'A'
#define REFUSE 'R'

struct pair {
    struct shoal_mux *mine;   /* the connection this PE dialed (its stream on channel 0) */
    struct shoal_mux *theirs; /* the one the peer dialed, its handshake done (this PE's stream on channel 1) */
    int dialing;              /* this PE's dial is in flight */
    int pending;              /* openings claiming the peer, their handshakes in progress */
    double refused_at;        /* when the peer last refused this PE's dial (it dials, or is paired) */
};
/* How long a stream waits for the peer's connection on its way (a pending
 * opening, a refusal) before it dials again. */
#define BRIEFLY_S 0.2

static struct pair *pairs;
static pthread_mutex_t pair_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pair_changed;
static int enabled;
/* Connections no stream of this PE rides: failed ones (shut down at once)
 * and a peer's second one, when both PEs' dials were accepted (its stream
 * rides it). Freed at the end, when no thread can be using them. */
struct other_mux {
    struct shoal_mux *mux;
    struct other_mux *next;
};
static struct other_mux *others;

shoal_status_t shoal_tls_pair_init(void)
{
    /* A channel's TLS runs in user space: where the kernel's tls module
     * is loaded, streams of their own keep kernel TLS (its bulk speed)
     * unless pairing is asked for (SHMEM_TLS_PAIR). */
    const int asked = shoal_tls.setup->tls_pair;
    enabled = asked >= 0 ? asked : access("/sys/module/tls", F_OK) != 0;
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&pair_changed, &attr);
    pthread_condattr_destroy(&attr);
    pairs = calloc((size_t)shoal_tls.n_pes, sizeof *pairs);
    return pairs ? SHOAL_OK : SHOAL_ERR_NOMEM;
}

int shoal_tls_pair_enabled(void) { return enabled; }

/* Called with pair_lock held. */
static void keep_other(struct shoal_mux *m, int failed)
{
    struct other_mux *o = malloc(sizeof *o);
    if (failed) shoal_mux_shutdown(m);
    if (!o) return; /* leaked rather than freed under a thread still using it */
    o->mux = m;
    o->next = others;
    others = o;
}

/* Waits until fd is readable (events POLLIN) or writable, or the deadline. */
static int await_fd(int fd, short events, double deadline)
{
    for (;;) {
        const double left = deadline - shoal_now_s();
        if (left <= 0) return 0;
        struct pollfd p = {.fd = fd, .events = events};
        const int r = poll(&p, 1, (int)(left * 1000.0) + 1);
        if (r > 0) return 1;
        if (r < 0 && errno != EINTR) return 0;
    }
}

/* Reads exactly len bytes from non-blocking fd by the deadline. */
static int read_within(int fd, void *buf, size_t len, double deadline)
{
    char *p = buf;
    while (len) {
        const ssize_t n = recv(fd, p, len, MSG_DONTWAIT);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
        } else if (n == 0 || (errno != EAGAIN && errno != EINTR) || !await_fd(fd, POLLIN, deadline)) {
            return -1;
        }
    }
    return 0;
}

/* Dials pe with the preamble. Returns the connection's mux when pe accepted
 * it; NULL otherwise, with *refused set when pe refused (it dials us). */
static struct shoal_mux *dial(int pe, double deadline, int *refused, int *lost, char *reason, size_t len)
{
    *refused = 0;
    const int fd = shoal_tls_dial(pe, deadline, lost, reason, len);
    if (fd < 0) return NULL;
    const uint32_t me = (uint32_t)shoal_tls.my_pe;
    const unsigned char preamble[PREAMBLE] = {SHOAL_TLS_PAIR_FIRST, 'H', 'P', '1', (unsigned char)me,
                                              (unsigned char)(me >> 8), (unsigned char)(me >> 16),
                                              (unsigned char)(me >> 24)};
    char answer = 0;
    /* An empty socket takes 8 bytes at once. */
    if (send(fd, preamble, sizeof preamble, MSG_NOSIGNAL) != (ssize_t)sizeof preamble ||
        read_within(fd, &answer, 1, deadline) != 0 || (answer != ACCEPT && answer != REFUSE)) {
        /* Most often the peer's limit of handshakes at once: tried again. */
        *lost = 0;
        snprintf(reason, len, "the peer broke off the pair connection's opening");
        close(fd);
        return NULL;
    }
    if (answer == REFUSE) {
        *refused = 1;
        close(fd);
        return NULL;
    }
    struct shoal_mux *m = shoal_mux_new(fd);
    if (!m) {
        *lost = 0;
        snprintf(reason, len, "out of memory for a pair connection");
        close(fd);
    }
    return m;
}

/* Waits for the pair's state to change, until the deadline. */
static void wait_change(double deadline)
{
    const double left = deadline - shoal_now_s();
    if (left <= 0) return;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    const long long ns = (long long)ts.tv_nsec + (long long)(left * 1e9);
    ts.tv_sec += (time_t)(ns / 1000000000LL);
    ts.tv_nsec = (long)(ns % 1000000000LL);
    pthread_cond_timedwait(&pair_changed, &pair_lock, &ts);
}

/* Opens c on channel ch of m (0 on the connection this PE dialed, 1 on the
 * peer's), its handshake given the time left (a second at least). */
static int ride(struct shoal_tls_conn *c, struct shoal_mux *m, int ch, double deadline, char *reason, size_t len)
{
    const double left = deadline - shoal_now_s();
    SSL *ssl = shoal_tls_handshake_mux(m, ch, 0, left > 1.0 ? left : 1.0, 0, reason, len);
    if (!ssl) return -1;
    c->ssl = ssl;
    c->mux = m;
    c->ch = ch;
    c->fd = shoal_mux_fd(m);
    c->sigpipe = 0;
    return 0;
}

int shoal_tls_pair_open(struct shoal_tls_conn *c, int pe, double deadline, int *lost, char *reason, size_t len)
{
    struct pair *p = &pairs[pe];
    *lost = 0;
    pthread_mutex_lock(&pair_lock);
    for (;;) {
        if (p->theirs) {
            struct shoal_mux *m = p->theirs;
            pthread_mutex_unlock(&pair_lock);
            return ride(c, m, 1, deadline, reason, len);
        }
        /* The peer's connection may be on its way: wait for it briefly. */
        const double now = shoal_now_s(), until = p->refused_at + BRIEFLY_S;
        if ((p->pending || now < until) && now < deadline) {
            const double end = p->pending ? now + BRIEFLY_S : until;
            wait_change(end < deadline ? end : deadline);
            if (p->theirs || shoal_now_s() < (p->pending ? end : until)) continue;
            p->refused_at = 0;
        }
        p->dialing = 1;
        pthread_mutex_unlock(&pair_lock);
        int refused;
        struct shoal_mux *m = dial(pe, deadline, &refused, lost, reason, len);
        int ok = 0;
        if (m) {
            *lost = 0;
            shoal_tls_server_channel(m, 1);
            ok = ride(c, m, 0, deadline, reason, len) == 0;
        }
        pthread_mutex_lock(&pair_lock);
        p->dialing = 0;
        if (ok) {
            p->mine = m;
            pthread_cond_broadcast(&pair_changed);
            pthread_mutex_unlock(&pair_lock);
            return 0;
        }
        if (m) keep_other(m, 1);
        if (refused && shoal_now_s() < deadline) {
            p->refused_at = shoal_now_s();
            continue;
        }
        pthread_mutex_unlock(&pair_lock);
        if (refused) snprintf(reason, len, "the peer refused this PE's pair connection until the deadline");
        return -1;
    }
}

struct shoal_mux *shoal_tls_pair_accept(int fd, double seconds, int *pe, char *reason, size_t len)
{
    unsigned char preamble[PREAMBLE];
    const double deadline = shoal_now_s() + seconds;
    if (read_within(fd, preamble, sizeof preamble, deadline) != 0 || memcmp(preamble + 1, "HP1", 3) != 0) {
        snprintf(reason, len, "not a pair connection's opening");
        return NULL;
    }
    const uint32_t from = (uint32_t)preamble[4] | (uint32_t)preamble[5] << 8 | (uint32_t)preamble[6] << 16 |
                          (uint32_t)preamble[7] << 24;
    /* Answered whatever this PE's own setting: it decides only how this PE
     * opens its streams, and hosts may differ (auto, the tls module). */
    if (from >= (uint32_t)shoal_tls.n_pes || (int)from == shoal_tls.my_pe) {
        snprintf(reason, len, "a pair connection from no PE of the job (%u)", from);
        return NULL;
    }
    struct pair *p = &pairs[from];
    pthread_mutex_lock(&pair_lock);
    /* The lower PE's dial wins; one connection from each peer at most once
     * its handshake proved it the peer's. */
    const int refuse = p->theirs || ((p->mine || p->dialing) && shoal_tls.my_pe < (int)from);
    struct shoal_mux *m = NULL;
    const char answer = refuse ? REFUSE : ACCEPT;
    if (send(fd, &answer, 1, MSG_NOSIGNAL) == 1 && !refuse) m = shoal_mux_new(fd);
    if (m) p->pending++;
    pthread_mutex_unlock(&pair_lock);
    if (!m)
        snprintf(reason, len, refuse ? "PE %u's pair connection refused: one is open or opening" : "cannot answer PE %u",
                 from);
    *pe = (int)from;
    return m;
}

void shoal_tls_pair_accepted(int pe, struct shoal_mux *m, int ok)
{
    pthread_mutex_lock(&pair_lock);
    struct pair *p = &pairs[pe];
    p->pending--;
    if (ok && !p->theirs && !p->mine)
        p->theirs = m;
    else
        keep_other(m, !ok); /* a stranger's, or the peer's second (both dials went through) */
    pthread_cond_broadcast(&pair_changed);
    pthread_mutex_unlock(&pair_lock);
}

void shoal_tls_pair_shutdown(void)
{
    pthread_mutex_lock(&pair_lock);
    for (int pe = 0; pairs && pe < shoal_tls.n_pes; pe++) {
        if (pairs[pe].mine) shoal_mux_shutdown(pairs[pe].mine);
        if (pairs[pe].theirs) shoal_mux_shutdown(pairs[pe].theirs);
    }
    for (struct other_mux *o = others; o; o = o->next) shoal_mux_shutdown(o->mux);
    pthread_mutex_unlock(&pair_lock);
}

void shoal_tls_pair_free(void)
{
    pthread_mutex_lock(&pair_lock);
    for (int pe = 0; pairs && pe < shoal_tls.n_pes; pe++) {
        shoal_mux_free(pairs[pe].mine);
        shoal_mux_free(pairs[pe].theirs);
    }
    free(pairs);
    pairs = NULL;
    while (others) {
        struct other_mux *o = others;
        others = o->next;
        shoal_mux_free(o->mux);
        free(o);
    }
    pthread_mutex_unlock(&pair_lock);
}
