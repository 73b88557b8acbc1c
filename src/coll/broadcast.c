/* broadcast.c: copy the root's source into every member's dest.
 *
 * direct: every member pulls the root's source into its own dest, all in
 *   parallel (on one host a plain memcpy out of the root's mapping).
 * linear: the root pushes its source into each member's dest in turn (the
 *   root-based form).
 * oneshot (oneshot.c) and tree (tree.c) keep their own invariants.
 * The team form also fills the root's own dest; the deprecated active-set
 * form leaves it alone (update_root 0), as the standard says.
 *
 * Safety: the entry sync guarantees the root's source is final and every
 * dest is free; the exit sync that no member still reads the root's source
 * (which the root may overwrite once it returns) and no push is in flight. */
#include "coll/coll.h"
#include "coll/peer.h"

shoal_status_t shoal_coll_broadcast(struct shoal_group *g, struct shoal_coll_buf dest, struct shoal_coll_buf src,
                                    size_t bytes, int root, int update_root)
{
    const enum shoal_coll_algo algo = shoal_coll_choose(SHOAL_COLL_BROADCAST, g, bytes);
    if (algo == SHOAL_ALGO_ONESHOT) return shoal_coll_broadcast_oneshot(g, dest, src, bytes, root, update_root);
    if (algo == SHOAL_ALGO_TREE) return shoal_coll_broadcast_tree(g, dest, src, bytes, root, update_root);
    const int me = g->rank;
    shoal_status_t st = SHOAL_OK;
    src = shoal_coll_publish(g, src);
    shoal_coll_barrier(g);
    if (bytes && algo == SHOAL_ALGO_LINEAR) {
        if (me == root) {
            const char *from = shoal_coll_at(g, src, me, 0);
            for (int r = 0; r < g->size && st == SHOAL_OK; r++)
                if (r != root || update_root) st = shoal_coll_put(g, dest, r, 0, from, bytes);
        }
    } else if (bytes && (me != root || update_root)) {
        st = shoal_coll_get(g, shoal_coll_at(g, dest, me, 0), src, root, 0, bytes);
    }
    shoal_coll_barrier(g);
    shoal_coll_unpublish(g);
    return st;
}
