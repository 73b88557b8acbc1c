/* rendezvous.c: how the oshrun instances of a job find each other. Node 0
 * serves the rendezvous (accept.c); the other nodes connect to it and
 * retry, connection and handshake, until the deadline: node 0 may start
 * after them, or be busy. A refusal (wrong secret or certificate, TLS on
 * one side only, a JOIN node 0 rejects) is final and named in one line;
 * only a timeout or a closed connection is retried. When all have joined,
 * node 0 sends every node the PE counts (WELCOME), which fix the global
 * ranks: node k's PEs follow node k-1's. */
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

#define STEP_S 10.0   /* one handshake attempt */
#define RETRY_MS 200

static double earlier(double a, double b) { return a < b ? a : b; }

/* "HOST:PORT" and "[V6]:PORT" into host and port. */
void oshrun_split_addr(const char *text, char *host, size_t hl, char *port, size_t pl)
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

void oshrun_peer_name(const struct sockaddr_storage *ss, char *out, size_t len)
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

void oshrun_tune(int fd, long liveness_s)
{
    int one = 1, idle = (int)(liveness_s / 3 > 0 ? liveness_s / 3 : 1), cnt = 3;
    int intvl = idle / 3 > 0 ? idle / 3 : 1;
    /* The kernel's own verdict comes a little after the heartbeats' (nodes.c),
     * so the message names the silence; it still ends a link whose data is
     * not acknowledged should the event loop be stuck. */
    unsigned int user_ms = (unsigned int)(liveness_s + 10) * 1000u;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one); /* small request/reply messages */
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
    setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_ms, sizeof user_ms);
}

int oshrun_listen_on(const char *host, const char *port, const char *where)
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

