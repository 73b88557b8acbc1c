/* tls_ssl.c: OpenSSL for the encrypted transport. libssl is loaded when a
 * job first needs it, as libfabric is, so the library has no OpenSSL
 * dependency and one-host programs never load it.
 *
 * Streams are TLS 1.3 with one cipher suite, TLS_AES_128_GCM_SHA256: the
 * one kernel TLS and AES-NI both do fastest. The job key is an external
 * PSK under a fixed identity; key exchange stays (EC)DHE, so a recorded
 * stream stays private even if the job key leaks later. The server has no
 * certificate, so a peer without the key cannot complete a handshake. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <openssl/err.h>

#include "transport/tls/tls.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/own_wait.h"

struct shoal_tls_lib shoal_tls_lib;
#define L shoal_tls_lib

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static char load_error[256];

static const unsigned char psk_identity[] = "shoal-transport-psk-v1";
/* Bytes one read may pull from the socket (many 16 KiB records). */
#define READ_BUFFER ((size_t)256 * 1024)
/* Encrypted records gathered before one write to the socket. */
#define WRITE_BUFFER (256 * 1024)
/* How long a reader polls its socket before it blocks (shoal_tls_await):
 * a server thread awaiting the next request, and a thread awaiting the
 * answer to its own request. */
#define AWAIT_SPIN_S 50e-6
#define AWAIT_ANSWER_SPIN_S 200e-6

static void load(void)
{
    void *crypto = dlopen("libcrypto.so.3", RTLD_NOW | RTLD_LOCAL);
    void *ssl = crypto ? dlopen("libssl.so.3", RTLD_NOW | RTLD_LOCAL) : NULL;
    if (!ssl) {
        snprintf(load_error, sizeof load_error, "cannot load OpenSSL 3 (%s): install libssl3", dlerror());
        return;
    }
    const char *missing = NULL;
#define RESOLVE(lib, field, name)                                   \
    do {                                                            \
        *(void **)&L.field = dlsym(lib, name);                      \
        if (!L.field && !missing) missing = name;                   \
    } while (0)
    RESOLVE(ssl, TLS_method, "TLS_method");
    RESOLVE(ssl, CTX_new, "SSL_CTX_new");
    RESOLVE(ssl, CTX_free, "SSL_CTX_free");
    RESOLVE(ssl, CTX_ctrl, "SSL_CTX_ctrl");
    RESOLVE(ssl, CTX_set_options, "SSL_CTX_set_options");
    RESOLVE(ssl, CTX_set_ciphersuites, "SSL_CTX_set_ciphersuites");
    RESOLVE(ssl, CTX_set_num_tickets, "SSL_CTX_set_num_tickets");
    RESOLVE(ssl, CTX_set_default_read_buffer_len, "SSL_CTX_set_default_read_buffer_len");
    RESOLVE(ssl, CTX_set_psk_use_session_callback, "SSL_CTX_set_psk_use_session_callback");
    RESOLVE(ssl, CTX_set_psk_find_session_callback, "SSL_CTX_set_psk_find_session_callback");
    RESOLVE(ssl, new_, "SSL_new");
    RESOLVE(ssl, free_, "SSL_free");
    RESOLVE(ssl, set_fd, "SSL_set_fd");
    RESOLVE(ssl, connect, "SSL_connect");
    RESOLVE(ssl, accept, "SSL_accept");
    RESOLVE(ssl, read_ex, "SSL_read_ex");
    RESOLVE(ssl, has_pending, "SSL_has_pending");
    RESOLVE(ssl, peek_ex, "SSL_peek_ex");
    RESOLVE(ssl, write_ex, "SSL_write_ex");
    RESOLVE(ssl, get_error, "SSL_get_error");
    RESOLVE(ssl, get_wbio, "SSL_get_wbio");
    RESOLVE(ssl, get_rbio, "SSL_get_rbio");
    RESOLVE(ssl, CIPHER_find, "SSL_CIPHER_find");
    RESOLVE(ssl, CIPHER_get_handshake_digest, "SSL_CIPHER_get_handshake_digest");
    RESOLVE(ssl, SESSION_new, "SSL_SESSION_new");
    RESOLVE(ssl, SESSION_free, "SSL_SESSION_free");
    RESOLVE(ssl, SESSION_get0_cipher, "SSL_SESSION_get0_cipher");
    RESOLVE(ssl, SESSION_set1_master_key, "SSL_SESSION_set1_master_key");
    RESOLVE(ssl, SESSION_set_cipher, "SSL_SESSION_set_cipher");
    RESOLVE(ssl, SESSION_set_protocol_version, "SSL_SESSION_set_protocol_version");
    RESOLVE(ssl, set0_wbio, "SSL_set0_wbio");
    RESOLVE(ssl, set0_rbio, "SSL_set0_rbio");
    RESOLVE(ssl, ctrl, "SSL_ctrl");
    RESOLVE(crypto, BIO_ctrl, "BIO_ctrl");
    RESOLVE(crypto, BIO_new, "BIO_new");
    RESOLVE(crypto, BIO_f_buffer, "BIO_f_buffer");
    RESOLVE(crypto, BIO_push, "BIO_push");
    RESOLVE(crypto, BIO_free_all, "BIO_free_all");
    RESOLVE(crypto, BIO_get_new_index, "BIO_get_new_index");
    RESOLVE(crypto, BIO_meth_new, "BIO_meth_new");
    RESOLVE(crypto, BIO_meth_set_write, "BIO_meth_set_write");
    RESOLVE(crypto, BIO_meth_set_read, "BIO_meth_set_read");
    RESOLVE(crypto, BIO_meth_set_ctrl, "BIO_meth_set_ctrl");
    RESOLVE(crypto, BIO_set_data, "BIO_set_data");
    RESOLVE(crypto, BIO_get_data, "BIO_get_data");
    RESOLVE(crypto, BIO_set_init, "BIO_set_init");
    RESOLVE(crypto, BIO_clear_flags, "BIO_clear_flags");
    RESOLVE(crypto, BIO_set_flags, "BIO_set_flags");
    RESOLVE(crypto, BIO_test_flags, "BIO_test_flags");
    RESOLVE(crypto, ERR_get_error, "ERR_get_error");
    RESOLVE(crypto, ERR_clear_error, "ERR_clear_error");
    RESOLVE(crypto, ERR_peek_error, "ERR_peek_error");
    RESOLVE(crypto, ERR_error_string_n, "ERR_error_string_n");
    RESOLVE(crypto, OpenSSL_version, "OpenSSL_version");
#undef RESOLVE
    if (missing) snprintf(load_error, sizeof load_error, "OpenSSL has no %s", missing);
}

