/* tls.c: the TLS 1.3 context of the bootstrap between oshrun instances.
 *
 * Job secret: both ends hash the secret file's text (SHA-384) into an
 * external PSK under a fixed identity, used with TLS_AES_256_GCM_SHA384
 * and an (EC)DHE exchange, so a recorded session stays private even if the
 * secret leaks later. A peer with another secret fails the PSK binder
 * check; the server has no certificate to fall back to.
 * X.509: both ends present a certificate and require the peer's to chain
 * to the configured CA. */
#include "tls.h"
#include "oshrun.h"
#include "util/checked_file.h"
#include "util/config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <sys/socket.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/x509.h>

#define SECRET_MAX 65536 /* bytes; a secret file is read whole */
#define SECRET_MIN 32    /* bytes, white space around it not counted */
#define PEM_MAX (1 << 20)

static const unsigned char psk_identity[] = "shoal-bootstrap-psk-v1";
static unsigned char psk_key[48]; /* SHA-384 of the secret */
static int using_x509;

int oshrun_tls_x509(void) { return using_x509; }

const char *oshrun_tls_hint(void)
{
    return using_x509 ? "a certificate the other side does not accept, or another CA?" : "wrong or missing job secret?";
}

static SSL_SESSION *psk_session(SSL *ssl)
{
    static const unsigned char aes256_sha384[2] = {0x13, 0x02};
    const SSL_CIPHER *cipher = SSL_CIPHER_find(ssl, aes256_sha384);
    SSL_SESSION *s = SSL_SESSION_new();
    if (!cipher || !s || !SSL_SESSION_set1_master_key(s, psk_key, sizeof psk_key) ||
        !SSL_SESSION_set_cipher(s, cipher) || !SSL_SESSION_set_protocol_version(s, TLS1_3_VERSION)) {
        SSL_SESSION_free(s);
        return NULL;
    }
    return s;
}

