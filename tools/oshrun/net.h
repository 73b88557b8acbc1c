/* net.h: oshrun across hosts. One oshrun per host; node 0 listens on the
 * rendezvous address, the others connect to it (a star that carries
 * membership, faults, the end of the job and heartbeats). Allgathers go
 * through a tree (tree.c): node k's parent is (k-1)/F (F: --tree-fanout),
 * blocks flow up, the result flows down, so no node sends more than
 * F copies. A node with children listens on the address
 * it reached node 0 from and tells node 0 in its JOIN; node 0 tells each
 * node where its parent listens (WELCOME); the child connects there and
 * sends a JOIN again. Node 0's children use their star link. Every
 * connection carries framed messages over TLS 1.3 (tls.h), authenticated
 * with the same job secret or certificates, or plain TCP when TLS was
 * turned off explicitly.
 *
 * Frame: u32 magic "SHNL", u32 type, u32 len, then len payload bytes
 * (little-endian). Messages:
 *   JOIN    node k -> 0  u32 version, u32 node rank, u32 nnodes, u32 PEs here,
 *                        u32 tree fan-out, then "host:port" where k's children reach it (when
 *                        it has any); the same JOIN (no address) to its parent
 *   WELCOME 0 -> all     u32 nnodes, u32 PE count of every node, then
 *                        "host:port" of the node's parent (none when it is 0)
 *   GATHER  child -> parent  u32 kind, u32 bytes per PE, the blobs of the
 *                        child's subtree in rank order
 *   RESULT  parent -> child  u32 kind, every PE's blob in rank order
 *   DONE    also child -> parent (the parent can tell a stuck allgather)
 *   FAULT   any          i32 exit status, one line naming the PE and node
 *   DONE    node k -> 0  every PE of node k finished cleanly
 *   END     0 -> all     every node is done; exit 0
 *   PING    both ways    a heartbeat: nothing but "I am alive"; any frame
 *                        counts as one, so it never changes a protocol state
 *   WHERE   0 -> all     a hang report is asked for (SIGUSR1, --where at node 0)
 *   WHERE_TEXT node k -> 0  the report's lines for node k's PEs (where.h)
 * Node 0 relays a FAULT to every node, so each oshrun prints the same line
 * and exits with the same status. Descriptors never leave a node. */
#ifndef OSHRUN_NET_H
#define OSHRUN_NET_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>

#include "args.h"

#define OSHRUN_NET_MAGIC 0x4C4E4853u /* "SHNL" */
#define OSHRUN_NET_VERSION 4u /* 2: PING; 3: the tree; 4: WHERE */
#define OSHRUN_ADDR_MAX 95   /* "host:port" in JOIN and WELCOME */
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
    OSHRUN_NET_PING = 8,
    OSHRUN_NET_WHERE = 9,
    OSHRUN_NET_WHERE_TEXT = 10
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

/* The allgather in progress at one node of the tree (tree.c): its own
 * block and its children's subtrees, placed at their ranks in all. */
struct oshrun_gather {
    int active;      /* some block arrived */
    uint32_t kind, len;
    int first;       /* node whose block arrived first */
    int have_self;
    int kid_have[OSHRUN_MAX_FANOUT];
    int nin;         /* blocks in: self and children */
    unsigned char *all; /* len * every PE of the job */
};

struct oshrun_net {
    int nnodes, node_rank;
    int *counts; /* PEs of every node */
    /* Node 0: links[k] is node k (links[0] unused). Others: links[0] is
     * node 0, then the parent when it is not node 0, then the children. */
    struct oshrun_link *links;
    int nlinks;
    int parent;       /* index in links of the tree parent; -1 at node 0 */
    int fanout;       /* of the tree: every node's --tree-fanout (checked in JOIN) */
    int kid0, nkids;  /* links[kid0 + i] is child i (node fanout*rank+1+i) */
    int kid_done[OSHRUN_MAX_FANOUT]; /* child i's PEs all finished cleanly */
    int self_done;    /* this node's PEs all finished */
    int listen_fd;    /* where the children connect, until they did; -1 */
    char listen_at[OSHRUN_ADDR_MAX + 1]; /* its "host:port" */
    char (*addrs)[OSHRUN_ADDR_MAX + 1]; /* node 0: every node's listen_at */
    char parent_at[OSHRUN_ADDR_MAX + 1]; /* where the parent listens ("" for node 0) */
    int *base; /* first rank of every node; base[nnodes] is the job size */
    SSL_CTX *ctx;
    char where[160]; /* the rendezvous address, for messages */
    struct oshrun_gather gather;
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
/* accept.c: waits on lfd for nodes lo..hi to connect and JOIN (their
 * links into dest[node - lo]). tree: they join a tree parent, so each
 * JOIN must repeat the PE count node 0 announced. 0, or 1 after a line. */
int oshrun_accept_nodes(struct oshrun_net *net, int lfd, int lo, int hi, struct oshrun_link *dest, int tree,
                        double deadline, long limit_s);
/* rendezvous.c: connects to where (a node's "host:port") with TLS,
 * retrying until deadline; who names the node in messages. 0 with *fd and
 * *ssl, or 1 after printing the line. */
int oshrun_connect_node(struct oshrun_net *net, const char *where, const char *who, double deadline, long limit_s,
                        int *fd, SSL **ssl);
void oshrun_split_addr(const char *text, char *host, size_t hl, char *port, size_t pl);

/* tree.c: the allgather tree. */
int oshrun_tree_parent(int node, int fanout);
int oshrun_tree_nkids(int node, int nnodes, int fanout);
/* After WELCOME: connects to the parent and accepts the children. */
int oshrun_tree_open(const struct oshrun_options *opt, struct oshrun_net *net, double deadline, long limit_s);
struct oshrun_job;
/* A block of the current allgather: this node's own (node == rank, from
 * oshrun_net_gather) or a child's subtree (from its GATHER). */
void oshrun_tree_block(struct oshrun_job *job, int node, uint32_t kind, uint32_t len, const unsigned char *data,
                       size_t size);
/* A RESULT from the parent: passed to the children, then to this host's PEs. */
void oshrun_tree_result(struct oshrun_job *job, const unsigned char *payload, size_t len);
/* Ends the job when the allgather here can no longer complete. */
void oshrun_tree_check_stuck(struct oshrun_job *job);
void oshrun_tree_free(struct oshrun_net *net);
/* nodes.c, for tree.c: sends a frame (a link that takes nothing for the
 * liveness limit is lost); ends the job naming a link's bad message. */
void oshrun_net_send(struct oshrun_job *job, struct oshrun_link *l, uint32_t type, const void *a, size_t alen,
                     const void *b, size_t blen);
void oshrun_net_broken(struct oshrun_job *job, struct oshrun_link *l, const char *what);

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
/* 1 when a whole frame is in the buffer (read with an earlier one, or
 * while sending): poll would not report it. */
int oshrun_link_has_frame(const struct oshrun_link *l);
/* Blocks until a whole frame arrives or deadline: 1, 0 on timeout, -1. */
int oshrun_link_wait(struct oshrun_link *l, struct oshrun_frame *f, double deadline);

void oshrun_put_u32(unsigned char *p, uint32_t v);
uint32_t oshrun_get_u32(const unsigned char *p);

#endif
