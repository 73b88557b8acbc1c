/* tcp_floor.c: what an exchange over TCP costs here with no library (and,
 * but for the sealed ping-pong, no encryption): two processes, one
 * connection with TCP_NODELAY, 64-byte messages, each received by spinning
 * on a non-blocking recv, as a spinning wait would, with the fewest system
 * calls. scripts/bench_network.sh runs it beside the libraries so their
 * figures can be set against the floor of the same run.
 *   tcp_floor                      both ends on 127.0.0.1 (fork)
 *   tcp_floor --listen PORT        one end, in one network namespace ...
 *   tcp_floor --connect ADDR PORT  ... and the other, which prints
 * Prints, as the bench/ probes do (figure,size,pes,value,unit; the median
 * of 3 timed runs):
 *   tcp_pingpong   half a round trip: one side sends, the other answers
 *                  (a get or fetch_add waits at least a whole one)
 *   tcp_exchange   both sides send, then each receives the other's: the
 *                  least one round of a 2-member barrier costs
 *   tcp_sealed_pingpong  tcp_pingpong with every message sealed into a
 *                  TLS 1.3 record by the sender and opened (its tag
 *                  checked) by the receiver, as the encrypted transport's
 *                  streams carry them (floor_seal.h): the least a get or
 *                  fetch_add over encrypted streams waits is a whole round
 *                  trip of it
 *   tcp_oneway_pingpong, tcp_oneway_exchange  the first two over two
 *                  connections, each carrying one direction only, as the
 *                  encrypted transport's streams carry signals with a
 *                  connection per stream (SHMEM_TLS_PAIR=off): no data
 *                  goes back on a connection to carry its ACKs, so the
 *                  receiving kernel sends each by itself
 * With --members M, each end also forks M processes that share a page
 * with it, and prints after the above:
 *   tcp_hier_barrier  a barrier of 2 hosts x (M + 1) processes as Shoal's
 *                  hierarchical one runs it: each member adds one to its
 *                  leader's arrival word, the leader sees them all, sends
 *                  64 bytes to the other leader and receives its 64, then
 *                  stores the release its members wait for. Every wait
 *                  yields between looks, as waits must where processes
 *                  outnumber cores (2 x 2 on 2 cores: spinning ones hold
 *                  the core the awaited process needs). */
#ifndef _GNU_SOURCE /* the build passes it */
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <sched.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "floor_net.h"
#include "floor_seal.h"

enum { RUNS = 3, MSG = 64, SEALED_MSG = FLOOR_SEALED(MSG) };

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void die(const char *what)
{
    perror(what);
    exit(1);
}

/* For libcrypto's failures, which leave errno alone. */
static void die_cipher(const char *what)
{
    fprintf(stderr, "tcp_floor: %s failed\n", what);
    exit(1);
}

static void send_len(int fd, const void *data, size_t len)
{
    const char *buf = data;
    size_t done = 0;
    while (done < len) {
        ssize_t n = send(fd, buf + done, len - done, MSG_NOSIGNAL);
        if (n <= 0) die("tcp_floor: send");
        done += (size_t)n;
    }
}

static void send_msg(int fd, const char *buf) { send_len(fd, buf, MSG); }

