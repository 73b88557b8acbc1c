/* test_wire.c: the bootstrap wire protocol (src/boot/wire.c) and the PE
 * side of the launcher bootstrap (boot_launcher.c) against a scripted fake
 * launcher on a socketpair, plus the single-PE bootstrap. One process. */
#include "boot/boot.h"
#include "boot/wire.h"
#include "harness.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* Mappings of memory files whose names start with prefix. */
static int count_maps(const char *prefix)
{
    char line[512], want[64];
    int n = 0;
    snprintf(want, sizeof want, "/memfd:%s", prefix);
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return -1;
    while (fgets(line, sizeof line, f)) n += strstr(line, want) != NULL;
    fclose(f);
    return n;
}

static int count_open_fds(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    if (!d) return -1;
    while (readdir(d)) n++;
    closedir(d);
    return n;
}

static void pair(int sv[2])
{
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        perror("socketpair");
        exit(TEST_FAIL);
    }
}

static void raw_header(int sock, unsigned type, uint32_t len, uint32_t nfds)
{
    unsigned char h[SHOAL_WIRE_HEADER_SIZE];
    shoal_wire_encode_header(h, type, len, nfds);
    CHECK(write(sock, h, sizeof h) == (ssize_t)sizeof h);
}

static void test_header(void)
{
    unsigned char h[SHOAL_WIRE_HEADER_SIZE];
    struct shoal_wire_header d;
    shoal_wire_encode_header(h, SHOAL_WIRE_ALLGATHER, 100, 3);
    CHECK(shoal_wire_decode_header(h, sizeof h, &d) == SHOAL_OK);
    CHECK(d.magic == SHOAL_WIRE_MAGIC && d.version == SHOAL_WIRE_VERSION && d.type == SHOAL_WIRE_ALLGATHER &&
          d.len == 100 && d.nfds == 3);
    CHECK(memcmp(h, "SHOL", 4) == 0); /* little-endian on the wire, whatever the host */
    CHECK(shoal_wire_decode_header(h, sizeof h - 1, &d) == SHOAL_ERR_PROTO);
    CHECK(shoal_wire_decode_header(NULL, sizeof h, &d) == SHOAL_ERR_PROTO);

    unsigned char bad[SHOAL_WIRE_HEADER_SIZE];
    memcpy(bad, h, sizeof h);
    bad[0] ^= 1;
    CHECK(shoal_wire_decode_header(bad, sizeof bad, &d) == SHOAL_ERR_PROTO); /* magic */
    memcpy(bad, h, sizeof h);
    bad[4] = (unsigned char)(SHOAL_WIRE_VERSION + 1);
    CHECK(shoal_wire_decode_header(bad, sizeof bad, &d) == SHOAL_ERR_PROTO); /* version */
    memcpy(bad, h, sizeof h);
    bad[4] = (unsigned char)(SHOAL_WIRE_VERSION - 1);
    CHECK(shoal_wire_decode_header(bad, sizeof bad, &d) == SHOAL_ERR_PROTO); /* a launcher before the shared result */

    /* Per-type rules and limits. */
    struct {
        unsigned type;
        uint32_t len, nfds;
        shoal_status_t want;
    } cases[] = {
        {0, 0, 0, SHOAL_ERR_PROTO},
        {99, 0, 0, SHOAL_ERR_PROTO},
        {SHOAL_WIRE_HELLO, SHOAL_WIRE_HELLO_SIZE, 0, SHOAL_OK},
        {SHOAL_WIRE_HELLO, 11, 0, SHOAL_ERR_PROTO},
        {SHOAL_WIRE_HELLO, SHOAL_WIRE_HELLO_SIZE, 1, SHOAL_ERR_PROTO},
        {SHOAL_WIRE_ALLGATHER, 3, 0, SHOAL_ERR_PROTO},
        {SHOAL_WIRE_ALLGATHER, SHOAL_WIRE_MAX_PAYLOAD, SHOAL_WIRE_MAX_FDS, SHOAL_OK},
        {SHOAL_WIRE_ALLGATHER, SHOAL_WIRE_MAX_PAYLOAD + 1, 0, SHOAL_ERR_PROTO},
        {SHOAL_WIRE_ALLGATHER, 4, SHOAL_WIRE_MAX_FDS + 1, SHOAL_ERR_PROTO},
        {SHOAL_WIRE_ALLGATHER_RESULT, 0, 0, SHOAL_OK},
        {SHOAL_WIRE_ALLGATHER_RESULT, 0xffffffffu, 0, SHOAL_ERR_PROTO},
        {SHOAL_WIRE_FINALIZE, 0, 0, SHOAL_OK},
        {SHOAL_WIRE_FINALIZE, 1, 0, SHOAL_ERR_PROTO},
        {SHOAL_WIRE_FINALIZE_ACK, 0, 1, SHOAL_ERR_PROTO},
        {SHOAL_WIRE_ABORT, 3, 0, SHOAL_ERR_PROTO},
        {SHOAL_WIRE_ABORT, 4 + SHOAL_WIRE_MAX_REASON, 0, SHOAL_OK},
        {SHOAL_WIRE_ABORT, 5 + SHOAL_WIRE_MAX_REASON, 0, SHOAL_ERR_PROTO},
        {SHOAL_WIRE_FDS, 0, 0, SHOAL_ERR_PROTO},
        {SHOAL_WIRE_FDS, 0, SHOAL_WIRE_FDS_PER_MSG, SHOAL_OK},
        {SHOAL_WIRE_FDS, 0, SHOAL_WIRE_FDS_PER_MSG + 1, SHOAL_ERR_PROTO},
        {SHOAL_WIRE_FDS, 1, 1, SHOAL_ERR_PROTO},
        {SHOAL_WIRE_ALLGATHER_SHARED, SHOAL_WIRE_SHARED_SIZE, 1, SHOAL_OK},
        {SHOAL_WIRE_ALLGATHER_SHARED, SHOAL_WIRE_SHARED_SIZE, 0, SHOAL_ERR_PROTO},
        {SHOAL_WIRE_ALLGATHER_SHARED, SHOAL_WIRE_SHARED_SIZE, 2, SHOAL_ERR_PROTO},
        {SHOAL_WIRE_ALLGATHER_SHARED, SHOAL_WIRE_SHARED_SIZE + 1, 1, SHOAL_ERR_PROTO},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        shoal_wire_encode_header(h, cases[i].type, cases[i].len, cases[i].nfds);
        shoal_status_t st = shoal_wire_decode_header(h, sizeof h, &d);
        CHECK_MSG(st == cases[i].want, "case %zu: type %u len %u nfds %u gave %d", i, cases[i].type, cases[i].len,
                  cases[i].nfds, (int)st);
    }
}

