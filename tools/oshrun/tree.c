/* tree.c: the allgather tree over the nodes (net.h). Node k's children are
 * F*k+1 .. F*k+F (F: --tree-fanout, default 4): numbered breadth first, so at each depth
 * the nodes of a subtree are one range, and their PEs one range of ranks.
 * Blocks climb: a node waits for its own PEs' block and every child's
 * subtree, then sends them all to its parent in one GATHER; node 0 ends
 * up with every block and the RESULT descends the same links. So a node
 * sends at most F copies of a result (node 0 used to send one per
 * node), and an allgather takes 2 * depth messages in a row, depth being
 * log_F(nodes). A node whose PEs finished, or a child whose PEs did,
 * while an allgather waits here means the allgather cannot end: the node
 * that sees it ends the job, since only it can tell. */
#include "net.h"
#include "oshrun.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int oshrun_tree_parent(int node, int fanout) { return node > 0 ? (node - 1) / fanout : -1; }

int oshrun_tree_nkids(int node, int nnodes, int fanout)
{
    long first = (long)fanout * node + 1;
    if (first >= nnodes) return 0;
    return nnodes - first < fanout ? (int)(nnodes - first) : fanout;
}

/* Calls fn for each range of ranks (first, count) of node's subtree, in
 * rank order. Returns the PEs in all of them. */
static size_t subtree(const struct oshrun_net *net, int node, void (*fn)(void *, size_t, size_t), void *arg)
{
    size_t pes = 0;
    for (long lo = node, hi = node; lo < net->nnodes; lo = net->fanout * lo + 1, hi = net->fanout * hi + net->fanout) {
        long top = hi < net->nnodes - 1 ? hi : net->nnodes - 1;
        size_t first = (size_t)net->base[lo], count = (size_t)net->base[top + 1] - first;
        if (fn) fn(arg, first, count);
        pes += count;
    }
    return pes;
}

struct copy {
    unsigned char *all, *packed;
    size_t len, at;
    int pack; /* all -> packed; else packed -> all */
};

static void copy_range(void *arg, size_t first, size_t count)
{
    struct copy *c = arg;
    size_t bytes = count * c->len;
    if (!bytes) return;
    if (c->pack)
        memcpy(c->packed + c->at, c->all + first * c->len, bytes);
    else
        memcpy(c->all + first * c->len, c->packed + c->at, bytes);
    c->at += bytes;
}

static void reset(struct oshrun_net *net)
{
    free(net->gather.all);
    memset(&net->gather, 0, sizeof net->gather);
}

void oshrun_tree_free(struct oshrun_net *net)
{
    reset(net);
    free(net->base);
    net->base = NULL;
}

int oshrun_tree_open(const struct oshrun_options *opt, struct oshrun_net *net, double deadline, long limit_s)
{
    int rank = net->node_rank, fanout = net->fanout;
    int parent = oshrun_tree_parent(rank, fanout), nk = oshrun_tree_nkids(rank, net->nnodes, fanout);
    int next = 1;
    if (!(net->base = calloc((size_t)net->nnodes + 1, sizeof *net->base))) {
        fprintf(stderr, "oshrun: out of memory for %d nodes\n", net->nnodes);
        return 1;
    }
    for (int n = 0; n < net->nnodes; n++) net->base[n + 1] = net->base[n] + net->counts[n];
    if (rank == 0) { /* the children are links[1..]: their star links */
        net->parent = -1;
        net->kid0 = 1;
        net->nkids = nk;
        return 0;
    }
    if (parent == 0) {
        net->parent = 0;
    } else {
        char who[32];
        int fd;
        SSL *ssl = NULL;
        unsigned char j[20];
        struct oshrun_link *l = &net->links[1];
        snprintf(who, sizeof who, "node %d", parent);
        if (oshrun_connect_node(net, net->parent_at, who, deadline, limit_s, &fd, &ssl) != 0) return 1;
        oshrun_link_init(l, fd, ssl, parent, net->parent_at);
        oshrun_put_u32(j, OSHRUN_NET_VERSION);
        oshrun_put_u32(j + 4, (uint32_t)rank);
        oshrun_put_u32(j + 8, (uint32_t)net->nnodes);
        oshrun_put_u32(j + 12, (uint32_t)opt->npes);
        oshrun_put_u32(j + 16, (uint32_t)fanout);
        if (oshrun_link_send(l, OSHRUN_NET_JOIN, j, sizeof j, NULL, 0, deadline) != 0) {
            fprintf(stderr, "oshrun: lost node %d (%s) before the job started: %s\n", parent, l->peer, l->why);
            return 1;
        }
        net->parent = 1;
        next = 2;
    }
    net->kid0 = next;
    net->nkids = nk;
    net->nlinks = next + nk;
    if (nk) {
        int st = oshrun_accept_nodes(net, net->listen_fd, fanout * rank + 1, fanout * rank + nk, &net->links[next], 1,
                                     deadline, limit_s);
        close(net->listen_fd); /* later connections are refused by the kernel */
        net->listen_fd = -1;
        if (st != 0) return st;
    }
    return 0;
}

