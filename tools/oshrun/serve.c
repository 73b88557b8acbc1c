/* serve.c: the launcher side of the bootstrap protocol (boot/wire.h).
 * An allgather is answered when every PE has contributed; contributions
 * must agree on kind, blob length and descriptor count, and a PE that
 * breaks the protocol ends the job with a line that names it. */
#include "oshrun.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Blob results this large reach this host's PEs through one sealed memory
 * file, written once, instead of a copy through each PE's socket: at 64 PEs
 * a host that moved 64 copies of every result (0.8 GB per start-up at
 * 65,536 PEs, docs/scaling.md) writes one. Smaller ones take the socket,
 * which costs fewer system calls. */
#define SHARED_RESULT_MIN ((size_t)64 * 1024)

void oshrun_gather_release(struct oshrun_job *job)
{
    for (int r = 0; r < job->npes; r++) {
        if (job->pes[r].contributed) shoal_wire_msg_release(&job->pes[r].gather);
        job->pes[r].contributed = 0;
    }
    job->ngathered = 0;
}

static void protocol_error(struct oshrun_job *job, struct oshrun_pe *pe, const char *what)
{
    char who[64];
    oshrun_pe_name(job, pe, 1, who, sizeof who);
    oshrun_fail(job, 1, -1, "%s broke the bootstrap protocol: %s", who, what);
}

/* The memory file of a blob result, sealed so that no PE can change what
 * the others read, or -1: not a blob result of that size without
 * descriptors, or no file could be made (the sockets carry it then). */
static int shared_result(const struct oshrun_job *job, const unsigned char *blobs, size_t total)
{
    if (job->gather_kind != SHOAL_WIRE_GATHER_BLOB || job->gather_nfds || total < SHARED_RESULT_MIN) return -1;
    int fd = memfd_create("shoal-allgather", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) return -1;
    for (size_t put = 0; put < total;) {
        ssize_t n = write(fd, blobs + put, total - put);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            close(fd);
            return -1;
        }
        put += (size_t)n;
    }
    if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Sends every PE of this host the result: the blobs (or the memory file
 * holding them, shared_fd >= 0) and the descriptors. */
static void answer_all(struct oshrun_job *job, const unsigned char *blobs, size_t total, const int *fds, size_t nfds,
                       int shared_fd)
{
    unsigned char said[SHOAL_WIRE_SHARED_SIZE];
    struct iovec iov = {.iov_base = (void *)blobs, .iov_len = total};
    if (shared_fd >= 0) {
        shoal_wire_encode_shared(said, (uint32_t)total);
        iov = (struct iovec){.iov_base = said, .iov_len = sizeof said};
    }
    for (int r = 0; r < job->npes; r++) {
        struct oshrun_pe *pe = &job->pes[r];
        if (pe->sock < 0) continue;
        shoal_status_t st =
            shared_fd >= 0
                ? shoal_wire_send(pe->sock, SHOAL_WIRE_ALLGATHER_SHARED, &iov, 1, &shared_fd, 1)
                : shoal_wire_send(pe->sock, SHOAL_WIRE_ALLGATHER_RESULT, &iov, total ? 1 : 0, fds, (int)nfds);
        /* A PE that went away is reported when it is reaped. */
        if (st != SHOAL_OK && st != SHOAL_ERR_CLOSED)
            oshrun_fail(job, 1, -1, "cannot answer PE %d's %s: %s", pe->rank, shoal_wire_gather_name(job->gather_kind),
                        st == SHOAL_ERR_SYS ? strerror(errno) : shoal_status_str(st));
    }
    if (shared_fd >= 0) close(shared_fd);
}

void oshrun_answer(struct oshrun_job *job, const unsigned char *blobs, size_t total)
{
    job->net_pending = 0;
    answer_all(job, blobs, total, NULL, 0, shared_result(job, blobs, total));
}

/* Every PE of this host contributed: send each the blobs and descriptors in
 * rank order; across hosts, blobs go to node 0 first (descriptors never). */
