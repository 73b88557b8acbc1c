/* tls_nosignal_test.c: a stream's writes raise no SIGPIPE.
 *
 * Where OpenSSL encrypts (no kernel TLS), a stream's records go out through
 * a sink that sends with MSG_NOSIGNAL, so the transport no longer blocks
 * SIGPIPE around every request. This opens one stream on loopback (both
 * handshakes in this process, the job key made up), checks that data
 * crosses it both ways and that neither end counts as one that may raise
 * SIGPIPE, then closes the server's end and writes on until a write fails:
 * with SIGPIPE unblocked and a handler counting it, none may arrive. A
 * plain send(2) on a second closed connection first proves the handler
 * would see one. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"
#include "transport/tls/tls.h"

static volatile sig_atomic_t pipes;

static void on_pipe(int sig)
{
    (void)sig;
    pipes++;
}

struct server_end {
    int listen_fd, fd, sigpipe;
    SSL *ssl;
    char reason[200];
};

static void *accept_and_shake(void *arg)
{
    struct server_end *s = arg;
    s->fd = accept(s->listen_fd, NULL, NULL);
    s->ssl = s->fd < 0 ? NULL : shoal_tls_handshake(s->fd, 1, 10.0, &s->sigpipe, s->reason, sizeof s->reason);
    return NULL;
}

/* A listening socket on 127.0.0.1 and a client connected to it. */
static int connected_pair(int *listen_fd, int *client_fd)
{
    struct sockaddr_in sin = {.sin_family = AF_INET};
    socklen_t sl = sizeof sin;
    inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
    *listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    if (*listen_fd < 0 || bind(*listen_fd, (struct sockaddr *)&sin, sizeof sin) != 0 || listen(*listen_fd, 4) != 0 ||
        getsockname(*listen_fd, (struct sockaddr *)&sin, &sl) != 0)
        return -1;
    *client_fd = socket(AF_INET, SOCK_STREAM, 0);
    return *client_fd >= 0 && connect(*client_fd, (struct sockaddr *)&sin, sizeof sin) == 0 ? 0 : -1;
}

/* Writes 4 KiB at a time until the stream has failed 3 times (the first
 * failure may be the reset, ECONNRESET; the later ones are EPIPE, which
 * is what raises SIGPIPE). Returns the writes that succeeded, -1 if the
 * stream never failed. */
static int writes_until_failure(SSL *ssl)
{
    static char block[4096];
    int ok = 0, failed = 0;
    for (int i = 0; i < 1000 && failed < 3; i++) {
        if (shoal_tls_write(ssl, block, sizeof block) == 0)
            ok++;
        else
            failed++;
        usleep(1000); /* lets the peer's reset come back */
    }
    return failed ? ok : -1;
}

/* The control: a plain send on a reset connection raises SIGPIPE. */
static void control_plain_send(void)
{
    int lfd, cfd;
    if (connected_pair(&lfd, &cfd) != 0) {
        CHECK_MSG(0, "loopback connection for the control: %s", strerror(errno));
        return;
    }
    int afd = accept(lfd, NULL, NULL);
    close(afd);
    char byte = 0;
    for (int i = 0; i < 1000 && !pipes; i++) {
        if (send(cfd, &byte, 1, 0) < 0 && errno != EPIPE && errno != ECONNRESET) break;
        usleep(1000);
    }
    CHECK_MSG(pipes > 0, "a plain send on a closed connection raised no SIGPIPE: the test would see nothing");
    close(cfd);
    close(lfd);
}

int main(void)
{
    char err[300];
    if (shoal_tls_load(err, sizeof err) != SHOAL_OK) {
        fprintf(stderr, "SKIP: %s\n", err);
        return TEST_SKIP;
    }
    unsigned char key[SHOAL_TLS_KEY_LEN];
    for (size_t i = 0; i < sizeof key; i++) key[i] = (unsigned char)(i * 37 + 11);
    if (shoal_tls_contexts(key, err, sizeof err) != SHOAL_OK) {
        fprintf(stderr, "FAIL: %s\n", err);
        return TEST_FAIL;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_pipe;
    sigaction(SIGPIPE, &sa, NULL);
    sigset_t pipe_only;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    pthread_sigmask(SIG_UNBLOCK, &pipe_only, NULL);

    control_plain_send();
    pipes = 0;

    struct server_end s = {.fd = -1, .sigpipe = -1};
    int client_fd;
    if (connected_pair(&s.listen_fd, &client_fd) != 0) {
        fprintf(stderr, "FAIL: loopback connection: %s\n", strerror(errno));
        return TEST_FAIL;
    }
    pthread_t server;
    pthread_create(&server, NULL, accept_and_shake, &s);
    int client_sigpipe = -1;
    char reason[200] = "";
    SSL *client = shoal_tls_handshake(client_fd, 0, 10.0, &client_sigpipe, reason, sizeof reason);
    pthread_join(server, NULL);
    if (!client || !s.ssl) {
        fprintf(stderr, "FAIL: handshake: client %s, server %s\n", client ? "ok" : reason, s.ssl ? "ok" : s.reason);
        return TEST_FAIL;
    }
    if (shoal_tls_is_ktls(client)) {
        fprintf(stderr, "SKIP: kernel TLS writes these streams (the socket BIO's, which may raise SIGPIPE)\n");
        return TEST_SKIP;
    }
    CHECK_MSG(client_sigpipe == 0 && s.sigpipe == 0, "streams counted as raising SIGPIPE: client %d, server %d",
              client_sigpipe, s.sigpipe);
    CHECK_MSG(atomic_load(&shoal_tls.sigpipe_streams) == 0, "%d stream(s) counted as raising SIGPIPE",
              atomic_load(&shoal_tls.sigpipe_streams));

    /* Data crosses both ways through the sink. */
    char out[100], in[100];
    for (size_t i = 0; i < sizeof out; i++) out[i] = (char)(i * 7 + 3);
    CHECK(shoal_tls_write(client, out, sizeof out) == 0);
    memset(in, 0, sizeof in);
    CHECK(shoal_tls_read(s.ssl, in, sizeof in) == 0 && memcmp(in, out, sizeof in) == 0);
    CHECK(shoal_tls_write(s.ssl, in, sizeof in) == 0);
    memset(in, 0, sizeof in);
    CHECK(shoal_tls_read(client, in, sizeof in) == 0 && memcmp(in, out, sizeof in) == 0);

    /* The server end goes; the client writes on until that fails. */
    shoal_tls_lib.free_(s.ssl);
    close(s.fd);
    int ok_writes = writes_until_failure(client);
    CHECK_MSG(ok_writes >= 0, "writes to a closed stream kept succeeding");
    CHECK_MSG(pipes == 0, "a write to a closed stream raised SIGPIPE %d time(s)", (int)pipes);
    sigset_t pending;
    CHECK(sigpending(&pending) == 0 && !sigismember(&pending, SIGPIPE));

    shoal_tls_lib.free_(client);
    close(client_fd);
    close(s.listen_fd);
    shoal_tls_contexts_free();
    if (test_failures) return TEST_FAIL;
    printf("PASS: stream writes raise no SIGPIPE (%d writes before the failure)\n", ok_writes);
    return TEST_PASS;
}