shoal_status_t shoal_tls_load(char *err, size_t errlen)
{
    pthread_once(&load_once, load);
    if (!load_error[0]) return SHOAL_OK;
    snprintf(err, errlen, "%s", load_error);
    return SHOAL_ERR_SYS;
}

static SSL_SESSION *psk_session(SSL *ssl)
{
    static const unsigned char aes128_sha256[2] = {0x13, 0x01};
    const SSL_CIPHER *cipher = L.CIPHER_find(ssl, aes128_sha256);
    SSL_SESSION *s = L.SESSION_new();
    if (!cipher || !s || !L.SESSION_set1_master_key(s, shoal_tls.key, SHOAL_TLS_KEY_LEN) ||
        !L.SESSION_set_cipher(s, cipher) || !L.SESSION_set_protocol_version(s, TLS1_3_VERSION)) {
        if (s) L.SESSION_free(s);
        return NULL;
    }
    return s;
}

/* Client: offers the job key; OpenSSL takes ownership of the session. */
static int use_psk(SSL *ssl, const EVP_MD *md, const unsigned char **id, size_t *idlen, SSL_SESSION **sess)
{
    SSL_SESSION *s = psk_session(ssl);
    if (!s) return 0;
    if (md && L.CIPHER_get_handshake_digest(L.SESSION_get0_cipher(s)) != md) {
        L.SESSION_free(s);
        *sess = NULL;
        *id = NULL;
        *idlen = 0;
        return 1;
    }
    *sess = s;
    *id = psk_identity;
    *idlen = sizeof psk_identity - 1;
    return 1;
}

