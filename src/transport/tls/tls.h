/* tls.h: state shared by the files of the encrypted transport.
 *
 * Data between hosts travels inside TLS 1.3 streams over TCP, one stream
 * per (context, target PE), opened at first use. Two PEs' streams of the
 * default context share one TCP connection (tls_pair.c, tls_mux.h), so
 * either PE's requests carry the TCP acknowledgements of the other's; the
 * other contexts' streams have connections of their own. The initiator writes
 * requests; the target's server thread for that stream applies them to its
 * own memory, in order, and answers the ones that return something. So:
 * - a put is one record and no reply; fence needs nothing (one stream is
 *   in order, and one thread applies it). Whoever applies a stream's
 *   requests acknowledges them once it finds the stream idle (an ACK that
 *   counts them), and every answer counts as one too; so quiet only waits
 *   for the ACKs still missing, usually already arrived, at worst one trip
 *   back (signals, a barrier's or collective's words, are not counted);
 * - atomics are CPU atomics applied by the target on its own memory, so
 *   they stay atomic with the target's and its host peers' load/store
 *   atomics: the runtime need not route on-host atomics through here;
 * - a target refuses what falls outside its segments or writes into the
 *   read-only part of static data, and reports it on its next reply (an answer or
 *   an ACK, which quiet waits for at the latest); the initiator ends the job.
 *   A refused signal, which nothing answers, ends the job at its target.
 *
 * Authentication: a fresh 32-byte key per job, drawn by PE 0 and handed to
 * every PE by the bootstrap (TLS-protected between hosts), is the external
 * PSK of every stream, with (EC)DHE for forward secrecy. A peer without it
 * cannot finish a handshake, so it can neither read nor write memory.
 * Listening sockets bind to the job's interface (boot/bind_addr.h). */
#ifndef SHOAL_TRANSPORT_TLS_TLS_H
#define SHOAL_TRANSPORT_TLS_TLS_H

#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "transport/tls/tls_mux.h"
#include "transport/transport.h"

#define SHOAL_TLS_KEY_LEN 32
/* get_nbi answers one stream may leave unread (tls_client.c). */
#define SHOAL_TLS_DEFERRED_MAX 16

/* Wire format: a request header, then for a PUT its len bytes. Every field
 * little-endian (x86 and aarch64 hosts: memory order). */
/* PUT_SIGNAL: a put (seg, offset, len, data) then a 64-bit SET or ADD
 * (amo_op) of operand on the word at offset cond of segment elem. */
enum shoal_tls_op { SHOAL_TLS_PUT = 1, SHOAL_TLS_GET = 2, SHOAL_TLS_AMO = 3, SHOAL_TLS_PUT_SIGNAL = 4 };
struct shoal_tls_req {
    uint8_t op;       /* enum shoal_tls_op */
    uint8_t seg;      /* enum shoal_segment_id */
    uint8_t elem;     /* AMO: 4 or 8 */
    uint8_t amo_op;   /* AMO: enum shoal_amo_op */
    uint8_t fetch;    /* AMO: 1 when the old value is wanted (a reply follows) */
    uint8_t uncounted; /* AMO, PUT_SIGNAL: a signal (transport.h): neither counted nor acknowledged */
    uint8_t deferred; /* GET: a get_nbi, whose answer the initiator reads later (tls_server.c) */
    uint8_t pad;
    uint64_t offset;  /* in the target's segment */
    uint64_t len;     /* PUT, GET: bytes */
    uint64_t operand; /* AMO */
    uint64_t cond;    /* AMO compare-and-swap */
};
/* The answer to GET (then len bytes if status is 0) or fetching AMO;
 * or an ACK, sent unasked when the target finds the stream idle. */
