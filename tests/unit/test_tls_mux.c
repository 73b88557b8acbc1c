/* test_tls_mux.c: two byte streams over one TCP connection on 127.0.0.1
 * (src/transport/tls/tls_mux.c). Each channel's bytes arrive whole and in
 * order whichever thread takes them in (readers of both channels at once,
 * each taking in the other's bytes); two ends writing more than the socket
 * buffers hold to each other, neither reading, still finish; the end and a
 * malformed frame reach every reader. A hang fails, naming the part. */
#include "harness.h"
#include "transport/tls/tls_mux.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* A connected pair of TCP sockets on 127.0.0.1. */
static void tcp_pair(int fds[2])
{
    int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (ls < 0 || bind(ls, (struct sockaddr *)&a, len) || listen(ls, 1) || getsockname(ls, (struct sockaddr *)&a, &len)) {
        perror("listen");
        exit(TEST_FAIL);
    }
    fds[0] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fds[0] < 0 || connect(fds[0], (struct sockaddr *)&a, len) != 0 || (fds[1] = accept(ls, NULL, NULL)) < 0) {
        perror("connect");
        exit(TEST_FAIL);
    }
    const int one = 1;
    setsockopt(fds[0], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(fds[1], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    close(ls);
}

static void mux_pair(struct shoal_mux *m[2])
{
    int fds[2];
    tcp_pair(fds);
    for (int i = 0; i < 2; i++) {
        m[i] = shoal_mux_new(fds[i]);
        if (!m[i]) {
            perror("shoal_mux_new");
            exit(TEST_FAIL);
        }
    }
}

/* Byte i of stream s: a pattern no shift or mix-up of streams keeps. */
static unsigned char pattern(int s, size_t i) { return (unsigned char)(i * 131 + i / 251 + (size_t)s * 77); }

/* Reads exactly len bytes of ch (blocking); 0 or -1. */
static int read_all(struct shoal_mux *m, int ch, unsigned char *buf, size_t len)
{
    while (len) {
        ssize_t n = shoal_mux_read(m, ch, buf, len, 1);
        if (n <= 0) return -1;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

struct stream {
    struct shoal_mux *m;
    int ch, id;
    size_t total, piece;
    int rc;
};

/* Writes stream id's bytes on ch in pieces of its piece size. */
static void *writer(void *arg)
{
    struct stream *s = arg;
    unsigned char *buf = malloc(s->piece);
    s->rc = buf ? 0 : -1;
    for (size_t at = 0; s->rc == 0 && at < s->total; at += s->piece) {
        const size_t n = s->total - at < s->piece ? s->total - at : s->piece;
        for (size_t i = 0; i < n; i++) buf[i] = pattern(s->id, at + i);
        s->rc = shoal_mux_write(s->m, s->ch, buf, n);
    }
    free(buf);
    return NULL;
}

/* Reads stream id from ch and counts the bytes that differ (rc). */
static void *reader(void *arg)
{
    struct stream *s = arg;
    unsigned char *buf = malloc(s->piece);
    size_t wrong = 0;
    s->rc = buf ? 0 : -1;
    for (size_t at = 0; s->rc == 0 && at < s->total; at += s->piece) {
        const size_t n = s->total - at < s->piece ? s->total - at : s->piece;
        if (read_all(s->m, s->ch, buf, n) != 0) {
            s->rc = -1;
            break;
        }
        for (size_t i = 0; i < n; i++) wrong += buf[i] != pattern(s->id, at + i);
    }
    if (s->rc == 0 && wrong) s->rc = (int)(wrong < 1000000 ? wrong : 1000000);
    free(buf);
    return NULL;
}

/* Small messages both ways, each end on its own channel, as two PEs' requests. */
static void ping_pong(void)
{
    struct shoal_mux *m[2];
    mux_pair(m);
    for (long i = 0; i < 2000; i++) {
        long in = -1;
        CHECK(shoal_mux_write(m[0], 0, &i, sizeof i) == 0);
        CHECK(read_all(m[1], 0, (unsigned char *)&in, sizeof in) == 0 && in == i);
        CHECK(shoal_mux_write(m[1], 1, &i, sizeof i) == 0);
        CHECK(read_all(m[0], 1, (unsigned char *)&in, sizeof in) == 0 && in == i);
    }
    long nothing;
    errno = 0;
    CHECK(shoal_mux_read(m[0], 0, &nothing, sizeof nothing, 0) == -1 && errno == EAGAIN);
    /* await: nothing comes within 20 ms; then a frame of the other
     * channel, taken in by that channel's read, leaves this one's bytes
     * buffered, which await reports at once. */
    CHECK(shoal_mux_await(m[0], 0, 20) == 0);
    const long two[2] = {7, 8};
    CHECK(shoal_mux_write(m[1], 0, &two[0], sizeof two[0]) == 0 && shoal_mux_write(m[1], 1, &two[1], sizeof two[1]) == 0);
    long got = 0;
    CHECK(read_all(m[0], 1, (unsigned char *)&got, sizeof got) == 0 && got == 8);
    CHECK(shoal_mux_pending(m[0], 0) == sizeof(long) && shoal_mux_await(m[0], 0, 0) == 1);
    int socket_too = 0;
    CHECK(shoal_mux_sleep_begin(m[0], 0, &socket_too) == -1);
    shoal_mux_sleep_end(m[0], 0);
    CHECK(shoal_mux_read(m[0], 0, &got, sizeof got, 0) == sizeof got && got == 7);
    CHECK(shoal_mux_sleep_begin(m[0], 0, &socket_too) >= 0 && socket_too);
    shoal_mux_sleep_end(m[0], 0);
    /* The other channel's traffic does not end a wait for this one (a
     * channel's handshake waits so for its peer's first bytes): it is
     * taken in for that channel. */
    CHECK(shoal_mux_write(m[1], 0, &two[0], sizeof two[0]) == 0);
    CHECK(shoal_mux_await(m[0], 1, 100) == 0);
    CHECK(shoal_mux_pending(m[0], 0) == sizeof(long));
    CHECK(shoal_mux_read(m[0], 0, &got, sizeof got, 0) == sizeof got && got == 7);
    shoal_mux_free(m[0]);
    shoal_mux_free(m[1]);
}

static int readable(int fd, int timeout_ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return poll(&p, 1, timeout_ms) == 1;
}

/* While channel 1's reader reads through a message, channel 0's sleeper
 * leaves the socket to it: it is woken when that reader takes in its bytes,
 * and when the read ends (nobody takes in for it after that). */
static void delegated_sleep(void)
{
    struct shoal_mux *m[2];
    mux_pair(m);
    int socket_too = 1;
    shoal_mux_reading_begin(m[0], 1);
    CHECK(shoal_mux_other_reading(m[0], 0) && !shoal_mux_other_reading(m[0], 1));
    int fd = shoal_mux_sleep_begin(m[0], 0, &socket_too);
    CHECK(fd >= 0 && !socket_too);
    CHECK(!readable(fd, 20));
    /* A frame of channel 0 behind one of channel 1: channel 1's read takes
     * the first in and wakes the sleeper. */
    const long two[2] = {5, 6};
    CHECK(shoal_mux_write(m[1], 0, &two[0], sizeof two[0]) == 0 && shoal_mux_write(m[1], 1, &two[1], sizeof two[1]) == 0);
    long got = 0;
    CHECK(read_all(m[0], 1, (unsigned char *)&got, sizeof got) == 0 && got == 6);
    CHECK(readable(fd, 1000));
    shoal_mux_sleep_end(m[0], 0);
    CHECK(shoal_mux_read(m[0], 0, &got, sizeof got, 0) == sizeof got && got == 5);
    /* Asleep again, left to the reader: its end wakes the sleeper. */
    fd = shoal_mux_sleep_begin(m[0], 0, &socket_too);
    CHECK(fd >= 0 && !socket_too && !readable(fd, 20));
    shoal_mux_reading_end(m[0], 1);
    CHECK(readable(fd, 1000));
    shoal_mux_sleep_end(m[0], 0);
    /* No reader any more: the sleep watches the socket, and no end of a
     * read wakes it. */
    fd = shoal_mux_sleep_begin(m[0], 0, &socket_too);
    CHECK(fd >= 0 && socket_too);
    shoal_mux_reading_begin(m[0], 1);
    shoal_mux_reading_end(m[0], 1);
    CHECK(!readable(fd, 20));
    shoal_mux_sleep_end(m[0], 0);
    shoal_mux_free(m[0]);
    shoal_mux_free(m[1]);
}

static pthread_mutex_t done_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_cond = PTHREAD_COND_INITIALIZER;
static int writers_done;

static void *writer_counted(void *arg)
{
    writer(arg);
    pthread_mutex_lock(&done_lock);
    writers_done++;
    pthread_cond_broadcast(&done_cond);
    pthread_mutex_unlock(&done_lock);
    return NULL;
}

/* Both ends write 32 MiB to each other and nobody reads until one writer
 * has finished: with plain blocking sends both would block once the
 * socket buffers fill, each waiting for the other to read. */
static void both_write_first(void)
{
    struct shoal_mux *m[2];
    mux_pair(m);
    const size_t total = (size_t)32 << 20;
    struct stream w[2] = {{m[0], 0, 0, total, 1 << 20, 0}, {m[1], 1, 1, total, 3 << 18, 0}};
    struct stream r[2] = {{m[1], 0, 0, total, 100000, 0}, {m[0], 1, 1, total, 65536, 0}};
    pthread_t t[4];
    writers_done = 0;
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, writer_counted, &w[i]);
    pthread_mutex_lock(&done_lock);
    while (!writers_done) pthread_cond_wait(&done_cond, &done_lock);
    pthread_mutex_unlock(&done_lock);
    for (int i = 0; i < 2; i++) pthread_create(&t[2 + i], NULL, reader, &r[i]);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    CHECK(w[0].rc == 0 && w[1].rc == 0);
    CHECK_MSG(r[0].rc == 0 && r[1].rc == 0, "channel 0: %d, channel 1: %d", r[0].rc, r[1].rc);
    shoal_mux_free(m[0]);
    shoal_mux_free(m[1]);
}

/* One end writes on both channels at once from two threads; the other end
 * reads each with its own thread, so each takes in the other's bytes and
 * wakes it. Both directions at the same time. */
static void two_readers(void)
{
    struct shoal_mux *m[2];
    mux_pair(m);
    const size_t total = (size_t)8 << 20;
    struct stream s[8];
    pthread_t t[8];
    int k = 0;
    for (int from = 0; from < 2; from++)
        for (int ch = 0; ch < 2; ch++) {
            const int id = from * 2 + ch;
            s[k] = (struct stream){m[from], ch, id, total, (size_t)1000 + 7919 * (size_t)id, 0};
            pthread_create(&t[k], NULL, writer, &s[k]);
            k++;
            s[k] = (struct stream){m[1 - from], ch, id, total, (size_t)333 + 4099 * (size_t)id, 0};
            pthread_create(&t[k], NULL, reader, &s[k]);
            k++;
        }
    for (int i = 0; i < k; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < k; i++) CHECK_MSG(s[i].rc == 0, "stream %d (%s): %d", s[i].id, i % 2 ? "read" : "write", s[i].rc);
    shoal_mux_free(m[0]);
    shoal_mux_free(m[1]);
}

static void *read_until_end(void *arg)
{
    struct stream *s = arg;
    unsigned char buf[64];
    ssize_t n;
    size_t got = 0;
    while ((n = shoal_mux_read(s->m, s->ch, buf, sizeof buf, 1)) > 0) got += (size_t)n;
    s->rc = n == 0 && got == s->total ? 0 : -1;
    return NULL;
}

/* The end reaches readers asleep on either channel, after what was sent. */
static void end_of_connection(void)
{
    struct shoal_mux *m[2];
    mux_pair(m);
    struct stream s[2] = {{m[1], 0, 0, 100, 0, -1}, {m[1], 1, 1, 0, 0, -1}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, read_until_end, &s[i]);
    unsigned char data[100] = {0};
    CHECK(shoal_mux_write(m[0], 0, data, sizeof data) == 0);
    usleep(20000);
    shoal_mux_shutdown(m[0]);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    CHECK(s[0].rc == 0 && s[1].rc == 0);
    errno = 0;
    CHECK(shoal_mux_write(m[1], 1, data, sizeof data) == -1 && errno == EPIPE);
    shoal_mux_free(m[0]);
    shoal_mux_free(m[1]);
}

/* A frame of length 0 or past the most allowed ends the stream for every
 * reader with EPROTO. */
static void malformed(void)
{
    const uint32_t bad[] = {0, 0x80000000u, (uint32_t)SHOAL_MUX_FRAME_MAX + 1};
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
        int fds[2];
        tcp_pair(fds);
        struct shoal_mux *m = shoal_mux_new(fds[1]);
        CHECK(m != NULL);
        const unsigned char good[] = {3, 0, 0, 0, 'a', 'b', 'c'};
        const unsigned char header[] = {(unsigned char)bad[b], (unsigned char)(bad[b] >> 8),
                                        (unsigned char)(bad[b] >> 16), (unsigned char)(bad[b] >> 24)};
        CHECK(write(fds[0], good, sizeof good) == (ssize_t)sizeof good);
        CHECK(write(fds[0], header, sizeof header) == (ssize_t)sizeof header);
        char buf[8];
        CHECK(read_all(m, 0, (unsigned char *)buf, 3) == 0 && !memcmp(buf, "abc", 3));
        errno = 0;
        CHECK(shoal_mux_read(m, 0, buf, sizeof buf, 1) == -1 && errno == EPROTO);
        errno = 0;
        CHECK(shoal_mux_read(m, 1, buf, sizeof buf, 1) == -1 && errno == EPROTO);
        close(fds[0]);
        shoal_mux_free(m);
    }
}

static const char *volatile part = "start";

static void hung(int sig)
{
    (void)sig;
    static const char msg[] = "FAIL test_tls_mux: no end within the time allowed, in ";
    if (write(2, msg, sizeof msg - 1) < 0 || write(2, part, strlen(part)) < 0 || write(2, "\n", 1) < 0) _exit(TEST_FAIL);
    _exit(TEST_FAIL);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    signal(SIGALRM, hung);
    alarm(getenv("MUX_TEST_SECONDS") ? (unsigned)atoi(getenv("MUX_TEST_SECONDS")) : 100);
    part = "ping_pong";
    ping_pong();
    part = "delegated_sleep";
    delegated_sleep();
    part = "both_write_first";
    both_write_first();
    part = "two_readers";
    two_readers();
    part = "end_of_connection";
    end_of_connection();
    part = "malformed";
    malformed();
    return test_failures ? TEST_FAIL : TEST_PASS;
}