static void test_payloads(void)
{
    struct shoal_wire_hello hello = {.rank = 3, .size = 8, .pid = 4242}, got;
    unsigned char hb[SHOAL_WIRE_HELLO_SIZE];
    shoal_wire_encode_hello(hb, &hello);
    CHECK(shoal_wire_decode_hello(hb, sizeof hb, &got) == SHOAL_OK);
    CHECK(got.rank == 3 && got.size == 8 && got.pid == 4242);
    CHECK(shoal_wire_decode_hello(hb, sizeof hb - 1, &got) == SHOAL_ERR_PROTO);
    hello.rank = 8;
    shoal_wire_encode_hello(hb, &hello);
    CHECK(shoal_wire_decode_hello(hb, sizeof hb, &got) == SHOAL_ERR_PROTO); /* rank >= size */
    hello.rank = 0;
    hello.size = 0;
    shoal_wire_encode_hello(hb, &hello);
    CHECK(shoal_wire_decode_hello(hb, sizeof hb, &got) == SHOAL_ERR_PROTO);

    unsigned char gb[8] = {0};
    uint32_t kind;
    const unsigned char *blob;
    size_t len;
    shoal_wire_encode_gather_kind(gb, SHOAL_WIRE_GATHER_FDS);
    CHECK(shoal_wire_decode_gather(gb, sizeof gb, &kind, &blob, &len) == SHOAL_OK);
    CHECK(kind == SHOAL_WIRE_GATHER_FDS && blob == gb + 4 && len == 4);
    CHECK(shoal_wire_decode_gather(gb, 3, &kind, &blob, &len) == SHOAL_ERR_PROTO);
    shoal_wire_encode_gather_kind(gb, 77);
    CHECK(shoal_wire_decode_gather(gb, sizeof gb, &kind, &blob, &len) == SHOAL_ERR_PROTO);

    unsigned char sb[SHOAL_WIRE_SHARED_SIZE + 1] = {0};
    uint32_t result_len = 0;
    shoal_wire_encode_shared(sb, SHOAL_WIRE_MAX_PAYLOAD);
    CHECK(shoal_wire_decode_shared(sb, SHOAL_WIRE_SHARED_SIZE, &result_len) == SHOAL_OK);
    CHECK(result_len == SHOAL_WIRE_MAX_PAYLOAD);
    CHECK(shoal_wire_decode_shared(sb, sizeof sb, &result_len) == SHOAL_ERR_PROTO);
    shoal_wire_encode_shared(sb, SHOAL_WIRE_MAX_PAYLOAD + 1);
    CHECK(shoal_wire_decode_shared(sb, SHOAL_WIRE_SHARED_SIZE, &result_len) == SHOAL_ERR_PROTO);

    unsigned char ab[4 + SHOAL_WIRE_MAX_REASON];
    char reason[SHOAL_WIRE_MAX_REASON + 1];
    int status;
    size_t n = shoal_wire_encode_abort(ab, -5, "bad\tPE\nsecond line");
    CHECK(n == 4 + 6);
    CHECK(shoal_wire_decode_abort(ab, n, &status, reason, sizeof reason) == SHOAL_OK);
    CHECK(status == -5 && strcmp(reason, "bad?PE") == 0);
    CHECK(shoal_wire_decode_abort(ab, n, &status, reason, 4) == SHOAL_OK && strcmp(reason, "bad") == 0);
    CHECK(shoal_wire_decode_abort(ab, 3, &status, reason, sizeof reason) == SHOAL_ERR_PROTO);
    char longr[2 * SHOAL_WIRE_MAX_REASON];
    memset(longr, 'x', sizeof longr - 1);
    longr[sizeof longr - 1] = '\0';
    n = shoal_wire_encode_abort(ab, 1, longr);
    CHECK(n == 4 + SHOAL_WIRE_MAX_REASON);
    CHECK(shoal_wire_encode_abort(ab, 9, NULL) == 4);
}

