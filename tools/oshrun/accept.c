/* accept.c: node 0's side of the rendezvous. Node 0 binds exactly the
 * --rendezvous address; every connection becomes a pending entry with its
 * own deadline (STEP_S), and one poll loop advances all of them at once:
 * a look at the first bytes (TLS or plaintext, to name a TLS mismatch),
 * the TLS handshake in non-blocking steps, then the JOIN naming the node.
 * So a client that connects and sends nothing, or a few of them, never
 * delays the real nodes. When the table is full, the oldest entry that has
 * sent nothing yet is dropped for the newcomer; entries further along are
 * never dropped. A refused connection gets one log line (at most
 * REFUSE_BURST per REFUSE_WINDOW_S seconds; then one line counting the
 * rest) and, where the channel works, a FAULT telling it why. */
#include "net.h"
#include "oshrun.h"
#include "tls.h"
#include "util/ratelimit.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define STEP_S 10.0         /* first bytes, handshake and JOIN of one connection */
#define MAX_PENDING 64
#define CLOSING_S 1.0       /* a refused peer gets this long to read our reason */
#define REFUSE_WINDOW_S 10.0
#define REFUSE_BURST 5

enum stage { ST_FREE, ST_PEEK, ST_TLS, ST_JOIN, ST_CLOSING };

struct pending {
    enum stage stage;
    int fd;
    SSL *ssl;    /* ST_TLS */
    short events;
    double since, deadline;
    char peer[96];
    struct oshrun_link link; /* ST_JOIN */
};

struct acceptor {
    struct oshrun_net *net;
    struct pending p[MAX_PENDING];
    struct shoal_ratelimit rl;
    int joined;
    int lo, hi;               /* the nodes that may join here */
    struct oshrun_link *dest; /* dest[node - lo] */
    int tree;                 /* a tree parent's listener, not node 0's */
};

static void summary(unsigned n, double window)
{
    if (n)
        fprintf(stderr, "oshrun: ... and %u more refusal%s in the last %.0f s\n", n, n == 1 ? "" : "s", window);
}

static void __attribute__((format(printf, 3, 4))) log_refusal(struct acceptor *a, const char *peer, const char *fmt, ...)
{
    char what[512];
    unsigned ended;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    int show = shoal_ratelimit_event(&a->rl, oshrun_now(), &ended);
    summary(ended, REFUSE_WINDOW_S);
    if (show) fprintf(stderr, "oshrun: refused a bootstrap connection from %s: %s\n", peer, what);
}

static void drop(struct pending *p)
{
    if (p->stage == ST_JOIN) {
        oshrun_link_close(&p->link);
    } else {
        SSL_free(p->ssl);
        if (p->fd >= 0) close(p->fd);
    }
    memset(p, 0, sizeof *p);
    p->fd = -1;
}

/* Half-closes and lets the peer read what we sent (no reset over unread data). */
static void start_closing(struct pending *p)
{
    int fd = p->stage == ST_JOIN ? p->link.fd : p->fd;
    if (p->stage == ST_JOIN) {
        p->link.fd = -1; /* the descriptor is ours now; the rest of the link goes */
        p->link.eof = 1; /* no close_notify after a refusal */
        oshrun_link_close(&p->link);
    } else {
        SSL_free(p->ssl);
    }
    p->ssl = NULL;
    p->fd = fd;
    shutdown(fd, SHUT_WR);
    p->stage = ST_CLOSING;
    p->events = POLLIN;
    p->deadline = oshrun_now() + CLOSING_S;
}

static void set_lowat(int fd, int bytes) { setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &bytes, sizeof bytes); }

/* Tells the peer why in a FAULT frame (over TLS when the link has it). */
static void tell(struct oshrun_link *l, const char *why)
{
    unsigned char st[4];
    oshrun_put_u32(st, 1);
    oshrun_link_send(l, OSHRUN_NET_FAULT, st, 4, why, strlen(why), oshrun_now() + 1.0);
}

