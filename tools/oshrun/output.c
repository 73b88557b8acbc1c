/* output.c: PE output. Each PE's stdout and stderr come through a pipe and
 * leave oshrun whole lines at a time, so lines of different PEs never
 * interleave mid-line, whether or not they carry the "[PE n] " prefix of
 * --tag-output. A line longer than LINE_MAX_BYTES is passed on in pieces;
 * a last line without newline is passed on when the PE's pipe ends (with
 * --tag-output it is completed with a newline; without, the bytes are the
 * PE's exactly). When oshrun's own output is gone (a reader such as
 * `head` exited: EPIPE) the stream stops writing and says so once. */
#include "oshrun.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define LINE_MAX_BYTES (64 * 1024)
#define TAGGED_BATCH 64 /* lines per writev with --tag-output */

void oshrun_stream_init(struct oshrun_stream *s, int fd, int target, int tag)
{
    s->fd = fd;
    s->target = target;
    s->tag = tag;
    s->broken = 0;
    s->buf = NULL;
    s->len = s->cap = 0;
}

/* 0, or the errno that stopped the write (EPIPE: the reader is gone). */
static int write_all(int fd, struct iovec *iov, int n)
{
    while (n > 0) {
        ssize_t w = writev(fd, iov, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) { /* someone made our output non-blocking */
                struct pollfd p = {.fd = fd, .events = POLLOUT};
                poll(&p, 1, 1000);
                continue;
            }
            return errno;
        }
        size_t left = (size_t)w;
        while (n > 0 && left >= iov->iov_len) {
            left -= iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + left;
            iov->iov_len -= left;
        }
    }
    return 0;
}

static void put(struct oshrun_stream *s, struct iovec *iov, int n)
{
    if (s->broken) return; /* discarded: the PE must not block on a full pipe */
    int err = write_all(s->target, iov, n);
    if (err) s->broken = err == EPIPE ? OSHRUN_STREAM_EPIPE : OSHRUN_STREAM_FAILED;
}

/* Queues one line (without its newline, which is added) behind its
 * prefix, writing a full batch out. */
static void emit_tagged(struct oshrun_stream *s, struct iovec *iov, int *n, char *prefix, size_t plen,
                        const char *line, size_t len)
{
    iov[(*n)++] = (struct iovec){prefix, plen};
    iov[(*n)++] = (struct iovec){(void *)line, len};
    iov[(*n)++] = (struct iovec){"\n", 1};
    if (*n == 3 * TAGGED_BATCH) {
        put(s, iov, *n);
        *n = 0;
    }
}

/* Writes out every complete line in the buffer (and pieces of a line that
 * outgrew LINE_MAX_BYTES), keeping the rest. */
static void emit_lines(struct oshrun_stream *s, int rank)
{
    size_t start = 0;
    if (!s->tag) {
        /* Whole lines need no rewriting: everything up to the last newline in one write. */
        char *last = memrchr(s->buf, '\n', s->len);
        size_t end = last ? (size_t)(last - s->buf) + 1 : 0;
        if (s->len - end >= LINE_MAX_BYTES) end = s->len;
        if (end) {
            struct iovec iov = {s->buf, end};
            put(s, &iov, 1);
        }
        start = end;
    } else {
        struct iovec iov[3 * TAGGED_BATCH];
        char prefix[32];
        int n = 0, plen = snprintf(prefix, sizeof prefix, "[PE %d] ", rank);
        for (;;) {
            char *nl = memchr(s->buf + start, '\n', s->len - start);
            size_t end;
            if (nl)
                end = (size_t)(nl - s->buf);
            else if (s->len - start >= LINE_MAX_BYTES)
                end = start + LINE_MAX_BYTES;
            else
                break;
            emit_tagged(s, iov, &n, prefix, (size_t)plen, s->buf + start, end - start);
            start = nl ? end + 1 : end;
        }
        if (n) put(s, iov, n);
    }
    memmove(s->buf, s->buf + start, s->len - start);
    s->len -= start;
}

/* The rest of the buffer, at the end of the PE's stream. */
static void emit_rest(struct oshrun_stream *s, int rank)
{
    if (!s->len) return;
    if (s->tag) {
        char prefix[32];
        int plen = snprintf(prefix, sizeof prefix, "[PE %d] ", rank);
        struct iovec iov[3] = {{prefix, (size_t)plen}, {s->buf, s->len}, {"\n", 1}};
        put(s, iov, 3);
    } else {
        struct iovec iov = {s->buf, s->len};
        put(s, &iov, 1);
    }
    s->len = 0;
}

void oshrun_stream_read(struct oshrun_stream *s, int rank)
{
    while (s->fd >= 0) {
        if (s->cap - s->len < 4096) {
            size_t cap = s->cap ? s->cap * 2 : 8192;
            char *b = s->cap >= 4 * LINE_MAX_BYTES ? NULL : realloc(s->buf, cap);
            if (!b) { /* cannot (or need not) buffer more: pass on what is here */
                if (s->len == 0) {
                    oshrun_stream_close(s, rank);
                    return;
                }
                emit_rest(s, rank);
                continue;
            }
            s->buf = b;
            s->cap = cap;
        }
        ssize_t n = read(s->fd, s->buf + s->len, s->cap - s->len);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        if (n <= 0) {
            oshrun_stream_close(s, rank);
            return;
        }
        s->len += (size_t)n;
        emit_lines(s, rank);
    }
}

void oshrun_stream_close(struct oshrun_stream *s, int rank)
{
    int broken = s->broken;
    emit_rest(s, rank);
    free(s->buf);
    if (s->fd >= 0) close(s->fd);
    oshrun_stream_init(s, -1, s->target, s->tag);
    s->broken = broken;
}
