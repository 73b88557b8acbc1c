/* tls.h: TLS 1.3 for the bootstrap between oshrun instances (OpenSSL 3).
 * Both ends authenticate: with the job secret (an external pre-shared key)
 * or with X.509 certificates from one CA. Only oshrun uses this; the PEs
 * never speak TLS. */
#ifndef OSHRUN_TLS_H
#define OSHRUN_TLS_H

#include <stddef.h>

#include <openssl/ssl.h>

/* Reads the SHMEM_BOOTSTRAP_* settings and builds the context, for both
 * sides (a tree node connects and accepts). *ctx is NULL when TLS is off (after the warning is printed, naming
 * where). Returns 0, or -1 with one line (no "oshrun: ") in err. */
int oshrun_tls_setup(const char *where, SSL_CTX **ctx, char *err, size_t errlen);

/* What the first bytes of a bootstrap stream are: a TLS record, an oshrun
 * frame in plaintext ("SHNL"), something else, or too few bytes yet. Lets
 * each side name a TLS mismatch (TLS on one node, off on the other). */
enum { OSHRUN_START_MORE, OSHRUN_START_TLS, OSHRUN_START_PLAIN, OSHRUN_START_OTHER };
int oshrun_stream_start(const unsigned char *b, size_t n);

enum oshrun_tls_result {
    OSHRUN_TLS_DONE,
    OSHRUN_TLS_AGAIN,     /* step: poll for *events, then step again */
    OSHRUN_TLS_REFUSED,   /* an alert from the peer, or our own check failed: not worth retrying */
    OSHRUN_TLS_CLOSED,    /* the peer closed or reset the connection */
    OSHRUN_TLS_TIMEOUT,
    OSHRUN_TLS_PLAINTEXT, /* the peer sent oshrun frames in plaintext: TLS is off there */
    OSHRUN_TLS_NOT_TLS    /* the peer is not an oshrun */
};

/* A non-blocking handshake in steps (node 0 runs many at once): new, then
 * step until it is no longer AGAIN. reason gets OpenSSL's words. */
SSL *oshrun_tls_new(SSL_CTX *ctx, int fd, char *reason, size_t len);
enum oshrun_tls_result oshrun_tls_step(SSL *ssl, int server, short *events, char *reason, size_t len);

/* Client: the whole handshake on the non-blocking fd until deadline (an
 * oshrun_now() time); *out is the connection when DONE. */
enum oshrun_tls_result oshrun_tls_connect(SSL_CTX *ctx, int fd, double deadline, SSL **out, char *reason, size_t len);

/* The most useful description of the last OpenSSL failure (clears the queue). */
void oshrun_tls_reason(SSL *ssl, int ret, char *reason, size_t len);

/* What probably made a handshake fail, for the message of the refused side. */
const char *oshrun_tls_hint(void);
int oshrun_tls_x509(void); /* certificates rather than a job secret */

/* --make-secret: writes 32 random bytes as hex to a new file of mode 0600. */
int oshrun_make_secret(const char *path);

#endif
