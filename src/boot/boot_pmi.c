/* boot_pmi.c: a PMI-1 client (MPICH's Hydra and other process managers
 * that speak the "simple" wire protocol), over the descriptor in PMI_FD or
 * over a TCP connection to the PMI_PORT address (Hydra's -pmi-port mode,
 * where PMI_ID names the process and the initack handshake tells it its
 * rank and the job size).
 *
 * Each request is one line "cmd=<name> key=value ...\n" and gets one reply
 * line of the same form. Blobs travel hex-encoded in values, split over
 * several keys to stay inside the limits the server reports (get_maxes)
 * and inside the 1024-byte lines classic clients use. A PMI barrier also
 * publishes every put made before it.
 *
 * Every reply is untrusted: fields are length-checked, numbers parsed
 * strictly, and anything unexpected is SHOAL_ERR_PROTO with one line.
 *
 * MPICH's libmpi in the same process uses the same connection (Hydra gives
 * each process one). Both clients send init, which Hydra accepts twice,
 * and their requests never overlap in a single-threaded start-up. But
 * Hydra requires exactly one finalize per process and closes the
 * connection after it, so the last user must send it: see mpi_state.
 * Under PMI_PORT every client opens a connection of its own, so none of
 * that applies. */
#include "boot/boot_pm.h"
#include "util/log.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define PMI_LINE_MAX 1024      /* what we send: the limit classic servers assume */
#define PMI_REPLY_MAX 8192     /* what we accept: a value of up to vallen_max plus fields */
#define PMI_KVSNAME_MAX 256
#define PMI_FIELDS_MAX 16
#define PMI_CONNECT_MS 10000   /* PMI_PORT: time to connect */

struct pmi {
    int fd;
    int shared;             /* PMI_FD: the connection MPI in this process uses too */
    int finalized;
    unsigned seq;           /* allgather number: keys are never reused */
    size_t chunk;           /* raw bytes per value (two hex digits each) */
    char kvsname[PMI_KVSNAME_MAX + 1];
    char in[PMI_REPLY_MAX];
    size_t in_len;          /* bytes buffered in `in` */
    char line[PMI_REPLY_MAX + 1]; /* the last reply; fields point into it */
};

struct pmi_reply {
    int n;
    char *key[PMI_FIELDS_MAX];
    char *val[PMI_FIELDS_MAX];
};

static char *field(const struct pmi_reply *r, const char *key)
{
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->key[i], key) == 0) return r->val[i];
    return NULL;
}

/* Makes a field from the server safe to print (it is ours to change). */
static const char *printable(char *s)
{
    for (char *c = s; *c; c++)
        if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f) *c = '?';
    return s;
}

/* Strict decimal in [min, max]; 0 on success. */
static int parse_long(const char *text, long min, long max, long *out)
{
    char *end;
    long v;
    if (!text || !*text) return -1;
    errno = 0;
    v = strtol(text, &end, 10);
    if (errno || *end || v < min || v > max) return -1;
    *out = v;
    return 0;
}

static shoal_status_t write_all(int fd, const char *buf, size_t len)
{
    while (len) {
        /* MSG_NOSIGNAL: a server that went away is an error, not SIGPIPE. */
        ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
        if (n < 0 && errno == ENOTSOCK) n = write(fd, buf, len);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            shoal_error("boot", "writing to the PMI server: %s", strerror(errno));
            return errno == EPIPE ? SHOAL_ERR_CLOSED : SHOAL_ERR_SYS;
        }
        buf += n;
        len -= (size_t)n;
    }
    return SHOAL_OK;
}

/* Moves one line from the input buffer to p->line, NUL-terminated and
 * without its newline. */
static shoal_status_t read_line(struct pmi *p)
{
    for (;;) {
        char *nl = memchr(p->in, '\n', p->in_len);
        if (nl) {
            size_t len = (size_t)(nl - p->in);
            memcpy(p->line, p->in, len);
            p->line[len] = 0;
            memmove(p->in, nl + 1, p->in_len - len - 1);
            p->in_len -= len + 1;
            return SHOAL_OK;
        }
        if (p->in_len == PMI_REPLY_MAX) {
            shoal_error("boot", "PMI server sent a line longer than %d bytes", PMI_REPLY_MAX);
            return SHOAL_ERR_PROTO;
        }
        ssize_t n = read(p->fd, p->in + p->in_len, PMI_REPLY_MAX - p->in_len);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            shoal_error("boot", "reading from the PMI server: %s", strerror(errno));
            return SHOAL_ERR_SYS;
        }
        if (n == 0) {
            shoal_error("boot", "the PMI server closed the connection (was the job aborted?)");
            return SHOAL_ERR_CLOSED;
        }
        p->in_len += (size_t)n;
    }
}

