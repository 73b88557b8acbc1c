/* boot_launcher.c: the PE side of oshrun's bootstrap. One blocking request
 * and reply at a time over the private socket oshrun passed in
 * SHOAL_BOOT_FD (protocol in wire.h). A closed connection means the
 * launcher is gone: SHOAL_ERR_CLOSED, and the caller exits. */
#include "boot/boot.h"
#include "boot/wire.h"
#include "util/log.h"
#include "util/open_fds.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

struct launcher {
    int sock;
    int finalized;
    int local_size; /* PEs of this host: allgather_fds answers with theirs only */
};

static shoal_status_t report(shoal_status_t st, const char *what)
{
    if (st == SHOAL_ERR_SYS)
        shoal_error("boot", "%s: %s", what, strerror(errno));
    else if (st != SHOAL_OK)
        shoal_error("boot", "%s: %s", what, shoal_status_str(st));
    return st;
}

/* A descriptor pass cut short reads as a malformed message; when the
 * open-file limit explains it, says so with the numbers (1), else 0.
 * Listing our descriptors failing with EMFILE is itself the proof. */
static int fds_did_not_fit(int incoming)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return 0;
    const long open_now = shoal_open_fds(0);
    if (open_now >= 0
            ? (unsigned long long)open_now + (unsigned long long)incoming <= (unsigned long long)rl.rlim_cur
            : errno != EMFILE)
        return 0;
    if (open_now >= 0)
        shoal_error("boot", "the %d shared-memory descriptors of this host's PEs did not fit: this PE holds %ld open "
                    "descriptors and its open-file limit (ulimit -n) is %llu; raise the limit",
                    incoming, open_now, (unsigned long long)rl.rlim_cur);
    else
        shoal_error("boot", "the %d shared-memory descriptors of this host's PEs did not fit under this PE's open-file "
                    "limit (ulimit -n) of %llu; raise the limit", incoming, (unsigned long long)rl.rlim_cur);
    return 1;
}

unsigned long shoal_boot_shared_results, shoal_boot_mapped_results;

/* Sends one ALLGATHER and waits for its result; out holds the reply: the
 * blobs, or for a blob gather (len > 0) the memory file holding them
 * (ALLGATHER_SHARED, read by shared_result). */
static shoal_status_t exchange(shoal_boot_t *boot, uint32_t kind, const void *blob, size_t len, const int *fds,
                               int nfds, struct shoal_wire_msg *out)
{
    struct launcher *l = boot->impl;
    unsigned char kbuf[4];
    struct iovec iov[2];
    shoal_status_t st;
    if (l->finalized) return report(SHOAL_ERR_INVAL, "bootstrap used after finalize");
    shoal_wire_encode_gather_kind(kbuf, kind);
    iov[0].iov_base = kbuf;
    iov[0].iov_len = sizeof kbuf;
    iov[1].iov_base = (void *)blob;
    iov[1].iov_len = len;
    st = shoal_wire_send(l->sock, SHOAL_WIRE_ALLGATHER, iov, len ? 2 : 1, fds, nfds);
    if (st != SHOAL_OK) return report(st, "sending allgather to oshrun");
    st = shoal_wire_recv(l->sock, out);
    /* A shared result brings one descriptor: it may find no room either. */
    if (st == SHOAL_ERR_PROTO && fds_did_not_fit(nfds ? nfds * l->local_size : 1)) return st;
    if (st != SHOAL_OK) return report(st, "waiting for oshrun's allgather result");
    if (out->type == SHOAL_WIRE_ALLGATHER_SHARED && kind == SHOAL_WIRE_GATHER_BLOB) return SHOAL_OK;
    if (out->type != SHOAL_WIRE_ALLGATHER_RESULT || out->len != len * (size_t)boot->size ||
        out->nfds != nfds * l->local_size) {
        shoal_error("boot", "unexpected reply from oshrun: %s with %zu bytes and %d fds "
                    "(expected ALLGATHER_RESULT with %zu bytes and %d fds)",
                    shoal_wire_type_name(out->type), out->len, out->nfds, len * (size_t)boot->size,
                    nfds * l->local_size);
        shoal_wire_msg_release(out);
        return SHOAL_ERR_PROTO;
    }
    return SHOAL_OK;
}

/* Whether a memory file can be read in place: sealed against shrinking
 * and writing, so nobody cuts it under the mapping (a read past its end
 * is SIGBUS) or changes it while the host's PEs read, and long enough. */
static int mappable(int fd, size_t total)
{
    const int want = F_SEAL_SHRINK | F_SEAL_WRITE, seals = fcntl(fd, F_GET_SEALS);
    struct stat st;
    return seals >= 0 && (seals & want) == want && fstat(fd, &st) == 0 && (size_t)st.st_size >= total;
}

