/* wire.c: encode, decode, send and receive bootstrap messages (see wire.h).
 *
 * Invariants of the reader: it never reads past the end of the message in
 * progress (so descriptors of the next message stay queued in the kernel),
 * it allocates only after a header passed every check, and on any error it
 * closes every descriptor it has taken in. */
#include "boot/wire.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum { PHASE_HEADER = 0, PHASE_PAYLOAD = 1, PHASE_FDS_HEADER = 2 };

static void put_u32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

static uint32_t get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_u16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}

static uint16_t get_u16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }

const char *shoal_wire_type_name(unsigned type)
{
    switch (type) {
    case SHOAL_WIRE_HELLO: return "HELLO";
    case SHOAL_WIRE_ALLGATHER: return "ALLGATHER";
    case SHOAL_WIRE_ALLGATHER_RESULT: return "ALLGATHER_RESULT";
    case SHOAL_WIRE_FINALIZE: return "FINALIZE";
    case SHOAL_WIRE_FINALIZE_ACK: return "FINALIZE_ACK";
    case SHOAL_WIRE_ABORT: return "ABORT";
    case SHOAL_WIRE_FDS: return "FDS";
    case SHOAL_WIRE_ALLGATHER_SHARED: return "ALLGATHER_SHARED";
    }
    return "unknown";
}

const char *shoal_wire_gather_name(uint32_t kind)
{
    switch (kind) {
    case SHOAL_WIRE_GATHER_BLOB: return "allgather";
    case SHOAL_WIRE_GATHER_FDS: return "allgather_fds";
    case SHOAL_WIRE_GATHER_BARRIER: return "barrier";
    }
    return "unknown collective";
}

void shoal_wire_encode_header(unsigned char out[SHOAL_WIRE_HEADER_SIZE], unsigned type, uint32_t len, uint32_t nfds)
{
    put_u32(out, SHOAL_WIRE_MAGIC);
    put_u16(out + 4, (uint16_t)SHOAL_WIRE_VERSION);
    put_u16(out + 6, (uint16_t)type);
    put_u32(out + 8, len);
    put_u32(out + 12, nfds);
}

shoal_status_t shoal_wire_decode_header(const void *buf, size_t len, struct shoal_wire_header *out)
{
    const unsigned char *p = buf;
    struct shoal_wire_header h;
    if (!buf || !out || len < SHOAL_WIRE_HEADER_SIZE) return SHOAL_ERR_PROTO;
    h.magic = get_u32(p);
    h.version = get_u16(p + 4);
    h.type = get_u16(p + 6);
    h.len = get_u32(p + 8);
    h.nfds = get_u32(p + 12);
    if (h.magic != SHOAL_WIRE_MAGIC || h.version != SHOAL_WIRE_VERSION) return SHOAL_ERR_PROTO;
    if (h.len > SHOAL_WIRE_MAX_PAYLOAD || h.nfds > SHOAL_WIRE_MAX_FDS) return SHOAL_ERR_PROTO;
    switch (h.type) {
    case SHOAL_WIRE_HELLO:
        if (h.len != SHOAL_WIRE_HELLO_SIZE || h.nfds) return SHOAL_ERR_PROTO;
        break;
    case SHOAL_WIRE_ALLGATHER:
        if (h.len < 4) return SHOAL_ERR_PROTO;
        break;
    case SHOAL_WIRE_ALLGATHER_RESULT: break;
    case SHOAL_WIRE_FINALIZE:
    case SHOAL_WIRE_FINALIZE_ACK:
        if (h.len || h.nfds) return SHOAL_ERR_PROTO;
        break;
    case SHOAL_WIRE_ABORT:
        if (h.len < 4 || h.len > 4 + SHOAL_WIRE_MAX_REASON || h.nfds) return SHOAL_ERR_PROTO;
        break;
    case SHOAL_WIRE_FDS:
        if (h.len || h.nfds < 1 || h.nfds > SHOAL_WIRE_FDS_PER_MSG) return SHOAL_ERR_PROTO;
        break;
    case SHOAL_WIRE_ALLGATHER_SHARED:
        if (h.len != SHOAL_WIRE_SHARED_SIZE || h.nfds != 1) return SHOAL_ERR_PROTO;
        break;
    default: return SHOAL_ERR_PROTO;
    }
    *out = h;
    return SHOAL_OK;
}

void shoal_wire_encode_hello(unsigned char out[SHOAL_WIRE_HELLO_SIZE], const struct shoal_wire_hello *hello)
{
    put_u32(out, hello->rank);
    put_u32(out + 4, hello->size);
    put_u32(out + 8, hello->pid);
}

