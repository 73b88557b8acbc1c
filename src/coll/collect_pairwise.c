/* collect_pairwise.c: collect (sizes may differ) on teams too wide for
 * Bruck's rounds (more than SHOAL_BRUCK_COLLECT_MEMBERS, whose sizes would
 * not fit the lines) and reached through RMA, by each member pushing its
 * block: the direct pull reads every member's size and block, a round
 * trip each, between two barriers.
 *
 * Two small calls through the lines first: a recursive-doubling scan of
 * the sizes gives this member's offset, and a recursive-doubling sum the
 * total, which every member then checks against dest alike. Each of those
 * completes only once every member has entered the collect, so every dest
 * is free afterwards (coll.h's entry sync). Then each member writes its
 * block into every member's dest at its offset, fences once, and adds one
 * to every other member's LANDED word, as the wide pairwise alltoall does
 * (alltoall.c says why the word holds one call's counts); it returns once
 * its own word holds n - 1, having cleared it. No exit barrier: a
 * member reads only its own source, and its dest is complete when it
 * returns. */
#include <string.h>

#include "coll/coll.h"
#include "coll/lines.h"
#include "core/runtime.h"

int shoal_coll_collect_pairwise_fits(const struct shoal_group *g) { return shoal_coll_lines_fit(g, sizeof(uint64_t)); }

shoal_status_t shoal_coll_collect_pairwise(struct shoal_group *g, struct shoal_coll_buf dest,
                                           struct shoal_coll_buf src, size_t bytes)
{
    const int n = g->size, me = g->rank;
    shoal_coll_combine_fn add = shoal_coll_kernel(SHOAL_COLL_U64, SHOAL_COLL_SUM);
    const uint64_t mine = bytes;
    uint64_t offset = 0, total = mine;
    shoal_status_t st = shoal_coll_scan_rd_local(g, (unsigned char *)&offset, &mine, 1, sizeof mine, add, 0);
    int p;
    const uint64_t tag = shoal_coll_lines_begin(g, &p);
    shoal_status_t s = shoal_coll_rd_among(g, tag, p, NULL, n, me, (unsigned char *)&total, sizeof total,
                                           sizeof total, add);
    if (st == SHOAL_OK) st = s;
    /* Every member has the same total, so all of them fail together. */
    if (total > shoal_rt.seg_size[dest.seg] - dest.off) return SHOAL_ERR_RANGE;
    const char *in = shoal_coll_at(g, src, me, 0);
    if (bytes) memcpy(shoal_coll_at(g, dest, me, offset), in, bytes);
    for (int k = 1; k < n && bytes; k++) {
        s = shoal_coll_put(g, dest, (me + k) % n, offset, in, bytes);
        if (st == SHOAL_OK) st = s;
    }
    shoal_coll_landed_exchange(g);
    return st;
}
