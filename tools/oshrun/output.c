/* output.c: --tag-output. Each PE's stdout and stderr come through a pipe;
 * complete lines are written with a "[PE n] " prefix in one write so lines
 * of different PEs never interleave mid-line. A line longer than
 * LINE_MAX_BYTES is cut; a last line without newline is completed at end. */
#include "oshrun.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define LINE_MAX_BYTES (64 * 1024)

void oshrun_stream_init(struct oshrun_stream *s, int fd, int target)
{
    s->fd = fd;
    s->target = target;
    s->buf = NULL;
    s->len = s->cap = 0;
}

static void write_all(int fd, struct iovec *iov, int n)
{
    while (n > 0) {
        ssize_t w = writev(fd, iov, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return; /* our own stdout is gone (EPIPE): drop, keep the job going */
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
}

static void emit(struct oshrun_stream *s, int rank, const char *line, size_t len)
{
    char prefix[32];
    int plen = snprintf(prefix, sizeof prefix, "[PE %d] ", rank);
    struct iovec iov[3] = {{prefix, (size_t)plen}, {(void *)line, len}, {"\n", 1}};
    write_all(s->target, iov, 3);
}

/* Writes out every complete line in the buffer, keeping the rest. */
static void emit_lines(struct oshrun_stream *s, int rank)
{
    size_t start = 0;
    for (;;) {
        char *nl = memchr(s->buf + start, '\n', s->len - start);
        size_t end;
        if (nl)
            end = (size_t)(nl - s->buf);
        else if (s->len - start >= LINE_MAX_BYTES)
            end = start + LINE_MAX_BYTES;
        else
            break;
        emit(s, rank, s->buf + start, end - start);
        start = nl ? end + 1 : end;
    }
    memmove(s->buf, s->buf + start, s->len - start);
    s->len -= start;
}

void oshrun_stream_read(struct oshrun_stream *s, int rank)
{
    while (s->fd >= 0) {
        if (s->cap - s->len < 4096) {
            size_t cap = s->cap ? s->cap * 2 : 8192;
            char *b = realloc(s->buf, cap);
            if (!b) { /* cannot buffer more: cut the line here */
                if (s->len == 0) {
                    oshrun_stream_close(s, rank);
                    return;
                }
                emit(s, rank, s->buf, s->len);
                s->len = 0;
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
    if (s->len) emit(s, rank, s->buf, s->len);
    free(s->buf);
    if (s->fd >= 0) close(s->fd);
    oshrun_stream_init(s, -1, s->target);
}
