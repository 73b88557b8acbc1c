/* wire.h: the protocol between a PE and oshrun over their private Unix
 * stream socket. Shared by the library (boot_launcher.c) and the launcher.
 *
 * Every message is a 16-byte header followed by `len` payload bytes:
 *
 *   offset 0  u32 magic    0x4C4F4853 ("SHOL" in memory)
 *          4  u16 version  SHOAL_WIRE_VERSION
 *          6  u16 type     enum shoal_wire_type
 *          8  u32 len      payload bytes, <= SHOAL_WIRE_MAX_PAYLOAD
 *         12  u32 nfds     descriptors that belong to the message
 *
 * All integers are little-endian. Descriptors travel as SCM_RIGHTS: the
 * first SHOAL_WIRE_FDS_PER_MSG ride on the header's sendmsg; the rest
 * follow the payload in FDS messages (len 0, nfds = batch size), each
 * carrying its batch on its own header.
 *
 * Payloads:
 *   HELLO            u32 rank, u32 size, u32 pid            (PE -> launcher)
 *   ALLGATHER        u32 kind (enum shoal_wire_gather), blob; nfds fds
 *   ALLGATHER_RESULT blobs of all PEs in rank order; their fds in rank order
 *   ALLGATHER_SHARED u32 result length; 1 fd: a sealed memory file holding
 *                    the blobs of all PEs in rank order (a large blob
 *                    result: the launcher writes it once for its host's
 *                    PEs instead of sending each a copy)
 *   FINALIZE         empty                                  (PE -> launcher)
 *   FINALIZE_ACK     empty                                  (launcher -> PE)
 *   ABORT            i32 status, reason (no NUL, one line)  (PE -> launcher)
 *
 * The decoders trust nothing: every size is checked against the header,
 * the per-type rules and the global limits before anything is allocated;
 * garbage yields SHOAL_ERR_PROTO. libc only. */
#ifndef SHOAL_BOOT_WIRE_H
#define SHOAL_BOOT_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "util/status.h"

#define SHOAL_WIRE_MAGIC 0x4C4F4853u
/* 2: ALLGATHER_SHARED. A library and a launcher of different versions
 * fail at the PE's HELLO, not at the first large allgather. */
#define SHOAL_WIRE_VERSION 2u
#define SHOAL_WIRE_HEADER_SIZE 16u
#define SHOAL_WIRE_MAX_PAYLOAD (64u << 20)
#define SHOAL_WIRE_MAX_FDS 16384u
#define SHOAL_WIRE_FDS_PER_MSG 250
#define SHOAL_WIRE_MAX_REASON 512u
#define SHOAL_WIRE_HELLO_SIZE 12u

enum shoal_wire_type {
    SHOAL_WIRE_HELLO = 1,
    SHOAL_WIRE_ALLGATHER = 2,
    SHOAL_WIRE_ALLGATHER_RESULT = 3,
    SHOAL_WIRE_FINALIZE = 4,
    SHOAL_WIRE_FINALIZE_ACK = 5,
    SHOAL_WIRE_ABORT = 6,
    SHOAL_WIRE_FDS = 7, /* follow-up batch of descriptors */
    SHOAL_WIRE_ALLGATHER_SHARED = 8
};
#define SHOAL_WIRE_SHARED_SIZE 4u

/* What an ALLGATHER is for, so the launcher can name a mismatch. */
enum shoal_wire_gather {
    SHOAL_WIRE_GATHER_BLOB = 1,
    SHOAL_WIRE_GATHER_FDS = 2,
    SHOAL_WIRE_GATHER_BARRIER = 3
};

struct shoal_wire_header {
    uint32_t magic;
    uint16_t version;
    uint16_t type;
    uint32_t len;
    uint32_t nfds;
};

struct shoal_wire_hello {
    uint32_t rank;
    uint32_t size;
    uint32_t pid;
};