struct shoal_tls_rep {
    uint32_t status;  /* 0, or a refusal (enum below) */
    uint32_t kind;    /* enum shoal_tls_rep_kind */
    uint64_t value;   /* AMO: the old value; ACK: requests applied so far; refusals: the refused offset */
};
enum shoal_tls_rep_kind {
    SHOAL_TLS_ANSWER = 0,  /* to the request just sent (status: its refusal) */
    SHOAL_TLS_ACK = 1,     /* status: the first refusal of an unanswered request */
    SHOAL_TLS_EARLIER = 2, /* instead of an answer: an earlier request was refused */
};
enum shoal_tls_refusal { SHOAL_TLS_OUT_OF_RANGE = 1, SHOAL_TLS_READ_ONLY = 2, SHOAL_TLS_BAD_REQUEST = 3 };
/* What a refusal means, for the line that ends the job. */
const char *shoal_tls_refusal_text(uint32_t status);
/* A peer's IPv4 address as "ip:port", for the lines that name it. */
#define SHOAL_TLS_ADDR_TEXT 24
void shoal_tls_addr_text(const struct sockaddr_in *sin, char out[SHOAL_TLS_ADDR_TEXT]);

/* One stream from this PE to a target, for one context. */
struct shoal_tls_conn {
    pthread_mutex_t lock; /* one request (and its reply) at a time */
    SSL *ssl;
    int fd;
    uint64_t sent;   /* requests written on the stream */
    uint64_t acked;  /* of which the target has said they are applied */
    unsigned unread; /* requests since the last reply was read (bounds queued ACKs) */
    int sigpipe;     /* its writes may raise SIGPIPE (kernel TLS): block it around them */
    struct shoal_mux *mux; /* the pair connection it rides (tls_pair.c), or NULL: fd is its own */
    int ch;                /* ... and its channel there */
    /* get_nbi requests whose answers are still to be read, oldest first
     * (tls_client.c): where each goes and which request it was. */
    struct shoal_tls_deferred_get {
        void *dst;
        size_t len;
        uint64_t seq; /* sent, once it was */
    } deferred[SHOAL_TLS_DEFERRED_MAX];
    unsigned deferred_first, deferred_count; /* count: read unlocked by quiet and shoal_tls_drain_gets */
    size_t deferred_bytes;
};

/* A context's streams. A stream (about 500 bytes) is made the first time
 * the context reaches its PE, so a PE pays for the peers it talks to, and
 * quiet looks at those only: made for every PE up front, a context took
 * 32 MiB at 65,536 PEs and each quiet walked all of them (docs/scaling.md). */
struct shoal_tctx {
    struct shoal_tls_conn **conn; /* n_pes entries, NULL until first use; set once, never moved */
    int *used;                    /* the PEs whose stream is made, in the order made */
    int n_used;                   /* entries of used: stored with release after the entry */
    pthread_mutex_t make_lock;    /* making a stream */
    struct shoal_tctx *live_prev, *live_next;
};

/* Where a PE listens, as exchanged through the bootstrap. */
struct shoal_tls_addr {
    struct sockaddr_in sin;
    unsigned char key[SHOAL_TLS_KEY_LEN]; /* the job key: PE 0's; the others send zeros */
};

/* What a PE keeps of each peer's: its address only (the key is kept once,
 * in struct shoal_tls: 32 bytes a peer less at every PE). */
struct shoal_tls_peer {
    struct sockaddr_in sin;
};

struct shoal_tls {
    struct shoal_transport_setup *setup;
    int my_pe, n_pes;
    struct shoal_tls_peer *peer; /* n_pes entries */
    unsigned char key[SHOAL_TLS_KEY_LEN];
    SSL_CTX *client_ctx, *server_ctx;
    int ktls_checked;     /* the first stream said who encrypts (debug line) */
    /* Streams whose writes may raise SIGPIPE (kernel TLS, or no memory for
     * the sink that sends with MSG_NOSIGNAL); while there are none, nobody
     * blocks the signal around requests (three system calls each). */
    atomic_int sigpipe_streams;
    int spin_yields;      /* PEs outnumber cores: readers yield between their polls */
    int listen_fd;
    pthread_t acceptor;
    int acceptor_started;
    atomic_int stopping;
    struct shoal_tctx dflt;
    pthread_mutex_t ctx_lock;
    struct shoal_tctx *live; /* contexts the program holds, closed at fini */
    /* Server side: the streams peers opened to this PE. */
    pthread_mutex_t serve_lock;
    struct shoal_tls_server *servers;
    atomic_int handshakes; /* in progress, bounded so strangers cannot exhaust threads */
    /* When a waiting thread last applied peers' requests (CLOCK_MONOTONIC
     * ns; 0: none lately): server threads leave their streams to it
     * meanwhile rather than wake for each request and fight it for a core. */
    atomic_llong served_ns;
    /* When any thread of this PE last applied a peer's request (ns): a
     * spinning wait takes the lease only while requests come. Applies by
     * the streams' threads count too, or once they won the race for a
     * request the waiter would never take the lease back. */
    atomic_llong applied_ns;
    atomic_int working;   /* streams' threads inside a batch of requests (tls_server.c) */
    atomic_int acks_owed; /* some stream's ACK was left by a wait (tls_server.c) */
    atomic_int deferred_gets; /* get_nbi answers unread on any stream of this PE */
};

