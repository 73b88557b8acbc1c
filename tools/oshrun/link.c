/* link.c: framed messages over one TCP connection between oshrun
 * instances, through TLS when there is an SSL object. Sockets are
 * non-blocking; the event loop reads with oshrun_link_fill and takes whole
 * frames with oshrun_link_next. Frames longer than OSHRUN_NET_MAX_FRAME or
 * without the magic end the connection before anything is allocated. */
#include "net.h"
#include "oshrun.h"
#include "tls.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>

#define READ_CHUNK 65536

void oshrun_put_u32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

uint32_t oshrun_get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void oshrun_link_init(struct oshrun_link *l, int fd, SSL *ssl, int node, const char *peer)
{
    memset(l, 0, sizeof *l);
    l->fd = fd;
    l->ssl = ssl;
    l->node = node;
    snprintf(l->peer, sizeof l->peer, "%s", peer ? peer : "?");
}

void oshrun_link_close(struct oshrun_link *l)
{
    if (l->ssl) {
        if (!l->eof && !l->tls_failed) SSL_shutdown(l->ssl); /* close_notify; no wait for the reply */
        SSL_free(l->ssl);
        ERR_clear_error();
    }
    if (l->fd >= 0) close(l->fd);
    free(l->rx);
    l->ssl = NULL;
    l->fd = -1;
    l->rx = NULL;
    l->rx_len = l->rx_cap = l->rx_taken = 0;
}

/* Bytes the buffer must be able to hold: the frame in progress, or a chunk. */
static size_t wanted_cap(const struct oshrun_link *l)
{
    size_t want = l->rx_len + READ_CHUNK;
    if (l->rx_len - l->rx_taken >= OSHRUN_NET_HEADER) {
        size_t frame = OSHRUN_NET_HEADER + (size_t)oshrun_get_u32(l->rx + l->rx_taken + 8);
        if (frame <= OSHRUN_NET_MAX_FRAME + OSHRUN_NET_HEADER && l->rx_taken + frame > want)
            want = l->rx_taken + frame;
    }
    return want;
}

int oshrun_link_fill(struct oshrun_link *l)
{
    while (l->fd >= 0 && !l->eof) {
        if (l->rx_cap - l->rx_len < READ_CHUNK / 4) {
            size_t cap = wanted_cap(l);
            if (cap > OSHRUN_NET_MAX_FRAME + OSHRUN_NET_HEADER + 2 * READ_CHUNK) return 1; /* take frames first */
            unsigned char *b = realloc(l->rx, cap);
            if (!b) {
                snprintf(l->why, sizeof l->why, "out of memory for a %zu-byte message", cap);
                return -1;
            }
            l->rx = b;
            l->rx_cap = cap;
        }
        size_t room = l->rx_cap - l->rx_len;
        if (room > READ_CHUNK * 16) room = READ_CHUNK * 16;
        if (l->ssl) {
            ERR_clear_error();
            errno = 0;
            int r = SSL_read(l->ssl, l->rx + l->rx_len, (int)room);
            if (r > 0) {
                l->rx_len += (size_t)r;
                l->last_rx = oshrun_now();
                continue;
            }
            int e = SSL_get_error(l->ssl, r);
            if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) return 0;
            if (e == SSL_ERROR_ZERO_RETURN || (e == SSL_ERROR_SYSCALL && ERR_peek_error() == 0 && errno == 0)) {
                snprintf(l->why, sizeof l->why, "connection closed");
                ERR_clear_error();
            } else {
                char reason[128];
                oshrun_tls_reason(l->ssl, r, reason, sizeof reason);
                l->tls_failed = e == SSL_ERROR_SSL && strcmp(reason, "connection closed") != 0;
                snprintf(l->why, sizeof l->why, "%s%s", l->tls_failed ? "TLS error: " : "", reason);
            }
        } else {
            ssize_t r = recv(l->fd, l->rx + l->rx_len, room, 0);
            if (r > 0) {
                l->rx_len += (size_t)r;
                l->last_rx = oshrun_now();
                continue;
            }
            if (r < 0 && errno == EINTR) continue;
            if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
            snprintf(l->why, sizeof l->why, "%s", r == 0 ? "connection closed" : strerror(errno));
        }
        l->eof = 1;
    }
    return -1;
}

int oshrun_link_has_frame(const struct oshrun_link *l)
{
    size_t left = l->rx_len - l->rx_taken;
    if (l->fd < 0 || left < OSHRUN_NET_HEADER) return 0;
    return left - OSHRUN_NET_HEADER >= oshrun_get_u32(l->rx + l->rx_taken + 8);
}

