/* tls_pair.c: one TCP connection per pair of PEs for both PEs' streams of
 * the default context (tls_mux.h says why).
 *
 * The first of two PEs to need its stream dials the other and, before any
 * TLS, sends a preamble: SHOAL_TLS_PAIR_FIRST, "HP1", its PE number (32
 * bits, little-endian). The other answers one byte, ACCEPT or REFUSE.
 * Channel 0 of an accepted connection carries the dialer's stream (a TLS
 * session, the dialer its client), channel 1 the acceptor's, once it needs
 * it. When both dial at once, the lower PE refuses the higher one's dial
 * (it has its own in flight): the higher one then waits for the lower
 * one's, which it accepts. So each pair ends up with one connection.
 *
 * The preamble is not authenticated; nothing rides the connection for this
 * PE's own stream until the dialer has finished a TLS handshake on
 * channel 0 with the job's key (shoal_tls_pair_accepted), so a stranger
 * claiming a PE number delays that PE's stream by its handshake deadline
 * at most, and gets no access. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "transport/tls/tls.h"
#include "util/log.h"

#define PREAMBLE 8
#define ACCEPT 'A'
#define REFUSE 'R'

struct pair {
    struct shoal_mux *mine;   /* the connection this PE dialed (its stream on channel 0) */
    struct shoal_mux *theirs; /* the one the peer dialed (this PE's stream on channel 1) */
    int dialing;              /* this PE's dial is in flight */
    int theirs_ready;         /* theirs passed the dialer's handshake */
    int refused;              /* the peer refused this PE's dial: it dials */
};

static struct pair *pairs;
static pthread_mutex_t pair_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pair_changed;
static int enabled;
/* Connections no pair uses (refused, failed): freed at the end, when no
 * thread can be using them. */
struct dead_mux {
    struct shoal_mux *mux;
    struct dead_mux *next;
};
static struct dead_mux *dead;

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
static void bury(struct shoal_mux *m)
{
    struct dead_mux *d = malloc(sizeof *d);
    shoal_mux_shutdown(m);
    if (!d) return; /* leaked rather than freed under a thread still using it */
    d->mux = m;
    d->next = dead;
    dead = d;
}

