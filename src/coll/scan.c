/* scan.c: sum scans (OpenSHMEM 1.6 shmem_sum_inscan / shmem_sum_exscan).
 *
 * rd (scan_rd.c): recursive doubling through the lines, for small vectors
 *   on teams reached through RMA (algo.c).
 * ring (scan_ring.c): each member's prefix put into the next member's dest,
 *   pipelined in chunks, for larger vectors on those teams.
 * direct: member r reads the sources of ranks 0..r (inclusive) or 0..r-1
 *   (exclusive) straight from their mappings, sums them in rank order in
 *   private scratch and writes only its own dest. The standard leaves the
 *   exclusive scan's result on rank 0 unspecified; Shoal writes zero there
 *   (the identity of sum), so the dest is never left half-defined.
 *
 * Safety: between the entry and exit syncs sources are only read and each
 * member writes only its own dest. When dest overlaps source (in place),
 * writing it would change a source higher ranks still read, so the member
 * sums into a private buffer, waits at a middle sync until every member
 * has read everything, and only then copies into its dest. */
#include <stdlib.h>

#include "coll/coll.h"
#include "coll/peer.h"

shoal_status_t shoal_coll_scan(struct shoal_group *g, struct shoal_coll_buf dest, struct shoal_coll_buf src,
                               size_t nelems, int dtype, int inclusive)
{
    const size_t es = shoal_coll_dtype_size(dtype), bytes = nelems * es;
    shoal_coll_combine_fn sum = shoal_coll_kernel(dtype, SHOAL_COLL_SUM);
    if (!sum) return SHOAL_ERR_INVAL;
    switch (shoal_coll_choose(SHOAL_COLL_SCAN, g, bytes)) {
    case SHOAL_ALGO_RD: return shoal_coll_scan_rd(g, dest, src, nelems, es, sum, inclusive);
    case SHOAL_ALGO_RING: return shoal_coll_scan_ring(g, dest, src, nelems, es, sum, inclusive);
    default: break;
    }
    const int last = inclusive ? g->rank : g->rank - 1;
    char *mine = shoal_coll_at(g, dest, g->rank, 0);
    const int in_place = dest.seg == src.seg && src.off < dest.off + bytes && dest.off < src.off + bytes;
    unsigned char *staged = NULL;
    if (in_place && last >= 0 && bytes) {
        staged = malloc(bytes);
        if (!staged) return SHOAL_ERR_NOMEM;
    }
    shoal_status_t st = SHOAL_OK;
    src = shoal_coll_publish(g, src);
    shoal_coll_barrier(g);
    if (last < 0) {
        if (!in_place) memset(mine, 0, bytes);
    } else {
        _Alignas(64) unsigned char acc[SHOAL_COLL_CHUNK];
        const size_t step = SHOAL_COLL_CHUNK / es * es;
        for (size_t at = 0; at < bytes && st == SHOAL_OK; at += step) {
            size_t len = bytes - at < step ? bytes - at : step;
            unsigned char *out = staged ? staged + at : acc;
            st = shoal_coll_combine_ranks(g, src, last, at, len, es, sum, out);
            if (!staged) memcpy(mine + at, acc, len);
        }
    }
    /* Unconditional: whether a member works in place is its own business
     * (sources may differ per member), but every member must sync alike. */
    shoal_coll_barrier(g);
    if (in_place) {
        if (staged) memcpy(mine, staged, bytes);
        else if (last < 0) memset(mine, 0, bytes);
    }
    shoal_coll_barrier(g);
    shoal_coll_unpublish(g);
    free(staged);
    return st;
}
