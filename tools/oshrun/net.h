/* net.h: oshrun across hosts. One oshrun per host; node 0 listens on the
 * rendezvous address, the others connect to it (a star). Every connection
 * carries framed messages over TLS 1.3 (tls.h), or plain TCP when TLS was
 * turned off explicitly.
 *
 * Frame: u32 magic "SHNL", u32 type, u32 len, then len payload bytes
 * (little-endian). Messages:
 *   JOIN    node k -> 0  u32 version, u32 node rank, u32 nnodes, u32 PEs here
 *   WELCOME 0 -> all     u32 nnodes, u32 PE count of every node
 *   GATHER  node -> 0    u32 kind, u32 bytes per PE, the node's blobs in rank order
 *   RESULT  0 -> all     u32 kind, every PE's blob in rank order
 *   FAULT   any          i32 exit status, one line naming the PE and node
 *   DONE    node k -> 0  every PE of node k finished cleanly
 *   END     0 -> all     every node is done; exit 0
 *   PING    both ways    a heartbeat: nothing but "I am alive"; any frame
 *                        counts as one, so it never changes a protocol state
 * Node 0 relays a FAULT to every node, so each oshrun prints the same line
 * and exits with the same status. Descriptors never leave a node. */
#ifndef OSHRUN_NET_H
#define OSHRUN_NET_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>

#define OSHRUN_NET_MAGIC 0x4C4E4853u /* "SHNL" */
#define OSHRUN_NET_VERSION 2u /* 2: PING */
#define OSHRUN_NET_HEADER 12u
#define OSHRUN_NET_MAX_FRAME ((64u << 20) + 64u)

enum oshrun_net_type {
    OSHRUN_NET_JOIN = 1,
    OSHRUN_NET_WELCOME = 2,
    OSHRUN_NET_GATHER = 3,
    OSHRUN_NET_RESULT = 4,
    OSHRUN_NET_FAULT = 5,
    OSHRUN_NET_DONE = 6,
    OSHRUN_NET_END = 7,
    OSHRUN_NET_PING = 8
};

struct oshrun_link {
    int fd; /* -1 when closed */
    SSL *ssl; /* NULL without TLS */
    int node;
    char peer[96]; /* "address:port", for messages */
    unsigned char *rx;
    size_t rx_len, rx_cap;
    size_t rx_taken; /* bytes of the frame last returned, dropped on the next oshrun_link_next */
    int tls_failed; /* ended by a TLS error (an alert from the peer) */
    int eof; /* the peer closed; rx may still hold whole frames */
    char why[160]; /* how it ended */
    double last_rx;   /* when bytes last arrived (oshrun_now) */
    double next_ping; /* when our next heartbeat is due */
};

struct oshrun_frame {
    uint32_t type;
    uint32_t len;
    const unsigned char *payload; /* points into the link's buffer until the next read */
};

/* One node's part of the allgather in progress (kept by node 0). */
struct oshrun_block {
    int have;
    uint32_t kind, len; /* len: bytes per PE */
    unsigned char *data;
};

struct oshrun_net {
    int nnodes, node_rank;
    int *counts; /* PEs of every node */
    /* Node 0: links[k] is node k (links[0] unused). Others: links[0] is node 0. */
    struct oshrun_link *links;
    int nlinks;
    SSL_CTX *ctx;
    char where[160]; /* the rendezvous address, for messages */
    struct oshrun_block *blocks; /* node 0 */
    int nblocks;
    int first_block; /* node whose block arrived first */
    int *done; /* node 0: nodes whose PEs all finished cleanly */
    int ndone;
    int sent_done, ended;
    int relaying; /* handling a FAULT from node 0: do not send it back */
    long liveness_s; /* SHMEM_BOOTSTRAP_LIVENESS_TIMEOUT: a link silent this long is lost */
    double ping_every; /* seconds between heartbeats */
};

/* rendezvous.c: fills net (links, counts). Returns 0, or the status to
 * exit with after printing one line. */
struct oshrun_options;
int oshrun_rendezvous(const struct oshrun_options *opt, struct oshrun_net *net, double deadline);
void oshrun_net_free(struct oshrun_net *net);
/* rendezvous.c helpers shared with accept.c (node 0's side). */
struct sockaddr_storage;
void oshrun_peer_name(const struct sockaddr_storage *ss, char *out, size_t len);
/* TCP_NODELAY, keepalive and TCP_USER_TIMEOUT scaled to the liveness limit. */
void oshrun_tune(int fd, long liveness_s);
int oshrun_listen_on(const char *host, const char *port, const char *where);
/* Node 0: the PE counts to every node. 0, or 1 after printing why. */
int oshrun_welcome(struct oshrun_net *net);
/* accept.c: node 0 waits for every node (concurrent handshakes). */
int oshrun_serve_rendezvous(struct oshrun_net *net, const char *host, const char *port, double deadline,
                            long limit_s);

/* link.c */
void oshrun_link_init(struct oshrun_link *l, int fd, SSL *ssl, int node, const char *peer);
void oshrun_link_close(struct oshrun_link *l);
/* Reads what is available without blocking. 0, or -1 when the stream
 * ended or broke (why says how; whole frames already read stay). */
int oshrun_link_fill(struct oshrun_link *l);
/* Takes the next whole frame off the buffer: 1, 0 when none yet, -1 on
 * garbage (why says what). The frame stays valid until the next call. */
int oshrun_link_next(struct oshrun_link *l, struct oshrun_frame *f);
/* Sends one frame (header + parts), waiting until deadline for room;
 * reads arriving data meanwhile so two senders cannot block each other. */
int oshrun_link_send(struct oshrun_link *l, uint32_t type, const void *a, size_t alen, const void *b, size_t blen,
                     double deadline);
/* Blocks until a whole frame arrives or deadline: 1, 0 on timeout, -1. */
int oshrun_link_wait(struct oshrun_link *l, struct oshrun_frame *f, double deadline);

void oshrun_put_u32(unsigned char *p, uint32_t v);
uint32_t oshrun_get_u32(const unsigned char *p);

#endif