/* The peer's first bytes: TLS, our plaintext frames, or neither. */
static void on_peek(struct acceptor *a, struct pending *p)
{
    unsigned char b[4];
    ssize_t n = recv(p->fd, b, sizeof b, MSG_PEEK);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    if (n <= 0) {
        log_refusal(a, p->peer, "it closed the connection without sending anything");
        drop(p);
        return;
    }
    int kind = oshrun_stream_start(b, (size_t)n);
    if (kind == OSHRUN_START_MORE) return;
    int tls_here = a->net->ctx != NULL;
    set_lowat(p->fd, 1);
    if (kind == OSHRUN_START_OTHER) {
        log_refusal(a, p->peer, "it is not an oshrun (its first bytes are neither TLS nor an oshrun message)");
        start_closing(p);
        return;
    }
    if ((kind == OSHRUN_START_TLS) != tls_here) {
        struct oshrun_link l;
        const char *theirs = tls_here ? "off" : "on", *ours = tls_here ? "on" : "off";
        char why[256];
        log_refusal(a, p->peer, "TLS mismatch: it %s, but TLS is %s here (SHMEM_BOOTSTRAP_TLS%s)",
                    tls_here ? "sent plaintext oshrun messages (TLS off there)" : "started a TLS handshake",
                    ours, tls_here ? " is on" : "=0");
        /* In plaintext either way: the peer's side reads it as the mismatch it is. */
        snprintf(why, sizeof why, "TLS mismatch: TLS is %s on node %d but %s on this node; set the same "
                 "SHMEM_BOOTSTRAP_TLS on every node", ours, a->net->node_rank, theirs);
        oshrun_link_init(&l, p->fd, NULL, -1, p->peer);
        tell(&l, why);
        free(l.rx);
        start_closing(p);
        return;
    }
    if (!tls_here) {
        oshrun_link_init(&p->link, p->fd, NULL, -1, p->peer);
        p->fd = -1;
        p->stage = ST_JOIN;
        p->events = POLLIN;
        return;
    }
    char reason[256];
    if (!(p->ssl = oshrun_tls_new(a->net->ctx, p->fd, reason, sizeof reason))) {
        log_refusal(a, p->peer, "cannot start TLS (%s)", reason);
        drop(p);
        return;
    }
    p->stage = ST_TLS;
}

static void on_tls(struct acceptor *a, struct pending *p)
{
    char reason[256];
    switch (oshrun_tls_step(p->ssl, 1, &p->events, reason, sizeof reason)) {
    case OSHRUN_TLS_AGAIN: return;
    case OSHRUN_TLS_DONE:
        oshrun_link_init(&p->link, p->fd, p->ssl, -1, p->peer);
        p->fd = -1;
        p->ssl = NULL;
        p->stage = ST_JOIN;
        p->events = POLLIN;
        return;
    default:
        /* The PSK binder fails exactly when the peer's secret differs. */
        log_refusal(a, p->peer, "TLS handshake failed (%s)%s", reason,
                    strstr(reason, "binder") ? ": it holds another job secret" : "");
        start_closing(p);
        return;
    }
}

static void refuse_join(struct acceptor *a, struct pending *p, const char *why)
{
    log_refusal(a, p->peer, "%s", why);
    tell(&p->link, why);
    start_closing(p);
}

/* A printable "host:port" of at most OSHRUN_ADDR_MAX bytes, or none. */
static int take_addr(const unsigned char *p, size_t n, char *out)
{
    if (n > OSHRUN_ADDR_MAX) return -1;
    for (size_t k = 0; k < n; k++)
        if (p[k] <= 0x20 || p[k] >= 0x7f) return -1;
    memcpy(out, p, n);
    out[n] = '\0';
    return 0;
}

/* The JOIN: version, node rank, node count, PE count, fan-out, then where the node's
 * children reach it (to node 0 only). */