/* Reads an ALLGATHER_SHARED result of total bytes from its memory file,
 * which the launcher wrote once for every PE of this host: into recv, or
 * for a view mapped where it lies (copied when it cannot be). */
static shoal_status_t shared_result(const struct shoal_wire_msg *msg, void *recv, size_t total,
                                    struct shoal_boot_view *view)
{
    uint32_t said;
    if (shoal_wire_decode_shared(msg->payload, msg->len, &said) != SHOAL_OK || said != total) {
        shoal_error("boot", "unexpected reply from oshrun: a shared allgather result of %s bytes (expected %zu)",
                    msg->len == SHOAL_WIRE_SHARED_SIZE ? "a different number of" : "an unreadable number of", total);
        return SHOAL_ERR_PROTO;
    }
    if (view && mappable(msg->fds[0], total)) {
        void *map = mmap(NULL, total, PROT_READ, MAP_SHARED, msg->fds[0], 0);
        if (map != MAP_FAILED) {
            view->data = view->map = map;
            view->map_len = total;
            shoal_boot_shared_results++;
            shoal_boot_mapped_results++;
            return SHOAL_OK;
        }
    }
    if (view) {
        if (!(recv = view->heap = malloc(total))) return SHOAL_ERR_NOMEM;
        view->data = recv;
    }
    for (size_t got = 0; got < total;) {
        ssize_t n = pread(msg->fds[0], (char *)recv + got, total - got, (off_t)got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            if (n < 0) return report(SHOAL_ERR_SYS, "reading oshrun's shared allgather result");
            shoal_error("boot", "oshrun's shared allgather result ends at %zu of its %zu bytes", got, total);
            return SHOAL_ERR_PROTO;
        }
        got += (size_t)n;
    }
    shoal_boot_shared_results++;
    return SHOAL_OK;
}

/* An allgather whose result lands in recv, or (view set, recv NULL) stays
 * where it arrived: the socket's message itself or the memory file. */
static shoal_status_t gather(shoal_boot_t *boot, const void *send, size_t len, void *recv,
                             struct shoal_boot_view *view)
{
    struct shoal_wire_msg msg;
    shoal_status_t st;
    if (len && (!send || (!recv && !view))) return SHOAL_ERR_INVAL;
    if (len > SHOAL_WIRE_MAX_PAYLOAD / (size_t)boot->size) return report(SHOAL_ERR_RANGE, "allgather too large");
    st = exchange(boot, len ? SHOAL_WIRE_GATHER_BLOB : SHOAL_WIRE_GATHER_BARRIER, send, len, NULL, 0, &msg);
    if (st != SHOAL_OK) return st;
    if (msg.type == SHOAL_WIRE_ALLGATHER_SHARED) {
        st = shared_result(&msg, recv, len * (size_t)boot->size, view);
    } else if (view) {
        view->data = view->heap = msg.payload; /* taken over, not copied */
        msg.payload = NULL;
    } else if (recv && msg.len) { /* recv is set when len is; -O3 cannot see it */
        memcpy(recv, msg.payload, msg.len);
    }
    shoal_wire_msg_release(&msg); /* closes the memory file */
    return st;
}

static shoal_status_t launcher_allgather(shoal_boot_t *boot, const void *send, size_t len, void *recv)
{
    return gather(boot, send, len, recv, NULL);
}

static shoal_status_t launcher_allgather_view(shoal_boot_t *boot, const void *send, size_t len,
                                              struct shoal_boot_view *view)
{
    return gather(boot, send, len, NULL, view);
}

static shoal_status_t launcher_allgather_fds(shoal_boot_t *boot, const int *fds, int nfds, int *recv_fds)
{
    struct launcher *l = boot->impl;
    struct shoal_wire_msg msg;
    shoal_status_t st;
    if (nfds < 0 || (nfds && (!fds || !recv_fds))) return SHOAL_ERR_INVAL;
    if ((uint32_t)nfds > SHOAL_WIRE_MAX_FDS / (uint32_t)l->local_size)
        return report(SHOAL_ERR_RANGE, "allgather_fds: too many descriptors");
    st = exchange(boot, SHOAL_WIRE_GATHER_FDS, NULL, 0, fds, nfds, &msg);
    if (st != SHOAL_OK) return st;
    if (msg.nfds) memcpy(recv_fds, msg.fds, (size_t)msg.nfds * sizeof(int));
    free(msg.fds); /* the descriptors now belong to the caller */
    msg.fds = NULL;
    msg.nfds = 0;
    shoal_wire_msg_release(&msg);
    return SHOAL_OK;
}

static shoal_status_t launcher_barrier(shoal_boot_t *boot)
{
    struct shoal_wire_msg msg;
    shoal_status_t st = exchange(boot, SHOAL_WIRE_GATHER_BARRIER, NULL, 0, NULL, 0, &msg);
    if (st == SHOAL_OK) shoal_wire_msg_release(&msg);
    return st;
}

