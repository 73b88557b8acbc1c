/* broadcast.c: copy the root's source into every member's dest.
 *
 * direct: every member pulls the root's source into its own dest, all in
 *   parallel (on one host a plain memcpy out of the root's mapping).
 * linear: the root pushes its source into each member's dest in turn (the
 *   root-based form), fences once, and adds one to each member's LANDED
 *   word; a member returns once its word says the data landed, and clears
 *   it. No member reads anything remote: the active sets' form across
 *   hosts, whose pSync words cannot carry the tree's tagged signals
 *   (tree.c says why).
 * oneshot (oneshot.c) and tree (tree.c) keep their own invariants.
 * The team form also fills the root's own dest; the deprecated active-set
 * form leaves it alone (update_root 0), as the standard says.
 *
 * Safety: the entry sync guarantees that the root's source is final and
 * every dest is free; direct's exit sync, that no member still reads the
 * root's source (which the root may overwrite once it returns). linear's
 * root alone reads its source, with blocking puts, and LANDED holds one
 * call's count at most (coll.h, shoal_coll_landed_await). */
#include "coll/coll.h"
#include "coll/peer.h"
#include "sync/word.h"

/* The root's side of linear: every dest, then the counts. */
static shoal_status_t push_all(struct shoal_group *g, struct shoal_coll_buf dest, struct shoal_coll_buf src,
                               size_t bytes, int update_root)
{
    const int me = g->rank;
    const char *from = shoal_coll_at(g, src, me, 0);
    shoal_status_t st = SHOAL_OK;
    for (int r = 0; r < g->size && st == SHOAL_OK; r++)
        if (r != me || update_root) st = shoal_coll_put(g, dest, r, 0, from, bytes);
    /* Direct copies (perhaps non-temporal) before the counts' stores; the
     * first count through the transport fences every put before it. */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    const size_t landed = g->aux_offset + SHOAL_COLL_AUX_LANDED * sizeof(uint64_t);
    int fenced = 0;
    for (int r = 0; r < g->size; r++)
        if (r != me) shoal_word_signal_fenced(g->seg, landed, shoal_group_pe(g, r), SHOAL_AMO_ADD, 1, &fenced);
    return st; /* counted even after a failed put: nobody waits forever */
}

shoal_status_t shoal_coll_broadcast(struct shoal_group *g, struct shoal_coll_buf dest, struct shoal_coll_buf src,
                                    size_t bytes, int root, int update_root)
{
    const enum shoal_coll_algo algo = shoal_coll_choose(SHOAL_COLL_BROADCAST, g, bytes);
    if (algo == SHOAL_ALGO_ONESHOT) return shoal_coll_broadcast_oneshot(g, dest, src, bytes, root, update_root);
    if (algo == SHOAL_ALGO_TREE) return shoal_coll_broadcast_tree(g, dest, src, bytes, root, update_root);
    const int me = g->rank;
    if (algo == SHOAL_ALGO_LINEAR) {
        shoal_coll_barrier(g);
        if (!bytes) return SHOAL_OK;
        if (me == root) return push_all(g, dest, src, bytes, update_root);
        shoal_coll_landed_await(g, 1, shoal_group_pe(g, root) + 1);
        return SHOAL_OK;
    }
    shoal_status_t st = SHOAL_OK;
    src = shoal_coll_publish(g, src);
    shoal_coll_barrier(g);
    if (bytes && (me != root || update_root)) st = shoal_coll_get(g, shoal_coll_at(g, dest, me, 0), src, root, 0, bytes);
    shoal_coll_barrier(g);
    shoal_coll_unpublish(g);
    return st;
}