shoal_status_t shoal_wire_decode_hello(const void *buf, size_t len, struct shoal_wire_hello *out)
{
    const unsigned char *p = buf;
    if (!buf || !out || len != SHOAL_WIRE_HELLO_SIZE) return SHOAL_ERR_PROTO;
    out->rank = get_u32(p);
    out->size = get_u32(p + 4);
    out->pid = get_u32(p + 8);
    if (out->size == 0 || out->rank >= out->size || out->pid == 0 || out->pid > INT_MAX) return SHOAL_ERR_PROTO;
    return SHOAL_OK;
}

void shoal_wire_encode_gather_kind(unsigned char out[4], uint32_t kind) { put_u32(out, kind); }

shoal_status_t shoal_wire_decode_gather(const void *buf, size_t len, uint32_t *kind, const unsigned char **blob,
                                        size_t *bloblen)
{
    const unsigned char *p = buf;
    uint32_t k;
    if (!buf || len < 4) return SHOAL_ERR_PROTO;
    k = get_u32(p);
    if (k < SHOAL_WIRE_GATHER_BLOB || k > SHOAL_WIRE_GATHER_BARRIER) return SHOAL_ERR_PROTO;
    *kind = k;
    *blob = p + 4;
    *bloblen = len - 4;
    return SHOAL_OK;
}

void shoal_wire_encode_shared(unsigned char out[SHOAL_WIRE_SHARED_SIZE], uint32_t result_len)
{
    put_u32(out, result_len);
}

shoal_status_t shoal_wire_decode_shared(const void *buf, size_t len, uint32_t *result_len)
{
    if (!buf || len != SHOAL_WIRE_SHARED_SIZE) return SHOAL_ERR_PROTO;
    *result_len = get_u32(buf);
    if (*result_len > SHOAL_WIRE_MAX_PAYLOAD) return SHOAL_ERR_PROTO;
    return SHOAL_OK;
}

size_t shoal_wire_encode_abort(unsigned char *out, int status, const char *reason)
{
    size_t n = 0;
    put_u32(out, (uint32_t)status);
    if (reason) {
        /* One line only: stop at the first newline. */
        while (reason[n] && reason[n] != '\n' && n < SHOAL_WIRE_MAX_REASON) n++;
        memcpy(out + 4, reason, n);
    }
    return 4 + n;
}

shoal_status_t shoal_wire_decode_abort(const void *buf, size_t len, int *status, char *reason, size_t reasonlen)
{
    const unsigned char *p = buf;
    size_t n, i;
    if (!buf || len < 4 || len > 4 + SHOAL_WIRE_MAX_REASON || !reason || reasonlen == 0) return SHOAL_ERR_PROTO;
    *status = (int)get_u32(p);
    n = len - 4;
    if (n > reasonlen - 1) n = reasonlen - 1;
    for (i = 0; i < n; i++) {
        unsigned char c = p[4 + i];
        reason[i] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
    }
    reason[n] = '\0';
    return SHOAL_OK;
}

static void close_fds(int *fds, int n)
{
    for (int i = 0; i < n; i++)
        if (fds[i] >= 0) close(fds[i]);
}

void shoal_wire_msg_release(struct shoal_wire_msg *msg)
{
    if (!msg) return;
    free(msg->payload);
    if (msg->fds) {
        close_fds(msg->fds, msg->nfds);
        free(msg->fds);
    }
    memset(msg, 0, sizeof *msg);
}

void shoal_wire_reader_init(struct shoal_wire_reader *r)
{
    memset(r, 0, sizeof *r);
    r->phase = PHASE_HEADER;
}

void shoal_wire_reader_reset(struct shoal_wire_reader *r)
{
    free(r->payload);
    if (r->fds) {
        close_fds(r->fds, r->fds_got);
        free(r->fds);
    }
    close_fds(r->batch, r->batch_n);
    shoal_wire_reader_init(r);
}

/* Takes the SCM_RIGHTS descriptors of one recvmsg into the header batch;
 * any descriptor outside a header, or too many, is a protocol error. */