/* Server: one identity; anything else gets no key and fails. */
static int find_psk(SSL *ssl, const unsigned char *id, size_t idlen, SSL_SESSION **sess)
{
    *sess = NULL;
    if (idlen != sizeof psk_identity - 1 || memcmp(id, psk_identity, idlen) != 0) return 1;
    *sess = psk_session(ssl);
    return *sess != NULL;
}

static SSL_CTX *make_ctx(int server)
{
    SSL_CTX *ctx = L.CTX_new(L.TLS_method());
    if (!ctx) return NULL;
    if (!L.CTX_ctrl(ctx, SSL_CTRL_SET_MIN_PROTO_VERSION, TLS1_3_VERSION, NULL) ||
        !L.CTX_ctrl(ctx, SSL_CTRL_SET_MAX_PROTO_VERSION, TLS1_3_VERSION, NULL) ||
        !L.CTX_set_ciphersuites(ctx, "TLS_AES_128_GCM_SHA256")) {
        L.CTX_free(ctx);
        return NULL;
    }
    /* Kernel TLS where the kernel has the tls module: records are then
     * encrypted in the kernel and data moves with plain send/recv. */
    L.CTX_set_options(ctx, SSL_OP_ENABLE_KTLS);
    /* Reads pull many records at once: fewer system calls per request
     * (after the handshake, a buffer BIO does it: gather_reads). */
    L.CTX_ctrl(ctx, SSL_CTRL_SET_READ_AHEAD, 1, NULL);
    L.CTX_set_default_read_buffer_len(ctx, READ_BUFFER);
    L.CTX_ctrl(ctx, SSL_CTRL_MODE, SSL_MODE_AUTO_RETRY, NULL);
    if (server) {
        L.CTX_set_num_tickets(ctx, 0); /* no resumption: every stream proves the key afresh */
        L.CTX_set_psk_find_session_callback(ctx, find_psk);
    } else {
        L.CTX_set_psk_use_session_callback(ctx, use_psk);
    }
    return ctx;
}

shoal_status_t shoal_tls_contexts(const unsigned char key[SHOAL_TLS_KEY_LEN], char *err, size_t errlen)
{
    memcpy(shoal_tls.key, key, SHOAL_TLS_KEY_LEN);
    shoal_tls.client_ctx = make_ctx(0);
    shoal_tls.server_ctx = shoal_tls.client_ctx ? make_ctx(1) : NULL;
    if (shoal_tls.server_ctx) return SHOAL_OK;
    char reason[200];
    shoal_tls_reason(NULL, 0, reason, sizeof reason);
    snprintf(err, errlen, "cannot set up TLS 1.3 with TLS_AES_128_GCM_SHA256: %s", reason);
    shoal_tls_contexts_free();
    return SHOAL_ERR_SYS;
}

void shoal_tls_contexts_free(void)
{
    if (shoal_tls.client_ctx) L.CTX_free(shoal_tls.client_ctx);
    if (shoal_tls.server_ctx) L.CTX_free(shoal_tls.server_ctx);
    shoal_tls.client_ctx = shoal_tls.server_ctx = NULL;
}

void shoal_tls_reason(SSL *ssl, int ret, char *reason, size_t len)
{
    int saved = errno;
    int e = ssl ? L.get_error(ssl, ret) : SSL_ERROR_SSL;
    unsigned long code = L.ERR_get_error();
    if (code)
        L.ERR_error_string_n(code, reason, len);
    else if (e == SSL_ERROR_SYSCALL && saved)
        snprintf(reason, len, "%s", strerror(saved));
    else if (e == SSL_ERROR_ZERO_RETURN || e == SSL_ERROR_SYSCALL)
        snprintf(reason, len, "connection closed by the peer");
    else
        snprintf(reason, len, "TLS error %d", e);
    L.ERR_clear_error();
}

