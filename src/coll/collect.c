/* collect.c: concatenate every member's source, in rank order, into every
 * member's dest: fcollect (the same size from every member) and collect
 * (sizes may differ; each member publishes its size in its COUNT word
 * before the entry sync, and everyone derives the offsets from them).
 *
 * direct: every member pulls each member's block into its own dest,
 *   starting with its own rank so the members do not all read the same
 *   source at once.
 * linear: rank 0 gathers every block into its own dest; after a middle
 *   sync the others copy rank 0's completed dest.
 * bruck, hier, oneshot, pairwise: bruck.c, hier_small.c, oneshot.c,
 *   collect_pairwise.c (algo.c chooses).
 *
 * Safety: sources are final and dests free after the entry sync; each
 * member writes only its own dest (rank 0's dest is read by others only
 * after the middle sync, once complete); the exit sync keeps sources,
 * rank 0's dest and the COUNT words in place until every read is done.
 * Then each member clears its own COUNT word (pSync must end at zero). */
#include <stdint.h>
#include <stdlib.h>

#include "coll/coll.h"
#include "coll/peer.h"

/* Gathers block r (count[r] bytes at offset at[r] of dest) from each
 * member: all of them (direct) or, linear, rank 0 gathers and the others
 * copy its dest. */
static shoal_status_t gather(struct shoal_group *g, struct shoal_coll_buf dest, struct shoal_coll_buf src,
                             size_t (*block)(const struct shoal_group *, int, size_t *, void *), void *arg,
                             size_t total)
{
    const int n = g->size, me = g->rank;
    enum shoal_coll_algo algo = shoal_coll_choose(SHOAL_COLL_COLLECT, g, total);
    /* collect: block sizes differ */
    if (algo == SHOAL_ALGO_BRUCK || algo == SHOAL_ALGO_ONESHOT || algo == SHOAL_ALGO_HIER) algo = SHOAL_ALGO_DIRECT;
    char *mine = shoal_coll_at(g, dest, me, 0);
    shoal_status_t st = SHOAL_OK;
    if (algo == SHOAL_ALGO_LINEAR) {
        for (int r = 0; r < n && me == 0 && st == SHOAL_OK; r++) {
            size_t at, len = block(g, r, &at, arg);
            st = shoal_coll_get(g, mine + at, src, r, 0, len);
        }
        shoal_coll_barrier(g);
        if (me != 0 && st == SHOAL_OK && total) st = shoal_coll_get(g, mine, dest, 0, 0, total);
        return st;
    }
    for (int k = 0; k < n && st == SHOAL_OK; k++) {
        int r = (me + k) % n;
        size_t at, len = block(g, r, &at, arg);
        if (len) st = shoal_coll_get(g, mine + at, src, r, 0, len);
    }
    return st;
}

static size_t fixed_block(const struct shoal_group *g, int r, size_t *at, void *arg)
{
    (void)g;
    size_t bytes = *(const size_t *)arg;
    *at = (size_t)r * bytes;
    return bytes;
}

shoal_status_t shoal_coll_fcollect(struct shoal_group *g, struct shoal_coll_buf dest, struct shoal_coll_buf src,
                                   size_t bytes)
{
    const enum shoal_coll_algo algo = shoal_coll_choose(SHOAL_COLL_COLLECT, g, bytes * (size_t)g->size);
    if (algo == SHOAL_ALGO_ONESHOT) return shoal_coll_fcollect_oneshot(g, dest, src, bytes);
    if (algo == SHOAL_ALGO_BRUCK) return shoal_coll_fcollect_bruck(g, dest, src, bytes);
    if (algo == SHOAL_ALGO_HIER) return shoal_coll_fcollect_hier(g, dest, src, bytes);
    if (algo == SHOAL_ALGO_PAIRWISE) return shoal_coll_collect_pairwise(g, dest, src, bytes);
    src = shoal_coll_publish(g, src);
    shoal_coll_barrier(g);
    shoal_status_t st = gather(g, dest, src, fixed_block, &bytes, bytes * (size_t)g->size);
    shoal_coll_barrier(g);
    shoal_coll_unpublish(g);
    return st;
}

/* Offsets of the variable blocks, computed once per call. */
struct layout {
    size_t *at, *len;
};

static size_t variable_block(const struct shoal_group *g, int r, size_t *at, void *arg)
{
    (void)g;
    const struct layout *l = arg;
    *at = l->at[r];
    return l->len[r];
}

shoal_status_t shoal_coll_collect(struct shoal_group *g, struct shoal_coll_buf dest, struct shoal_coll_buf src,
                                  size_t bytes)
{
    if (shoal_coll_collect_by_bruck(g)) return shoal_coll_collect_bruck(g, dest, src, bytes);
    if (shoal_coll_collect_by_pairwise(g)) return shoal_coll_collect_pairwise(g, dest, src, bytes);
    const int n = g->size;
    size_t small[2 * 16], *heap = NULL, *at = small;
    if (n > 16) {
        heap = malloc(2 * (size_t)n * sizeof *heap);
        if (!heap) return SHOAL_ERR_NOMEM;
        at = heap;
    }
    struct layout l = {at, at + n};
    uint64_t *count = shoal_group_aux(g, SHOAL_COLL_AUX_COUNT);
    __atomic_store_n(count, (uint64_t)bytes, __ATOMIC_RELAXED);
    src = shoal_coll_publish(g, src);
    shoal_coll_barrier(g);
    size_t total = 0;
    for (int r = 0; r < n; r++) {
        l.len[r] = (size_t)shoal_group_aux_load(g, r, SHOAL_COLL_AUX_COUNT);
        l.at[r] = total;
        total += l.len[r];
    }
    /* Every member sees the same counts, so all of them fail together. */
    shoal_status_t st = SHOAL_ERR_RANGE;
    if (total <= shoal_rt.seg_size[dest.seg] - dest.off) {
        st = gather(g, dest, src, variable_block, &l, total);
        shoal_coll_barrier(g);
    }
    __atomic_store_n(count, 0, __ATOMIC_RELAXED);
    shoal_coll_unpublish(g);
    free(heap);
    return st;
}
