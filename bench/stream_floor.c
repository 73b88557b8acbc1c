/* stream_floor.c: what one TCP stream carries on this machine in the
 * clear, and sealed as user-space TLS 1.3 must seal it, with no library
 * around either. bench/aead_floor.c gives the cipher's ceiling; this
 * adds what every stream pays besides: the kernel's copies in and out of
 * socket buffers, on the same cores as the cipher when both ends share a
 * host (one host, or network namespace hosts).
 *
 * Two processes, one TCP connection (on 127.0.0.1, or between two network
 * namespace hosts), 1 MiB messages:
 * - clear:  the sender sends from its source; the receiver receives
 *           straight into its destination (libfabric tcp's least work);
 * - sealed: the sender seals 16 KiB records (TLS 1.3's largest) laid out as
 *           TLS 1.3 lays them out (5-byte header as associated data, the
 *           inner content type, a 16-byte tag, the nonce the IV XOR the
 *           record's sequence number) with AES-128-GCM from its source
 *           into a 256 KiB buffer, sending it when full; the receiver reads
 *           into its buffer, opens each whole record in place and copies it
 *           to its destination (a record's bytes may reach the destination
 *           only once its tag is checked). That is one cipher pass per side
 *           and the fewest copies user-space TLS can do; kernel TLS would
 *           fold the copy into the cipher pass.
 * The receiver checks every byte of the first and the last message (a
 * check of every message would add a pass of its own to both kinds).
 *   stream_floor                      both ends, over 127.0.0.1;
 *   stream_floor --listen PORT        the receiving end, in one namespace,
 *   stream_floor --connect ADDR PORT  and the sending end in another;
 * the sending end prints, as the bench/ probes do (figure,size,pes,value,
 * unit; the median of 5 runs, the two kinds alternating, a connection each):
 *   stream_clear, stream_sealed            GB/s (1e9 B/s) of payload
 *   stream_clear_cpu, stream_sealed_cpu    CPU time of both processes
 *                                          together per MiB (ms): the work
 *                                          the two ends share the cores with */
#ifndef _GNU_SOURCE /* the build passes it */
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "floor_net.h"
#include "floor_seal.h"

enum {
    RUNS = 5,
    MESSAGE = 1 << 20,
    RECORD = 16384,
    SEALED = FLOOR_SEALED(RECORD), /* one record on the wire */
    SEND_BUFFER = 256 * 1024,
    READ_BUFFER = 512 * 1024
};

/* 1 MiB messages a run: 256, or STREAM_FLOOR_MESSAGES (the smoke test's
 * short run); the sending end tells the receiving one with each run. */
static uint32_t messages = 256;

static void die(const char *what)
{
    fprintf(stderr, "stream_floor: %s failed\n", what);
    exit(1);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double cpu_s(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void send_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len) {
        ssize_t n = send(fd, p, len, 0);
        if (n <= 0) die("send");
        p += n;
        len -= (size_t)n;
    }
}

/* Sends one run's messages; returns the receiver's CPU seconds for it. */
static double sender(int fd, int sealed)
{
    unsigned char *src = malloc(MESSAGE), *out = malloc(SEND_BUFFER);
    struct floor_seal seal;
    if (!src || !out || floor_seal_init(&seal, 1) != 0) die("sender setup");
    for (size_t i = 0; i < MESSAGE; i++) src[i] = (unsigned char)(i * 7 + 1);
    const uint32_t head[2] = {(uint32_t)sealed, messages}; /* both ends are this program, on this machine */
    send_all(fd, head, sizeof head);
    for (uint32_t m = 0; m < messages; m++) {
        if (!sealed) {
            send_all(fd, src, MESSAGE);
            continue;
        }
        size_t used = 0;
        for (size_t off = 0; off < MESSAGE; off += RECORD) {
            if (used + SEALED > SEND_BUFFER) send_all(fd, out, used), used = 0;
            if (floor_seal(&seal, src + off, RECORD, out + used) != 0) die("sealing a record");
            used += SEALED;
        }
        send_all(fd, out, used);
    }
    double receiver_cpu;
    if (recv(fd, &receiver_cpu, sizeof receiver_cpu, MSG_WAITALL) != sizeof receiver_cpu)
        die("waiting for the receiver");
    floor_seal_free(&seal);
    free(src);
    free(out);
    return receiver_cpu;
}

/* Receives one run (its kind and length come first) and answers with its
 * CPU time. */