/* Client: offers the PSK; OpenSSL takes ownership of the session. */
static int use_psk(SSL *ssl, const EVP_MD *md, const unsigned char **id, size_t *idlen, SSL_SESSION **sess)
{
    SSL_SESSION *s = psk_session(ssl);
    if (!s) return 0;
    if (md && SSL_CIPHER_get_handshake_digest(SSL_SESSION_get0_cipher(s)) != md) {
        SSL_SESSION_free(s); /* the server chose a suite this key cannot serve */
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

/* Server: knows one identity; anything else gets no PSK and fails. */
static int find_psk(SSL *ssl, const unsigned char *id, size_t idlen, SSL_SESSION **sess)
{
    *sess = NULL;
    if (idlen != sizeof psk_identity - 1 || memcmp(id, psk_identity, idlen) != 0) return 1;
    *sess = psk_session(ssl);
    return *sess != NULL;
}

void oshrun_tls_reason(SSL *ssl, int ret, char *reason, size_t len)
{
    int e = ssl ? SSL_get_error(ssl, ret) : SSL_ERROR_SSL;
    int saved = errno;
    unsigned long code = ERR_get_error();
    const char *text = code ? ERR_reason_error_string(code) : NULL;
    if (code && ERR_GET_LIB(code) == ERR_LIB_SSL && ERR_GET_REASON(code) == SSL_R_UNEXPECTED_EOF_WHILE_READING) {
        snprintf(reason, len, "connection closed"); /* the peer went away without a goodbye */
    } else if (text) {
        int verify = ssl && ERR_GET_REASON(code) == SSL_R_CERTIFICATE_VERIFY_FAILED;
        long v = verify ? SSL_get_verify_result(ssl) : X509_V_OK;
        if (v != X509_V_OK)
            snprintf(reason, len, "%s: %s", text, X509_verify_cert_error_string(v));
        else
            snprintf(reason, len, "%s", text);
    } else if (code) {
        ERR_error_string_n(code, reason, len);
    } else if (e == SSL_ERROR_SYSCALL && saved) {
        snprintf(reason, len, "%s", strerror(saved));
    } else {
        snprintf(reason, len, "connection closed by the peer");
    }
    ERR_clear_error();
}

/* Reads the secret whole; the file must be the user's own and private. */
static int load_secret(const char *path, char *err, size_t errlen)
{
    unsigned char buf[SECRET_MAX + 1];
    size_t n = 0, a = 0, b;
    unsigned int mdlen = 0;
    if (shoal_file_read_checked("SHMEM_BOOTSTRAP_SECRET_FILE", path, SHOAL_FILE_PRIVATE, SECRET_MAX, buf, sizeof buf,
                                &n, err, errlen) != SHOAL_OK) {
        OPENSSL_cleanse(buf, sizeof buf);
        return -1;
    }
    /* Surrounding white space (a trailing newline) is not part of the secret. */
    b = n;
    while (a < b && (buf[a] == ' ' || buf[a] == '\t' || buf[a] == '\n' || buf[a] == '\r')) a++;
    while (b > a && (buf[b - 1] == ' ' || buf[b - 1] == '\t' || buf[b - 1] == '\n' || buf[b - 1] == '\r')) b--;
    if (b - a < SECRET_MIN) {
        snprintf(err, errlen, "SHMEM_BOOTSTRAP_SECRET_FILE=%s holds %zu bytes, fewer than the %d a secret needs; make "
                 "one with 'oshrun --make-secret FILE'", path, b - a, SECRET_MIN);
        OPENSSL_cleanse(buf, sizeof buf);
        return -1;
    }
    int ok = EVP_Digest(buf + a, b - a, psk_key, &mdlen, EVP_sha384(), NULL);
    OPENSSL_cleanse(buf, sizeof buf);
    if (!ok || mdlen != sizeof psk_key) {
        snprintf(err, errlen, "cannot hash the job secret (OpenSSL SHA-384 failed)");
        return -1;
    }
    return 0;
}

/* Opens a PEM file named by a setting through the checks of
 * util/checked_file.h; OpenSSL then reads the very file that was checked,
 * through /proc/self/fd. Returns the descriptor (its name in proc) or -1. */
static int open_pem(const char *setting, const char *path, int flags, char *proc, size_t plen, char *err,
                    size_t errlen)
{
    int fd;
    if (shoal_file_open_checked(setting, path, flags, PEM_MAX, &fd, err, errlen) != SHOAL_OK) return -1;
    snprintf(proc, plen, "/proc/self/fd/%d", fd);
    return fd;
}

static int ssl_fail(SSL_CTX *ctx, const char *what, const char *path, char *err, size_t errlen)
{
    char reason[256];
    oshrun_tls_reason(NULL, 0, reason, sizeof reason);
    snprintf(err, errlen, "%s%s%s: %s", what, path ? "=" : "", path ? path : "", reason);
    SSL_CTX_free(ctx);
    return -1;
}

int oshrun_tls_setup(const char *where, SSL_CTX **out, char *err, size_t errlen)
{
    struct shoal_config cfg;
    SSL_CTX *ctx;
    *out = NULL;
    if (shoal_config_load(&cfg, NULL, err, errlen) != SHOAL_OK) return -1;
    const char *tls_text = getenv("SHMEM_BOOTSTRAP_TLS");
    if (!cfg.bootstrap_tls && tls_text && *tls_text) { /* only an explicit no: empty is not a choice */
        fprintf(stderr,
                "oshrun: WARNING: SHMEM_BOOTSTRAP_TLS=%s: the bootstrap between hosts is not encrypted or "
                "authenticated; anyone who can reach %s can join or read the job's addresses\n",
                tls_text, where);
        return 0;
    }
    const char *secret = cfg.bootstrap_secret_file, *ca = cfg.bootstrap_tls_ca;
    const char *cert = cfg.bootstrap_tls_cert, *key = cfg.bootstrap_tls_key;
    int x509 = *ca || *cert || *key;
    if (x509 && *secret) {
        snprintf(err, errlen, "both SHMEM_BOOTSTRAP_SECRET_FILE and SHMEM_BOOTSTRAP_TLS_CA/_CERT/_KEY are set: "
                 "choose one way to authenticate the bootstrap");
        return -1;
    }
    if (x509 && (!*ca || !*cert || !*key)) {
        snprintf(err, errlen, "certificates for the bootstrap need all of SHMEM_BOOTSTRAP_TLS_CA, "
                 "SHMEM_BOOTSTRAP_TLS_CERT and SHMEM_BOOTSTRAP_TLS_KEY (missing: %s)",
                 !*ca ? "SHMEM_BOOTSTRAP_TLS_CA" : !*cert ? "SHMEM_BOOTSTRAP_TLS_CERT" : "SHMEM_BOOTSTRAP_TLS_KEY");
        return -1;
    }
    if (!x509 && !*secret) {
        snprintf(err, errlen, "a job across hosts needs a job secret for its TLS bootstrap: run 'oshrun "
                 "--make-secret FILE', copy FILE to every host (mode 0600) and set SHMEM_BOOTSTRAP_SECRET_FILE=FILE "
                 "(or use certificates, see docs/bootstrap.md)");
        return -1;
    }
    if (!x509 && load_secret(secret, err, errlen) != 0) return -1;
    using_x509 = x509;
    /* A node of the allgather tree connects to its parent and accepts its
     * children with the same context: it serves both roles. */
    ctx = SSL_CTX_new(TLS_method());
    if (!ctx || !SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) ||
        !SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION))
        return ssl_fail(ctx, "cannot set up TLS 1.3", NULL, err, errlen);
    SSL_CTX_set_mode(ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_set_num_tickets(ctx, 0); /* no resumption: every join authenticates afresh */
    if (!x509) {
        if (!SSL_CTX_set_ciphersuites(ctx, "TLS_AES_256_GCM_SHA384"))
            return ssl_fail(ctx, "cannot select TLS_AES_256_GCM_SHA384", NULL, err, errlen);
        SSL_CTX_set_psk_find_session_callback(ctx, find_psk);
        SSL_CTX_set_psk_use_session_callback(ctx, use_psk);
    } else {
        char proc[64];
        int fd, ok;
        if ((fd = open_pem("SHMEM_BOOTSTRAP_TLS_CA", ca, 0, proc, sizeof proc, err, errlen)) < 0) {
            SSL_CTX_free(ctx);
            return -1;
        }
        ok = SSL_CTX_load_verify_locations(ctx, proc, NULL);
        close(fd);
        if (!ok) return ssl_fail(ctx, "SHMEM_BOOTSTRAP_TLS_CA", ca, err, errlen);
        if ((fd = open_pem("SHMEM_BOOTSTRAP_TLS_CERT", cert, 0, proc, sizeof proc, err, errlen)) < 0) {
            SSL_CTX_free(ctx);
            return -1;
        }
        ok = SSL_CTX_use_certificate_chain_file(ctx, proc);
        close(fd);
        if (!ok) return ssl_fail(ctx, "SHMEM_BOOTSTRAP_TLS_CERT", cert, err, errlen);
        /* The private key gets the checks of the job secret: the user's own, mode 0600, no symlink. */
        if ((fd = open_pem("SHMEM_BOOTSTRAP_TLS_KEY", key, SHOAL_FILE_PRIVATE, proc, sizeof proc, err, errlen)) < 0) {
            SSL_CTX_free(ctx);
            return -1;
        }
        ok = SSL_CTX_use_PrivateKey_file(ctx, proc, SSL_FILETYPE_PEM);
        close(fd);
        if (!ok) return ssl_fail(ctx, "SHMEM_BOOTSTRAP_TLS_KEY", key, err, errlen);
        if (!SSL_CTX_check_private_key(ctx))
            return ssl_fail(ctx, "SHMEM_BOOTSTRAP_TLS_KEY does not match SHMEM_BOOTSTRAP_TLS_CERT", NULL, err, errlen);
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    }
    *out = ctx;
    return 0;
}

int oshrun_stream_start(const unsigned char *b, size_t n)
{
    static const unsigned char magic[4] = {'S', 'H', 'N', 'L'}; /* OSHRUN_NET_MAGIC, little-endian */
    if (n == 0) return OSHRUN_START_MORE;
    /* A TLS record: handshake (22) or alert (21), then major version 3. */
    if (b[0] == 0x16 || b[0] == 0x15) return n < 2 ? OSHRUN_START_MORE : b[1] == 0x03 ? OSHRUN_START_TLS : OSHRUN_START_OTHER;
    if (memcmp(b, magic, n < 4 ? n : 4) == 0) return n < 4 ? OSHRUN_START_MORE : OSHRUN_START_PLAIN;
    return OSHRUN_START_OTHER;
}

SSL *oshrun_tls_new(SSL_CTX *ctx, int fd, char *reason, size_t len)
{
    SSL *ssl = SSL_new(ctx);
    if (!ssl || !SSL_set_fd(ssl, fd)) {
        oshrun_tls_reason(NULL, 0, reason, len);
        SSL_free(ssl);
        return NULL;
    }
    return ssl;
}

enum oshrun_tls_result oshrun_tls_step(SSL *ssl, int server, short *events, char *reason, size_t len)
{
    ERR_clear_error();
    int r = server ? SSL_accept(ssl) : SSL_connect(ssl);
    if (r == 1) return OSHRUN_TLS_DONE;
    int e = SSL_get_error(ssl, r);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        *events = e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
        return OSHRUN_TLS_AGAIN;
    }
    oshrun_tls_reason(ssl, r, reason, len);
    /* An alert or a failed check is a refusal; a vanished peer is not. */
    if (e == SSL_ERROR_SSL && strcmp(reason, "connection closed") != 0) return OSHRUN_TLS_REFUSED;
    return OSHRUN_TLS_CLOSED;
}

