/* nodes.c: the job across hosts, once the nodes have met (net.h). The
 * allgathers go through the tree (tree.c); node 0 relays a FAULT from any
 * node to every node and ends the job (END) when every node reported DONE.
 * A lost connection ends the job: node 0 tells the others, and a node that
 * loses node 0 stops on its own.
 * Liveness: every link (star and tree) carries a PING each ping_every
 * seconds in both directions, and any frame received counts as a sign of
 * life; a link silent for liveness_s seconds (a cut cable, a frozen or
 * vanished host) is lost like a closed one. The timers run from the event
 * loop (job.c). */
#include "net.h"
#include "where.h"
#include "oshrun.h"
#include "util/config.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define LINGER_S 0.5  /* at exit, time for the peers to read what we sent */

static int is_root(const struct oshrun_job *job) { return job->net->node_rank == 0; }

/* The index of l's child in the tree, or -1 when it is no child's link. */
static int kid_of(const struct oshrun_net *net, const struct oshrun_link *l)
{
    int i = (int)(l - net->links) - net->kid0;
    return i >= 0 && i < net->nkids ? i : -1;
}

/* A tree link below node 0 may end once the END is on its way: a child
 * whose PEs finished, or the parent after ours did. Node 0 still watches
 * both through their star links. */
static int may_close(const struct oshrun_net *net, const struct oshrun_link *l)
{
    int kid = kid_of(net, l);
    if (net->node_rank == 0 || l == &net->links[0]) return 0;
    return kid >= 0 ? net->kid_done[kid] : net->sent_done;
}

static void lost(struct oshrun_job *job, struct oshrun_link *l)
{
    char peer[sizeof l->peer], why[sizeof l->why];
    int node = l->node, quiet = may_close(job->net, l);
    snprintf(peer, sizeof peer, "%s", l->peer);
    snprintf(why, sizeof why, "%s", l->why[0] ? l->why : "connection closed");
    oshrun_link_close(l);
    if (job->failed || job->net->ended || quiet) return;
    oshrun_fail(job, 1, -1, "lost node %d (%s): %s", node, peer, why);
}

void oshrun_net_send(struct oshrun_job *job, struct oshrun_link *l, uint32_t type, const void *a, size_t alen,
                     const void *b, size_t blen)
{
    /* A peer that takes nothing for the liveness limit is lost. */
    double until = oshrun_now() + (double)job->net->liveness_s;
    if (l->fd >= 0 && oshrun_link_send(l, type, a, alen, b, blen, until) != 0) lost(job, l);
}

void oshrun_net_broken(struct oshrun_job *job, struct oshrun_link *l, const char *what)
{
    oshrun_fail(job, 1, -1, "node %d (%s) broke the bootstrap protocol: %s", l->node, l->peer, what);
}


/* Faults travel the star: to node 0, which sends them to every node. */
void oshrun_net_fault(struct oshrun_job *job, int status, const char *what)
{
    struct oshrun_net *net = job->net;
    unsigned char st[4];
    int star = is_root(job) ? net->nnodes : 1;
    if (net->relaying) return;
    oshrun_put_u32(st, (uint32_t)status);
    for (int n = 0; n < star; n++) oshrun_net_send(job, &net->links[n], OSHRUN_NET_FAULT, st, 4, what, strlen(what));
}

void oshrun_net_gather(struct oshrun_job *job, uint32_t kind, size_t len, const unsigned char *blobs)
{
    struct oshrun_net *net = job->net;
    job->net_pending = 1;
    oshrun_tree_block(job, net->node_rank, kind, (uint32_t)len, blobs, len * (size_t)job->npes);
}

