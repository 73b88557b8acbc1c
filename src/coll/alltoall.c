/* alltoall.c: alltoall and its strided form alltoalls. Block j of member
 * i's source (nelems elements) becomes block i of member j's dest.
 *
 * direct: every member pulls its block from each member's source into its
 *   own dest, starting with its own rank so that members spread their
 *   reads. Contiguous blocks are one copy each; strided ones are copied an
 *   element at a time.
 * bruck (bruck.c): small blocks through the tagged lines, no barrier.
 *
 * Safety: after the entry sync every source is final and every dest free;
 * each member writes only its own dest; the exit sync keeps the sources in
 * place until every member has pulled its blocks. */
#include "coll/coll.h"
#include "coll/peer.h"

static shoal_status_t pull_block(const struct shoal_group *g, char *mine, struct shoal_coll_buf src, int r,
                                 ptrdiff_t dst, ptrdiff_t sst, size_t nelems, size_t elem)
{
    const size_t me = (size_t)g->rank, from = (size_t)r;
    src = shoal_coll_resolved(g, src, r); /* once, not per element */
    if (dst == 1 && sst == 1)
        return shoal_coll_get(g, mine + from * nelems * elem, src, r, me * nelems * elem, nelems * elem);
    const size_t dstep = (size_t)dst * elem, sstep = (size_t)sst * elem;
    char *to = mine + from * nelems * dstep;
    size_t at = me * nelems * sstep;
    const char *p = shoal_coll_at(g, src, r, at);
    if (p) {
        for (size_t k = 0; k < nelems; k++, to += dstep, p += sstep) memcpy(to, p, elem);
        return SHOAL_OK;
    }
    shoal_status_t st = SHOAL_OK;
    for (size_t k = 0; k < nelems && st == SHOAL_OK; k++, to += dstep, at += sstep)
        st = shoal_coll_get(g, to, src, r, at, elem);
    return st;
}

shoal_status_t shoal_coll_alltoalls(struct shoal_group *g, struct shoal_coll_buf dest, struct shoal_coll_buf src,
                                    ptrdiff_t dst, ptrdiff_t sst, size_t nelems, size_t elem)
{
    if (shoal_coll_choose(SHOAL_COLL_ALLTOALL, g, nelems * elem) == SHOAL_ALGO_BRUCK)
        return shoal_coll_alltoall_bruck(g, dest, src, dst, sst, nelems, elem);
    const int n = g->size;
    char *mine = shoal_coll_at(g, dest, g->rank, 0);
    shoal_status_t st = SHOAL_OK;
    src = shoal_coll_publish(g, src);
    shoal_coll_barrier(g);
    for (int k = 0; k < n && nelems && st == SHOAL_OK; k++)
        st = pull_block(g, mine, src, (g->rank + k) % n, dst, sst, nelems, elem);
    shoal_coll_barrier(g);
    shoal_coll_unpublish(g);
    return st;
}