/* Client: the server's first bytes, looked at before OpenSSL consumes them.
 * DONE when they are TLS (or nothing yet: AGAIN), else what they are. */
static enum oshrun_tls_result first_bytes(int fd, char *reason, size_t len)
{
    unsigned char b[4];
    ssize_t n = recv(fd, b, sizeof b, MSG_PEEK | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return OSHRUN_TLS_AGAIN;
    if (n <= 0) return OSHRUN_TLS_DONE; /* the end or an error: OpenSSL reports it */
    switch (oshrun_stream_start(b, (size_t)n)) {
    case OSHRUN_START_MORE: return OSHRUN_TLS_AGAIN;
    case OSHRUN_START_TLS: return OSHRUN_TLS_DONE;
    case OSHRUN_START_PLAIN: snprintf(reason, len, "it answered in plaintext"); return OSHRUN_TLS_PLAINTEXT;
    default: snprintf(reason, len, "it answered with something that is not TLS"); return OSHRUN_TLS_NOT_TLS;
    }
}

enum oshrun_tls_result oshrun_tls_connect(SSL_CTX *ctx, int fd, double deadline, SSL **out, char *reason, size_t len)
{
    int seen = 0; /* the server's first bytes were judged TLS */
    short events = POLLOUT;
    SSL *ssl = oshrun_tls_new(ctx, fd, reason, len);
    BIO *empty = BIO_new(BIO_s_mem());
    enum oshrun_tls_result res = OSHRUN_TLS_AGAIN;
    *out = NULL;
    if (!ssl || !empty) {
        SSL_free(ssl);
        BIO_free(empty);
        return OSHRUN_TLS_REFUSED;
    }
    /* Until the server's first bytes were looked at, OpenSSL reads from an
     * empty buffer: it cannot consume a plaintext answer (a server with TLS
     * off answers our ClientHello with an oshrun frame) before we see it. */
    BIO_set_mem_eof_return(empty, -1);
    SSL_set0_rbio(ssl, empty);
    int lowat = 4; /* poll wakes for the 4 bytes first_bytes judges (or the end) */
    setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &lowat, sizeof lowat);
    for (;;) {
        if (seen || events == POLLOUT) {
            res = oshrun_tls_step(ssl, 0, &events, reason, len);
            if (res != OSHRUN_TLS_AGAIN) break;
        }
        if (!seen && events == POLLIN) {
            res = first_bytes(fd, reason, len);
            if (res == OSHRUN_TLS_PLAINTEXT || res == OSHRUN_TLS_NOT_TLS) break;
            if (res == OSHRUN_TLS_DONE) { /* TLS (or the end): OpenSSL reads the socket from now on */
                BIO *sock = BIO_new_socket(fd, BIO_NOCLOSE);
                if (!sock) {
                    oshrun_tls_reason(NULL, 0, reason, len);
                    res = OSHRUN_TLS_REFUSED;
                    break;
                }
                SSL_set0_rbio(ssl, sock);
                lowat = 1;
                setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &lowat, sizeof lowat);
                seen = 1;
                continue;
            }
        }
        double left = deadline - oshrun_now();
        struct pollfd p = {.fd = fd, .events = events};
        if (left <= 0 || poll(&p, 1, (int)(left * 1000.0) + 1) == 0) {
            snprintf(reason, len, "timed out");
            res = OSHRUN_TLS_TIMEOUT;
            break;
        }
    }
    if (res == OSHRUN_TLS_DONE)
        *out = ssl;
    else
        SSL_free(ssl);
    return res;
}