static void deliver(struct oshrun_job *job)
{
    size_t len = job->gather_len, total = len * (size_t)job->npes;
    size_t nfds = (size_t)job->gather_nfds * (size_t)job->npes;
    unsigned char *blobs = NULL;
    int *fds = NULL;
    if (total > SHOAL_WIRE_MAX_PAYLOAD || nfds > SHOAL_WIRE_MAX_FDS) {
        oshrun_fail(job, 1, -1, "%s of %zu bytes and %d descriptors per PE is too large for %d PEs",
                    shoal_wire_gather_name(job->gather_kind), len, job->gather_nfds, job->npes);
        return;
    }
    if ((total && !(blobs = malloc(total))) || (nfds && !(fds = malloc(nfds * sizeof *fds)))) {
        free(blobs);
        oshrun_fail(job, 1, -1, "out of memory serving %s", shoal_wire_gather_name(job->gather_kind));
        return;
    }
    for (int r = 0; r < job->npes; r++) {
        const struct shoal_wire_msg *m = &job->pes[r].gather;
        if (len) memcpy(blobs + (size_t)r * len, m->payload + 4, len);
        if (job->gather_nfds) memcpy(fds + (size_t)r * (size_t)job->gather_nfds, m->fds, (size_t)job->gather_nfds * sizeof *fds);
    }
    if (job->net && job->gather_kind != SHOAL_WIRE_GATHER_FDS) {
        oshrun_gather_release(job);
        oshrun_net_gather(job, job->gather_kind, len, blobs);
        free(blobs);
        free(fds);
        return;
    }
    for (int r = 0; r < job->npes && nfds; r++) {
        char why[256], who[64];
        if (job->pes[r].sock < 0 || !oshrun_pe_fd_room(job->pes[r].pid, nfds, why, sizeof why)) continue;
        oshrun_pe_name(job, &job->pes[r], 1, who, sizeof who);
        oshrun_fail(job, 1, -1, "%s cannot receive its descriptors: %s", who, why);
        free(blobs);
        free(fds);
        oshrun_gather_release(job);
        return;
    }
    answer_all(job, blobs, total, fds, nfds, shared_result(job, blobs, total));
    free(blobs);
    free(fds);
    oshrun_gather_release(job); /* closes the launcher's copies */
}

static void on_gather(struct oshrun_job *job, struct oshrun_pe *pe, struct shoal_wire_msg *msg)
{
    uint32_t kind;
    const unsigned char *blob;
    size_t len;
    if (shoal_wire_decode_gather(msg->payload, msg->len, &kind, &blob, &len) != SHOAL_OK) {
        protocol_error(job, pe, "malformed ALLGATHER");
        return;
    }
    if (pe->contributed || job->net_pending) {
        protocol_error(job, pe, "a second ALLGATHER before the first was answered");
        return;
    }
    if (job->ngathered == 0) {
        job->gather_first = pe->rank;
        job->gather_kind = kind;
        job->gather_len = len;
        job->gather_nfds = msg->nfds;
    } else if (kind != job->gather_kind || len != job->gather_len || msg->nfds != job->gather_nfds) {
        oshrun_fail(job, 1, -1,
                    "collective mismatch: PE %d called %s with %zu bytes and %d descriptors, "
                    "but PE %d called %s with %zu bytes and %d descriptors",
                    pe->rank, shoal_wire_gather_name(kind), len, msg->nfds, job->gather_first,
                    shoal_wire_gather_name(job->gather_kind), job->gather_len, job->gather_nfds);
        return;
    }
    pe->gather = *msg;
    memset(msg, 0, sizeof *msg);
    pe->contributed = 1;
    if (++job->ngathered == job->npes)
        deliver(job);
    else
        oshrun_check_stuck(job);
}