int oshrun_welcome(struct oshrun_net *net)
{
    size_t len = 4 + 4 * (size_t)net->nnodes;
    unsigned char *w = malloc(len + OSHRUN_ADDR_MAX);
    if (!w) return 1;
    oshrun_put_u32(w, (uint32_t)net->nnodes);
    for (int n = 0; n < net->nnodes; n++) oshrun_put_u32(w + 4 + 4 * (size_t)n, (uint32_t)net->counts[n]);
    for (int n = 1; n < net->nnodes; n++) {
        struct oshrun_link *l = &net->links[n];
        const char *parent_at = net->addrs[oshrun_tree_parent(n, net->fanout)]; /* "" for node 0 */
        size_t alen = strlen(parent_at);
        memcpy(w + len, parent_at, alen);
        if (oshrun_link_send(l, OSHRUN_NET_WELCOME, w, len + alen, NULL, 0, oshrun_now() + STEP_S) != 0) {
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

/* The line for a handshake node `who` refused (or we refused its). */
static void say_refused(const char *where, const char *who, const char *reason)
{
    if (!oshrun_tls_x509())
        fprintf(stderr, "oshrun: %s at %s refused this node's job secret (TLS: %s): SHMEM_BOOTSTRAP_SECRET_FILE "
                "must hold the same secret on every node\n", who, where, reason);
    else if (strstr(reason, "certificate verify failed"))
        fprintf(stderr, "oshrun: this node does not accept the certificate of %s at %s (TLS: %s): both must "
                "chain to SHMEM_BOOTSTRAP_TLS_CA\n", who, where, reason);
    else
        fprintf(stderr, "oshrun: %s at %s refused this node's certificate (TLS: %s): is it signed by the CA %s "
                "trusts (SHMEM_BOOTSTRAP_TLS_CA)?\n", who, where, reason, who);
}

int oshrun_connect_node(struct oshrun_net *net, const char *where, const char *who, double deadline, long limit_s,
                        int *out_fd, SSL **out_ssl)
{
    char err[256] = "no address", reason[256] = "", host[256], port[16];
    int timeouts = 0, closes = 0;
    oshrun_split_addr(where, host, sizeof host, port, sizeof port);
    for (;;) {
        int fd = connect_once(host, port, deadline, err, sizeof err);
        if (fd >= 0) {
            enum oshrun_tls_result res = OSHRUN_TLS_DONE;
            oshrun_tune(fd, net->liveness_s);
            if (net->ctx) res = oshrun_tls_connect(net->ctx, fd, earlier(oshrun_now() + STEP_S, deadline), out_ssl,
                                                   reason, sizeof reason);
            if (res == OSHRUN_TLS_DONE) {
                *out_fd = fd;
                return 0;
            }
            close(fd);
            if (res == OSHRUN_TLS_REFUSED) {
                say_refused(where, who, reason);
                return 1;
            }
            if (res == OSHRUN_TLS_PLAINTEXT) {
                fprintf(stderr, "oshrun: TLS mismatch with %s at %s: it answered in plaintext, so TLS is off there "
                        "(SHMEM_BOOTSTRAP_TLS=0) but on here; set the same SHMEM_BOOTSTRAP_TLS on every node\n",
                        who, where);
                return 1;
            }
            if (res == OSHRUN_TLS_NOT_TLS) {
                fprintf(stderr, "oshrun: %s at %s answered with something that is neither TLS nor oshrun: is "
                        "--rendezvous the right address?\n", who, where);
                return 1;
            }
            timeouts += res == OSHRUN_TLS_TIMEOUT;
            closes += res == OSHRUN_TLS_CLOSED;
        }
        if (oshrun_now() + RETRY_MS / 1000.0 >= deadline) break;
        poll(NULL, 0, RETRY_MS);
    }
    if (timeouts || closes)
        fprintf(stderr, "oshrun: no TLS handshake with %s at %s completed within %ld s (%d timed out, %d closed "
                "by %s; last: %s): is %s overloaded, or not an oshrun of this job?\n", who, where, limit_s,
                timeouts, closes, who, reason, who);
    else
        fprintf(stderr, "oshrun: cannot reach %s at %s within %ld s: %s\n", who, where, limit_s, err);
    return 1;
}

/* A node with children listens on the address it reached node 0 from (the
 * interface of the job's network), on a port the kernel picks. */
static int listen_for_kids(struct oshrun_net *net)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char host[INET6_ADDRSTRLEN] = "", at[OSHRUN_ADDR_MAX + 1];
    const struct sockaddr_in *in = (const void *)&ss;
    const struct sockaddr_in6 *in6 = (const void *)&ss;
    if (getsockname(net->links[0].fd, (struct sockaddr *)&ss, &sl) != 0 ||
        !inet_ntop(ss.ss_family, ss.ss_family == AF_INET6 ? (const void *)&in6->sin6_addr : (const void *)&in->sin_addr,
                   host, sizeof host)) {
        fprintf(stderr, "oshrun: cannot tell this node's address toward node 0: %s\n", strerror(errno));
        return 1;
    }
    snprintf(at, sizeof at, "%s:0", host);
    if ((net->listen_fd = oshrun_listen_on(host, "0", at)) < 0) return 1;
    sl = sizeof ss;
    if (getsockname(net->listen_fd, (struct sockaddr *)&ss, &sl) != 0) {
        fprintf(stderr, "oshrun: cannot tell the port of the allgather tree's listener: %s\n", strerror(errno));
        return 1;
    }
    oshrun_peer_name(&ss, net->listen_at, sizeof net->listen_at);
    return 0;
}

static int join(const struct oshrun_options *opt, struct oshrun_net *net, const char *host, const char *port,
                double deadline, long limit_s)
{
    struct oshrun_link *l = &net->links[0];
    struct oshrun_frame f;
    SSL *ssl = NULL;
    int fd;
    (void)host;
    (void)port;
    if (oshrun_connect_node(net, net->where, "node 0", deadline, limit_s, &fd, &ssl) != 0) return 1;
    oshrun_link_init(l, fd, ssl, 0, net->where);
    if (oshrun_tree_nkids(net->node_rank, net->nnodes, net->fanout) && listen_for_kids(net) != 0) return 1;
    unsigned char j[20];
    oshrun_put_u32(j, OSHRUN_NET_VERSION);
    oshrun_put_u32(j + 4, (uint32_t)net->node_rank);
    oshrun_put_u32(j + 8, (uint32_t)net->nnodes);
    oshrun_put_u32(j + 12, (uint32_t)opt->npes);
    oshrun_put_u32(j + 16, (uint32_t)net->fanout);
    int r = -1;
    if (oshrun_link_send(l, OSHRUN_NET_JOIN, j, sizeof j, net->listen_at, strlen(net->listen_at), deadline) == 0)
        r = oshrun_link_wait(l, &f, deadline);
    if (r == 0) {
        fprintf(stderr, "oshrun: node 0 at %s did not start the job within %ld s (are all %d nodes started?)\n",
                net->where, limit_s, net->nnodes);
        return 1;
    }
    if (r < 0) {
        /* In TLS 1.3 the server judges our certificate after our side finished. */
        if (l->tls_failed)
            say_refused(net->where, "node 0", l->why + strlen("TLS error: "));
        else if (net->ctx && strcmp(l->why, strerror(ECONNRESET)) == 0)
            say_refused(net->where, "node 0", "node 0 reset the connection");
        else
            fprintf(stderr, "oshrun: lost node 0 (%s) before the job started: %s\n", net->where, l->why);
        return 1;
    }
    if (f.type == OSHRUN_NET_FAULT && f.len >= 4) {
        fprintf(stderr, "oshrun: node 0 at %s refused this node: %.*s\n", net->where, (int)(f.len - 4),
                f.payload + 4);
        return 1;
    }
    size_t counts_len = 4 + 4 * (size_t)net->nnodes, alen = f.len - counts_len;
    int parent = oshrun_tree_parent(net->node_rank, net->fanout);
    if (f.type != OSHRUN_NET_WELCOME || f.len < counts_len || alen > OSHRUN_ADDR_MAX || !alen != !parent ||
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
    memcpy(net->parent_at, f.payload + counts_len, alen);
    net->parent_at[alen] = '\0';
    return 0;
}

int oshrun_rendezvous(const struct oshrun_options *opt, struct oshrun_net *net, double deadline)
{
    char host[256], port[16], err[512];
    long limit_s = (long)(deadline - oshrun_now() + 0.5);
    net->nnodes = opt->nnodes;
    net->node_rank = opt->node_rank;
    /* Node 0: every node. Others: node 0, the parent, the children. */
    net->fanout = opt->tree_fanout ? opt->tree_fanout : OSHRUN_TREE_FANOUT;
    net->nlinks = opt->node_rank == 0 ? opt->nnodes : 2 + net->fanout;
    net->listen_fd = -1;
    snprintf(net->where, sizeof net->where, "%s", opt->rendezvous);
    oshrun_split_addr(opt->rendezvous, host, sizeof host, port, sizeof port);
    net->counts = calloc((size_t)opt->nnodes, sizeof *net->counts);
    net->links = calloc((size_t)net->nlinks, sizeof *net->links);
    if (opt->node_rank == 0) net->addrs = calloc((size_t)opt->nnodes, sizeof *net->addrs);
    if (!net->counts || !net->links || (opt->node_rank == 0 && !net->addrs)) {
        fprintf(stderr, "oshrun: out of memory for %d nodes\n", opt->nnodes);
        return 1;
    }
    for (int n = 0; n < net->nlinks; n++) oshrun_link_init(&net->links[n], -1, NULL, n, NULL);
    net->counts[opt->node_rank] = opt->npes;
    if (oshrun_tls_setup(net->where, &net->ctx, err, sizeof err) != 0) {
        fprintf(stderr, "oshrun: %s\n", err);
        return 1;
    }
    int st = opt->node_rank == 0 ? oshrun_serve_rendezvous(net, host, port, deadline, limit_s)
                                 : join(opt, net, host, port, deadline, limit_s);
    return st != 0 ? st : oshrun_tree_open(opt, net, deadline, limit_s);
}

void oshrun_net_free(struct oshrun_net *net)
{
    for (int n = 0; n < net->nlinks && net->links; n++) oshrun_link_close(&net->links[n]);
    if (net->listen_fd >= 0) close(net->listen_fd);
    oshrun_tree_free(net);
    free(net->links);
    free(net->counts);
    free(net->addrs);
    free(net->done);
    SSL_CTX_free(net->ctx);
    memset(net, 0, sizeof *net);
}