/* A received message. The receiver owns payload (malloc) and fds. */
struct shoal_wire_msg {
    uint16_t type;
    unsigned char *payload;
    size_t len;
    int *fds;
    int nfds;
};

const char *shoal_wire_type_name(unsigned type);
const char *shoal_wire_gather_name(uint32_t kind);

void shoal_wire_encode_header(unsigned char out[SHOAL_WIRE_HEADER_SIZE], unsigned type, uint32_t len,
                              uint32_t nfds);
/* Checks magic, version, type and the per-type size rules. */
shoal_status_t shoal_wire_decode_header(const void *buf, size_t len, struct shoal_wire_header *out);

void shoal_wire_encode_hello(unsigned char out[SHOAL_WIRE_HELLO_SIZE], const struct shoal_wire_hello *hello);
shoal_status_t shoal_wire_decode_hello(const void *buf, size_t len, struct shoal_wire_hello *out);

void shoal_wire_encode_gather_kind(unsigned char out[4], uint32_t kind);
/* *blob points into buf. */
shoal_status_t shoal_wire_decode_gather(const void *buf, size_t len, uint32_t *kind, const unsigned char **blob,
                                        size_t *bloblen);

void shoal_wire_encode_shared(unsigned char out[SHOAL_WIRE_SHARED_SIZE], uint32_t result_len);
shoal_status_t shoal_wire_decode_shared(const void *buf, size_t len, uint32_t *result_len);

/* Writes status and the first line of reason (truncated to
 * SHOAL_WIRE_MAX_REASON) into out, which holds 4 + SHOAL_WIRE_MAX_REASON
 * bytes; returns the payload length. */
size_t shoal_wire_encode_abort(unsigned char *out, int status, const char *reason);
/* Copies the reason as a NUL-terminated line, control bytes replaced by '?'. */
shoal_status_t shoal_wire_decode_abort(const void *buf, size_t len, int *status, char *reason, size_t reasonlen);

/* Frees the payload and closes the descriptors. */
void shoal_wire_msg_release(struct shoal_wire_msg *msg);

/* Incremental receiver: reads exactly one message, never past its end, so
 * it can be fed from a non-blocking socket as data arrives. */
struct shoal_wire_reader {
    int phase; /* 0 header, 1 payload, 2 follow-up FDS header */
    unsigned char hdr[SHOAL_WIRE_HEADER_SIZE];
    size_t hdr_got;
    struct shoal_wire_header head;
    unsigned char *payload;
    size_t payload_got;
    int *fds;
    int fds_got;
    int batch[SHOAL_WIRE_FDS_PER_MSG]; /* descriptors that came with the header being read */
    int batch_n;
};

void shoal_wire_reader_init(struct shoal_wire_reader *r);
/* Drops a partial message (frees memory, closes descriptors). */
void shoal_wire_reader_reset(struct shoal_wire_reader *r);

/* Reads from sock. blocking=0: returns SHOAL_OK with *complete=0 when the
 * socket has no more data yet. On *complete=1, out holds the message and
 * the reader is ready for the next one. SHOAL_ERR_CLOSED on end of stream,
 * SHOAL_ERR_PROTO on garbage, SHOAL_ERR_SYS on a failed call (errno set);
 * after an error the reader has been reset. Received descriptors are
 * close-on-exec. */
shoal_status_t shoal_wire_read(struct shoal_wire_reader *r, int sock, int blocking, struct shoal_wire_msg *out,
                               int *complete);
/* Blocking receive of one whole message. */
shoal_status_t shoal_wire_recv(int sock, struct shoal_wire_msg *out);

/* Sends one message whose payload is the concatenation of iov, with nfds
 * descriptors. Waits (poll) when the socket is non-blocking and full.
 * Never raises SIGPIPE; a gone peer gives SHOAL_ERR_CLOSED. */
shoal_status_t shoal_wire_send(int sock, unsigned type, const struct iovec *iov, int iovcnt, const int *fds,
                               int nfds);

#endif