static void on_message(struct oshrun_job *job, struct oshrun_pe *pe, struct shoal_wire_msg *msg)
{
    struct shoal_wire_hello hello;
    char reason[SHOAL_WIRE_MAX_REASON + 1];
    int status;
    if (msg->type != SHOAL_WIRE_HELLO && !pe->hello) {
        protocol_error(job, pe, "a message before HELLO");
        return;
    }
    switch (msg->type) {
    case SHOAL_WIRE_HELLO:
        if (pe->hello || shoal_wire_decode_hello(msg->payload, msg->len, &hello) != SHOAL_OK) {
            protocol_error(job, pe, "bad or repeated HELLO");
        } else if (hello.rank != (uint32_t)pe->rank || hello.size != (uint32_t)job->size) {
            char who[64];
            oshrun_pe_name(job, pe, 1, who, sizeof who);
            oshrun_fail(job, 1, -1, "%s says it is PE %u of %u, but it was started as PE %d of %d", who, hello.rank,
                        hello.size, pe->rank, job->size);
        } else {
            pe->hello = 1;
        }
        break;
    case SHOAL_WIRE_ALLGATHER:
        if (pe->finalized)
            protocol_error(job, pe, "ALLGATHER after FINALIZE");
        else
            on_gather(job, pe, msg);
        break;
    case SHOAL_WIRE_FINALIZE:
        pe->finalized = 1;
        if (shoal_wire_send(pe->sock, SHOAL_WIRE_FINALIZE_ACK, NULL, 0, NULL, 0) == SHOAL_ERR_SYS)
            oshrun_fail(job, 1, -1, "cannot acknowledge PE %d's finalize: %s", pe->rank, strerror(errno));
        oshrun_check_stuck(job);
        break;
    case SHOAL_WIRE_ABORT:
        if (shoal_wire_decode_abort(msg->payload, msg->len, &status, reason, sizeof reason) != SHOAL_OK) {
            protocol_error(job, pe, "malformed ABORT");
            break;
        }
        /* Exit statuses are 8 bits; a nonzero status must not become 0. */
        int code = (status & 0xff) == 0 && status != 0 ? 1 : status & 0xff;
        char who[64];
        oshrun_pe_name(job, pe, 0, who, sizeof who);
        if (reason[0])
            oshrun_fail(job, code, pe->rank, "%s: %s", who, reason);
        else
            oshrun_fail(job, code, pe->rank, "%s called shmem_global_exit(%d)", who, status);
        break;
    default: protocol_error(job, pe, "unexpected message type"); break;
    }
}

void oshrun_serve(struct oshrun_job *job, struct oshrun_pe *pe)
{
    while (pe->sock >= 0) {
        struct shoal_wire_msg msg = {0};
        int complete = 0;
        shoal_status_t st = shoal_wire_read(&pe->reader, pe->sock, 0, &msg, &complete);
        if (st == SHOAL_OK && !complete) return;
        if (st == SHOAL_OK) {
            on_message(job, pe, &msg);
            shoal_wire_msg_release(&msg);
            continue;
        }
        /* End of stream is normal: the PE exited or closed the bootstrap.
         * How it exited is judged when it is reaped. */
        char why[256];
        if (st == SHOAL_ERR_PROTO && oshrun_fd_limit_hit(why, sizeof why)) {
            char who[64];
            oshrun_pe_name(job, pe, 1, who, sizeof who);
            oshrun_fail(job, 1, -1, "cannot take %s's descriptors: %s", who, why);
        } else if (st == SHOAL_ERR_PROTO)
            protocol_error(job, pe, "malformed message");
        else if (st != SHOAL_ERR_CLOSED)
            oshrun_fail(job, 1, -1, "reading from PE %d: %s", pe->rank,
                        st == SHOAL_ERR_SYS ? strerror(errno) : shoal_status_str(st));
        close(pe->sock);
        pe->sock = -1;
    }
}

void oshrun_check_stuck(struct oshrun_job *job)
{
    if (job->failed || job->ngathered == 0) return;
    for (int r = 0; r < job->npes; r++) {
        const struct oshrun_pe *pe = &job->pes[r];
        if (pe->contributed || (!pe->finalized && pe->running)) continue;
        oshrun_fail(job, 1, -1, "PE %d is waiting in %s, but PE %d %s; the job cannot continue", job->gather_first,
                    shoal_wire_gather_name(job->gather_kind), pe->rank,
                    pe->finalized ? "has called shmem_finalize" : "has exited");
        return;
    }
}