static void on_join(struct acceptor *a, struct pending *p)
{
    struct oshrun_net *net = a->net;
    struct oshrun_frame f;
    char text[256], addr[OSHRUN_ADDR_MAX + 1] = "";
    int r = oshrun_link_fill(&p->link), got = oshrun_link_next(&p->link, &f);
    if (got == 0 && r == 0) return;
    if (got <= 0) {
        log_refusal(a, p->peer, "%s", p->link.why[0] ? p->link.why : "connection closed");
        drop(p);
        return;
    }
    if (f.type != OSHRUN_NET_JOIN || f.len < 20 || take_addr(f.payload + 20, f.len - 20, addr) != 0 ||
        (a->tree && f.len != 20)) {
        refuse_join(a, p, "it did not start with a JOIN message");
        return;
    }
    uint32_t version = oshrun_get_u32(f.payload), node = oshrun_get_u32(f.payload + 4);
    uint32_t nnodes = oshrun_get_u32(f.payload + 8), npes = oshrun_get_u32(f.payload + 12);
    uint32_t fanout = oshrun_get_u32(f.payload + 16);
    if (version != OSHRUN_NET_VERSION) {
        snprintf(text, sizeof text, "it speaks protocol version %u, this oshrun %u", version, OSHRUN_NET_VERSION);
        refuse_join(a, p, text);
    } else if (nnodes != (uint32_t)net->nnodes || node < (uint32_t)a->lo || node > (uint32_t)a->hi) {
        snprintf(text, sizeof text, "it says it is node %u of %u, but this job has %d nodes (%d to %d may join %s)",
                 node, nnodes, net->nnodes, a->lo, a->hi, a->tree ? "this node" : "node 0");
        refuse_join(a, p, text);
    } else if (fanout != (uint32_t)net->fanout) {
        snprintf(text, sizeof text, "--tree-fanout differs: %u on node %u, %d on node %d; give every node the same",
                 fanout, node, net->fanout, net->node_rank);
        refuse_join(a, p, text);
    } else if (a->dest[node - (uint32_t)a->lo].fd >= 0) {
        snprintf(text, sizeof text, "node %u has already joined from %s", node, a->dest[node - (uint32_t)a->lo].peer);
        refuse_join(a, p, text);
    } else if (npes == 0 || npes > OSHRUN_MAX_PES || (a->tree && npes != (uint32_t)net->counts[node])) {
        refuse_join(a, p, "it has no valid PE count");
    } else if (!a->tree && !addr[0] != !oshrun_tree_nkids((int)node, net->nnodes, net->fanout)) {
        refuse_join(a, p, "its JOIN does not say where its children reach it, or says so without children");
    } else {
        p->link.node = (int)node;
        a->dest[node - (uint32_t)a->lo] = p->link;
        if (!a->tree) {
            net->counts[node] = (int)npes;
            snprintf(net->addrs[node], sizeof net->addrs[node], "%s", addr);
        }
        memset(p, 0, sizeof *p);
        p->fd = -1;
        a->joined++;
    }
}

static void on_deadline(struct acceptor *a, struct pending *p)
{
    if (p->stage == ST_CLOSING) {
        drop(p);
        return;
    }
    const char *what = p->stage == ST_PEEK ? "it sent nothing" : p->stage == ST_TLS ? "its TLS handshake did not finish"
                                                                                    : "it sent no JOIN";
    char why[128];
    snprintf(why, sizeof why, "%s within %.0f s", what, STEP_S);
    if (p->stage == ST_JOIN) {
        refuse_join(a, p, why);
        return;
    }
    log_refusal(a, p->peer, "%s", why);
    drop(p);
}

static void step(struct acceptor *a, struct pending *p)
{
    switch (p->stage) {
    case ST_PEEK: on_peek(a, p); break;
    case ST_TLS: on_tls(a, p); break;
    case ST_JOIN: on_join(a, p); break;
    case ST_CLOSING: {
        char buf[4096];
        ssize_t n = recv(p->fd, buf, sizeof buf, 0);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) drop(p);
        break;
    }
    case ST_FREE: break;
    }
}

/* A free slot, or the oldest one that has sent nothing (or is closing). */
static struct pending *slot(struct acceptor *a)
{
    struct pending *old = NULL;
    for (int i = 0; i < MAX_PENDING; i++) {
        struct pending *p = &a->p[i];
        if (p->stage == ST_FREE) return p;
        if ((p->stage == ST_PEEK || p->stage == ST_CLOSING) && (!old || p->since < old->since)) old = p;
    }
    if (old && old->stage == ST_PEEK)
        log_refusal(a, old->peer, "it sent nothing while %d other connections were waiting", MAX_PENDING - 1);
    if (old) drop(old);
    return old;
}

static void accept_new(struct acceptor *a, int lfd, double deadline)
{
    for (int k = 0; k < 16; k++) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof ss;
        int fd = accept4(lfd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) return;
        struct pending *p = slot(a);
        if (!p) { /* every slot is busy with a handshake: let it retry */
            close(fd);
            return;
        }
        oshrun_tune(fd, a->net->liveness_s);
        set_lowat(fd, 4); /* poll wakes for the 4 bytes on_peek judges (or the end), never spins on fewer */
        p->stage = ST_PEEK;
        p->fd = fd;
        p->events = POLLIN;
        p->since = oshrun_now();
        p->deadline = p->since + STEP_S < deadline ? p->since + STEP_S : deadline;
        oshrun_peer_name(&ss, p->peer, sizeof p->peer);
    }
}

