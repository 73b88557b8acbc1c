/* rendezvous.c: how the oshrun instances of a job find each other. Node 0
 * binds exactly the --rendezvous address and accepts one connection at a
 * time: TLS handshake, then a JOIN naming the node. A connection that fails
 * either is refused with one line and node 0 keeps waiting, until every
 * node joined or the deadline passed. The other nodes retry connecting
 * until the deadline, since node 0 may start after them. When all have
 * joined, node 0 sends every node the PE counts (WELCOME), which fix the
 * global ranks: node k's PEs follow node k-1's. */
#include "args.h"
#include "net.h"
#include "oshrun.h"
#include "tls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define STEP_S 10.0   /* handshake and JOIN of one connection */
#define RETRY_MS 200

static double earlier(double a, double b) { return a < b ? a : b; }

/* "HOST:PORT" and "[V6]:PORT" into host and port. */
static void split(const char *text, char *host, size_t hl, char *port, size_t pl)
{
    const char *colon = strrchr(text, ':');
    size_t n = (size_t)(colon - text);
    if (n >= 2 && text[0] == '[' && text[n - 1] == ']') {
        text++;
        n -= 2;
    }
    snprintf(host, hl, "%.*s", (int)n, text);
    snprintf(port, pl, "%s", colon + 1);
}

static void peer_name(const struct sockaddr_storage *ss, char *out, size_t len)
{
    char host[INET6_ADDRSTRLEN] = "?";
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *in = (const void *)ss;
        inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
        snprintf(out, len, "%s:%u", host, (unsigned)ntohs(in->sin_port));
    } else if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const void *)ss;
        inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
        snprintf(out, len, "[%s]:%u", host, (unsigned)ntohs(in6->sin6_port));
    } else {
        snprintf(out, len, "?");
    }
}

static void tune(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one); /* small request/reply messages */
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
}

static int listen_on(const char *host, const char *port, const char *where)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV}, *res, *ai;
    int fd = -1, err = 0, rc = getaddrinfo(host, port, &hints, &res);
    if (rc) {
        fprintf(stderr, "oshrun: cannot listen on %s: %s\n", where, gai_strerror(rc));
        return -1;
    }
    for (ai = res; ai; ai = ai->ai_next) {
        int one = 1;
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
        if (fd < 0) {
            err = errno;
            continue;
        }
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 64) == 0) break;
        err = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) fprintf(stderr, "oshrun: cannot listen on %s: %s\n", where, strerror(err));
    return fd;
}

/* Closes a refused connection without a reset, so the peer reads our TLS
 * alert rather than losing it to an RST over data we never read. */
static void close_gently(int fd)
{
    double until = oshrun_now() + 1.0;
    shutdown(fd, SHUT_WR);
    for (;;) {
        char buf[4096];
        double left = until - oshrun_now();
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (left <= 0 || poll(&p, 1, (int)(left * 1000.0) + 1) <= 0 || recv(fd, buf, sizeof buf, 0) <= 0) break;
    }
    close(fd);
}

/* Logs the refusal, tells the peer why when the channel still works, closes. */
static int refuse(struct oshrun_link *l, const char *fmt, const char *why)
{
    char line[256];
    unsigned char st[4];
    snprintf(line, sizeof line, fmt, why);
    fprintf(stderr, "oshrun: refused a bootstrap connection from %s: %s\n", l->peer, line);
    oshrun_put_u32(st, 1);
    oshrun_link_send(l, OSHRUN_NET_FAULT, st, 4, line, strlen(line), oshrun_now() + 1.0);
    oshrun_link_close(l);
    return 0;
}

/* One connection on node 0's socket. Returns 1 when a node joined. */
static int accept_one(struct oshrun_net *net, int lfd, double deadline)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    struct oshrun_link l;
    struct oshrun_frame f;
    char peer[96], reason[256], text[160];
    SSL *ssl = NULL;
    int fd = accept4(lfd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return 0;
    peer_name(&ss, peer, sizeof peer);
    tune(fd);
    double step = earlier(oshrun_now() + STEP_S, deadline);
    if (net->ctx && !(ssl = oshrun_tls_handshake(net->ctx, fd, 1, step, reason, sizeof reason))) {
        fprintf(stderr, "oshrun: refused a bootstrap connection from %s: TLS handshake failed (%s)\n", peer, reason);
        close_gently(fd);
        return 0;
    }
    oshrun_link_init(&l, fd, ssl, -1, peer);
    int r = oshrun_link_wait(&l, &f, step);
    if (r <= 0) return refuse(&l, "%s", r == 0 ? "it sent no JOIN in time" : l.why);
    if (f.type != OSHRUN_NET_JOIN || f.len != 16) return refuse(&l, "%s", "it did not start with a JOIN message");
    uint32_t version = oshrun_get_u32(f.payload), node = oshrun_get_u32(f.payload + 4);
    uint32_t nnodes = oshrun_get_u32(f.payload + 8), npes = oshrun_get_u32(f.payload + 12);
    if (version != OSHRUN_NET_VERSION) {
        snprintf(text, sizeof text, "it speaks protocol version %u, this oshrun %u", version, OSHRUN_NET_VERSION);
        return refuse(&l, "%s", text);
    }
    if (nnodes != (uint32_t)net->nnodes || node == 0 || node >= nnodes) {
        snprintf(text, sizeof text, "it says it is node %u of %u, but this job has %d nodes (1 to %d may join)", node,
                 nnodes, net->nnodes, net->nnodes - 1);
        return refuse(&l, "%s", text);
    }
    if (net->links[node].fd >= 0) {
        snprintf(text, sizeof text, "node %u has already joined from %s", node, net->links[node].peer);
        return refuse(&l, "%s", text);
    }
    if (npes == 0 || npes > OSHRUN_MAX_PES) return refuse(&l, "%s", "it has no valid PE count");
    l.node = (int)node;
    net->links[node] = l;
    net->counts[node] = (int)npes;
    return 1;
}