/* A message with payload and descriptors goes through a socket intact. */
static void test_roundtrip(int nfds)
{
    int sv[2], p[2];
    pair(sv);
    if (pipe2(p, O_CLOEXEC) != 0) exit(TEST_FAIL);
    int *fds = malloc(sizeof(int) * (size_t)nfds);
    for (int i = 0; i < nfds; i++) {
        fds[i] = fcntl(p[1], F_DUPFD_CLOEXEC, 0);
        CHECK(fds[i] >= 0);
    }
    unsigned char a[3] = {1, 2, 3}, b[100];
    for (size_t i = 0; i < sizeof b; i++) b[i] = test_pattern(0, i, (unsigned)nfds);
    struct iovec iov[2] = {{a, sizeof a}, {b, sizeof b}};
    /* Payloads larger than the socket buffer need the reader running, so
     * this one stays small; the launcher tests cover large transfers. */
    CHECK(shoal_wire_send(sv[0], SHOAL_WIRE_ALLGATHER, iov, 2, fds, nfds) == SHOAL_OK);
    struct shoal_wire_msg msg;
    CHECK(shoal_wire_recv(sv[1], &msg) == SHOAL_OK);
    CHECK(msg.type == SHOAL_WIRE_ALLGATHER && msg.len == sizeof a + sizeof b && msg.nfds == nfds);
    if (msg.len == sizeof a + sizeof b) {
        CHECK(memcmp(msg.payload, a, sizeof a) == 0);
        CHECK(memcmp(msg.payload + sizeof a, b, sizeof b) == 0);
    }
    struct stat want, st;
    fstat(p[1], &want);
    for (int i = 0; i < msg.nfds; i++) {
        CHECK(fstat(msg.fds[i], &st) == 0 && st.st_ino == want.st_ino);
        CHECK(fcntl(msg.fds[i], F_GETFD) & FD_CLOEXEC);
    }
    /* Writing through the last received descriptor reaches the pipe. */
    if (msg.nfds > 0) {
        char c = 0;
        CHECK(write(msg.fds[msg.nfds - 1], "z", 1) == 1);
        CHECK(read(p[0], &c, 1) == 1 && c == 'z');
    }
    shoal_wire_msg_release(&msg);
    for (int i = 0; i < nfds; i++) close(fds[i]);
    free(fds);
    close(p[0]);
    close(p[1]);
    close(sv[0]);
    close(sv[1]);
}