static void missing_nodes(const struct acceptor *a, char *out, size_t len)
{
    size_t k = 0;
    out[0] = '\0';
    for (int n = a->lo; n <= a->hi && k + 16 < len; n++)
        if (a->dest[n - a->lo].fd < 0) k += (size_t)snprintf(out + k, len - k, "%s%d", k ? ", " : "", n);
}

static int gather_nodes(struct acceptor *a, int lfd, double deadline, long limit_s)
{
    struct oshrun_net *net = a->net;
    struct pollfd pfd[1 + MAX_PENDING];
    struct pending *at[1 + MAX_PENDING];
    while (a->joined < a->hi - a->lo + 1) {
        double now = oshrun_now(), next = deadline;
        if (now >= deadline) {
            char missing[256];
            missing_nodes(a, missing, sizeof missing);
            summary(shoal_ratelimit_flush(&a->rl, now, 1), REFUSE_WINDOW_S);
            if (a->tree)
                fprintf(stderr, "oshrun: only %d of the %d nodes below node %d in the allgather tree joined it at %s "
                        "within %ld s (missing: node %s); giving up\n", a->joined, a->hi - a->lo + 1, net->node_rank,
                        net->listen_at, limit_s, missing);
            else
                fprintf(stderr, "oshrun: only %d of %d nodes joined at %s within %ld s (missing: node %s); giving up\n",
                        a->joined + 1, net->nnodes, net->where, limit_s, missing);
            return 1;
        }
        summary(shoal_ratelimit_flush(&a->rl, now, 0), REFUSE_WINDOW_S);
        double rl = shoal_ratelimit_deadline(&a->rl);
        if (rl > 0 && rl < next) next = rl;
        int n = 0;
        pfd[n] = (struct pollfd){.fd = lfd, .events = POLLIN};
        at[n++] = NULL;
        for (int i = 0; i < MAX_PENDING; i++) {
            struct pending *p = &a->p[i];
            if (p->stage == ST_FREE) continue;
            if (now >= p->deadline) {
                on_deadline(a, p);
                if (p->stage == ST_FREE) continue;
            }
            if (p->deadline < next) next = p->deadline;
            pfd[n] = (struct pollfd){.fd = p->stage == ST_JOIN ? p->link.fd : p->fd, .events = p->events};
            at[n++] = p;
        }
        int ready = poll(pfd, (nfds_t)n, (int)((next - now) * 1000.0) + 1);
        if (ready < 0 && errno != EINTR) {
            fprintf(stderr, "oshrun: poll while waiting for the other nodes: %s\n", strerror(errno));
            return 1;
        }
        for (int i = 1; i < n && ready > 0; i++) {
            /* TLS may hold bytes already read from the socket: step until it has to wait. */
            if (!pfd[i].revents) continue;
            enum stage before;
            do {
                before = at[i]->stage;
                step(a, at[i]);
            } while (at[i]->stage != before && at[i]->stage != ST_FREE && at[i]->stage != ST_CLOSING);
        }
        if (ready > 0 && pfd[0].revents) accept_new(a, lfd, deadline);
    }
    return 0;
}

int oshrun_accept_nodes(struct oshrun_net *net, int lfd, int lo, int hi, struct oshrun_link *dest, int tree,
                        double deadline, long limit_s)
{
    struct acceptor *a = calloc(1, sizeof *a);
    int st;
    if (!a) {
        fprintf(stderr, "oshrun: out of memory for the rendezvous\n");
        return 1;
    }
    *a = (struct acceptor){.net = net, .lo = lo, .hi = hi, .dest = dest, .tree = tree};
    shoal_ratelimit_init(&a->rl, REFUSE_WINDOW_S, REFUSE_BURST);
    for (int i = 0; i < MAX_PENDING; i++) a->p[i].fd = -1;
    st = gather_nodes(a, lfd, deadline, limit_s);
    for (int i = 0; i < MAX_PENDING; i++)
        if (a->p[i].stage != ST_FREE) drop(&a->p[i]);
    summary(shoal_ratelimit_flush(&a->rl, oshrun_now(), 1), REFUSE_WINDOW_S);
    free(a);
    return st;
}

int oshrun_serve_rendezvous(struct oshrun_net *net, const char *host, const char *port, double deadline, long limit_s)
{
    int lfd, st;
    if ((lfd = oshrun_listen_on(host, port, net->where)) < 0) return 1;
    st = oshrun_accept_nodes(net, lfd, 1, net->nnodes - 1, net->links + 1, 0, deadline, limit_s);
    close(lfd); /* later connections are refused by the kernel */
    if (st != 0) return st;
    return oshrun_welcome(net);
}