static void on_frame(struct oshrun_job *job, struct oshrun_link *l, const struct oshrun_frame *f)
{
    struct oshrun_net *net = job->net;
    int root = is_root(job), kid = kid_of(net, l);
    switch (f->type) {
    case OSHRUN_NET_FAULT: {
        char line[1024];
        size_t n = f->len - 4 < sizeof line - 1 ? f->len - 4 : sizeof line - 1;
        int status = f->len >= 4 ? (int)oshrun_get_u32(f->payload) : 0;
        if (f->len < 4) break;
        /* One printable line, and a failure never exits 0. */
        for (size_t k = 0; k < n; k++) {
            unsigned char c = f->payload[4 + k];
            line[k] = c < 0x20 || c == 0x7f ? '?' : (char)c;
        }
        line[n] = '\0';
        net->relaying = !root; /* node 0 passes it on to every node */
        oshrun_fail(job, (status & 0xff) ? status & 0xff : 1, -1, "%s", line);
        net->relaying = 0;
        return;
    }
    case OSHRUN_NET_GATHER:
        if (kid < 0 || f->len < 8) break;
        oshrun_tree_block(job, l->node, oshrun_get_u32(f->payload), oshrun_get_u32(f->payload + 4), f->payload + 8,
                          f->len - 8);
        return;
    case OSHRUN_NET_RESULT:
        if (root || l != &net->links[net->parent] || f->len < 4 || !job->net_pending) break;
        if (f->len - 4 != (size_t)job->gather_len * (size_t)job->size) {
            oshrun_net_broken(job, l, "an allgather result of the wrong size");
            return;
        }
        oshrun_tree_result(job, f->payload, f->len);
        return;
    case OSHRUN_NET_DONE:
        /* Node 0 counts every node's; a parent marks its child's. */
        if (root ? net->done[l->node] : kid < 0 || net->kid_done[kid]) break;
        if (root) {
            net->done[l->node] = 1;
            net->ndone++;
        }
        if (kid >= 0) net->kid_done[kid] = 1;
        oshrun_tree_check_stuck(job);
        return;
    case OSHRUN_NET_END:
        if (root || l != &net->links[0]) break;
        net->ended = 1;
        return;
    case OSHRUN_NET_PING: return; /* its arrival was the point (link.c noted the time) */
    case OSHRUN_NET_WHERE:
        if (root || l != &net->links[0]) break;
        oshrun_where_relay_request(job);
        return;
    case OSHRUN_NET_WHERE_TEXT:
        if (!root) break;
        oshrun_where_remote_text(job, l->node, f->payload, f->len);
        return;
    }
    oshrun_net_broken(job, l, "an unexpected message");
}

static void serve_link(struct oshrun_job *job, struct oshrun_link *l)
{
    for (;;) {
        struct oshrun_frame f;
        int got = 0, r = oshrun_link_fill(l);
        while (l->fd >= 0 && (got = oshrun_link_next(l, &f)) == 1) on_frame(job, l, &f);
        if (l->fd < 0) return;
        if (got < 0 || r < 0) {
            lost(job, l);
            return;
        }
        if (r == 0) return;
    }
}

int oshrun_net_pollfds(struct oshrun_job *job, struct pollfd *pfd)
{
    for (int n = 0; n < job->net->nlinks; n++) pfd[n] = (struct pollfd){.fd = job->net->links[n].fd, .events = POLLIN};
    return job->net->nlinks;
}

void oshrun_net_serve(struct oshrun_job *job, const struct pollfd *pfd)
{
    for (int n = 0; n < job->net->nlinks; n++) {
        struct oshrun_link *l = &job->net->links[n];
        if ((pfd[n].revents || oshrun_link_has_frame(l)) && l->fd >= 0) serve_link(job, l);
    }
}

int oshrun_net_buffered(const struct oshrun_job *job)
{
    for (int n = 0; n < job->net->nlinks; n++)
        if (oshrun_link_has_frame(&job->net->links[n])) return 1;
    return 0;
}

void oshrun_net_tick(struct oshrun_job *job, double now)
{
    struct oshrun_net *net = job->net;
    for (int n = 0; n < net->nlinks; n++) {
        struct oshrun_link *l = &net->links[n];
        if (l->fd < 0 || (n == 0 && net->node_rank == 0)) continue;
        if (now - l->last_rx >= (double)net->liveness_s) {
            snprintf(l->why, sizeof l->why, "no heartbeat for %ld s", net->liveness_s);
            lost(job, l);
            continue;
        }
        if (now >= l->next_ping) {
            l->next_ping = now + net->ping_every;
            oshrun_net_send(job, l, OSHRUN_NET_PING, NULL, 0, NULL, 0);
        }
    }
}