static void recv_len(int fd, void *data, size_t len)
{
    char *buf = data;
    size_t done = 0;
    while (done < len) {
        /* Spin on a non-blocking receive: one system call per look, the
         * least any polling receiver pays. */
        ssize_t n = recv(fd, buf + done, len - done, MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
        if (n <= 0) die("tcp_floor: recv");
        done += (size_t)n;
    }
}

/* Each end seals what it sends and opens what it receives. */
struct sealed_ends {
    struct floor_seal out, in;
};

/* Sends one message; where e is given, sealed into a TLS 1.3 record
 * (recv_one opens it and checks its tag). */
static void send_one(int fd, struct sealed_ends *e, const unsigned char *msg)
{
    if (!e) {
        send_len(fd, msg, MSG);
        return;
    }
    unsigned char rec[SEALED_MSG];
    if (floor_seal(&e->out, msg, MSG, rec) != 0) die_cipher("sealing a record");
    send_len(fd, rec, sizeof rec);
}

static void recv_one(int fd, struct sealed_ends *e, unsigned char *msg)
{
    if (!e) {
        recv_len(fd, msg, MSG);
        return;
    }
    unsigned char rec[SEALED_MSG];
    recv_len(fd, rec, sizeof rec);
    if (floor_open(&e->in, rec, MSG) != 0) die_cipher("opening a record");
    memcpy(msg, rec + FLOOR_SEAL_HEADER, MSG);
}

/* recv_len of one message for a process sharing cores: yields between
 * looks. */
static void recv_msg_yielding(int fd, char *buf)
{
    size_t done = 0;
    while (done < MSG) {
        ssize_t n = recv(fd, buf + done, MSG - done, MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
            sched_yield();
            continue;
        }
        if (n <= 0) die("tcp_floor: recv");
        done += (size_t)n;
    }
}

/* The words a host's processes share, each on its own cache line. */
struct host_words {
    _Alignas(64) unsigned long arrive; /* members' arrivals, only grows */
    _Alignas(64) unsigned long release; /* the last barrier the leader released */
};

/* A member: barriers first .. last, then exits. */
static void member(struct host_words *w, unsigned long first, unsigned long last)
{
    for (unsigned long b = first; b <= last; b++) {
        __atomic_fetch_add(&w->arrive, 1, __ATOMIC_ACQ_REL);
        while (__atomic_load_n(&w->release, __ATOMIC_ACQUIRE) < b) sched_yield();
    }
}

/* The leader's side of barriers first .. last; us per barrier. */
static double leader(int fd, struct host_words *w, int members, unsigned long first, unsigned long last)
{
    char buf[MSG];
    memset(buf, 1, sizeof buf);
    const double t = now_us();
    for (unsigned long b = first; b <= last; b++) {
        while (__atomic_load_n(&w->arrive, __ATOMIC_ACQUIRE) < b * (unsigned long)members) sched_yield();
        send_msg(fd, buf);
        recv_msg_yielding(fd, buf);
        __atomic_store_n(&w->release, b, __ATOMIC_RELEASE);
    }
    return (now_us() - t) / (double)(last - first + 1);
}

/* tcp_hier_barrier: forks the members, runs the barriers, reaps them. */
static void measure_hier(int fd, int members, int report, long iters)
{
    struct host_words *w = mmap(NULL, sizeof *w, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (w == MAP_FAILED) die("tcp_floor: mmap");
    const unsigned long warm = (unsigned long)iters / 4 + 1, total = warm + RUNS * (unsigned long)iters;
    for (int m = 0; m < members; m++) {
        pid_t p = fork();
        if (p < 0) die("tcp_floor: fork");
        if (p == 0) {
            close(fd);
            member(w, 1, total);
            _exit(0);
        }
    }
    double v[RUNS];
    leader(fd, w, members, 1, warm);
    for (int r = 0; r < RUNS; r++)
        v[r] = leader(fd, w, members, warm + 1 + (unsigned long)r * iters, warm + (unsigned long)(r + 1) * iters);
    int failed = 0;
    for (int m = 0; m < members; m++) {
        int status = 0;
        if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) failed = 1;
    }
    if (failed) die("tcp_floor: a member failed");
    qsort(v, RUNS, sizeof v[0], cmp_double);
    if (report) printf("tcp_hier_barrier,0,%d,%.4g,us\n", 2 * (members + 1), v[RUNS / 2]);
}

/* The probe's two connections: every figure but the one-way ones uses the
 * first only. */
struct conns {
    int fd, fd2;
};

/* One timed run of iters exchanges of kind; the first side (first = 1)
 * starts ping-pongs. Returns us per exchange (per half round trip). */
static double run(const struct conns *c, int first, const char *kind, long iters, struct sealed_ends *e)
{
    unsigned char buf[MSG];
    memset(buf, first, sizeof buf);
    const int exchange = strstr(kind, "exchange") != NULL;
    struct sealed_ends *const sealing = strcmp(kind, "tcp_sealed_pingpong") ? NULL : e;
    /* One way: the first side sends on the first connection only, the
     * other side on the second only. */
    const int oneway = !strncmp(kind, "tcp_oneway_", 11);
    const int out = oneway && !first ? c->fd2 : c->fd, in = oneway && first ? c->fd2 : c->fd;
    const double t = now_us();
    for (long i = 0; i < iters; i++) {
        if (first || exchange) {
            send_one(out, sealing, buf);
            recv_one(in, sealing, buf);
        } else {
            recv_one(in, sealing, buf);
            send_one(out, sealing, buf);
        }
    }
    const double per = (now_us() - t) / (double)iters;
    return exchange ? per : per / 2;
}

static void measure(const struct conns *c, int first, int report, long iters)
{
    static const char *const kinds[] = {"tcp_pingpong", "tcp_exchange", "tcp_sealed_pingpong",
                                        "tcp_oneway_pingpong", "tcp_oneway_exchange"};
    const int one = 1;
    if (setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0 ||
        setsockopt(c->fd2, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0)
        die("tcp_floor: TCP_NODELAY");
    struct sealed_ends e;
    if (floor_seal_init(&e.out, 1) != 0 || floor_seal_init(&e.in, 0) != 0) die_cipher("the cipher setup");
    if (report) printf("# figure,size,pes,value,unit (value: median of %d runs)\n", RUNS);
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        double v[RUNS];
        run(c, first, kinds[k], iters / 4 + 1, &e); /* warm-up */
        for (int r = 0; r < RUNS; r++) v[r] = run(c, first, kinds[k], iters, &e);
        qsort(v, RUNS, sizeof v[0], cmp_double);
        if (report) printf("%s,%d,2,%.4g,us\n", kinds[k], MSG, v[RUNS / 2]);
    }
    floor_seal_free(&e.out);
    floor_seal_free(&e.in);
}

/* The accepting end's two connections, in the order the other end made them. */
static void accept_both(int ls, struct conns *c)
{
    if ((c->fd = accept(ls, NULL, NULL)) < 0 || (c->fd2 = accept(ls, NULL, NULL)) < 0) die("tcp_floor: accept");
}

/* The connecting end's: the second once the first is made, so the other
 * end accepts them in this order. */
static void connect_both(const struct sockaddr_in *addr, struct conns *c)
{
    if ((c->fd = floor_connect(addr)) < 0 || (c->fd2 = floor_connect(addr)) < 0) die("tcp_floor: connect");
}

int main(int argc, char **argv)
{
    const long iters = getenv("TCP_FLOOR_ITERS") ? atol(getenv("TCP_FLOOR_ITERS")) : 20000;
    struct sockaddr_in addr;
    struct conns c;
    /* --members M comes last: 2 x (M + 1) processes for tcp_hier_barrier. */
    int members = 0;
    if (argc >= 3 && !strcmp(argv[argc - 2], "--members")) {
        members = atoi(argv[argc - 1]);
        if (members < 1 || members > 64) {
            fprintf(stderr, "tcp_floor: --members takes 1 to 64, not %s\n", argv[argc - 1]);
            return 2;
        }
        argc -= 2;
    }
    /* Barriers take some ten times an exchange: fewer of them. */
    const long hier_iters = iters / 10 + 1;
    if (argc == 3 && !strcmp(argv[1], "--listen")) {
        int ls = floor_listen(atoi(argv[2]), &addr);
        if (ls < 0) die("tcp_floor: listen");
        accept_both(ls, &c);
        measure(&c, 0, 0, iters);
        if (members) measure_hier(c.fd, members, 0, hier_iters);
        return 0;
    }
    if (argc == 4 && !strcmp(argv[1], "--connect")) {
        if (floor_peer(argv[2], argv[3], &addr) != 0) {
            fprintf(stderr, "tcp_floor: not an IPv4 address: %s\n", argv[2]);
            return 2;
        }
        connect_both(&addr, &c);
        measure(&c, 1, 1, iters);
        if (members) measure_hier(c.fd, members, 1, hier_iters);
        return 0;
    }
    if (argc != 1 || iters <= 0) {
        fprintf(stderr, "usage: tcp_floor [--listen PORT | --connect ADDR PORT] [--members M]\n");
        return 2;
    }
    int ls = floor_listen(0, &addr);
    if (ls < 0) die("tcp_floor: listen");
    pid_t child = fork();
    if (child < 0) die("tcp_floor: fork");
    if (child == 0) {
        close(ls);
        connect_both(&addr, &c);
        measure(&c, 0, 0, iters);
        if (members) measure_hier(c.fd, members, 0, hier_iters);
        _exit(0);
    }
    accept_both(ls, &c);
    measure(&c, 1, 1, iters);
    if (members) measure_hier(c.fd, members, 1, hier_iters);
    int status = 0;
    waitpid(child, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
