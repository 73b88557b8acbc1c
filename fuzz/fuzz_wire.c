/* fuzz_wire.c: libFuzzer target for the bootstrap wire protocol
 * (src/boot/wire.c).
 *
 * 1. Every decoder (header, hello, gather, abort) runs on the whole input;
 *    whatever a decoder accepts must re-encode to the same bytes.
 * 2. The input is then replayed as a byte stream into the incremental
 *    reader through a Unix stream socketpair, as oshrun and a PE see it.
 *    The stream is a sequence of records:
 *        u8 nfds, u8 len, len bytes
 *    each written with one sendmsg carrying nfds descriptors (copies of
 *    /dev/null; at most 253, the kernel's limit, and 512 per input) by
 *    SCM_RIGHTS. After each record the reader drains the socket
 *    (non-blocking); every complete message is checked and decoded, then
 *    released. At the end the writer shuts down, the reader must see
 *    end-of-stream, and no descriptor may be left open. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "boot/wire.h"

#define CHECK(cond)                                                                          \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            fprintf(stderr, "fuzz_wire: check failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
            abort();                                                                         \
        }                                                                                    \
    } while (0)

#define MAX_FDS_PER_RECORD 253 /* SCM_MAX_FD */
#define MAX_FDS_PER_INPUT 512

static int devnull = -1;
/* The first descriptor numbers free when a run starts, in order. The
 * kernel hands out the lowest free number, so a run that had k descriptors
 * open at once used only free_slots[0..k-1]; they are found afresh for
 * each run because libFuzzer itself opens descriptors between runs (the
 * symbolizer's pipes). */
static int free_slots[MAX_FDS_PER_INPUT + 16];

static int find_free_slots(int want)
{
    int n = 0;
    for (int fd = 0; n < want; fd++)
        if (fcntl(fd, F_GETFD) < 0) free_slots[n++] = fd;
    return n;
}

/* Descriptors the records of data will send. */
static int count_fds(const uint8_t *data, size_t size)
{
    int total = 0;
    size_t pos = 0;
    while (pos + 2 <= size) {
        int nfds = data[pos] > MAX_FDS_PER_RECORD ? MAX_FDS_PER_RECORD : data[pos];
        size_t len = data[pos + 1];
        pos += 2;
        if (len > size - pos) len = size - pos;
        if (len && total + nfds <= MAX_FDS_PER_INPUT) total += nfds;
        pos += len;
    }
    return total;
}

static void decode_all(const uint8_t *data, size_t size)
{
    struct shoal_wire_header h;
    if (shoal_wire_decode_header(data, size, &h) == SHOAL_OK) {
        unsigned char again[SHOAL_WIRE_HEADER_SIZE];
        CHECK(h.magic == SHOAL_WIRE_MAGIC && h.version == SHOAL_WIRE_VERSION);
        CHECK(h.len <= SHOAL_WIRE_MAX_PAYLOAD && h.nfds <= SHOAL_WIRE_MAX_FDS);
        CHECK(strcmp(shoal_wire_type_name(h.type), "unknown") != 0);
        shoal_wire_encode_header(again, h.type, h.len, h.nfds);
        CHECK(memcmp(again, data, sizeof again) == 0);
    }

    struct shoal_wire_hello hello;
    if (shoal_wire_decode_hello(data, size, &hello) == SHOAL_OK) {
        unsigned char again[SHOAL_WIRE_HELLO_SIZE];
        CHECK(hello.size > 0 && hello.rank < hello.size && hello.pid > 0);
        shoal_wire_encode_hello(again, &hello);
        CHECK(size == sizeof again && memcmp(again, data, sizeof again) == 0);
    }

    uint32_t kind = 0;
    const unsigned char *blob = NULL;
    size_t bloblen = 0;
    if (shoal_wire_decode_gather(data, size, &kind, &blob, &bloblen) == SHOAL_OK) {
        unsigned char again[4];
        CHECK(strcmp(shoal_wire_gather_name(kind), "unknown collective") != 0);
        CHECK(blob == data + 4 && bloblen == size - 4);
        shoal_wire_encode_gather_kind(again, kind);
        CHECK(memcmp(again, data, 4) == 0);
    }

    uint32_t result_len = 0;
    if (shoal_wire_decode_shared(data, size, &result_len) == SHOAL_OK) {
        unsigned char again[SHOAL_WIRE_SHARED_SIZE];
        CHECK(size == sizeof again && result_len <= SHOAL_WIRE_MAX_PAYLOAD);
        shoal_wire_encode_shared(again, result_len);
        CHECK(memcmp(again, data, sizeof again) == 0);
    }

    /* Abort, into a buffer of exactly reasonlen bytes (first byte picks it). */
    size_t reasonlen = size ? (size_t)data[0] + 1 : 1;
    char *reason = malloc(reasonlen);
    int status = 0;
    CHECK(reason);
    if (shoal_wire_decode_abort(data, size, &status, reason, reasonlen) == SHOAL_OK) {
        size_t n = strlen(reason);
        CHECK(n < reasonlen && n <= size - 4);
        for (size_t i = 0; i < n; i++) CHECK((unsigned char)reason[i] >= 0x20 && reason[i] != 0x7f);
        /* A reason without control bytes survives encoding unchanged. */
        unsigned char out[4 + SHOAL_WIRE_MAX_REASON];
        size_t len = shoal_wire_encode_abort(out, status, reason);
        CHECK(len == 4 + n && memcmp(out, data, 4) == 0 && memcmp(out + 4, reason, n) == 0);
    }
    free(reason);
}