static void receiver(int fd)
{
    const double cpu0 = cpu_s();
    uint32_t head[2];
    if (recv(fd, head, sizeof head, MSG_WAITALL) != sizeof head) die("receiving the run's kind");
    const uint32_t sealed = head[0], count = head[1];
    unsigned char *dst = malloc(MESSAGE), *in = malloc(READ_BUFFER), *expected = malloc(MESSAGE);
    struct floor_seal seal;
    if (!dst || !in || !expected || floor_seal_init(&seal, 0) != 0) die("receiver setup");
    for (size_t i = 0; i < MESSAGE; i++) expected[i] = (unsigned char)(i * 7 + 1);
    size_t start = 0, end = 0; /* unopened bytes of in */
    for (uint32_t m = 0; m < count; m++) {
        const int checked = m == 0 || m + 1 == count;
        if (checked) memset(dst, 0, MESSAGE);
        for (size_t got = 0; got < MESSAGE;) {
            if (!sealed) {
                ssize_t n = recv(fd, dst + got, MESSAGE - got, 0);
                if (n <= 0) die("recv");
                got += (size_t)n;
                continue;
            }
            if (end - start >= SEALED) {
                if (floor_open(&seal, in + start, RECORD) != 0) die("opening a record");
                memcpy(dst + got, in + start + FLOOR_SEAL_HEADER, RECORD);
                got += RECORD;
                start += SEALED;
                continue;
            }
            if (start) memmove(in, in + start, end - start), end -= start, start = 0;
            ssize_t n = recv(fd, in + end, READ_BUFFER - end, 0);
            if (n <= 0) die("recv");
            end += (size_t)n;
        }
        if (checked && memcmp(dst, expected, MESSAGE)) die("checking the received data");
    }
    floor_seal_free(&seal);
    free(dst);
    free(in);
    free(expected);
    const double cpu = cpu_s() - cpu0;
    send_all(fd, &cpu, sizeof cpu);
}

/* The receiving end: one connection per run. */
static void serve_runs(int ls)
{
    for (int k = 0; k < 2 * RUNS; k++) {
        int fd = accept(ls, NULL, NULL);
        if (fd < 0) die("accept");
        receiver(fd);
        close(fd);
    }
}

/* One run: returns GB/s and sets *cpu_ms to both ends' CPU per MiB. */
static double run(const struct sockaddr_in *to, int sealed, double *cpu_ms)
{
    int fd = floor_connect(to);
    if (fd < 0) die("connect");
    const double cpu0 = cpu_s(), t = now_s();
    const double receiver_cpu = sender(fd, sealed);
    const double took = now_s() - t;
    close(fd);
    const double mib = (double)messages * MESSAGE / (1 << 20);
    *cpu_ms = (cpu_s() - cpu0 + receiver_cpu) * 1e3 / mib;
    return (double)messages * MESSAGE / took / 1e9;
}

int main(int argc, char **argv)
{
    const char *short_run = getenv("STREAM_FLOOR_MESSAGES");
    if (short_run && (atol(short_run) < 1 || atol(short_run) > 65536)) {
        fprintf(stderr, "stream_floor: STREAM_FLOOR_MESSAGES=%s: expected 1 to 65536\n", short_run);
        return 2;
    }
    if (short_run) messages = (uint32_t)atol(short_run);
    struct sockaddr_in to;
    pid_t child = -1;
    if (argc == 3 && !strcmp(argv[1], "--listen")) {
        int ls = floor_listen(atoi(argv[2]), &to);
        if (ls < 0) die("listen");
        serve_runs(ls);
        return 0;
    }
    if (argc == 4 && !strcmp(argv[1], "--connect")) {
        if (floor_peer(argv[2], argv[3], &to) != 0) {
            fprintf(stderr, "stream_floor: not an IPv4 address: %s\n", argv[2]);
            return 2;
        }
    } else if (argc == 1) {
        int ls = floor_listen(0, &to);
        if (ls < 0) die("listen");
        child = fork();
        if (child < 0) die("fork");
        if (child == 0) {
            serve_runs(ls);
            _exit(0);
        }
        close(ls);
    } else {
        fprintf(stderr, "usage: stream_floor [--listen PORT | --connect ADDR PORT]\n");
        return 2;
    }
    double bw[2][RUNS], cpu[2][RUNS];
    for (int k = 0; k < RUNS; k++)
        for (int sealed = 0; sealed < 2; sealed++) bw[sealed][k] = run(&to, sealed, &cpu[sealed][k]);
    int status;
    if (child > 0 && (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status)))
        die("the receiver");
    printf("# stream_floor: 1 MiB messages over one TCP connection, %u MiB a run; sealed: AES-128-GCM (EVP) in "
           "%d-byte TLS 1.3 records\n",
           (unsigned)messages, RECORD);
    printf("# figure,size,pes,value,unit (value: median of %d runs)\n", RUNS);
    static const char *const kind[2] = {"clear", "sealed"};
    for (int s = 0; s < 2; s++) {
        qsort(bw[s], RUNS, sizeof(double), cmp_double);
        qsort(cpu[s], RUNS, sizeof(double), cmp_double);
        printf("stream_%s,%d,2,%.3f,GB/s\n", kind[s], MESSAGE, bw[s][RUNS / 2]);
        printf("stream_%s_cpu,%d,2,%.3f,ms/MiB\n", kind[s], MESSAGE, cpu[s][RUNS / 2]);
    }
    return 0;
}