void oshrun_tree_check_stuck(struct oshrun_job *job)
{
    struct oshrun_net *net = job->net;
    const struct oshrun_gather *g = &net->gather;
    int gone = -1;
    if (job->failed || !g->active) return;
    if (net->self_done && !g->have_self) gone = net->node_rank;
    for (int i = 0; i < net->nkids && gone < 0; i++)
        if (net->kid_done[i] && !g->kid_have[i]) gone = net->fanout * net->node_rank + 1 + i;
    if (gone < 0) return;
    oshrun_fail(job, 1, -1, "the PEs of node %d are waiting in %s, but those of node %d have finished; the job "
                "cannot continue", g->first, shoal_wire_gather_name(g->kind), gone);
}

/* Every block is here: node 0 sends the result down; a node below sends
 * its subtree up and waits for the RESULT. */
static void climb(struct oshrun_job *job)
{
    struct oshrun_net *net = job->net;
    struct oshrun_gather *g = &net->gather;
    size_t total = (size_t)g->len * (size_t)job->size;
    unsigned char hdr[8];
    oshrun_put_u32(hdr, g->kind);
    oshrun_put_u32(hdr + 4, g->len);
    if (net->node_rank == 0) {
        for (int i = 0; i < net->nkids && !job->failed; i++)
            oshrun_net_send(job, &net->links[net->kid0 + i], OSHRUN_NET_RESULT, hdr, 4, g->all, total);
        if (!job->failed) oshrun_answer(job, g->all, total);
        reset(net);
        return;
    }
    struct copy c = {.all = g->all, .len = g->len, .pack = 1};
    size_t size = (size_t)g->len * subtree(net, net->node_rank, NULL, NULL);
    if (!(c.packed = malloc(size ? size : 1))) {
        oshrun_fail(job, 1, -1, "out of memory serving %s", shoal_wire_gather_name(g->kind));
        return;
    }
    subtree(net, net->node_rank, copy_range, &c);
    reset(net); /* the RESULT brings everything; the children's next blocks come after it */
    oshrun_net_send(job, &net->links[net->parent], OSHRUN_NET_GATHER, hdr, sizeof hdr, c.packed, size);
    free(c.packed);
}

void oshrun_tree_block(struct oshrun_job *job, int node, uint32_t kind, uint32_t len, const unsigned char *data,
                       size_t size)
{
    struct oshrun_net *net = job->net;
    struct oshrun_gather *g = &net->gather;
    int self = node == net->node_rank, kid = node - (net->fanout * net->node_rank + 1);
    struct oshrun_link *from = self ? NULL : &net->links[net->kid0 + kid];
    size_t pes = self ? (size_t)net->counts[node] : subtree(net, node, NULL, NULL);
    if (job->failed) return;
    if (self ? g->have_self : g->kid_have[kid]) {
        oshrun_net_broken(job, from, "a second allgather before the first was answered");
        return;
    }
    if (!self && size != (size_t)len * pes) {
        oshrun_net_broken(job, from, "an allgather block of the wrong size");
        return;
    }
    if (g->active && (g->kind != kind || g->len != len)) {
        oshrun_fail(job, 1, -1, "collective mismatch: the PEs of node %d called %s with %u bytes, but those of "
                    "node %d called %s with %u bytes", node, shoal_wire_gather_name(kind), len, g->first,
                    shoal_wire_gather_name(g->kind), g->len);
        return;
    }
    if (!g->active) {
        size_t total = (size_t)len * (size_t)job->size;
        if (total > SHOAL_WIRE_MAX_PAYLOAD) {
            oshrun_fail(job, 1, -1, "%s of %u bytes per PE is too large for %d PEs", shoal_wire_gather_name(kind), len,
                        job->size);
            return;
        }
        if (!(g->all = malloc(total ? total : 1))) {
            oshrun_fail(job, 1, -1, "out of memory serving %s", shoal_wire_gather_name(kind));
            return;
        }
        g->active = 1;
        g->kind = kind;
        g->len = len;
        g->first = node;
    }
    if (self) {
        if (size) memcpy(g->all + (size_t)net->base[node] * len, data, size);
        g->have_self = 1;
    } else {
        struct copy c = {.all = g->all, .packed = (unsigned char *)data, .len = len};
        subtree(net, node, copy_range, &c);
        g->kid_have[kid] = 1;
    }
    if (++g->nin == 1 + net->nkids)
        climb(job);
    else
        oshrun_tree_check_stuck(job);
}

void oshrun_tree_result(struct oshrun_job *job, const unsigned char *payload, size_t len)
{
    struct oshrun_net *net = job->net;
    for (int i = 0; i < net->nkids && !job->failed; i++)
        oshrun_net_send(job, &net->links[net->kid0 + i], OSHRUN_NET_RESULT, payload, len, NULL, 0);
    if (!job->failed) oshrun_answer(job, payload + 4, len - 4);
}