/* The sink below the write buffer: send(2) with MSG_NOSIGNAL on the
 * stream's socket (blocking by then), so a peer that has gone makes a
 * write fail with EPIPE and raises no SIGPIPE. Threads then need not block
 * the signal around each request: three system calls fewer on every put,
 * get and atomic, and on every poll of a waiting PE (shoal_tls_serve). */
static BIO_METHOD *nosignal_method;
static pthread_once_t nosignal_once = PTHREAD_ONCE_INIT;

static int nosignal_write(BIO *b, const char *buf, int len)
{
    const int fd = (int)(intptr_t)L.BIO_get_data(b);
    L.BIO_clear_flags(b, BIO_FLAGS_RWS | BIO_FLAGS_SHOULD_RETRY);
    for (;;) {
        ssize_t n = send(fd, buf, (size_t)len, MSG_NOSIGNAL);
        if (n >= 0 || errno != EINTR) return (int)n;
    }
}

/* What the socket BIO answers: flushing and duplicating succeed, the rest
 * (kernel TLS among them) is not there. */
static long nosignal_ctrl(BIO *b, int cmd, long num, void *ptr)
{
    (void)b;
    (void)num;
    (void)ptr;
    return cmd == BIO_CTRL_FLUSH || cmd == BIO_CTRL_DUP;
}

/* Made once per process and kept (BIO types are numbered process-wide). */
static void make_nosignal_method(void)
{
    const int index = L.BIO_get_new_index();
    BIO_METHOD *m = index > 0 ? L.BIO_meth_new(index | BIO_TYPE_SOURCE_SINK, "shoal socket (MSG_NOSIGNAL)") : NULL;
    if (m && L.BIO_meth_set_write(m, nosignal_write) && L.BIO_meth_set_ctrl(m, nosignal_ctrl))
        nosignal_method = m;
    L.ERR_clear_error();
}

/* A BIO of method m (NULL if it could not be made) holding data; NULL
 * without memory. */
static BIO *bio_with(BIO_METHOD *m, void *data)
{
    BIO *b = m ? L.BIO_new(m) : NULL;
    if (!b) return NULL;
    L.BIO_set_data(b, data);
    L.BIO_set_init(b, 1);
    return b;
}

static BIO *bio_on_fd(BIO_METHOD *m, int fd) { return bio_with(m, (void *)(intptr_t)fd); }

/* fd's sink, sending with MSG_NOSIGNAL. */
static BIO *nosignal_sink(int fd)
{
    pthread_once(&nosignal_once, make_nosignal_method);
    return bio_on_fd(nosignal_method, fd);
}

/* OpenSSL writes each record (16 KiB at most) with its own system call,
 * and each wakes the reader, which then preempts the writer on a busy
 * host: a large put cost 64 writes and as many context switches per MiB.
 * A buffer in front of the socket gathers records into writes of
 * WRITE_BUFFER bytes; the stream's writers flush at the end of each
 * message. Not with kernel TLS, which gets plaintext and writes records
 * itself. Without the buffer or the sink (out of memory) records go out
 * one by one through the socket BIO. Returns 1 when the writes now go
 * through the sink (they raise no SIGPIPE). */
static int gather_writes(SSL *ssl, BIO *sink)
{
    BIO *buffer = L.BIO_new(L.BIO_f_buffer());
    int one = 1;
    if (!buffer || !sink || L.BIO_ctrl(buffer, BIO_C_SET_BUFF_SIZE, WRITE_BUFFER, &one) <= 0) {
        if (buffer) L.BIO_free_all(buffer);
        if (sink) L.BIO_free_all(sink);
        L.ERR_clear_error();
        return 0;
    }
    L.set0_wbio(ssl, L.BIO_push(buffer, sink)); /* the read side keeps its own BIO */
    return 1;
}

/* The source below the read buffer: recv(2) on the stream's socket, which
 * does not wait while this thread looks for data (shoal_tls_arrived). A
 * spinning reader then finds and takes what arrived in one system call:
 * poll(2) first, then read(2), cost each answer about a microsecond more
 * at each end (a system call takes that long on the VMs measured here). */
