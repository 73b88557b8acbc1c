/* tls_mux.c: two byte streams over one TCP connection (tls_mux.h). */
#include "transport/tls/tls_mux.h"
#include "util/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* What one receive takes at most: many small frames (requests, ACKs) in
 * one system call. */
#define STAGE_SIZE ((size_t)64 * 1024)
#define HEADER 4
#define CHANNEL_BIT 0x80000000u

/* Bytes of one channel taken in and not yet read: [start, end) of data. */
struct channel {
    char *data;
    size_t start, end, cap;
    int wake_fd;  /* eventfd: bytes were buffered (or the connection ended) while its reader slept */
    int sleeping; /* its reader sleeps or is about to (under read_lock) */
    /* A thread of this channel reads through a message, taking in the
     * other channel's bytes as they come (shoal_mux_reading_begin). */
    int reading;
    int delegated; /* its sleeping reader left the socket to the other's (under read_lock) */
};

struct shoal_mux {
    int fd;
    pthread_mutex_t read_lock;  /* the socket's receiving side, the frame state and the buffers */
    pthread_mutex_t write_lock; /* one frame at a time on the wire */
    struct channel ch[2];
    unsigned char header[HEADER];
    size_t header_got;
    int cur;     /* channel of the frame being received */
    size_t left; /* its bytes still to come; 0: a header comes next */
    char *stage;
    /* Set under read_lock (atomic stores), read under it or atomically. */
    int ended;   /* the peer closed the connection */
    int error;   /* errno of a failure, or EPROTO for a malformed frame */
};

struct shoal_mux *shoal_mux_new(int fd)
{
    struct shoal_mux *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->fd = fd;
    m->ch[0].wake_fd = m->ch[1].wake_fd = -1;
    m->stage = malloc(STAGE_SIZE);
    int ok = m->stage != NULL;
    for (int c = 0; ok && c < 2; c++) ok = (m->ch[c].wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) >= 0;
    const int fl = ok ? fcntl(fd, F_GETFL) : -1;
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0) {
        const int saved = errno;
        for (int c = 0; c < 2; c++)
            if (m->ch[c].wake_fd >= 0) close(m->ch[c].wake_fd);
        free(m->stage);
        free(m);
        errno = saved;
        return NULL;
    }
    pthread_mutex_init(&m->read_lock, NULL);
    pthread_mutex_init(&m->write_lock, NULL);
    return m;
}

void shoal_mux_free(struct shoal_mux *m)
{
    if (!m) return;
    close(m->fd);
    for (int c = 0; c < 2; c++) {
        close(m->ch[c].wake_fd);
        free(m->ch[c].data);
    }
    pthread_mutex_destroy(&m->read_lock);
    pthread_mutex_destroy(&m->write_lock);
    free(m->stage);
    free(m);
}

int shoal_mux_fd(const struct shoal_mux *m) { return m->fd; }

static void wake(struct channel *c)
{
    if (!c->sleeping) return;
    c->sleeping = 0;
    const uint64_t one = 1;
    /* A full counter already wakes the reader. */
    if (write(c->wake_fd, &one, sizeof one) < 0) return;
}

/* The connection ended or failed: every reader must see it. */
static void finish(struct shoal_mux *m, int error)
{
    /* Stored atomically: writers look without the read lock (over). */
    if (error && !m->error) __atomic_store_n(&m->error, error, __ATOMIC_RELEASE);
    if (!error) __atomic_store_n(&m->ended, 1, __ATOMIC_RELEASE);
    wake(&m->ch[0]);
    wake(&m->ch[1]);
}

static int append(struct channel *c, const char *p, size_t n)
{
    if (c->end + n > c->cap) {
        const size_t held = c->end - c->start;
        if (c->start) memmove(c->data, c->data + c->start, held);
        c->start = 0;
        c->end = held;
        if (held + n > c->cap) {
            size_t cap = c->cap ? c->cap : STAGE_SIZE;
            while (cap < held + n) cap *= 2;
            char *grown = realloc(c->data, cap);
            if (!grown) return -1;
            c->data = grown;
            c->cap = cap;
        }
    }
    memcpy(c->data + c->end, p, n);
    c->end += n;
    return 0;
}

