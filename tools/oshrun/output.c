/* output.c: PE output. Each PE's stdout and stderr come through a pipe and
 * leave oshrun whole lines at a time, so lines of different PEs never
 * interleave mid-line, whether or not they carry the "[PE n] " prefix of
 * --tag-output. A line longer than LINE_MAX_BYTES is passed on in pieces;
 * a last line without newline is passed on when the PE's pipe ends (with
 * --tag-output it is completed with a newline; without, the bytes are the
 * PE's exactly).
 *
 * What is ready to go waits in the stream's outbox. When oshrun's output
 * is a pipe, the event loop writes it only when the pipe has room (a
 * PIPE_BUF piece at a time, which then cannot block), so a reader that
 * stops reading holds up that PE's output, never oshrun: signals,
 * --timeout and the bootstrap go on. One stream at a time may have begun
 * writing a line it could not finish (the target's owner); the others
 * wait for it. Once the reader is gone (EPIPE) output is read and
 * dropped. */
#include "oshrun.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LINE_MAX_BYTES (64 * 1024)

/* Per target (stdout, stderr): whether it is a pipe or socket (-1: not
 * yet known), and the stream in the middle of a line there. */
static int target_pipe[3] = {-1, -1, -1};
static struct oshrun_stream *owner[3];

static int is_pipe(int target)
{
    struct stat st;
    if (target < 1 || target > 2) return 0;
    if (target_pipe[target] < 0)
        target_pipe[target] = fstat(target, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));
    return target_pipe[target];
}

void oshrun_stream_init(struct oshrun_stream *s, int fd, int target, int tag)
{
    memset(s, 0, sizeof *s);
    s->fd = fd;
    s->target = target;
    s->tag = tag;
}

int oshrun_stream_pending(const struct oshrun_stream *s) { return s->olen > s->ooff && !s->broken; }

static void queue(struct oshrun_stream *s, const void *data, size_t len)
{
    if (s->broken || !len) return;
    if (s->olen + len > s->ocap) {
        size_t cap = s->ocap ? s->ocap : 8192;
        while (cap < s->olen + len) cap *= 2;
        char *b = realloc(s->obuf, cap);
        if (!b) { /* cannot queue: write what is there at once, then this */
            oshrun_stream_flush(s, 1);
            if (s->olen + len > s->ocap) {
                s->broken = OSHRUN_STREAM_FAILED;
                return;
            }
        } else {
            s->obuf = b;
            s->ocap = cap;
        }
    }
    memcpy(s->obuf + s->olen, data, len);
    s->olen += len;
}

void oshrun_stream_flush(struct oshrun_stream *s, int block)
{
    int t = s->target;
    struct oshrun_stream **own = t >= 1 && t <= 2 ? &owner[t] : NULL;
    if (own && *own && *own != s) { /* another PE's line is half written: it goes first */
        oshrun_stream_flush(*own, block);
        if (*own) return;
    }
    while (s->ooff < s->olen && !s->broken) {
        size_t n = s->olen - s->ooff;
        if (!block && is_pipe(t)) {
            struct pollfd p = {.fd = t, .events = POLLOUT};
            if (poll(&p, 1, 0) <= 0) break;
            if (n > PIPE_BUF) n = PIPE_BUF; /* fits in the room poll saw */
        }
        ssize_t w = write(t, s->obuf + s->ooff, n);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) { /* someone made our output non-blocking */
            if (!block) break;
            struct pollfd p = {.fd = t, .events = POLLOUT};
            poll(&p, 1, 1000);
            continue;
        }
        if (w < 0) {
            s->broken = errno == EPIPE ? OSHRUN_STREAM_EPIPE : OSHRUN_STREAM_FAILED;
            break;
        }
        s->ooff += (size_t)w;
    }
    if (s->ooff >= s->olen || s->broken) {
        s->ooff = s->olen = 0;
        if (own && *own == s) *own = NULL;
    } else if (own && s->ooff > 0) {
        *own = s;
    }
}