static BIO_METHOD *source_method;
static pthread_once_t source_once = PTHREAD_ONCE_INIT;
static _Thread_local int looking; /* inside shoal_tls_arrived */
/* A ctrl only this source answers: the buffer passes it down. */
#define SOURCE_CTRL_LOOKS 0x5348

static int source_read(BIO *b, char *buf, int len)
{
    const int fd = (int)(intptr_t)L.BIO_get_data(b);
    L.BIO_clear_flags(b, BIO_FLAGS_RWS | BIO_FLAGS_SHOULD_RETRY);
    for (;;) {
        ssize_t n = recv(fd, buf, (size_t)len, looking ? MSG_DONTWAIT : 0);
        if (n > 0) return (int)n;
        if (n == 0) {
            L.BIO_set_flags(b, BIO_FLAGS_IN_EOF);
            return 0;
        }
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) L.BIO_set_flags(b, BIO_FLAGS_READ | BIO_FLAGS_SHOULD_RETRY);
        return -1;
    }
}

/* As the socket BIO answers, and SOURCE_CTRL_LOOKS. */
static long source_ctrl(BIO *b, int cmd, long num, void *ptr)
{
    (void)num;
    (void)ptr;
    if (cmd == BIO_CTRL_EOF) return L.BIO_test_flags(b, BIO_FLAGS_IN_EOF) != 0;
    return cmd == BIO_CTRL_FLUSH || cmd == BIO_CTRL_DUP || cmd == SOURCE_CTRL_LOOKS;
}

static void make_source_method(void)
{
    const int index = L.BIO_get_new_index();
    BIO_METHOD *m = index > 0 ? L.BIO_meth_new(index | BIO_TYPE_SOURCE_SINK, "shoal socket (recv)") : NULL;
    if (m && L.BIO_meth_set_read(m, source_read) && L.BIO_meth_set_ctrl(m, source_ctrl)) source_method = m;
    L.ERR_clear_error();
}

static BIO *socket_source(int fd)
{
    pthread_once(&source_once, make_source_method);
    return bio_on_fd(source_method, fd);
}

/* Reads take up to READ_BUFFER bytes per system call from a buffer in
 * front of the socket, and OpenSSL asks it for one record at a time. With
 * OpenSSL's own read-ahead instead, the rest of its buffer is moved to the
 * front at the start of every full record (to align the payload), so each
 * byte of a large put was copied about 8 times: 35 % of the receiving
 * thread went to memmove. Not with kernel TLS, which reads records itself.
 * Without memory the read-ahead stays. */
static void gather_reads(SSL *ssl, BIO *source)
{
    BIO *buffer = L.BIO_new(L.BIO_f_buffer());
    int zero = 0; /* the size of the read buffer only */
    if (!buffer || !source || L.BIO_ctrl(buffer, BIO_C_SET_BUFF_SIZE, READ_BUFFER, &zero) <= 0) {
        if (buffer) L.BIO_free_all(buffer);
        if (source) L.BIO_free_all(source);
        L.ERR_clear_error();
        return;
    }
    L.ctrl(ssl, SSL_CTRL_SET_READ_AHEAD, 0, NULL); /* what it holds is read first */
    L.set0_rbio(ssl, L.BIO_push(buffer, source));
}

/* A channel of a pair connection (tls_mux.h) as a stream's source and
 * sink: the mux and the channel in one pointer (a mux is aligned, so its
 * lowest bit is free). Reads wait unless the thread is looking
 * (shoal_tls_arrived) or in a handshake, which has its deadline. Writes
 * go out with MSG_NOSIGNAL. */
static BIO_METHOD *mux_method;
static pthread_once_t mux_once = PTHREAD_ONCE_INIT;

static struct shoal_mux *end_of(BIO *b, int *ch)
{
    const uintptr_t v = (uintptr_t)L.BIO_get_data(b);
    *ch = (int)(v & 1);
    return (struct shoal_mux *)(v & ~(uintptr_t)1);
}