/* Waits until fd is readable (events POLLIN) or writable, or the deadline. */
static int await_fd(int fd, short events, double deadline)
{
    for (;;) {
        const double left = deadline - shoal_tls_now();
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
    *lost = 1;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        *lost = 0;
        snprintf(reason, len, "socket: %s%s", strerror(errno),
                 errno == EMFILE ? " (raise the limit on open files, ulimit -n)" : "");
        return NULL;
    }
    const double left = deadline - shoal_tls_now();
    if (shoal_tls_connect_within(fd, &shoal_tls.peer[pe].sin, left > 1.0 ? left : 1.0) != 0) {
        snprintf(reason, len, "connect: %s", strerror(errno));
        close(fd);
        return NULL;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
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

/* Waits for the pair's state to change, until the deadline; -1 past it. */
static int wait_change(double deadline)
{
    const double left = deadline - shoal_tls_now();
    if (left <= 0) return -1;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    const long long ns = (long long)ts.tv_nsec + (long long)(left * 1e9);
    ts.tv_sec += (time_t)(ns / 1000000000LL);
    ts.tv_nsec = (long)(ns % 1000000000LL);
    pthread_cond_timedwait(&pair_changed, &pair_lock, &ts);
    return 0;
}

int shoal_tls_pair_open(struct shoal_tls_conn *c, int pe, double deadline, int *lost, char *reason, size_t len)
{
    struct pair *p = &pairs[pe];
    *lost = 0;
    pthread_mutex_lock(&pair_lock);
    for (;;) {
        if (p->theirs && p->theirs_ready) {
            struct shoal_mux *m = p->theirs;
            pthread_mutex_unlock(&pair_lock);
            const double left = deadline - shoal_tls_now();
            SSL *ssl = shoal_tls_handshake_mux(m, 1, 0, left > 1.0 ? left : 1.0, 0, reason, len);
            if (!ssl) return -1;
            c->ssl = ssl;
            c->mux = m;
            c->fd = shoal_mux_fd(m);
            c->sigpipe = 0;
            return 0;
        }
        if (p->theirs || p->refused) {
            /* The peer's connection is on its way, or being checked. */
            if (wait_change(deadline) != 0) {
                pthread_mutex_unlock(&pair_lock);
                snprintf(reason, len, "the peer refused this PE's pair connection and opened none itself");
                return -1;
            }
            continue;
        }
        p->dialing = 1;
        pthread_mutex_unlock(&pair_lock);
        int refused;
        struct shoal_mux *m = dial(pe, deadline, &refused, lost, reason, len);
        SSL *ssl = NULL;
        if (m) {
            *lost = 0;
            const double left = deadline - shoal_tls_now();
            if (shoal_tls_server_channel(m, 1) != SHOAL_OK)
                snprintf(reason, len, "cannot start a thread for the pair connection's other stream");
            else
                ssl = shoal_tls_handshake_mux(m, 0, 0, left > 1.0 ? left : 1.0, 0, reason, len);
        }
        pthread_mutex_lock(&pair_lock);
        p->dialing = 0;
        if (ssl) {
            p->mine = m;
            pthread_cond_broadcast(&pair_changed);
            pthread_mutex_unlock(&pair_lock);
            c->ssl = ssl;
            c->mux = m;
            c->fd = shoal_mux_fd(m);
            c->sigpipe = 0;
            return 0;
        }
        if (m) bury(m);
        if (refused) {
            p->refused = 1;
            continue;
        }
        pthread_mutex_unlock(&pair_lock);
        return -1;
    }
}

struct shoal_mux *shoal_tls_pair_accept(int fd, double seconds, int *pe, char *reason, size_t len)
{
    unsigned char preamble[PREAMBLE];
    const double deadline = shoal_tls_now() + seconds;
    if (read_within(fd, preamble, sizeof preamble, deadline) != 0 || memcmp(preamble + 1, "HP1", 3) != 0) {
        snprintf(reason, len, "not a pair connection's opening");
        return NULL;
    }
    const uint32_t from = (uint32_t)preamble[4] | (uint32_t)preamble[5] << 8 | (uint32_t)preamble[6] << 16 |
                          (uint32_t)preamble[7] << 24;
    if (!enabled || from >= (uint32_t)shoal_tls.n_pes || (int)from == shoal_tls.my_pe) {
        snprintf(reason, len, "a pair connection from no PE of the job (%u)", from);
        return NULL;
    }
    struct pair *p = &pairs[from];
    pthread_mutex_lock(&pair_lock);
    /* The lower PE's dial wins; one connection from each peer at most. */
    const int refuse = p->theirs || ((p->mine || p->dialing) && shoal_tls.my_pe < (int)from);
    struct shoal_mux *m = NULL;
    const char answer = refuse ? REFUSE : ACCEPT;
    if (send(fd, &answer, 1, MSG_NOSIGNAL) == 1 && !refuse) m = shoal_mux_new(fd);
    if (m) {
        p->theirs = m;
        p->theirs_ready = 0;
        p->refused = 0;
    }
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
    if (p->theirs == m) {
        if (ok) {
            p->theirs_ready = 1;
        } else {
            p->theirs = NULL;
            bury(m);
        }
        pthread_cond_broadcast(&pair_changed);
    }
    pthread_mutex_unlock(&pair_lock);
}

void shoal_tls_pair_shutdown(void)
{
    pthread_mutex_lock(&pair_lock);
    for (int pe = 0; pairs && pe < shoal_tls.n_pes; pe++) {
        if (pairs[pe].mine) shoal_mux_shutdown(pairs[pe].mine);
        if (pairs[pe].theirs) shoal_mux_shutdown(pairs[pe].theirs);
    }
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
    while (dead) {
        struct dead_mux *d = dead;
        dead = d->next;
        shoal_mux_free(d->mux);
        free(d);
    }
    pthread_mutex_unlock(&pair_lock);
}