double oshrun_net_next_timer(const struct oshrun_job *job)
{
    const struct oshrun_net *net = job->net;
    double next = -1;
    for (int n = 0; n < net->nlinks; n++) {
        const struct oshrun_link *l = &net->links[n];
        if (l->fd < 0 || (n == 0 && net->node_rank == 0)) continue;
        double t = l->next_ping < l->last_rx + (double)net->liveness_s ? l->next_ping : l->last_rx + (double)net->liveness_s;
        if (next < 0 || t < next) next = t;
    }
    return next;
}

int oshrun_net_finished(struct oshrun_job *job)
{
    struct oshrun_net *net = job->net;
    if (job->failed) return 1;
    if (!net->self_done) {
        net->self_done = 1;
        oshrun_tree_check_stuck(job);
        if (job->failed) return 1;
    }
    if (!is_root(job)) {
        if (!net->sent_done) {
            net->sent_done = 1;
            oshrun_net_send(job, &net->links[0], OSHRUN_NET_DONE, NULL, 0, NULL, 0);
            if (net->parent > 0) oshrun_net_send(job, &net->links[net->parent], OSHRUN_NET_DONE, NULL, 0, NULL, 0);
        }
        return net->ended || job->failed;
    }
    if (!net->done[0]) {
        net->done[0] = 1;
        net->ndone++;
    }
    if (job->failed) return 1;
    if (net->ndone < net->nnodes) return 0;
    net->ended = 1;
    for (int n = 1; n < net->nnodes; n++) oshrun_net_send(job, &net->links[n], OSHRUN_NET_END, NULL, 0, NULL, 0);
    return 1;
}

int oshrun_net_open(struct oshrun_job *job)
{
    const struct oshrun_options *opt = job->opt;
    struct oshrun_net *net = calloc(1, sizeof *net);
    double limit = opt->timeout_s ? (double)opt->timeout_s : 60.0;
    struct shoal_config cfg;
    char err[512];
    int st;
    if (!net) return 1;
    if (shoal_config_load(&cfg, NULL, err, sizeof err) != SHOAL_OK) {
        fprintf(stderr, "oshrun: %s\n", err);
        free(net);
        return 1;
    }
    net->liveness_s = cfg.bootstrap_liveness_timeout;
    /* Several heartbeats per limit, so one late one is no verdict; at most 5 s apart. */
    net->ping_every = (double)net->liveness_s / 6.0 < 5.0 ? (double)net->liveness_s / 6.0 : 5.0;
    st = oshrun_rendezvous(opt, net, oshrun_now() + limit);
    if (st == 0 && net->node_rank == 0) {
        net->done = calloc((size_t)net->nnodes, sizeof *net->done);
        if (!net->done) st = 1;
    }
    if (st != 0) {
        oshrun_net_free(net);
        free(net);
        return st;
    }
    for (int n = 0; n < net->nlinks; n++) { /* the clocks start with the job */
        net->links[n].last_rx = oshrun_now();
        net->links[n].next_ping = oshrun_now();
    }
    job->rank_base = 0;
    job->size = 0;
    for (int n = 0; n < net->nnodes; n++) {
        if (n < net->node_rank) job->rank_base += net->counts[n];
        job->size += net->counts[n];
    }
    job->net = net;
    return 0;
}

/* Says goodbye so the peers read everything we sent before they see the end. */
void oshrun_net_close(struct oshrun_job *job)
{
    struct oshrun_net *net = job->net;
    double until = oshrun_now() + LINGER_S;
    if (!net) return;
    for (int n = 0; n < net->nlinks; n++) {
        struct oshrun_link *l = &net->links[n];
        if (l->fd < 0) continue;
        if (l->ssl && !l->eof && !l->tls_failed) SSL_shutdown(l->ssl);
        l->eof = 1;
        shutdown(l->fd, SHUT_WR);
        for (;;) {
            char buf[4096];
            double left = until - oshrun_now();
            struct pollfd p = {.fd = l->fd, .events = POLLIN};
            if (left <= 0 || poll(&p, 1, (int)(left * 1000.0) + 1) <= 0) break;
            if (recv(l->fd, buf, sizeof buf, 0) <= 0) break;
        }
    }
    oshrun_net_free(net);
    free(net);
    job->net = NULL;
}