/* A receive that brought nothing: the end, a failure, or nothing there yet
 * (0). Called with read_lock held. */
static int received_nothing(struct shoal_mux *m, ssize_t n)
{
    if (n == 0) {
        finish(m, 0);
        return 1;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return 0;
    finish(m, errno);
    return 1;
}

/* Takes in what the socket holds, without blocking: bytes of channel want
 * into out (up to len) while they are the oldest of that channel, all
 * others into their channel's buffer, waking its sleeping reader. Returns
 * the bytes given to out; *progress says whether anything was taken in (or
 * the connection ended). Called with read_lock held and want's buffer empty
 * when out is given; want is -1 for a writer taking in for the readers. */
static size_t take_in(struct shoal_mux *m, int want, char *out, size_t len, int *progress)
{
    *progress = 0;
    if (out && m->left && m->cur == want) {
        /* The rest of a frame of the caller's: straight into its buffer. */
        const ssize_t n = recv(m->fd, out, len < m->left ? len : m->left, MSG_DONTWAIT);
        if (n > 0) {
            m->left -= (size_t)n;
            *progress = 1;
            return (size_t)n;
        }
        *progress = received_nothing(m, n);
        return 0;
    }
    const ssize_t n = recv(m->fd, m->stage, STAGE_SIZE, MSG_DONTWAIT);
    if (n <= 0) {
        *progress = received_nothing(m, n);
        return 0;
    }
    *progress = 1;
    size_t given = 0, i = 0;
    int buffered[2] = {0, 0};
    while (i < (size_t)n) {
        if (!m->left) {
            while (m->header_got < HEADER && i < (size_t)n) m->header[m->header_got++] = (unsigned char)m->stage[i++];
            if (m->header_got < HEADER) break;
            const uint32_t h = (uint32_t)m->header[0] | (uint32_t)m->header[1] << 8 | (uint32_t)m->header[2] << 16 |
                               (uint32_t)m->header[3] << 24;
            m->header_got = 0;
            m->cur = (h & CHANNEL_BIT) != 0;
            m->left = h & ~CHANNEL_BIT;
            if (!m->left || m->left > SHOAL_MUX_FRAME_MAX) {
                finish(m, EPROTO); /* nothing after it can be trusted to be in step */
                return given;
            }
            continue;
        }
        const size_t k = m->left < (size_t)n - i ? m->left : (size_t)n - i;
        size_t direct = 0;
        if (out && m->cur == want && given < len) {
            direct = k < len - given ? k : len - given;
            memcpy(out + given, m->stage + i, direct);
            given += direct;
        }
        if (k > direct) {
            if (append(&m->ch[m->cur], m->stage + i + direct, k - direct) != 0) {
                finish(m, ENOMEM);
                return given;
            }
            buffered[m->cur] = 1;
        }
        i += k;
        m->left -= k;
    }
    for (int c = 0; c < 2; c++)
        if (buffered[c] && c != want) wake(&m->ch[c]);
    return given;
}

/* Sleeps until the socket is readable, ch's reader is woken, or
 * timeout_ms (-1: no limit) passes. Called and returns with read_lock
 * held; ch's sleeping flag is raised under it, so whoever buffers bytes
 * for ch meanwhile wakes this thread. */
static void sleep_locked(struct shoal_mux *m, int ch, int timeout_ms)
{
    struct channel *c = &m->ch[ch];
    c->sleeping = 1;
    pthread_mutex_unlock(&m->read_lock);
    struct pollfd p[2] = {{.fd = m->fd, .events = POLLIN}, {.fd = c->wake_fd, .events = POLLIN}};
    poll(p, 2, timeout_ms);
    shoal_mux_sleep_end(m, ch);
    pthread_mutex_lock(&m->read_lock);
}

ssize_t shoal_mux_read(struct shoal_mux *m, int ch, void *buf, size_t len, int wait)
{
    if (!len) return 0;
    struct channel *c = &m->ch[ch];
    pthread_mutex_lock(&m->read_lock);
    for (;;) {
        if (c->end > c->start) {
            const size_t n = c->end - c->start < len ? c->end - c->start : len;
            memcpy(buf, c->data + c->start, n);
            c->start += n;
            if (c->start == c->end) c->start = c->end = 0;
            pthread_mutex_unlock(&m->read_lock);
            return (ssize_t)n;
        }
        if (m->error || m->ended) {
            const int error = m->error;
            pthread_mutex_unlock(&m->read_lock);
            if (!error) return 0;
            errno = error;
            return -1;
        }
        int progress;
        const size_t got = take_in(m, ch, buf, len, &progress);
        if (got) {
            pthread_mutex_unlock(&m->read_lock);
            return (ssize_t)got;
        }
        if (progress) continue;
        if (!wait) {
            pthread_mutex_unlock(&m->read_lock);
            errno = EAGAIN;
            return -1;
        }
        sleep_locked(m, ch, -1);
    }
}

int shoal_mux_sleep_begin(struct shoal_mux *m, int ch, int *socket_too)
{
    struct channel *c = &m->ch[ch];
    pthread_mutex_lock(&m->read_lock);
    const int nothing = c->end == c->start && !m->error && !m->ended;
    if (nothing) c->sleeping = 1;
    /* Decided under the lock that shoal_mux_reading_end takes: either it
     * sees this sleeper left the socket to it, or this sees it done. */
    c->delegated = nothing && __atomic_load_n(&m->ch[!ch].reading, __ATOMIC_RELAXED);
    *socket_too = !c->delegated;
    pthread_mutex_unlock(&m->read_lock);
    return nothing ? c->wake_fd : -1;
}

void shoal_mux_sleep_end(struct shoal_mux *m, int ch)
{
    struct channel *c = &m->ch[ch];
    uint64_t count;
    pthread_mutex_lock(&m->read_lock);
    c->sleeping = 0;
    c->delegated = 0;
    pthread_mutex_unlock(&m->read_lock);
    if (read(c->wake_fd, &count, sizeof count) < 0) count = 0; /* non-blocking: a wake-up left over */
}

int shoal_mux_await(struct shoal_mux *m, int ch, int timeout_ms)
{
    struct channel *c = &m->ch[ch];
    const long long end = timeout_ms < 0 ? -1 : shoal_now_ns() / 1000000 + timeout_ms;
    pthread_mutex_lock(&m->read_lock);
    for (;;) {
        /* The other channel's bytes on the socket are no reason to stop:
         * they go to its buffer (waking its reader), and the wait goes on. */
        int progress = 1;
        while (c->end == c->start && !m->error && !m->ended && progress) take_in(m, -1, NULL, 0, &progress);
        if (c->end > c->start || m->error || m->ended) break;
        const long long left = end < 0 ? -1 : end - shoal_now_ns() / 1000000;
        if (end >= 0 && left <= 0) {
            pthread_mutex_unlock(&m->read_lock);
            return 0;
        }
        sleep_locked(m, ch, left > INT_MAX ? INT_MAX : (int)left);
    }
    pthread_mutex_unlock(&m->read_lock);
    return 1;
}

void shoal_mux_reading_begin(struct shoal_mux *m, int ch)
{
    __atomic_store_n(&m->ch[ch].reading, 1, __ATOMIC_RELAXED);
}

void shoal_mux_reading_end(struct shoal_mux *m, int ch)
{
    pthread_mutex_lock(&m->read_lock);
    __atomic_store_n(&m->ch[ch].reading, 0, __ATOMIC_RELAXED);
    /* Nobody takes in for a reader that left the socket to this one. */
    if (m->ch[!ch].delegated) wake(&m->ch[!ch]);
    pthread_mutex_unlock(&m->read_lock);
}

int shoal_mux_other_reading(const struct shoal_mux *m, int ch)
{
    return __atomic_load_n(&m->ch[!ch].reading, __ATOMIC_RELAXED);
}

size_t shoal_mux_pending(struct shoal_mux *m, int ch)
{
    pthread_mutex_lock(&m->read_lock);
    const size_t n = m->ch[ch].end - m->ch[ch].start;
    pthread_mutex_unlock(&m->read_lock);
    return n;
}

/* Whether the connection has ended or failed (a reader saw it). Without
 * the read lock: every write asks, and a reader holds that lock through
 * its receive. */
static int over(const struct shoal_mux *m)
{
    return __atomic_load_n(&m->error, __ATOMIC_ACQUIRE) || __atomic_load_n(&m->ended, __ATOMIC_ACQUIRE);
}

/* The socket is full: waits until it has room, taking in what arrives
 * meanwhile (the peer may be blocked writing to us). -1 once the
 * connection failed or ended. */
static int await_room(struct shoal_mux *m)
{
    for (;;) {
        if (over(m)) return -1;
        struct pollfd p = {.fd = m->fd, .events = POLLOUT | POLLIN};
        if (poll(&p, 1, -1) < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (p.revents & (POLLOUT | POLLERR | POLLHUP)) return 0;
        if (p.revents & POLLIN) {
            int progress;
            pthread_mutex_lock(&m->read_lock);
            take_in(m, -1, NULL, 0, &progress);
            pthread_mutex_unlock(&m->read_lock);
        }
    }
}

int shoal_mux_write(struct shoal_mux *m, int ch, const void *buf, size_t len)
{
    const char *p = buf;
    if (over(m)) {
        errno = EPIPE; /* nothing written reaches a peer that has gone */
        return -1;
    }
    pthread_mutex_lock(&m->write_lock);
    while (len) {
        const size_t n = len < SHOAL_MUX_FRAME_MAX ? len : SHOAL_MUX_FRAME_MAX;
        const uint32_t h = (uint32_t)n | (ch ? CHANNEL_BIT : 0);
        unsigned char header[HEADER] = {(unsigned char)h, (unsigned char)(h >> 8), (unsigned char)(h >> 16),
                                        (unsigned char)(h >> 24)};
        struct iovec iov[2] = {{header, HEADER}, {(void *)p, n}};
        struct msghdr msg = {.msg_iov = iov, .msg_iovlen = 2};
        size_t sent = 0;
        while (sent < HEADER + n) {
            const ssize_t k = sendmsg(m->fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
            if (k < 0) {
                if (errno == EINTR) continue;
                if ((errno == EAGAIN || errno == EWOULDBLOCK) && await_room(m) == 0) continue;
                const int saved = errno == EAGAIN || errno == EWOULDBLOCK ? EPIPE : errno;
                pthread_mutex_unlock(&m->write_lock);
                errno = saved;
                return -1;
            }
            sent += (size_t)k;
            /* Past what went out: the header first, then the data. */
            size_t skip = (size_t)k;
            while (skip && msg.msg_iovlen) {
                if (skip < msg.msg_iov->iov_len) {
                    msg.msg_iov->iov_base = (char *)msg.msg_iov->iov_base + skip;
                    msg.msg_iov->iov_len -= skip;
                    skip = 0;
                } else {
                    skip -= msg.msg_iov->iov_len;
                    msg.msg_iov++;
                    msg.msg_iovlen--;
                }
            }
        }
        p += n;
        len -= n;
    }
    pthread_mutex_unlock(&m->write_lock);
    return 0;
}

void shoal_mux_shutdown(struct shoal_mux *m)
{
    shutdown(m->fd, SHUT_RDWR);
    pthread_mutex_lock(&m->read_lock);
    finish(m, 0);
    pthread_mutex_unlock(&m->read_lock);
}