static int mux_read(BIO *b, char *buf, int len)
{
    int ch;
    struct shoal_mux *m = end_of(b, &ch);
    L.BIO_clear_flags(b, BIO_FLAGS_RWS | BIO_FLAGS_SHOULD_RETRY);
    const ssize_t n = shoal_mux_read(m, ch, buf, (size_t)len, !looking);
    if (n > 0) return (int)n;
    if (n == 0) {
        L.BIO_set_flags(b, BIO_FLAGS_IN_EOF);
        return 0;
    }
    if (errno == EAGAIN) L.BIO_set_flags(b, BIO_FLAGS_READ | BIO_FLAGS_SHOULD_RETRY);
    return -1;
}

static int mux_write(BIO *b, const char *buf, int len)
{
    int ch;
    struct shoal_mux *m = end_of(b, &ch);
    L.BIO_clear_flags(b, BIO_FLAGS_RWS | BIO_FLAGS_SHOULD_RETRY);
    return shoal_mux_write(m, ch, buf, (size_t)len) == 0 ? len : -1;
}

/* As the socket source answers, and what the channel holds for PENDING
 * (shoal_tls_pending). */
static long mux_ctrl(BIO *b, int cmd, long num, void *ptr)
{
    (void)num;
    (void)ptr;
    int ch;
    struct shoal_mux *m = end_of(b, &ch);
    if (cmd == BIO_CTRL_EOF) return L.BIO_test_flags(b, BIO_FLAGS_IN_EOF) != 0;
    if (cmd == BIO_CTRL_PENDING) return (long)shoal_mux_pending(m, ch);
    return cmd == BIO_CTRL_FLUSH || cmd == BIO_CTRL_DUP || cmd == SOURCE_CTRL_LOOKS;
}

static void make_mux_method(void)
{
    const int index = L.BIO_get_new_index();
    BIO_METHOD *m = index > 0 ? L.BIO_meth_new(index | BIO_TYPE_SOURCE_SINK, "shoal pair connection channel") : NULL;
    if (m && L.BIO_meth_set_read(m, mux_read) && L.BIO_meth_set_write(m, mux_write) &&
        L.BIO_meth_set_ctrl(m, mux_ctrl))
        mux_method = m;
    L.ERR_clear_error();
}

static BIO *channel_bio(struct shoal_mux *m, int ch)
{
    pthread_once(&mux_once, make_mux_method);
    return bio_with(mux_method, (void *)((uintptr_t)m | (uintptr_t)ch));
}

SSL *shoal_tls_handshake_mux(struct shoal_mux *m, int ch, int server, double seconds, int idle, char *reason,
                             size_t len)
{
    SSL *ssl = L.new_(server ? shoal_tls.server_ctx : shoal_tls.client_ctx);
    BIO *in = ssl ? channel_bio(m, ch) : NULL, *out = in ? channel_bio(m, ch) : NULL;
    if (!out) {
        snprintf(reason, len, "out of memory for a stream");
        if (in) L.BIO_free_all(in);
        if (ssl) L.free_(ssl);
        return NULL;
    }
    L.set0_rbio(ssl, in);
    L.set0_wbio(ssl, out);
    /* A server on a pair connection waits for its peer's first bytes
     * without a limit: the peer opens its stream when it first needs it. */
    if (idle) shoal_mux_await(m, ch, -1);
    const double deadline = shoal_now_s() + seconds;
    for (;;) {
        L.ERR_clear_error();
        looking = 1; /* reads return at once: the wait below has the deadline */
        const int r = server ? L.accept(ssl) : L.connect(ssl);
        looking = 0;
        if (r == 1) break;
        const int e = L.get_error(ssl, r);
        if (e != SSL_ERROR_WANT_READ) {
            shoal_tls_reason(ssl, r, reason, len);
            L.free_(ssl);
            return NULL;
        }
        const double left = deadline - shoal_now_s();
        if (left <= 0 || !shoal_mux_await(m, ch, (int)(left * 1000.0) + 1)) {
            snprintf(reason, len, "handshake timed out after %.0f s", seconds);
            L.free_(ssl);
            return NULL;
        }
    }
    /* The same buffers as a stream of its own (gather_reads, gather_writes);
     * without them the channel's own ends stay. */
    BIO *source = channel_bio(m, ch);
    if (source) gather_reads(ssl, source);
    BIO *sink = channel_bio(m, ch);
    if (sink) gather_writes(ssl, sink);
    return ssl;
}