static void queue_line(struct oshrun_stream *s, int rank, const char *line, size_t len, int newline)
{
    if (s->tag) {
        char prefix[32];
        int plen = snprintf(prefix, sizeof prefix, "[PE %d] ", rank);
        queue(s, prefix, (size_t)plen);
    }
    queue(s, line, len);
    if (newline) queue(s, "\n", 1);
}

/* Queues every complete line in the buffer (and pieces of a line that
 * outgrew LINE_MAX_BYTES), keeping the rest. */
static void take_lines(struct oshrun_stream *s, int rank)
{
    size_t start = 0;
    if (!s->tag) {
        /* Whole lines need no rewriting: everything up to the last newline at once. */
        char *last = memrchr(s->buf, '\n', s->len);
        size_t end = last ? (size_t)(last - s->buf) + 1 : 0;
        if (s->len - end >= LINE_MAX_BYTES) end = s->len;
        queue(s, s->buf, end);
        start = end;
    } else {
        for (;;) {
            char *nl = memchr(s->buf + start, '\n', s->len - start);
            size_t end;
            if (nl)
                end = (size_t)(nl - s->buf);
            else if (s->len - start >= LINE_MAX_BYTES)
                end = start + LINE_MAX_BYTES;
            else
                break;
            queue_line(s, rank, s->buf + start, end - start, 1);
            start = nl ? end + 1 : end;
        }
    }
    memmove(s->buf, s->buf + start, s->len - start);
    s->len -= start;
}

/* The PE's pipe ended: the rest becomes a last line, queued. */
static void end_of_pipe(struct oshrun_stream *s, int rank)
{
    if (s->len) queue_line(s, rank, s->buf, s->len, s->tag);
    free(s->buf);
    s->buf = NULL;
    s->len = s->cap = 0;
    if (s->fd >= 0) close(s->fd);
    s->fd = -1;
    oshrun_stream_flush(s, 0);
}

void oshrun_stream_read(struct oshrun_stream *s, int rank)
{
    /* Queued output first: a PE whose output cannot leave waits (its pipe fills). */
    while (s->fd >= 0 && !oshrun_stream_pending(s)) {
        if (s->cap - s->len < 4096) {
            size_t cap = s->cap ? s->cap * 2 : 8192;
            char *b = s->cap >= 4 * LINE_MAX_BYTES ? NULL : realloc(s->buf, cap);
            if (!b) { /* cannot (or need not) buffer more: pass on what is here */
                if (s->len == 0) {
                    end_of_pipe(s, rank);
                    return;
                }
                queue_line(s, rank, s->buf, s->len, s->tag);
                s->len = 0;
                oshrun_stream_flush(s, 0);
                continue;
            }
            s->buf = b;
            s->cap = cap;
        }
        ssize_t n = read(s->fd, s->buf + s->len, s->cap - s->len);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        if (n <= 0) {
            end_of_pipe(s, rank);
            return;
        }
        s->len += (size_t)n;
        take_lines(s, rank);
        oshrun_stream_flush(s, 0);
    }
}

void oshrun_stream_close(struct oshrun_stream *s, int rank, double until)
{
    int broken, t = s->target;
    end_of_pipe(s, rank);
    if (!until) {
        oshrun_stream_flush(s, 1); /* the job is over: wait for the reader, however slow */
    } else {
        /* A stopped job's last output gets until `until`; a reader that
         * does not read by then loses it. */
        while (oshrun_stream_pending(s)) {
            double left = until - oshrun_now();
            struct pollfd p = {.fd = t, .events = POLLOUT};
            if (left <= 0 || poll(&p, 1, (int)(left * 1000.0) + 1) <= 0) break;
            oshrun_stream_flush(s, 0);
        }
    }
    if (t >= 1 && t <= 2 && owner[t] == s) owner[t] = NULL;
    broken = s->broken;
    free(s->obuf);
    oshrun_stream_init(s, -1, t, s->tag);
    s->broken = broken;
}