extern struct shoal_tls shoal_tls;

/* tls_ssl.c: OpenSSL, loaded at first use (the library does not link it). */
struct shoal_tls_lib {
    __typeof__(TLS_method) *TLS_method;
    __typeof__(SSL_CTX_new) *CTX_new;
    __typeof__(SSL_CTX_free) *CTX_free;
    __typeof__(SSL_CTX_ctrl) *CTX_ctrl;
    __typeof__(SSL_CTX_set_options) *CTX_set_options;
    __typeof__(SSL_CTX_set_ciphersuites) *CTX_set_ciphersuites;
    __typeof__(SSL_CTX_set_num_tickets) *CTX_set_num_tickets;
    __typeof__(SSL_CTX_set_default_read_buffer_len) *CTX_set_default_read_buffer_len;
    __typeof__(SSL_CTX_set_psk_use_session_callback) *CTX_set_psk_use_session_callback;
    __typeof__(SSL_CTX_set_psk_find_session_callback) *CTX_set_psk_find_session_callback;
    __typeof__(SSL_new) *new_;
    __typeof__(SSL_free) *free_;
    __typeof__(SSL_set_fd) *set_fd;
    __typeof__(SSL_connect) *connect;
    __typeof__(SSL_accept) *accept;
    __typeof__(SSL_read_ex) *read_ex;
    __typeof__(SSL_has_pending) *has_pending;
    __typeof__(SSL_peek_ex) *peek_ex;
    __typeof__(SSL_write_ex) *write_ex;
    __typeof__(SSL_get_error) *get_error;
    __typeof__(SSL_get_wbio) *get_wbio;
    __typeof__(SSL_get_rbio) *get_rbio;
    __typeof__(SSL_CIPHER_find) *CIPHER_find;
    __typeof__(SSL_CIPHER_get_handshake_digest) *CIPHER_get_handshake_digest;
    __typeof__(SSL_SESSION_new) *SESSION_new;
    __typeof__(SSL_SESSION_free) *SESSION_free;
    __typeof__(SSL_SESSION_get0_cipher) *SESSION_get0_cipher;
    __typeof__(SSL_SESSION_set1_master_key) *SESSION_set1_master_key;
    __typeof__(SSL_SESSION_set_cipher) *SESSION_set_cipher;
    __typeof__(SSL_SESSION_set_protocol_version) *SESSION_set_protocol_version;
    __typeof__(SSL_set0_wbio) *set0_wbio;
    __typeof__(SSL_set0_rbio) *set0_rbio;
    __typeof__(SSL_ctrl) *ctrl;
    __typeof__(BIO_ctrl) *BIO_ctrl;
    __typeof__(BIO_new) *BIO_new;
    __typeof__(BIO_f_buffer) *BIO_f_buffer;
    __typeof__(BIO_push) *BIO_push;
    __typeof__(BIO_free_all) *BIO_free_all;
    __typeof__(BIO_get_new_index) *BIO_get_new_index;
    __typeof__(BIO_meth_new) *BIO_meth_new;
    __typeof__(BIO_meth_set_write) *BIO_meth_set_write;
    __typeof__(BIO_meth_set_read) *BIO_meth_set_read;
    __typeof__(BIO_meth_set_ctrl) *BIO_meth_set_ctrl;
    __typeof__(BIO_set_data) *BIO_set_data;
    __typeof__(BIO_get_data) *BIO_get_data;
    __typeof__(BIO_set_init) *BIO_set_init;
    __typeof__(BIO_clear_flags) *BIO_clear_flags;
    __typeof__(BIO_set_flags) *BIO_set_flags;
    __typeof__(BIO_test_flags) *BIO_test_flags;
    __typeof__(ERR_get_error) *ERR_get_error;
    __typeof__(ERR_clear_error) *ERR_clear_error;
    __typeof__(ERR_peek_error) *ERR_peek_error;
    __typeof__(ERR_error_string_n) *ERR_error_string_n;
    __typeof__(OpenSSL_version) *OpenSSL_version;
};
extern struct shoal_tls_lib shoal_tls_lib;
/* Loads libssl once; SHOAL_OK when every function resolved. */
shoal_status_t shoal_tls_load(char *err, size_t errlen);
/* The client and server contexts over key (TLS 1.3, PSK + (EC)DHE, kernel
 * TLS asked for). */