SSL *shoal_tls_handshake(int fd, int server, double seconds, int *sigpipe, char *reason, size_t len)
{
    SSL *ssl = L.new_(server ? shoal_tls.server_ctx : shoal_tls.client_ctx);
    if (!ssl || !L.set_fd(ssl, fd)) {
        shoal_tls_reason(NULL, 0, reason, len);
        if (ssl) L.free_(ssl);
        return NULL;
    }
    /* The socket is non-blocking for the handshake, so a silent peer cannot
     * hold this thread past the deadline. */
    const int flags = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, flags | O_NONBLOCK);
    double deadline = shoal_now_s() + seconds;
    for (;;) {
        L.ERR_clear_error();
        int r = server ? L.accept(ssl) : L.connect(ssl);
        if (r == 1) {
            fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
            const int ktls = shoal_tls_is_ktls(ssl);
            if (!ktls) gather_reads(ssl, socket_source(fd));
            *sigpipe = ktls || !gather_writes(ssl, nosignal_sink(fd));
            if (*sigpipe) atomic_fetch_add(&shoal_tls.sigpipe_streams, 1);
            return ssl;
        }
        int e = L.get_error(ssl, r);
        if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
            shoal_tls_reason(ssl, r, reason, len);
            L.free_(ssl);
            return NULL;
        }
        double left = deadline - shoal_now_s();
        struct pollfd p = {.fd = fd, .events = e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT};
        if (left <= 0 || poll(&p, 1, (int)(left * 1000.0) + 1) == 0) {
            snprintf(reason, len, "handshake timed out after %.0f s", seconds);
            L.free_(ssl);
            return NULL;
        }
    }
}

int shoal_tls_is_ktls(SSL *ssl)
{
    return L.BIO_ctrl(L.get_wbio(ssl), BIO_CTRL_GET_KTLS_SEND, 0, NULL) > 0 &&
           L.BIO_ctrl(L.get_rbio(ssl), BIO_CTRL_GET_KTLS_RECV, 0, NULL) > 0;
}

/* A peer that has gone makes a write fail with EPIPE (OpenSSL writes alerts
 * from its reads too); the SIGPIPE the kernel raises with it must not kill
 * the program, which reports the failure instead. So SIGPIPE is blocked
 * while this thread works on a stream that writes through a plain socket
 * (kernel TLS; the handshake), and any it raised is taken back. */
void shoal_tls_sigpipe_block(sigset_t *old)
{
    sigset_t pipe_only;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_only, old);
}

void shoal_tls_sigpipe_restore(const sigset_t *old)
{
    if (!sigismember(old, SIGPIPE)) {
        sigset_t pipe_only, pending;
        sigemptyset(&pipe_only);
        sigaddset(&pipe_only, SIGPIPE);
        if (sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE)) {
            const struct timespec now = {0, 0};
            sigtimedwait(&pipe_only, NULL, &now);
        }
    }
    pthread_sigmask(SIG_SETMASK, old, NULL);
}

/* OpenSSL's record buffer and the read buffer in front of the socket
 * (gather_reads) both hold data already taken from the socket. */
int shoal_tls_pending(SSL *ssl)
{
    return L.has_pending(ssl) || L.BIO_ctrl(L.get_rbio(ssl), BIO_CTRL_PENDING, 0, NULL) > 0;
}

/* poll(2) with no timeout reads the socket's state without taking its lock,
 * which recv(MSG_PEEK) does: a waiter polling that way every microsecond
 * fought the sender's packet delivery for the lock (7 % of a ping-pong's
 * samples spun in it). An ended or failed stream counts as readable: the
 * read that follows sees why. */
int shoal_tls_readable(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return poll(&p, 1, 0) > 0;
}

/* A peek that gives up at once (the source's recv without waiting): what
 * arrived is found and taken by one system call. recv takes the socket's
 * lock, as the note on polls above says, but a poll found data only to be
 * followed by a read that took it anyway; on one host with 2 PEs the
 * spinning reads came out ahead (docs/design.md). Streams not read through
 * that source (kernel TLS; no memory for the buffer) are polled. */