static shoal_status_t launcher_finalize(shoal_boot_t *boot)
{
    struct launcher *l = boot->impl;
    struct shoal_wire_msg msg;
    shoal_status_t st;
    if (l->finalized) return SHOAL_OK;
    st = shoal_wire_send(l->sock, SHOAL_WIRE_FINALIZE, NULL, 0, NULL, 0);
    if (st != SHOAL_OK) return report(st, "sending finalize to oshrun");
    st = shoal_wire_recv(l->sock, &msg);
    if (st != SHOAL_OK) return report(st, "waiting for oshrun's finalize acknowledgement");
    if (msg.type != SHOAL_WIRE_FINALIZE_ACK) {
        shoal_error("boot", "unexpected reply from oshrun: %s (expected FINALIZE_ACK)", shoal_wire_type_name(msg.type));
        shoal_wire_msg_release(&msg);
        return SHOAL_ERR_PROTO;
    }
    shoal_wire_msg_release(&msg);
    l->finalized = 1;
    return SHOAL_OK;
}

static void __attribute__((noreturn)) launcher_abort(shoal_boot_t *boot, int status, const char *reason)
{
    struct launcher *l = boot->impl;
    unsigned char buf[4 + SHOAL_WIRE_MAX_REASON];
    struct iovec iov = {.iov_base = buf, .iov_len = shoal_wire_encode_abort(buf, status, reason)};
    /* The launcher reads the ABORT before it looks at how we exited. */
    if (shoal_wire_send(l->sock, SHOAL_WIRE_ABORT, &iov, 1, NULL, 0) != SHOAL_OK && reason && *reason)
        fprintf(stderr, "shoal: PE %d: %s\n", boot->rank, reason);
    fflush(NULL);
    _exit(status);
}

static void launcher_close(shoal_boot_t *boot)
{
    struct launcher *l = boot->impl;
    close(l->sock);
    free(l);
    free(boot);
}

static const struct shoal_boot_ops launcher_ops = {
    .name = "launcher",
    .allgather = launcher_allgather,
    .allgather_view = launcher_allgather_view,
    .allgather_fds = launcher_allgather_fds,
    .barrier = launcher_barrier,
    .finalize = launcher_finalize,
    .abort = launcher_abort,
    .close = launcher_close,
};

shoal_status_t shoal_boot_open_launcher(int fd, int rank, int size, shoal_boot_t **out)
{
    struct shoal_wire_hello hello;
    unsigned char buf[SHOAL_WIRE_HELLO_SIZE];
    struct iovec iov = {.iov_base = buf, .iov_len = sizeof buf};
    shoal_boot_t *boot;
    struct launcher *l;
    shoal_status_t st;
    if (fd < 0 || size <= 0 || rank < 0 || rank >= size || !out) return SHOAL_ERR_INVAL;
    /* Our programs' own children must not inherit the bootstrap socket. */
    if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
        shoal_error("boot", "SHOAL_BOOT_FD=%d is not an open descriptor: %s", fd, strerror(errno));
        return SHOAL_ERR_SYS;
    }
    boot = calloc(1, sizeof *boot);
    l = calloc(1, sizeof *l);
    if (!boot || !l) {
        free(boot);
        free(l);
        return SHOAL_ERR_NOMEM;
    }
    l->sock = fd;
    /* Across hosts oshrun says how many PEs share this host; on one host, all. */
    l->local_size = size;
    const char *local = getenv("SHOAL_LOCAL_SIZE");
    if (local && *local) {
        char *end;
        long v = strtol(local, &end, 10);
        if (*end || v < 1 || v > size) {
            shoal_error("boot", "SHOAL_LOCAL_SIZE='%s' is not a number in [1, %d]", local, size);
            free(l);
            free(boot);
            return SHOAL_ERR_INVAL;
        }
        l->local_size = (int)v;
    }
    boot->ops = &launcher_ops;
    boot->rank = rank;
    boot->size = size;
    /* Two oshrun nodes on one machine (one namespace) are still two hosts:
     * each serves only its own PEs' descriptors. */
    shoal_boot_default_node_key(boot->node_key);
    const char *node_rank = getenv("SHOAL_NODE_RANK");
    if (node_rank && *node_rank) {
        size_t k = strlen(boot->node_key);
        snprintf(boot->node_key + k, sizeof boot->node_key - k, "/n%.8s", node_rank);
    }
    boot->impl = l;
    hello.rank = (uint32_t)rank;
    hello.size = (uint32_t)size;
    hello.pid = (uint32_t)getpid();
    shoal_wire_encode_hello(buf, &hello);
    st = shoal_wire_send(fd, SHOAL_WIRE_HELLO, &iov, 1, NULL, 0);
    if (st != SHOAL_OK) {
        report(st, "saying hello to oshrun");
        free(l);
        free(boot);
        return st;
    }
    *out = boot;
    return SHOAL_OK;
}