int oshrun_make_secret(const char *path)
{
    unsigned char raw[32];
    char hex[2 * sizeof raw + 2];
    int fd;
    if (RAND_bytes(raw, sizeof raw) != 1) {
        fprintf(stderr, "oshrun: cannot make a secret: OpenSSL has no random bytes\n");
        return 1;
    }
    for (size_t i = 0; i < sizeof raw; i++) snprintf(hex + 2 * i, 3, "%02x", raw[i]);
    hex[2 * sizeof raw] = '\n';
    hex[2 * sizeof raw + 1] = '\0';
    OPENSSL_cleanse(raw, sizeof raw);
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        fprintf(stderr, "oshrun: cannot create the secret file %s: %s%s\n", path, strerror(errno),
                errno == EEXIST ? " (remove it first or choose another name)" : "");
        return 1;
    }
    size_t n = strlen(hex);
    if (fchmod(fd, 0600) != 0 || write(fd, hex, n) != (ssize_t)n || fsync(fd) != 0) {
        fprintf(stderr, "oshrun: cannot write the secret file %s: %s\n", path, strerror(errno));
        close(fd);
        unlink(path);
        return 1;
    }
    OPENSSL_cleanse(hex, sizeof hex);
    close(fd);
    printf("oshrun: wrote a new job secret to %s (mode 0600); copy it to every host of the job, keep it mode 0600, "
           "and set SHMEM_BOOTSTRAP_SECRET_FILE to its path there\n", path);
    return 0;
}