int shoal_tls_arrived(SSL *ssl, int fd)
{
    if (shoal_tls_pending(ssl)) return 1;
    if (L.BIO_ctrl(L.get_rbio(ssl), SOURCE_CTRL_LOOKS, 0, NULL) <= 0) return shoal_tls_readable(fd);
    unsigned char byte;
    size_t n = 0;
    /* SSL_get_error reads the queue first. Cleared only when it holds
     * something: clearing walks and frees every slot, and this runs on
     * every poll of a spinning reader (3-4 % of a get loop's samples on one
     * host, tls). */
    if (L.ERR_peek_error()) L.ERR_clear_error();
    looking = 1;
    const int ok = L.peek_ex(ssl, &byte, 1, &n);
    looking = 0;
    /* An end or an error counts as arrived: the read that follows reports it. */
    return ok || L.get_error(ssl, 0) != SSL_ERROR_WANT_READ;
}

/* Waking a thread that blocked in read costs tens of microseconds on an
 * idle core, as long as an answer takes to come; so a reader polls the
 * socket for up to AWAIT_SPIN_S first, as fabric waits poll their completion
 * queues. Where PEs outnumber cores it yields between polls: blocking at
 * once there made every answer wait for a wake-up (fetch_add between 2
 * namespace hosts of 2 PEs on 2 cores, 2 of them idle: 100-109 us, polling
 * with yields 23-32 us). With ssl (not NULL) it looks through the
 * stream (shoal_tls_arrived), which asks first whether it holds data. A
 * thread awaiting an answer (serve) applies its peers' requests meanwhile:
 * when two PEs wait for each other's answers (both in quiet), neither then
 * needs a server thread to wake up; if it ends up blocking, it hands them
 * back at once. That hand-back wakes the streams' threads, which then
 * compete with the spinning PEs for the cores and make a late answer
 * later, so such a thread polls AWAIT_ANSWER_SPIN_S, not AWAIT_SPIN_S
 * (2 namespace hosts x 2 PEs on 2 cores, 10,000 8-byte gets, 4
 * alternations: mean 20.2-23.4 us against 23.4-29.9, 90th percentile
 * 20.7-25.4 against 29.9-52.1; fetch_add 18.3-23.6 against 24.4-29.5.
 * One host, 2 PEs: gets over 100 us 2-16 in 30,000 against 9-71, the
 * mean unchanged). */
int shoal_tls_await(SSL *ssl, int fd, int serve)
{
    if (serve) shoal_own_wait_begins();
    const double end = shoal_now_s() + (serve ? AWAIT_ANSWER_SPIN_S : AWAIT_SPIN_S);
    for (;;) {
        if (ssl ? shoal_tls_arrived(ssl, fd) : shoal_tls_readable(fd)) return 1;
        if (serve) shoal_tls_serve(0, serve);
        if (shoal_tls.spin_yields) sched_yield();
        if (shoal_now_s() > end) break;
    }
    /* This thread is about to block: the server threads must not wait for
     * it to apply their streams. */
    if (serve) shoal_tls_serve_release();
    return 0;
}

int shoal_tls_write_more(SSL *ssl, const void *buf, size_t len)
{
    const char *p = buf;
    while (len) {
        size_t done = 0;
        if (!L.write_ex(ssl, p, len, &done)) return -1;
        p += done;
        len -= done;
    }
    return 0;
}

int shoal_tls_write(SSL *ssl, const void *buf, size_t len)
{
    if (shoal_tls_write_more(ssl, buf, len) != 0) return -1;
    return L.BIO_ctrl(L.get_wbio(ssl), BIO_CTRL_FLUSH, 0, NULL) > 0 ? 0 : -1;
}

int shoal_tls_read(SSL *ssl, void *buf, size_t len)
{
    char *p = buf;
    while (len) {
        size_t done = 0;
        if (!L.read_ex(ssl, p, len, &done)) return -1;
        p += done;
        len -= done;
    }
    return 0;
}