/* The reader makes progress one byte at a time and stops at each message's end. */
static void test_fragmented(void)
{
    int sv[2];
    pair(sv);
    fcntl(sv[1], F_SETFL, O_NONBLOCK);
    unsigned char h[SHOAL_WIRE_HEADER_SIZE], hb[SHOAL_WIRE_HELLO_SIZE];
    struct shoal_wire_hello hello = {.rank = 1, .size = 2, .pid = 7};
    shoal_wire_encode_header(h, SHOAL_WIRE_HELLO, SHOAL_WIRE_HELLO_SIZE, 0);
    shoal_wire_encode_hello(hb, &hello);
    struct shoal_wire_reader r;
    struct shoal_wire_msg msg;
    int complete = 0, steps = 0;
    shoal_wire_reader_init(&r);
    for (size_t i = 0; i < sizeof h + sizeof hb; i++) {
        unsigned char c = i < sizeof h ? h[i] : hb[i - sizeof h];
        CHECK(write(sv[0], &c, 1) == 1);
        CHECK(shoal_wire_read(&r, sv[1], 0, &msg, &complete) == SHOAL_OK);
        if (complete) break;
        steps++;
    }
    CHECK(complete && steps == (int)(sizeof h + sizeof hb) - 1);
    if (complete) {
        struct shoal_wire_hello got;
        CHECK(msg.type == SHOAL_WIRE_HELLO && shoal_wire_decode_hello(msg.payload, msg.len, &got) == SHOAL_OK);
        CHECK(got.rank == 1 && got.size == 2 && got.pid == 7);
        shoal_wire_msg_release(&msg);
    }
    /* Two messages queued back to back come out one at a time. */
    CHECK(shoal_wire_send(sv[0], SHOAL_WIRE_FINALIZE, NULL, 0, NULL, 0) == SHOAL_OK);
    CHECK(shoal_wire_send(sv[0], SHOAL_WIRE_FINALIZE_ACK, NULL, 0, NULL, 0) == SHOAL_OK);
    CHECK(shoal_wire_read(&r, sv[1], 0, &msg, &complete) == SHOAL_OK && complete && msg.type == SHOAL_WIRE_FINALIZE);
    shoal_wire_msg_release(&msg);
    CHECK(shoal_wire_read(&r, sv[1], 0, &msg, &complete) == SHOAL_OK && complete &&
          msg.type == SHOAL_WIRE_FINALIZE_ACK);
    shoal_wire_msg_release(&msg);
    CHECK(shoal_wire_read(&r, sv[1], 0, &msg, &complete) == SHOAL_OK && !complete);
    close(sv[0]);
    CHECK(shoal_wire_read(&r, sv[1], 0, &msg, &complete) == SHOAL_ERR_CLOSED);
    close(sv[1]);
}