/* Splits "a=b c=d" in place. Tokens without '=' are ignored (some servers
 * put spaces in messages); keys must be non-empty. */
static shoal_status_t split(char *line, struct pmi_reply *r)
{
    char *save = NULL;
    r->n = 0;
    for (char *tok = strtok_r(line, " \t\r", &save); tok; tok = strtok_r(NULL, " \t\r", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq) continue;
        if (eq == tok || r->n == PMI_FIELDS_MAX) return SHOAL_ERR_PROTO;
        *eq = 0;
        r->key[r->n] = tok;
        r->val[r->n] = eq + 1;
        r->n++;
    }
    return SHOAL_OK;
}

/* Reads one reply line, which must be cmd=expect with rc=0 when it
 * carries rc. Its strings live in p->line until the next read. */
static shoal_status_t read_reply(struct pmi *p, const char *expect, struct pmi_reply *r)
{
    shoal_status_t st;
    char *cmd, *rc;
    long rcv;
    st = read_line(p);
    if (st != SHOAL_OK) return st;
    if (split(p->line, r) != SHOAL_OK) {
        shoal_error("boot", "malformed reply from the PMI server to %s", expect);
        return SHOAL_ERR_PROTO;
    }
    cmd = field(r, "cmd");
    rc = field(r, "rc");
    if (!cmd || strcmp(cmd, expect) != 0) {
        shoal_error("boot", "unexpected reply from the PMI server: cmd=%.64s (expected %s)",
                    cmd ? printable(cmd) : "(none)",
                    expect);
        return SHOAL_ERR_PROTO;
    }
    if (rc && (parse_long(rc, -1000000, 1000000, &rcv) || rcv != 0)) {
        char *msg = field(r, "msg");
        shoal_error("boot", "PMI server: %s failed: rc=%.16s %.200s", expect, printable(rc),
                    msg ? printable(msg) : "");
        return SHOAL_ERR_PROTO;
    }
    return SHOAL_OK;
}

/* Sends one request line and parses the reply (see read_reply). */
static shoal_status_t call(struct pmi *p, const char *req, size_t req_len, const char *expect, struct pmi_reply *r)
{
    shoal_status_t st = write_all(p->fd, req, req_len);
    return st == SHOAL_OK ? read_reply(p, expect, r) : st;
}

static shoal_status_t callf(struct pmi *p, const char *expect, struct pmi_reply *r, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static shoal_status_t callf(struct pmi *p, const char *expect, struct pmi_reply *r, const char *fmt, ...)
{
    char req[PMI_LINE_MAX + 1];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(req, sizeof req, fmt, ap);
    va_end(ap);
    if (n < 0 || n > PMI_LINE_MAX) {
        shoal_error("boot", "PMI request for %s exceeds %d bytes", expect, PMI_LINE_MAX);
        return SHOAL_ERR_RANGE;
    }
    return call(p, req, (size_t)n, expect, r);
}

static shoal_status_t pmi_barrier_raw(struct pmi *p)
{
    struct pmi_reply r;
    return callf(p, "barrier_out", &r, "cmd=barrier_in\n");
}

enum mpi_state { MPI_ABSENT, MPI_RUNNING, MPI_DONE };

/* Whether an MPI library in this process is initialised and not yet
 * finalised (then it will send the finalize), or already finalised (then
 * the connection is closed). Both queries are legal at any time. */
static enum mpi_state mpi_state(void)
{
    void *a = dlsym(RTLD_DEFAULT, "MPI_Initialized"), *b = dlsym(RTLD_DEFAULT, "MPI_Finalized");
    int (*initialized)(int *), (*finalized)(int *);
    int init = 0, fin = 0;
    if (!a || !b) return MPI_ABSENT;
    memcpy(&initialized, &a, sizeof a);
    memcpy(&finalized, &b, sizeof b);
    if (finalized(&fin) == 0 && fin) return MPI_DONE;
    if (initialized(&init) == 0 && init) return MPI_RUNNING;
    return MPI_ABSENT;
}

/* Before each exchange: after MPI_Finalize the shared connection is gone. */
static shoal_status_t check_usable(struct pmi *p)
{
    if (p->finalized) {
        shoal_error("boot", "bootstrap used after finalize");
        return SHOAL_ERR_INVAL;
    }
    if (p->shared && mpi_state() == MPI_DONE) {
        shoal_error("boot", "MPI_Finalize has closed the PMI connection Shoal shares with MPI under Hydra "
                    "(mpiexec.mpich): call shmem_finalize before MPI_Finalize");
        return SHOAL_ERR_CLOSED;
    }
    return SHOAL_OK;
}

static const char hexdigit[] = "0123456789abcdef";

static void hex_encode(char *out, const unsigned char *in, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        out[2 * i] = hexdigit[in[i] >> 4];
        out[2 * i + 1] = hexdigit[in[i] & 15];
    }
    out[2 * len] = 0;
}

