/* reduce.c: all-reduce (every member's dest gets the reduction of all
 * members' sources).
 *
 * direct: the vector is cut into one slice per member, each a whole number
 *   of cache lines. Member r reduces slice r: chunk by chunk, it reads the
 *   chunk of every member's source (rank order, so every element is
 *   combined in the same order and the result is identical everywhere),
 *   combines them in private scratch and writes the result into every
 *   member's dest. The N members work in parallel on disjoint slices.
 * linear: rank 0 does the same over the whole vector while the others wait
 *   (the root-based form).
 * oneshot (oneshot.c), tree (tree.c), rd (rd.c) and ring (ring.c) keep
 *   their own invariants.
 *
 * Safety: between the entry and exit syncs each byte range of the vector is
 * read and written by exactly one member (the owner of its slice), which
 * reads a chunk from every source before writing it to any dest: so a
 * reduction in place (dest == source) is correct, and no member reads a
 * source another member is overwriting. */
#include "coll/coll.h"
#include "coll/peer.h"

/* Reduces bytes [lo, hi) of the vector into every member's dest. */
static shoal_status_t reduce_range(const struct shoal_group *g, struct shoal_coll_buf dest,
                                   struct shoal_coll_buf src, size_t lo, size_t hi, size_t es,
                                   shoal_coll_combine_fn combine)
{
    _Alignas(64) unsigned char acc[SHOAL_COLL_CHUNK];
    const size_t step = SHOAL_COLL_CHUNK / es * es;
    for (size_t at = lo; at < hi; at += step) {
        size_t len = hi - at < step ? hi - at : step;
        shoal_status_t st = shoal_coll_combine_ranks(g, src, g->size - 1, at, len, es, combine, acc);
        for (int r = 0; r < g->size && st == SHOAL_OK; r++) st = shoal_coll_put(g, dest, r, at, acc, len);
        if (st != SHOAL_OK) return st;
    }
    return SHOAL_OK;
}

shoal_status_t shoal_coll_reduce(struct shoal_group *g, struct shoal_coll_buf dest, struct shoal_coll_buf src,
                                 size_t nelems, int dtype, int op)
{
    const size_t es = shoal_coll_dtype_size(dtype), bytes = nelems * es;
    shoal_coll_combine_fn combine = shoal_coll_kernel(dtype, op);
    if (!combine) return SHOAL_ERR_INVAL;
    const enum shoal_coll_algo algo = shoal_coll_choose(SHOAL_COLL_REDUCE, g, bytes);
    if (algo == SHOAL_ALGO_ONESHOT) return shoal_coll_reduce_oneshot(g, dest, src, nelems, es, combine);
    if (algo == SHOAL_ALGO_TREE) return shoal_coll_reduce_tree(g, dest, src, nelems, es, combine);
    if (algo == SHOAL_ALGO_RD) return shoal_coll_reduce_rd(g, dest, src, nelems, es, combine);
    if (algo == SHOAL_ALGO_HIER) return shoal_coll_reduce_hier(g, dest, src, nelems, es, combine);
    if (algo == SHOAL_ALGO_RING) return shoal_coll_reduce_ring(g, dest, src, nelems, es, combine);
    size_t lo = 0, hi = 0;
    if (algo == SHOAL_ALGO_LINEAR) {
        if (g->rank == 0) hi = bytes;
    } else {
        /* Slices of whole cache lines, so no two owners write one line. */
        size_t line = es < 64 ? 64 / es : 1;
        size_t per = (nelems + (size_t)g->size - 1) / (size_t)g->size;
        per = (per + line - 1) / line * line;
        size_t first = per * (size_t)g->rank;
        if (first < nelems) {
            lo = first * es;
            hi = (nelems - first < per ? nelems : first + per) * es;
        }
    }
    src = shoal_coll_publish(g, src);
    shoal_coll_barrier(g);
    shoal_status_t st = lo < hi ? reduce_range(g, dest, src, lo, hi, es, combine) : SHOAL_OK;
    shoal_coll_barrier(g);
    shoal_coll_unpublish(g);
    return st;
}