/* Garbage on the socket is refused, and stray descriptors are closed. */
static void test_garbage(void)
{
    int sv[2], before = count_open_fds();
    struct shoal_wire_msg msg;
    unsigned char junk[32];
    memset(junk, 0x5a, sizeof junk);

    pair(sv);
    CHECK(write(sv[0], junk, sizeof junk) == (ssize_t)sizeof junk);
    CHECK(shoal_wire_recv(sv[1], &msg) == SHOAL_ERR_PROTO);
    close(sv[0]);
    close(sv[1]);

    /* A header that promises more than the limit allocates nothing. */
    pair(sv);
    raw_header(sv[0], SHOAL_WIRE_ALLGATHER_RESULT, SHOAL_WIRE_MAX_PAYLOAD + 1, 0);
    CHECK(shoal_wire_recv(sv[1], &msg) == SHOAL_ERR_PROTO);
    close(sv[0]);
    close(sv[1]);

    /* A header that announces descriptors but carries none. */
    pair(sv);
    raw_header(sv[0], SHOAL_WIRE_ALLGATHER, 4, 2);
    CHECK(shoal_wire_recv(sv[1], &msg) == SHOAL_ERR_PROTO);
    close(sv[0]);
    close(sv[1]);

    /* Descriptors attached to payload bytes instead of the header. */
    pair(sv);
    raw_header(sv[0], SHOAL_WIRE_ALLGATHER, 8, 0);
    {
        unsigned char kb[8] = {0};
        int fd = sv[0];
        shoal_wire_encode_gather_kind(kb, SHOAL_WIRE_GATHER_BLOB);
        union {
            struct cmsghdr align;
            char buf[CMSG_SPACE(sizeof(int))];
        } ctl;
        struct iovec iov = {kb, sizeof kb};
        struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf};
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof fd);
        CHECK(sendmsg(sv[0], &mh, 0) == (ssize_t)sizeof kb);
    }
    CHECK(shoal_wire_recv(sv[1], &msg) == SHOAL_ERR_PROTO);
    close(sv[0]);
    close(sv[1]);

    /* The stream ends in the middle of a payload. */
    pair(sv);
    raw_header(sv[0], SHOAL_WIRE_ALLGATHER_RESULT, 10, 0);
    CHECK(write(sv[0], junk, 5) == 5);
    close(sv[0]);
    CHECK(shoal_wire_recv(sv[1], &msg) == SHOAL_ERR_CLOSED);
    close(sv[1]);

    /* A follow-up FDS message where the next message's header belongs. */
    pair(sv);
    raw_header(sv[0], SHOAL_WIRE_FDS, 0, 1);
    CHECK(shoal_wire_recv(sv[1], &msg) == SHOAL_ERR_PROTO);
    close(sv[0]);
    close(sv[1]);

    CHECK_MSG(count_open_fds() == before, "%d descriptors open, %d before", count_open_fds(), before);
}