shoal_status_t shoal_tls_contexts(const unsigned char key[SHOAL_TLS_KEY_LEN], char *err, size_t errlen);
void shoal_tls_contexts_free(void);
/* Runs the handshake on a connected socket with a deadline in seconds (the
 * socket non-blocking meanwhile, blocking again after). Returns the
 * session, or NULL with reason filled; *sigpipe then says whether its
 * writes may raise SIGPIPE (counted in shoal_tls.sigpipe_streams), which
 * they do not where OpenSSL encrypts: its records go out through a sink
 * that sends with MSG_NOSIGNAL. */
SSL *shoal_tls_handshake(int fd, int server, double seconds, int *sigpipe, char *reason, size_t len);
/* The same on channel ch of a pair connection (tls_mux.h), whose writes
 * never raise SIGPIPE; with idle set, the deadline starts at the peer's
 * first bytes. */
SSL *shoal_tls_handshake_mux(struct shoal_mux *m, int ch, int server, double seconds, int idle, char *reason,
                             size_t len);
/* Whether the kernel took over the stream's encryption in both directions. */
int shoal_tls_is_ktls(SSL *ssl);
/* OpenSSL's reason for the last failure on ssl. */
void shoal_tls_reason(SSL *ssl, int ret, char *reason, size_t len);
/* Whole-buffer I/O on a stream; 0 on success, -1 on a closed or broken one.
 * Callers hold SIGPIPE blocked (shoal_tls_sigpipe_block) around them
 * where the stream's writes may raise it (its sigpipe flag).
 * shoal_tls_write sends what the stream holds; shoal_tls_write_more leaves
 * it gathered for the next write (a message's header before its data). */
int shoal_tls_write(SSL *ssl, const void *buf, size_t len);
int shoal_tls_write_more(SSL *ssl, const void *buf, size_t len);
int shoal_tls_read(SSL *ssl, void *buf, size_t len);
void shoal_tls_sigpipe_block(sigset_t *old);
/* Polls fd a little while (AWAIT_SPIN_S, tls_ssl.c) before a read would block;
 * returns at once if ssl (when not NULL) holds data already; with serve,
 * applies peers' requests meanwhile (shoal_tls_serve(0, serve): 2 takes
 * the lease whether or not requests came lately). Returns 1 when
 * there is something to read (or the stream ended), 0 when it gave up. */
int shoal_tls_await(SSL *ssl, int fd, int serve);
void shoal_tls_sigpipe_restore(const sigset_t *old);

/* tls_server.c: the listening socket and the threads serving peers. */
shoal_status_t shoal_tls_server_start(char *err, size_t errlen);
/* Serves channel ch of a pair connection this PE dialed (tls_pair.c): the
 * peer's requests, once it opens its stream there. Ends the job where no
 * thread can start for it. */
void shoal_tls_server_channel(struct shoal_mux *m, int ch);
/* Applies, in the calling thread, the requests peers have sent; gets only
 * with gets set (tls_server.c says why). A spinning caller leases the
 * streams from their threads while requests come lately, or always with
 * spinning 2; any other ends the lease. */
void shoal_tls_serve(int gets, int spinning);
/* The waiting thread stops applying requests: server threads take over now. */
void shoal_tls_serve_release(void);
/* Whether fd has data (or has ended), without blocking. */
int shoal_tls_readable(int fd);
/* Whether ssl's stream has data (or has ended), without blocking: what
 * arrived is taken into its buffers by the same system call. */