static shoal_status_t take_fds(struct shoal_wire_reader *r, struct msghdr *mh)
{
    shoal_status_t st = SHOAL_OK;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        int n = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        const unsigned char *data = CMSG_DATA(c);
        for (int i = 0; i < n; i++) {
            int fd;
            memcpy(&fd, data + (size_t)i * sizeof fd, sizeof fd);
            if (r->phase == PHASE_PAYLOAD || r->batch_n >= SHOAL_WIRE_FDS_PER_MSG) {
                close(fd);
                st = SHOAL_ERR_PROTO;
            } else {
                r->batch[r->batch_n++] = fd;
            }
        }
    }
    if (mh->msg_flags & MSG_CTRUNC) st = SHOAL_ERR_PROTO;
    return st;
}

/* A header is complete: validate it and move its descriptor batch over. */
static shoal_status_t finish_header(struct shoal_wire_reader *r)
{
    struct shoal_wire_header h;
    if (shoal_wire_decode_header(r->hdr, sizeof r->hdr, &h) != SHOAL_OK) return SHOAL_ERR_PROTO;
    if (r->phase == PHASE_HEADER) {
        if (h.type == SHOAL_WIRE_FDS) return SHOAL_ERR_PROTO;
        uint32_t first = h.nfds < SHOAL_WIRE_FDS_PER_MSG ? h.nfds : SHOAL_WIRE_FDS_PER_MSG;
        if ((uint32_t)r->batch_n != first) return SHOAL_ERR_PROTO;
        r->head = h;
        if (h.len) {
            r->payload = malloc(h.len);
            if (!r->payload) return SHOAL_ERR_NOMEM;
        }
        if (h.nfds) {
            r->fds = malloc(h.nfds * sizeof(int));
            if (!r->fds) return SHOAL_ERR_NOMEM;
        }
    } else {
        if (h.type != SHOAL_WIRE_FDS || (uint32_t)r->batch_n != h.nfds ||
            (uint32_t)r->fds_got + h.nfds > r->head.nfds)
            return SHOAL_ERR_PROTO;
    }
    if (r->batch_n) memcpy(r->fds + r->fds_got, r->batch, (size_t)r->batch_n * sizeof(int));
    r->fds_got += r->batch_n;
    r->batch_n = 0;
    r->hdr_got = 0;
    r->phase = PHASE_PAYLOAD;
    return SHOAL_OK;
}

static int message_done(const struct shoal_wire_reader *r)
{
    return r->phase == PHASE_PAYLOAD && r->payload_got == r->head.len && (uint32_t)r->fds_got == r->head.nfds;
}

shoal_status_t shoal_wire_read(struct shoal_wire_reader *r, int sock, int blocking, struct shoal_wire_msg *out,
                               int *complete)
{
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(sizeof(int) * SHOAL_WIRE_FDS_PER_MSG)];
    } ctl;
    shoal_status_t st;
    *complete = 0;
    for (;;) {
        if (message_done(r)) {
            out->type = r->head.type;
            out->payload = r->payload;
            out->len = r->head.len;
            out->fds = r->fds;
            out->nfds = r->fds_got;
            r->payload = NULL;
            r->fds = NULL;
            shoal_wire_reader_init(r);
            *complete = 1;
            return SHOAL_OK;
        }
        if (r->phase == PHASE_PAYLOAD && r->payload_got == r->head.len) r->phase = PHASE_FDS_HEADER;

        struct iovec iov;
        if (r->phase == PHASE_PAYLOAD) {
            iov.iov_base = r->payload + r->payload_got;
            iov.iov_len = r->head.len - r->payload_got;
        } else {
            iov.iov_base = r->hdr + r->hdr_got;
            iov.iov_len = SHOAL_WIRE_HEADER_SIZE - r->hdr_got;
        }
        struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf};
        ssize_t n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | (blocking ? 0 : MSG_DONTWAIT));
        if (n < 0) {
            if (errno == EINTR) continue;
            if (!blocking && (errno == EAGAIN || errno == EWOULDBLOCK)) return SHOAL_OK;
            st = (errno == ECONNRESET) ? SHOAL_ERR_CLOSED : SHOAL_ERR_SYS;
            int saved = errno;
            shoal_wire_reader_reset(r);
            errno = saved;
            return st;
        }
        st = take_fds(r, &mh);
        if (st == SHOAL_OK && n == 0) st = SHOAL_ERR_CLOSED;
        if (st != SHOAL_OK) {
            shoal_wire_reader_reset(r);
            return st;
        }
        if (r->phase == PHASE_PAYLOAD) {
            r->payload_got += (size_t)n;
        } else {
            r->hdr_got += (size_t)n;
            if (r->hdr_got == SHOAL_WIRE_HEADER_SIZE) {
                st = finish_header(r);
                if (st != SHOAL_OK) {
                    shoal_wire_reader_reset(r);
                    return st;
                }
            }
        }
    }
}