static void check_message(const struct shoal_wire_msg *m)
{
    unsigned char hdr[SHOAL_WIRE_HEADER_SIZE];
    struct shoal_wire_header h;
    /* The message must satisfy the header rules it arrived under. */
    shoal_wire_encode_header(hdr, m->type, (uint32_t)m->len, (uint32_t)m->nfds);
    CHECK(shoal_wire_decode_header(hdr, sizeof hdr, &h) == SHOAL_OK);
    CHECK(m->type != SHOAL_WIRE_FDS);
    CHECK((m->len == 0) == (m->payload == NULL));
    CHECK((m->nfds == 0) == (m->fds == NULL));
    for (int i = 0; i < m->nfds; i++) {
        int flags = fcntl(m->fds[i], F_GETFD);
        CHECK(flags >= 0 && (flags & FD_CLOEXEC));
    }
    switch (m->type) {
    case SHOAL_WIRE_HELLO: {
        struct shoal_wire_hello hello;
        (void)shoal_wire_decode_hello(m->payload, m->len, &hello);
        break;
    }
    case SHOAL_WIRE_ALLGATHER: {
        uint32_t kind;
        const unsigned char *blob;
        size_t bloblen;
        (void)shoal_wire_decode_gather(m->payload, m->len, &kind, &blob, &bloblen);
        break;
    }
    case SHOAL_WIRE_ABORT: {
        char reason[SHOAL_WIRE_MAX_REASON + 1];
        int status;
        CHECK(shoal_wire_decode_abort(m->payload, m->len, &status, reason, sizeof reason) == SHOAL_OK);
        break;
    }
    default: break;
    }
}

/* Reads until the socket has nothing more; returns 1 once end of stream is seen. */
static int drain(struct shoal_wire_reader *r, int sock)
{
    for (;;) {
        struct shoal_wire_msg m;
        int complete = 0;
        memset(&m, 0, sizeof m);
        shoal_status_t st = shoal_wire_read(r, sock, 0, &m, &complete);
        if (st == SHOAL_ERR_CLOSED) return 1;
        CHECK(st == SHOAL_OK || st == SHOAL_ERR_PROTO || st == SHOAL_ERR_NOMEM);
        if (st != SHOAL_OK) {
            /* The reader has reset itself: nothing partial is held. */
            CHECK(r->payload == NULL && r->fds == NULL && r->batch_n == 0 && r->hdr_got == 0);
            continue;
        }
        if (!complete) return 0;
        check_message(&m);
        shoal_wire_msg_release(&m);
    }
}

static void send_record(int sock, const uint8_t *bytes, size_t len, int nfds)
{
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(sizeof(int) * MAX_FDS_PER_RECORD)];
    } ctl;
    struct iovec iov = {.iov_base = (void *)bytes, .iov_len = len};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
    if (nfds) {
        memset(ctl.buf, 0, sizeof ctl.buf);
        mh.msg_control = ctl.buf;
        mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
        for (int i = 0; i < nfds; i++) memcpy(CMSG_DATA(c) + (size_t)i * sizeof(int), &devnull, sizeof(int));
    }
    ssize_t n;
    do n = sendmsg(sock, &mh, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    CHECK(n == (ssize_t)len); /* the reader drains after every record, so the buffer never fills */
}

static void stream(const uint8_t *data, size_t size)
{
    /* At most fds_sent received descriptors, the socketpair and slack. */
    int slots = find_free_slots(count_fds(data, size) + 16);
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
    CHECK(fcntl(sv[1], F_SETFL, O_NONBLOCK) == 0);
    struct shoal_wire_reader r;
    shoal_wire_reader_init(&r);
    int eof = 0, fds_sent = 0;
    size_t pos = 0;
    while (pos + 2 <= size && !eof) {
        int nfds = data[pos] > MAX_FDS_PER_RECORD ? MAX_FDS_PER_RECORD : data[pos];
        size_t len = data[pos + 1];
        pos += 2;
        if (len > size - pos) len = size - pos;
        if (len == 0) continue; /* a stream socket sends no descriptors without a byte */
        if (fds_sent + nfds > MAX_FDS_PER_INPUT) nfds = 0;
        fds_sent += nfds;
        send_record(sv[0], data + pos, len, nfds);
        pos += len;
        eof = drain(&r, sv[1]);
    }
    CHECK(!eof);
    CHECK(shutdown(sv[0], SHUT_WR) == 0);
    CHECK(drain(&r, sv[1]) == 1);
    /* End of stream reset the reader; reset again must be harmless. */
    CHECK(r.payload == NULL && r.fds == NULL && r.batch_n == 0);
    shoal_wire_reader_reset(&r);
    close(sv[0]);
    close(sv[1]);
    CHECK(fds_sent == slots - 16);
    for (int k = 0; k < slots; k++) {
        if (fcntl(free_slots[k], F_GETFD) >= 0) {
            char link[64], target[256] = "?";
            snprintf(link, sizeof link, "/proc/self/fd/%d", free_slots[k]);
            ssize_t n = readlink(link, target, sizeof target - 1);
            if (n > 0) target[n] = '\0';
            fprintf(stderr, "fuzz_wire: descriptor %d (%s) leaked\n", free_slots[k], target);
            abort();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536) return 0;
    if (devnull < 0) {
        devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
        CHECK(devnull >= 0);
    }
    decode_all(data, size);
    stream(data, size);
    return 0;
}