int shoal_tls_arrived(SSL *ssl, int fd);
/* Whether ssl holds data already read from its socket. */
int shoal_tls_pending(SSL *ssl);
/* Sends the ACKs a wait left owed; called after this PE's own requests. */
void shoal_tls_pay_acks(void);
void shoal_tls_server_stop(void);

/* tls_pair.c: one TCP connection per pair of PEs for both PEs' default
 * context streams (tls_mux.h says why). SHMEM_TLS_PAIR=off makes this PE
 * open streams of their own; it still answers its peers' openings. */
shoal_status_t shoal_tls_pair_init(void);
int shoal_tls_pair_enabled(void);
/* Opens c, this PE's default-context stream to pe, on the pair's
 * connection: on the one pe dialed, or on one this PE dials. 0, or -1 with
 * reason (*lost: pe could not be reached, rather than refused us). */
int shoal_tls_pair_open(struct shoal_tls_conn *c, int pe, double deadline, int *lost, char *reason, size_t len);
/* A stream accepted on fd began with a pair preamble (its first byte is
 * SHOAL_TLS_PAIR_FIRST): reads it and answers. Returns the mux to serve
 * channel 0 of, with *pe the dialer, or NULL when refused (the caller
 * closes fd). */
#define SHOAL_TLS_PAIR_FIRST 'S'
struct shoal_mux *shoal_tls_pair_accept(int fd, double seconds, int *pe, char *reason, size_t len);
/* The dialer's first handshake on the mux from pe ended: with ok, the
 * connection is a job member's and this PE's stream to pe may ride it. */
void shoal_tls_pair_accepted(int pe, struct shoal_mux *m, int ok);
/* Ends every pair connection (readers see the end); after the server
 * threads are joined, frees them. */
void shoal_tls_pair_shutdown(void);
void shoal_tls_pair_free(void);
/* A TCP connection to pe's listener (non-blocking, TCP_NODELAY), made
 * within the time left before deadline (a second at least): its socket, or
 * -1 with reason, *lost set when pe could not be reached (rather than this
 * PE failing to make a socket). */
int shoal_tls_dial(int pe, double deadline, int *lost, char *reason, size_t len);

/* tls_client.c: this PE's requests. */
shoal_status_t shoal_tls_ctx_open_default(void);
shoal_status_t shoal_tls_ctx_create(shoal_tctx_t **out);
void shoal_tls_ctx_destroy(shoal_tctx_t *ctx);
void shoal_tls_ctx_close_all(void);
shoal_status_t shoal_tls_put(shoal_tctx_t *ctx, int pe, enum shoal_segment_id seg, size_t offset, const void *src,
                             size_t len);
shoal_status_t shoal_tls_get(shoal_tctx_t *ctx, int pe, enum shoal_segment_id seg, size_t offset, void *dst,
                             size_t len);
shoal_status_t shoal_tls_amo(shoal_tctx_t *ctx, int pe, enum shoal_segment_id seg, size_t offset, size_t elem,
                             enum shoal_amo_op op, uint64_t operand, uint64_t cond, uint64_t *fetched);
shoal_status_t shoal_tls_signal(int pe, enum shoal_segment_id seg, size_t offset, enum shoal_amo_op op,
                                uint64_t operand);
shoal_status_t shoal_tls_put_signal(shoal_tctx_t *ctx, int counted, int pe, enum shoal_segment_id seg, size_t offset,
                                    const void *src, size_t len, enum shoal_segment_id sig_seg, size_t sig_offset,
                                    enum shoal_amo_op op, uint64_t operand);
void shoal_tls_fence(shoal_tctx_t *ctx);
void shoal_tls_quiet(shoal_tctx_t *ctx);
shoal_status_t shoal_tls_get_nbi(shoal_tctx_t *ctx, int pe, enum shoal_segment_id seg, size_t offset, void *dst,
                                 size_t len);
/* Reads the get_nbi answers that have arrived (waits call it: a target may
 * be blocked writing one until this PE reads it). */
void shoal_tls_drain_gets(void);

#endif