shoal_status_t shoal_wire_recv(int sock, struct shoal_wire_msg *out)
{
    struct shoal_wire_reader r;
    int complete = 0;
    shoal_status_t st;
    shoal_wire_reader_init(&r);
    st = shoal_wire_read(&r, sock, 1, out, &complete);
    if (st == SHOAL_OK && !complete) {
        shoal_wire_reader_reset(&r);
        return SHOAL_ERR_PROTO;
    }
    return st;
}

static shoal_status_t wait_writable(int sock)
{
    struct pollfd p = {.fd = sock, .events = POLLOUT};
    for (;;) {
        int n = poll(&p, 1, -1);
        if (n > 0) return SHOAL_OK;
        if (n < 0 && errno != EINTR) return SHOAL_ERR_SYS;
    }
}

/* Sends bytes of iov (advancing it), the descriptors riding on the first
 * byte that goes out. */
static shoal_status_t send_iov(int sock, struct iovec *iov, int iovcnt, const int *fds, int nfds)
{
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(sizeof(int) * SHOAL_WIRE_FDS_PER_MSG)];
    } ctl;
    int fds_pending = nfds > 0;
    while (iovcnt > 0) {
        if (iov->iov_len == 0) {
            iov++;
            iovcnt--;
            continue;
        }
        struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)iovcnt};
        if (fds_pending) {
            memset(ctl.buf, 0, sizeof ctl.buf);
            mh.msg_control = ctl.buf;
            mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
            struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
            c->cmsg_level = SOL_SOCKET;
            c->cmsg_type = SCM_RIGHTS;
            c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
            memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nfds);
        }
        ssize_t n = sendmsg(sock, &mh, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                if (wait_writable(sock) != SHOAL_OK) return SHOAL_ERR_SYS;
                continue;
            }
            return (errno == EPIPE || errno == ECONNRESET) ? SHOAL_ERR_CLOSED : SHOAL_ERR_SYS;
        }
        fds_pending = 0;
        size_t left = (size_t)n;
        while (iovcnt > 0 && left >= iov->iov_len) {
            left -= iov->iov_len;
            iov++;
            iovcnt--;
        }
        if (iovcnt > 0) {
            iov->iov_base = (char *)iov->iov_base + left;
            iov->iov_len -= left;
        }
    }
    return SHOAL_OK;
}

shoal_status_t shoal_wire_send(int sock, unsigned type, const struct iovec *iov, int iovcnt, const int *fds,
                               int nfds)
{
    unsigned char hdr[SHOAL_WIRE_HEADER_SIZE];
    struct iovec v[9];
    size_t len = 0;
    shoal_status_t st;
    if (iovcnt < 0 || iovcnt > 8 || nfds < 0 || (uint32_t)nfds > SHOAL_WIRE_MAX_FDS || (nfds && !fds))
        return SHOAL_ERR_INVAL;
    for (int i = 0; i < iovcnt; i++) {
        if (iov[i].iov_len > SHOAL_WIRE_MAX_PAYLOAD - len) return SHOAL_ERR_RANGE;
        len += iov[i].iov_len;
    }
    int first = nfds < SHOAL_WIRE_FDS_PER_MSG ? nfds : SHOAL_WIRE_FDS_PER_MSG;
    shoal_wire_encode_header(hdr, type, (uint32_t)len, (uint32_t)nfds);
    /* The header goes in its own sendmsg so its descriptors are attached to
     * the header's bytes, where the reader expects them. */
    v[0].iov_base = hdr;
    v[0].iov_len = sizeof hdr;
    st = send_iov(sock, v, 1, fds, first);
    if (st != SHOAL_OK) return st;
    if (iovcnt > 0) {
        memcpy(v, iov, (size_t)iovcnt * sizeof *iov);
        st = send_iov(sock, v, iovcnt, NULL, 0);
        if (st != SHOAL_OK) return st;
    }
    for (int done = first; done < nfds;) {
        int batch = nfds - done < SHOAL_WIRE_FDS_PER_MSG ? nfds - done : SHOAL_WIRE_FDS_PER_MSG;
        shoal_wire_encode_header(hdr, SHOAL_WIRE_FDS, 0, (uint32_t)batch);
        v[0].iov_base = hdr;
        v[0].iov_len = sizeof hdr;
        st = send_iov(sock, v, 1, fds + done, batch);
        if (st != SHOAL_OK) return st;
        done += batch;
    }
    return SHOAL_OK;
}