/* PE side against a scripted launcher: replies are queued before the call. */
static void test_boot_launcher(void)
{
    int sv[2];
    shoal_boot_t *boot;
    struct shoal_wire_msg msg;
    pair(sv);
    CHECK(shoal_boot_open_launcher(sv[1], 7, 2, &boot) == SHOAL_ERR_INVAL);
    CHECK(shoal_boot_open_launcher(sv[1], 1, 2, &boot) == SHOAL_OK);
    CHECK(shoal_wire_recv(sv[0], &msg) == SHOAL_OK && msg.type == SHOAL_WIRE_HELLO);
    struct shoal_wire_hello hello;
    CHECK(shoal_wire_decode_hello(msg.payload, msg.len, &hello) == SHOAL_OK && hello.rank == 1 && hello.size == 2 &&
          hello.pid == (uint32_t)getpid());
    shoal_wire_msg_release(&msg);

    /* allgather: 2 PEs x 3 bytes. */
    unsigned char all[6] = {10, 11, 12, 20, 21, 22}, mine[3] = {20, 21, 22}, got[6] = {0};
    struct iovec iov = {all, sizeof all};
    CHECK(shoal_wire_send(sv[0], SHOAL_WIRE_ALLGATHER_RESULT, &iov, 1, NULL, 0) == SHOAL_OK);
    CHECK(boot->ops->allgather(boot, mine, sizeof mine, got) == SHOAL_OK);
    CHECK(memcmp(got, all, sizeof all) == 0);
    CHECK(shoal_wire_recv(sv[0], &msg) == SHOAL_OK && msg.type == SHOAL_WIRE_ALLGATHER && msg.len == 4 + 3);
    uint32_t kind;
    const unsigned char *blob;
    size_t len;
    CHECK(shoal_wire_decode_gather(msg.payload, msg.len, &kind, &blob, &len) == SHOAL_OK &&
          kind == SHOAL_WIRE_GATHER_BLOB && len == 3 && memcmp(blob, mine, 3) == 0);
    shoal_wire_msg_release(&msg);

    /* A reply of the wrong size is a protocol error, not a silent copy. */
    iov.iov_len = 5;
    CHECK(shoal_wire_send(sv[0], SHOAL_WIRE_ALLGATHER_RESULT, &iov, 1, NULL, 0) == SHOAL_OK);
    CHECK(boot->ops->allgather(boot, mine, sizeof mine, got) == SHOAL_ERR_PROTO);
    CHECK(shoal_wire_recv(sv[0], &msg) == SHOAL_OK);
    shoal_wire_msg_release(&msg);

    /* A large result comes as one memory file: read whole, then closed. */
    const int open_before = count_open_fds();
    int mem = memfd_create("test_wire", MFD_CLOEXEC);
    CHECK(mem >= 0 && write(mem, all, sizeof all) == (ssize_t)sizeof all);
    unsigned char said[SHOAL_WIRE_SHARED_SIZE];
    shoal_wire_encode_shared(said, sizeof all);
    struct iovec said_iov = {said, sizeof said};
    const unsigned long shared_before = shoal_boot_shared_results;
    memset(got, 0, sizeof got);
    CHECK(shoal_wire_send(sv[0], SHOAL_WIRE_ALLGATHER_SHARED, &said_iov, 1, &mem, 1) == SHOAL_OK);
    CHECK(boot->ops->allgather(boot, mine, sizeof mine, got) == SHOAL_OK);
    CHECK(memcmp(got, all, sizeof all) == 0 && shoal_boot_shared_results == shared_before + 1);
    CHECK(shoal_wire_recv(sv[0], &msg) == SHOAL_OK && msg.type == SHOAL_WIRE_ALLGATHER);
    shoal_wire_msg_release(&msg);
    /* ... of another length than 2 x 3 bytes, or a file shorter than it
     * says: protocol errors. */
    shoal_wire_encode_shared(said, sizeof all - 1);
    CHECK(shoal_wire_send(sv[0], SHOAL_WIRE_ALLGATHER_SHARED, &said_iov, 1, &mem, 1) == SHOAL_OK);
    CHECK(boot->ops->allgather(boot, mine, sizeof mine, got) == SHOAL_ERR_PROTO);
    CHECK(shoal_wire_recv(sv[0], &msg) == SHOAL_OK);
    shoal_wire_msg_release(&msg);
    CHECK(ftruncate(mem, 4) == 0);
    shoal_wire_encode_shared(said, sizeof all);
    CHECK(shoal_wire_send(sv[0], SHOAL_WIRE_ALLGATHER_SHARED, &said_iov, 1, &mem, 1) == SHOAL_OK);
    CHECK(boot->ops->allgather(boot, mine, sizeof mine, got) == SHOAL_ERR_PROTO);
    CHECK(shoal_wire_recv(sv[0], &msg) == SHOAL_OK);
    shoal_wire_msg_release(&msg);
    /* ... and never the answer to a barrier. */
    CHECK(shoal_wire_send(sv[0], SHOAL_WIRE_ALLGATHER_SHARED, &said_iov, 1, &mem, 1) == SHOAL_OK);
    CHECK(boot->ops->barrier(boot) == SHOAL_ERR_PROTO);
    CHECK(shoal_wire_recv(sv[0], &msg) == SHOAL_OK);
    shoal_wire_msg_release(&msg);
    close(mem);
    CHECK_MSG(count_open_fds() == open_before, "%d descriptors open after shared results, %d before",
              count_open_fds(), open_before);
    CHECK(shoal_boot_shared_results == shared_before + 1);

    /* A view (shoal_boot_allgather_view): the socket's message taken over;
     * a shared file mapped in place only when sealed against shrinking and
     * writing, copied otherwise; one shorter than it says is an error, not
     * a read past its end. Nothing stays open or mapped after release. */
    struct shoal_boot_view view;
    const unsigned long mapped_before = shoal_boot_mapped_results;
    iov.iov_len = sizeof all;
    CHECK(shoal_wire_send(sv[0], SHOAL_WIRE_ALLGATHER_RESULT, &iov, 1, NULL, 0) == SHOAL_OK);
    CHECK(shoal_boot_allgather_view(boot, mine, sizeof mine, &view) == SHOAL_OK);
    CHECK(view.data && memcmp(view.data, all, sizeof all) == 0 && view.data == view.heap && !view.map);
    shoal_boot_view_release(&view);
    CHECK(!view.data && !view.heap);
    CHECK(shoal_wire_recv(sv[0], &msg) == SHOAL_OK && msg.type == SHOAL_WIRE_ALLGATHER);
    shoal_wire_msg_release(&msg);
    for (int sealed = 0; sealed < 2; sealed++) {
        int file = memfd_create("test_wire_view", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        CHECK(file >= 0 && write(file, all, sizeof all) == (ssize_t)sizeof all);
        if (sealed) CHECK(fcntl(file, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) == 0);
        shoal_wire_encode_shared(said, sizeof all);
        CHECK(shoal_wire_send(sv[0], SHOAL_WIRE_ALLGATHER_SHARED, &said_iov, 1, &file, 1) == SHOAL_OK);
        CHECK(shoal_boot_allgather_view(boot, mine, sizeof mine, &view) == SHOAL_OK);
        CHECK(view.data && memcmp(view.data, all, sizeof all) == 0);
        CHECK_MSG(sealed ? view.data == view.map && !view.heap : view.data == view.heap && !view.map,
                  "a %s shared result was %s", sealed ? "sealed" : "writable", view.map ? "mapped" : "copied");
        CHECK(shoal_boot_mapped_results == mapped_before + (unsigned long)sealed);
        CHECK(count_maps("test_wire_view") == sealed);
        shoal_boot_view_release(&view);
        CHECK(shoal_wire_recv(sv[0], &msg) == SHOAL_OK && msg.type == SHOAL_WIRE_ALLGATHER);
        shoal_wire_msg_release(&msg);
        /* Sealed at 4 bytes, said to hold 6. */
        int small = memfd_create("test_wire_short", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        CHECK(small >= 0 && write(small, all, 4) == 4);
        if (sealed) CHECK(fcntl(small, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) == 0);
        CHECK(shoal_wire_send(sv[0], SHOAL_WIRE_ALLGATHER_SHARED, &said_iov, 1, &small, 1) == SHOAL_OK);
        CHECK(shoal_boot_allgather_view(boot, mine, sizeof mine, &view) == SHOAL_ERR_PROTO);
        shoal_boot_view_release(&view);
        CHECK(shoal_wire_recv(sv[0], &msg) == SHOAL_OK);
        shoal_wire_msg_release(&msg);
        close(small);
        close(file);
    }
    CHECK(shoal_boot_mapped_results == mapped_before + 1 && shoal_boot_shared_results == shared_before + 3);
    CHECK_MSG(count_open_fds() == open_before, "%d descriptors open after viewed results, %d before",
              count_open_fds(), open_before);
    CHECK_MSG(count_maps("test_wire") == 0, "%d mappings of a shared result left after release",
              count_maps("test_wire"));

    /* allgather_fds: the caller receives working descriptors. */
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) exit(TEST_FAIL);
    int send_fds[2] = {p[1], p[1]}, recv_fds[2] = {-1, -1};
    CHECK(shoal_wire_send(sv[0], SHOAL_WIRE_ALLGATHER_RESULT, NULL, 0, send_fds, 2) == SHOAL_OK);
    CHECK(boot->ops->allgather_fds(boot, &p[1], 1, recv_fds) == SHOAL_OK);
    CHECK(recv_fds[0] >= 0 && recv_fds[1] >= 0 && recv_fds[0] != p[1]);
    char c = 0;
    CHECK(write(recv_fds[1], "q", 1) == 1 && read(p[0], &c, 1) == 1 && c == 'q');
    close(recv_fds[0]);
    close(recv_fds[1]);
    CHECK(shoal_wire_recv(sv[0], &msg) == SHOAL_OK && msg.type == SHOAL_WIRE_ALLGATHER && msg.nfds == 1);
    shoal_wire_msg_release(&msg);
    close(p[0]);
    close(p[1]);

    /* finalize waits for its acknowledgement. */
    CHECK(shoal_wire_send(sv[0], SHOAL_WIRE_FINALIZE_ACK, NULL, 0, NULL, 0) == SHOAL_OK);
    CHECK(boot->ops->finalize(boot) == SHOAL_OK);
    CHECK(shoal_wire_recv(sv[0], &msg) == SHOAL_OK && msg.type == SHOAL_WIRE_FINALIZE);
    shoal_wire_msg_release(&msg);
    CHECK(boot->ops->barrier(boot) == SHOAL_ERR_INVAL); /* nothing after finalize */
    boot->ops->close(boot);
    close(sv[0]);

    /* The launcher goes away: the PE learns SHOAL_ERR_CLOSED. */
    pair(sv);
    CHECK(shoal_boot_open_launcher(sv[1], 0, 2, &boot) == SHOAL_OK);
    close(sv[0]);
    CHECK(boot->ops->barrier(boot) == SHOAL_ERR_CLOSED);
    boot->ops->close(boot);

    pair(sv);
    CHECK(shoal_boot_open_launcher(sv[1], 0, 1, &boot) == SHOAL_OK);
    CHECK(shoal_wire_recv(sv[0], &msg) == SHOAL_OK);
    shoal_wire_msg_release(&msg);
    raw_header(sv[0], SHOAL_WIRE_ALLGATHER_RESULT, 100, 0); /* promised 100 bytes, sends none */
    shutdown(sv[0], SHUT_WR);
    CHECK(boot->ops->barrier(boot) == SHOAL_ERR_CLOSED);
    boot->ops->close(boot);
    close(sv[0]);
}

static void test_boot_single(void)
{
    shoal_boot_t *boot;
    CHECK(shoal_boot_open_single(&boot) == SHOAL_OK);
    CHECK(boot->rank == 0 && boot->size == 1 && strcmp(boot->ops->name, "single") == 0);
    char in[5] = "abcd", out[5] = {0};
    CHECK(boot->ops->allgather(boot, in, 4, out) == SHOAL_OK && memcmp(in, out, 4) == 0);
    int p[2], got = -1;
    if (pipe2(p, O_CLOEXEC) != 0) exit(TEST_FAIL);
    CHECK(boot->ops->allgather_fds(boot, &p[1], 1, &got) == SHOAL_OK && got >= 0 && got != p[1]);
    char c = 0;
    CHECK(write(got, "s", 1) == 1 && read(p[0], &c, 1) == 1 && c == 's');
    close(got);
    close(p[0]);
    close(p[1]);
    CHECK(boot->ops->barrier(boot) == SHOAL_OK && boot->ops->finalize(boot) == SHOAL_OK);
    boot->ops->close(boot);
}

int main(void)
{
    struct rlimit rl;
    test_pe = 0;
    test_header();
    test_payloads();
    test_roundtrip(0);
    test_roundtrip(3);
    /* More than one batch of descriptors: needs 2 * 600 descriptors. */
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 1400 && rl.rlim_max >= 1400) {
        rl.rlim_cur = 1400;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur >= 1400)
        test_roundtrip(2 * SHOAL_WIRE_FDS_PER_MSG + 100);
    else
        fprintf(stderr, "descriptor limit too low: skipping the 600-descriptor round trip\n");
    test_fragmented();
    test_garbage();
    test_boot_launcher();
    test_boot_single();
    return test_finish();
}