static int hex_val(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

/* Decodes exactly len bytes; -1 if text is not 2*len hex digits. */
static int hex_decode(unsigned char *out, const char *text, size_t len)
{
    if (strlen(text) != 2 * len) return -1;
    for (size_t i = 0; i < len; i++) {
        int hi = hex_val(text[2 * i]), lo = hex_val(text[2 * i + 1]);
        if (hi < 0 || lo < 0) return -1;
        out[i] = (unsigned char)(hi << 4 | lo);
    }
    return 0;
}

static shoal_status_t pmi_allgather(shoal_boot_t *boot, const void *send, size_t len, void *recv)
{
    struct pmi *p = boot->impl;
    struct pmi_reply r;
    char hex[PMI_LINE_MAX + 1];
    shoal_status_t st;
    if (len && (!send || !recv)) return SHOAL_ERR_INVAL;
    st = check_usable(p);
    if (st != SHOAL_OK) return st;
    size_t nchunks = (len + p->chunk - 1) / p->chunk;
    unsigned seq = p->seq++;
    /* Publish: key "sh<seq>.<rank>.<chunk>", value the chunk in hex. */
    for (size_t c = 0; c < nchunks; c++) {
        size_t off = c * p->chunk, n = len - off < p->chunk ? len - off : p->chunk;
        hex_encode(hex, (const unsigned char *)send + off, n);
        st = callf(p, "put_result", &r, "cmd=put kvsname=%s key=sh%u.%d.%zu value=%s\n", p->kvsname, seq, boot->rank,
                   c, hex);
        if (st != SHOAL_OK) return st;
    }
    st = pmi_barrier_raw(p);
    if (st != SHOAL_OK || !len) return st;
    for (int pe = 0; pe < boot->size; pe++) {
        unsigned char *dst = (unsigned char *)recv + (size_t)pe * len;
        if (pe == boot->rank) {
            memmove(dst, send, len);
            continue;
        }
        for (size_t c = 0; c < nchunks; c++) {
            size_t off = c * p->chunk, n = len - off < p->chunk ? len - off : p->chunk;
            st = callf(p, "get_result", &r, "cmd=get kvsname=%s key=sh%u.%d.%zu\n", p->kvsname, seq, pe, c);
            if (st != SHOAL_OK) return st;
            const char *value = field(&r, "value");
            if (!value || hex_decode(dst + off, value, n) != 0) {
                shoal_error("boot", "PE %d's allgather value %zu is not %zu bytes in hex: did every PE pass the "
                            "same length?", pe, c, n);
                return SHOAL_ERR_PROTO;
            }
        }
    }
    return SHOAL_OK;
}

/* The open connection, for the exit check below; one per process. */
static shoal_boot_t *pmi_live;

/* A PE that exits without shmem_finalize fails the job, as under oshrun:
 * left alone, Hydra kills the job but may still report status 0. */
static void pmi_exit_check(void)
{
    shoal_boot_t *boot = pmi_live;
    if (!boot || ((struct pmi *)boot->impl)->finalized) return;
    if (((struct pmi *)boot->impl)->shared && mpi_state() == MPI_DONE) return; /* MPI closed the connection; it has its own rules */
    boot->ops->abort(boot, 1, "exited without calling shmem_finalize");
}

static shoal_status_t pmi_barrier(shoal_boot_t *boot)
{
    struct pmi *p = boot->impl;
    shoal_status_t st = check_usable(p);
    return st == SHOAL_OK ? pmi_barrier_raw(p) : st;
}

static shoal_status_t pmi_finalize(shoal_boot_t *boot)
{
    struct pmi *p = boot->impl;
    struct pmi_reply r;
    shoal_status_t st;
    if (p->finalized) return SHOAL_OK;
    switch (p->shared ? mpi_state() : MPI_ABSENT) {
    case MPI_RUNNING: /* MPI_Finalize will send it; ours would cut MPI off */
    case MPI_DONE:    /* MPI_Finalize sent it, and Hydra closed the connection */
        p->finalized = 1;
        return SHOAL_OK;
    case MPI_ABSENT:
        break;
    }
    st = callf(p, "finalize_ack", &r, "cmd=finalize\n");
    if (st == SHOAL_OK) p->finalized = 1;
    return st;
}

static void __attribute__((noreturn)) pmi_abort(shoal_boot_t *boot, int status, const char *reason)
{
    struct pmi *p = boot->impl;
    char req[64];
    /* Hydra ends the job quietly, so the reason is printed here, once. */
    if (reason && *reason)
        fprintf(stderr, "shoal: PE %d: %s\n", boot->rank, reason);
    else
        fprintf(stderr, "shoal: PE %d called shmem_global_exit(%d)\n", boot->rank, status);
    fflush(NULL);
    /* Hydra kills the job on the abort without draining what its proxies
     * still hold of our stderr: half the time the line was lost. Give
     * them a moment to forward it. */
    struct timespec drain = {0, 200 * 1000 * 1000};
    nanosleep(&drain, NULL);
    int n = snprintf(req, sizeof req, "cmd=abort exitcode=%d\n", status);
    /* One plain send: a server that is already gone needs no second message. */
    if (send(p->fd, req, (size_t)n, MSG_NOSIGNAL) == n) {
        /* The server kills the job; wait a little for it so that the job's
         * status is the one asked for, not that of a PE that left early. */
        struct pollfd pfd = {.fd = p->fd, .events = POLLIN};
        struct timespec t0, t;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        do {
            char sink[256];
            if (poll(&pfd, 1, 500) > 0 && read(p->fd, sink, sizeof sink) == 0) break;
            clock_gettime(CLOCK_MONOTONIC, &t);
        } while (t.tv_sec - t0.tv_sec < 5);
    }
    _exit(status);
}

static void pmi_close(shoal_boot_t *boot)
{
    struct pmi *p = boot->impl;
    pmi_live = NULL;
    close(p->fd); /* our duplicate or our own connection; MPI keeps its own */
    free(p);
    free(boot);
}

static const struct shoal_boot_ops pmi_ops = {
    .name = "pmi",
    .allgather = pmi_allgather,
    .allgather_fds = shoal_boot_procfd_allgather,
    .barrier = pmi_barrier,
    .finalize = pmi_finalize,
    .abort = pmi_abort,
    .close = pmi_close,
};

/* init, get_maxes, get_my_kvsname; sizes p->chunk from the limits. */
static shoal_status_t handshake(struct pmi *p)
{
    struct pmi_reply r;
    shoal_status_t st;
    const char *v;
    long kvsname_max, keylen_max, vallen_max, version;
    st = callf(p, "response_to_init", &r, "cmd=init pmi_version=1 pmi_subversion=1\n");
    if (st != SHOAL_OK) return st;
    v = field(&r, "pmi_version");
    if (v && (parse_long(v, 0, 1000, &version) || version != 1)) {
        shoal_error("boot", "the PMI server speaks version %.16s, not 1", v);
        return SHOAL_ERR_PROTO;
    }
    st = callf(p, "maxes", &r, "cmd=get_maxes\n");
    if (st != SHOAL_OK) return st;
    if (parse_long(field(&r, "kvsname_max"), 1, 1 << 20, &kvsname_max) ||
        parse_long(field(&r, "keylen_max"), 1, 1 << 20, &keylen_max) ||
        parse_long(field(&r, "vallen_max"), 1, 1 << 20, &vallen_max)) {
        shoal_error("boot", "the PMI server's get_maxes reply lacks valid kvsname_max, keylen_max, vallen_max");
        return SHOAL_ERR_PROTO;
    }
    st = callf(p, "my_kvsname", &r, "cmd=get_my_kvsname\n");
    if (st != SHOAL_OK) return st;
    v = field(&r, "kvsname");
    if (!v || !*v || strlen(v) > PMI_KVSNAME_MAX || (long)strlen(v) > kvsname_max) {
        shoal_error("boot", "the PMI server's key-value space name is missing or longer than %d bytes",
                    PMI_KVSNAME_MAX);
        return SHOAL_ERR_PROTO;
    }
    strcpy(p->kvsname, v);
    /* Our keys ("sh" + 3 numbers) need at most 34 bytes. */
    if (keylen_max < 34) {
        shoal_error("boot", "the PMI server allows keys of only %ld bytes (need 34)", keylen_max);
        return SHOAL_ERR_UNSUPPORTED;
    }
    /* A put line: fixed words, kvsname, key of up to 34, value, newline. */
    long room = PMI_LINE_MAX - (long)strlen("cmd=put kvsname= key= value=\n") - (long)strlen(p->kvsname) - 34;
    if (vallen_max - 1 < room) room = vallen_max - 1; /* some servers count a terminating NUL */
    if (room < 16) {
        shoal_error("boot", "the PMI server allows values of only %ld bytes", vallen_max);
        return SHOAL_ERR_UNSUPPORTED;
    }
    p->chunk = (size_t)room / 2;
    return SHOAL_OK;
}

/* Connects to "host:port" within PMI_CONNECT_MS; *fd is -1 on failure. */
static shoal_status_t pmi_connect(const char *hostport, int *fd)
{
    char host[256], port[16];
    const char *colon = strrchr(hostport, ':');
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *list = NULL;
    long num;
    int err = 0;
    *fd = -1;
    if (!colon || colon == hostport || (size_t)(colon - hostport) >= sizeof host ||
        parse_long(colon + 1, 1, 65535, &num)) {
        shoal_error("boot", "PMI_PORT='%.200s' is not HOST:PORT", hostport);
        return SHOAL_ERR_INVAL;
    }
    /* "[::1]:port" names an IPv6 address. */
    const char *h = hostport, *h_end = colon;
    if (*h == '[' && h_end[-1] == ']') h++, h_end--;
    snprintf(host, sizeof host, "%.*s", (int)(h_end - h), h);
    snprintf(port, sizeof port, "%ld", num);
    int gai = getaddrinfo(host, port, &hints, &list);
    if (gai != 0) {
        shoal_error("boot", "PMI_PORT=%.200s: cannot resolve '%s': %s", hostport, host, gai_strerror(gai));
        return SHOAL_ERR_SYS;
    }
    for (struct addrinfo *a = list; a && *fd < 0; a = a->ai_next) {
        int s = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
        if (s < 0) {
            err = errno;
            continue;
        }
        /* Non-blocking, so a host that never answers costs seconds, not minutes. */
        err = connect(s, a->ai_addr, a->ai_addrlen) == 0 ? 0 : errno;
        if (err == EINPROGRESS) {
            struct pollfd pfd = {.fd = s, .events = POLLOUT};
            socklen_t len = sizeof err;
            int n;
            do n = poll(&pfd, 1, PMI_CONNECT_MS);
            while (n < 0 && errno == EINTR);
            if (n == 0)
                err = ETIMEDOUT;
            else if (n < 0 || getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
                err = errno;
        }
        if (err == 0 && fcntl(s, F_SETFL, fcntl(s, F_GETFL) & ~O_NONBLOCK) == 0) {
            *fd = s;
            break;
        }
        close(s);
    }
    freeaddrinfo(list);
    if (*fd < 0) {
        shoal_error("boot", "cannot reach the PMI server at PMI_PORT=%.200s: %s (is the launcher, e.g. mpiexec "
                    "-pmi-port, still running?)", hostport, strerror(err ? err : ECONNREFUSED));
        return SHOAL_ERR_CLOSED;
    }
    return SHOAL_OK;
}

/* Under PMI_PORT with PMI_ID: "cmd=initack pmiid=ID" is answered by
 * cmd=initack and three cmd=set lines carrying size, rank and debug. */
static shoal_status_t initack(struct pmi *p, long id, int *rank, int *size)
{
    struct pmi_reply r;
    long got_size = -1, got_rank = -1, v;
    shoal_status_t st = callf(p, "initack", &r, "cmd=initack pmiid=%ld\n", id);
    for (int i = 0; i < 3 && st == SHOAL_OK; i++) {
        const char *text;
        st = read_reply(p, "set", &r);
        if (st != SHOAL_OK) break;
        if ((text = field(&r, "size"))) {
            if (parse_long(text, 1, INT_MAX, &v)) st = SHOAL_ERR_PROTO;
            got_size = v;
        } else if ((text = field(&r, "rank"))) {
            if (parse_long(text, 0, INT_MAX - 1, &v)) st = SHOAL_ERR_PROTO;
            got_rank = v;
        }
    }
    if (st == SHOAL_ERR_PROTO || (st == SHOAL_OK && (got_size < 0 || got_rank < 0 || got_rank >= got_size))) {
        shoal_error("boot", "the PMI server's answer to initack (PMI_ID=%ld) lacks a valid size and rank", id);
        return SHOAL_ERR_PROTO;
    }
    if (st != SHOAL_OK) return st;
    *size = (int)got_size;
    *rank = (int)got_rank;
    return SHOAL_OK;
}

/* Takes p (connected, handshake not yet made) and makes the bootstrap;
 * frees p on failure. */
static shoal_status_t open_connected(struct pmi *p, int rank, int size, shoal_boot_t **out)
{
    shoal_boot_t *boot = calloc(1, sizeof *boot);
    shoal_status_t st = boot ? handshake(p) : SHOAL_ERR_NOMEM;
    if (st != SHOAL_OK) {
        close(p->fd);
        free(p);
        free(boot);
        return st;
    }
    boot->ops = &pmi_ops;
    boot->rank = rank;
    boot->size = size;
    boot->impl = p;
    shoal_boot_default_node_key(boot->node_key);
    static int exit_check_registered;
    if (!exit_check_registered) exit_check_registered = atexit(pmi_exit_check) == 0;
    pmi_live = boot;
    *out = boot;
    return SHOAL_OK;
}

shoal_status_t shoal_boot_open_pmi(int fd, int rank, int size, shoal_boot_t **out)
{
    struct pmi *p;
    if (fd < 0 || size <= 0 || rank < 0 || rank >= size || !out) return SHOAL_ERR_INVAL;
    if (fcntl(fd, F_GETFD) < 0) {
        shoal_error("boot", "PMI_FD=%d is not an open descriptor: %s", fd, strerror(errno));
        return SHOAL_ERR_SYS;
    }
    p = calloc(1, sizeof *p);
    if (!p) return SHOAL_ERR_NOMEM;
    /* A duplicate of our own: MPICH closes PMI_FD in MPI_Finalize, and the
     * number could then name an unrelated file. */
    p->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (p->fd < 0) {
        shoal_error("boot", "cannot duplicate PMI_FD=%d: %s", fd, strerror(errno));
        free(p);
        return SHOAL_ERR_SYS;
    }
    p->shared = 1;
    return open_connected(p, rank, size, out);
}

shoal_status_t shoal_boot_open_pmi_port(const char *hostport, long id, int rank, int size, shoal_boot_t **out)
{
    struct pmi *p;
    shoal_status_t st;
    if (!hostport || !out || (id < 0 && (size <= 0 || rank < 0 || rank >= size))) return SHOAL_ERR_INVAL;
    /* MPICH's library would open a second connection for the same PMI_ID,
     * which Hydra mixes up (the job hangs or its proxy fails). */
    if (dlsym(RTLD_DEFAULT, "MPI_Init")) {
        shoal_error("boot", "this program uses MPI too, and under PMI_PORT (mpiexec -pmi-port) MPI and Shoal "
                    "would each connect as the same process, which Hydra does not support; run mpiexec without "
                    "-pmi-port");
        return SHOAL_ERR_UNSUPPORTED;
    }
    p = calloc(1, sizeof *p);
    if (!p) return SHOAL_ERR_NOMEM;
    st = pmi_connect(hostport, &p->fd);
    if (st == SHOAL_OK && id >= 0) st = initack(p, id, &rank, &size);
    if (st != SHOAL_OK) {
        if (p->fd >= 0) close(p->fd);
        free(p);
        return st;
    }
    return open_connected(p, rank, size, out);
}