int oshrun_link_next(struct oshrun_link *l, struct oshrun_frame *f)
{
    if (l->rx_taken) {
        memmove(l->rx, l->rx + l->rx_taken, l->rx_len - l->rx_taken);
        l->rx_len -= l->rx_taken;
        l->rx_taken = 0;
    }
    if (l->rx_len < OSHRUN_NET_HEADER) return 0;
    uint32_t len = oshrun_get_u32(l->rx + 8);
    if (oshrun_get_u32(l->rx) != OSHRUN_NET_MAGIC || len > OSHRUN_NET_MAX_FRAME) {
        /* TLS records where plaintext frames belong: TLS is on there, off here. */
        if (oshrun_stream_start(l->rx, 4) == OSHRUN_START_TLS && !l->ssl)
            snprintf(l->why, sizeof l->why, "TLS mismatch: it speaks TLS, but TLS is off here (SHMEM_BOOTSTRAP_TLS=0); "
                     "set the same SHMEM_BOOTSTRAP_TLS on every node");
        else
            snprintf(l->why, sizeof l->why, "%s", len > OSHRUN_NET_MAX_FRAME ? "message too large" : "not an oshrun peer");
        return -1;
    }
    if (l->rx_len - OSHRUN_NET_HEADER < len) return 0;
    f->type = oshrun_get_u32(l->rx + 4);
    f->len = len;
    f->payload = l->rx + OSHRUN_NET_HEADER;
    l->rx_taken = OSHRUN_NET_HEADER + len;
    return 1;
}

/* Waits for the socket to take more (or for the TLS layer's need); drains
 * incoming data meanwhile. 0, or -1 at the deadline. */
static int wait_io(struct oshrun_link *l, int want_read, double deadline)
{
    double left = deadline - oshrun_now();
    struct pollfd p = {.fd = l->fd, .events = (short)(want_read ? POLLIN : POLLOUT | POLLIN)};
    if (left <= 0) return -1;
    int n = poll(&p, 1, (int)(left * 1000.0) + 1);
    if (n < 0 && errno != EINTR) return -1;
    if (n > 0 && !want_read && (p.revents & POLLIN) && !l->eof) {
        if (oshrun_link_fill(l) == 1) { /* buffer full: wait for room alone */
            p.events = POLLOUT;
            if (poll(&p, 1, 1000) < 0 && errno != EINTR) return -1;
        }
    }
    return 0;
}

static int write_all(struct oshrun_link *l, const unsigned char *p, size_t n, double deadline)
{
    while (n > 0) {
        size_t chunk = n > (1u << 30) ? (1u << 30) : n;
        int want_read = 0;
        if (l->ssl) {
            ERR_clear_error();
            int r = SSL_write(l->ssl, p, (int)chunk);
            if (r > 0) {
                p += r;
                n -= (size_t)r;
                continue;
            }
            int e = SSL_get_error(l->ssl, r);
            if (e != SSL_ERROR_WANT_WRITE && e != SSL_ERROR_WANT_READ) {
                char reason[128];
                oshrun_tls_reason(l->ssl, r, reason, sizeof reason);
                snprintf(l->why, sizeof l->why, "%s", reason);
                return -1;
            }
            want_read = e == SSL_ERROR_WANT_READ;
        } else {
            ssize_t r = send(l->fd, p, chunk, MSG_NOSIGNAL);
            if (r > 0) {
                p += r;
                n -= (size_t)r;
                continue;
            }
            if (r < 0 && errno == EINTR) continue;
            if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
                snprintf(l->why, sizeof l->why, "%s", strerror(errno));
                return -1;
            }
        }
        if (wait_io(l, want_read, deadline) != 0) {
            snprintf(l->why, sizeof l->why, "timed out sending to it");
            return -1;
        }
    }
    return 0;
}

int oshrun_link_send(struct oshrun_link *l, uint32_t type, const void *a, size_t alen, const void *b, size_t blen,
                     double deadline)
{
    unsigned char hdr[OSHRUN_NET_HEADER];
    if (l->fd < 0) return -1;
    if (alen + blen > OSHRUN_NET_MAX_FRAME) {
        snprintf(l->why, sizeof l->why, "message too large");
        return -1;
    }
    oshrun_put_u32(hdr, OSHRUN_NET_MAGIC);
    oshrun_put_u32(hdr + 4, type);
    oshrun_put_u32(hdr + 8, (uint32_t)(alen + blen));
    if (write_all(l, hdr, sizeof hdr, deadline) || (alen && write_all(l, a, alen, deadline)) ||
        (blen && write_all(l, b, blen, deadline)))
        return -1;
    return 0;
}

int oshrun_link_wait(struct oshrun_link *l, struct oshrun_frame *f, double deadline)
{
    for (;;) {
        int r = oshrun_link_next(l, f);
        if (r != 0) return r;
        if (l->eof) return -1;
        r = oshrun_link_fill(l);
        if (r != 0) continue; /* buffer full or the end: look for a frame */
        if ((r = oshrun_link_next(l, f)) != 0) return r; /* what fill just read */
        double left = deadline - oshrun_now();
        struct pollfd p = {.fd = l->fd, .events = POLLIN};
        if (left <= 0) return 0;
        if (poll(&p, 1, (int)(left * 1000.0) + 1) < 0 && errno != EINTR) return -1;
    }
}