static int serve_rendezvous(struct oshrun_net *net, const char *host, const char *port, double deadline, long limit_s)
{
    int joined = 0, lfd = listen_on(host, port, net->where);
    if (lfd < 0) return 1;
    while (joined < net->nnodes - 1) {
        double left = deadline - oshrun_now();
        if (left <= 0) {
            char missing[256] = "";
            size_t k = 0;
            for (int n = 1; n < net->nnodes && k + 16 < sizeof missing; n++)
                if (net->links[n].fd < 0)
                    k += (size_t)snprintf(missing + k, sizeof missing - k, "%s%d", k ? ", " : "", n);
            fprintf(stderr, "oshrun: only %d of %d nodes joined at %s within %ld s (missing: node %s); giving up\n",
                    joined + 1, net->nnodes, net->where, limit_s, missing);
            close(lfd);
            return 1;
        }
        struct pollfd p = {.fd = lfd, .events = POLLIN};
        if (poll(&p, 1, (int)(left * 1000.0) + 1) > 0) joined += accept_one(net, lfd, deadline);
    }
    close(lfd);
    size_t len = 4 + 4 * (size_t)net->nnodes;
    unsigned char *w = malloc(len);
    if (!w) return 1;
    oshrun_put_u32(w, (uint32_t)net->nnodes);
    for (int n = 0; n < net->nnodes; n++) oshrun_put_u32(w + 4 + 4 * (size_t)n, (uint32_t)net->counts[n]);
    for (int n = 1; n < net->nnodes; n++) {
        struct oshrun_link *l = &net->links[n];
        if (oshrun_link_send(l, OSHRUN_NET_WELCOME, w, len, NULL, 0, oshrun_now() + STEP_S) != 0) {
            fprintf(stderr, "oshrun: lost node %d (%s) before the job started: %s\n", n, l->peer, l->why);
            free(w);
            return 1;
        }
    }
    free(w);
    return 0;
}

/* One connection attempt to every address of host; the socket or -1. */
static int connect_once(const char *host, const char *port, double deadline, char *err, size_t errlen)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV}, *res, *ai;
    int rc = getaddrinfo(host, port, &hints, &res), fd = -1;
    if (rc) {
        snprintf(err, errlen, "%s", gai_strerror(rc));
        return -1;
    }
    for (ai = res; ai && fd < 0; ai = ai->ai_next) {
        int e = 0;
        socklen_t el = sizeof e;
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
        if (fd < 0) {
            snprintf(err, errlen, "%s", strerror(errno));
            continue;
        }
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
            struct pollfd p = {.fd = fd, .events = POLLOUT};
            double left = earlier(deadline, oshrun_now() + 5.0) - oshrun_now();
            if (errno != EINPROGRESS)
                e = errno;
            else if (left <= 0 || poll(&p, 1, (int)(left * 1000.0) + 1) <= 0)
                e = ETIMEDOUT;
            else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) != 0)
                e = errno;
        }
        if (e) {
            snprintf(err, errlen, "%s", strerror(e));
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    return fd;
}

