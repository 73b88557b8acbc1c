/* tls.h: TLS 1.3 for the bootstrap between oshrun instances (OpenSSL 3).
 * Both ends authenticate: with the job secret (an external pre-shared key)
 * or with X.509 certificates from one CA. Only oshrun uses this; the PEs
 * never speak TLS. */
#ifndef OSHRUN_TLS_H
#define OSHRUN_TLS_H

#include <stddef.h>

#include <openssl/ssl.h>

/* Reads the SHMEM_BOOTSTRAP_* settings and builds the context for one
 * side. *ctx is NULL when TLS is off (after the warning is printed, naming
 * where). Returns 0, or -1 with one line (no "oshrun: ") in err. */
int oshrun_tls_setup(int server, const char *where, SSL_CTX **ctx, char *err, size_t errlen);

/* Runs the handshake on the non-blocking socket fd until deadline (a
 * oshrun_now() time). Returns the connection, or NULL with the reason
 * (OpenSSL's words) in reason. */
SSL *oshrun_tls_handshake(SSL_CTX *ctx, int fd, int server, double deadline, char *reason, size_t len);

/* The most useful description of the last OpenSSL failure (clears the queue). */
void oshrun_tls_reason(SSL *ssl, int ret, char *reason, size_t len);

/* What probably made a handshake fail, for the message of the refused side. */
const char *oshrun_tls_hint(void);

/* --make-secret: writes 32 random bytes as hex to a new file of mode 0600. */
int oshrun_make_secret(const char *path);

#endif