static int join(const struct oshrun_options *opt, struct oshrun_net *net, const char *host, const char *port,
                double deadline, long limit_s)
{
    char err[256] = "no address", reason[256];
    struct oshrun_link *l = &net->links[0];
    struct oshrun_frame f;
    SSL *ssl = NULL;
    int fd;
    while ((fd = connect_once(host, port, deadline, err, sizeof err)) < 0) {
        if (oshrun_now() + RETRY_MS / 1000.0 >= deadline) {
            fprintf(stderr, "oshrun: cannot reach node 0 at %s within %ld s: %s\n", net->where, limit_s, err);
            return 1;
        }
        poll(NULL, 0, RETRY_MS);
    }
    tune(fd);
    double step = earlier(oshrun_now() + STEP_S, deadline);
    if (net->ctx && !(ssl = oshrun_tls_handshake(net->ctx, fd, 0, step, reason, sizeof reason))) {
        fprintf(stderr, "oshrun: TLS handshake with node 0 at %s failed (%s): %s\n", net->where, reason,
                oshrun_tls_hint());
        close(fd);
        return 1;
    }
    oshrun_link_init(l, fd, ssl, 0, net->where);
    unsigned char j[16];
    oshrun_put_u32(j, OSHRUN_NET_VERSION);
    oshrun_put_u32(j + 4, (uint32_t)net->node_rank);
    oshrun_put_u32(j + 8, (uint32_t)net->nnodes);
    oshrun_put_u32(j + 12, (uint32_t)opt->npes);
    int r = -1;
    if (oshrun_link_send(l, OSHRUN_NET_JOIN, j, sizeof j, NULL, 0, deadline) == 0)
        r = oshrun_link_wait(l, &f, deadline);
    if (r == 0) {
        fprintf(stderr, "oshrun: node 0 at %s did not start the job within %ld s (are all %d nodes started?)\n",
                net->where, limit_s, net->nnodes);
        return 1;
    }
    if (r < 0) {
        /* In TLS 1.3 the server judges our certificate after our side finished. */
        if (l->tls_failed)
            fprintf(stderr, "oshrun: TLS handshake with node 0 at %s failed (%s): %s\n", net->where,
                    l->why + strlen("TLS error: "), oshrun_tls_hint());
        else if (net->ctx && strcmp(l->why, strerror(ECONNRESET)) == 0)
            fprintf(stderr, "oshrun: TLS handshake with node 0 at %s failed (node 0 reset the connection): %s\n",
                    net->where, oshrun_tls_hint());
        else
            fprintf(stderr, "oshrun: lost node 0 (%s) before the job started: %s\n", net->where, l->why);
        return 1;
    }
    if (f.type == OSHRUN_NET_FAULT && f.len >= 4) {
        fprintf(stderr, "oshrun: node 0 at %s refused this node: %.*s\n", net->where, (int)(f.len - 4),
                f.payload + 4);
        return 1;
    }
    if (f.type != OSHRUN_NET_WELCOME || f.len != 4 + 4 * (uint32_t)net->nnodes ||
        oshrun_get_u32(f.payload) != (uint32_t)net->nnodes) {
        fprintf(stderr, "oshrun: node 0 at %s sent an unexpected reply to JOIN\n", net->where);
        return 1;
    }
    for (int n = 0; n < net->nnodes; n++) {
        uint32_t c = oshrun_get_u32(f.payload + 4 + 4 * (size_t)n);
        if (c == 0 || c > OSHRUN_MAX_PES || (n == net->node_rank && c != (uint32_t)opt->npes)) {
            fprintf(stderr, "oshrun: node 0 at %s sent a bad PE count for node %d\n", net->where, n);
            return 1;
        }
        net->counts[n] = (int)c;
    }
    return 0;
}

int oshrun_rendezvous(const struct oshrun_options *opt, struct oshrun_net *net, double deadline)
{
    char host[256], port[16], err[512];
    long limit_s = (long)(deadline - oshrun_now() + 0.5);
    net->nnodes = opt->nnodes;
    net->node_rank = opt->node_rank;
    net->nlinks = opt->node_rank == 0 ? opt->nnodes : 1;
    snprintf(net->where, sizeof net->where, "%s", opt->rendezvous);
    split(opt->rendezvous, host, sizeof host, port, sizeof port);
    net->counts = calloc((size_t)opt->nnodes, sizeof *net->counts);
    net->links = calloc((size_t)net->nlinks, sizeof *net->links);
    if (!net->counts || !net->links) {
        fprintf(stderr, "oshrun: out of memory for %d nodes\n", opt->nnodes);
        return 1;
    }
    for (int n = 0; n < net->nlinks; n++) oshrun_link_init(&net->links[n], -1, NULL, n, NULL);
    net->counts[opt->node_rank] = opt->npes;
    if (oshrun_tls_setup(opt->node_rank == 0, net->where, &net->ctx, err, sizeof err) != 0) {
        fprintf(stderr, "oshrun: %s\n", err);
        return 1;
    }
    if (opt->node_rank == 0) return serve_rendezvous(net, host, port, deadline, limit_s);
    return join(opt, net, host, port, deadline, limit_s);
}

void oshrun_net_free(struct oshrun_net *net)
{
    for (int n = 0; n < net->nlinks && net->links; n++) oshrun_link_close(&net->links[n]);
    for (int n = 0; n < net->nnodes && net->blocks; n++) free(net->blocks[n].data);
    free(net->links);
    free(net->counts);
    free(net->blocks);
    free(net->done);
    SSL_CTX_free(net->ctx);
    memset(net, 0, sizeof *net);
}
