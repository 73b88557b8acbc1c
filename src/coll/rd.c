/* rd.c: all-reduce of small vectors by recursive doubling, for teams whose
 * members are reached through RMA. With p the largest power of two not
 * above n, the first 2(n-p) members pair up: each even one hands its
 * vector to the odd one above it (PRE line) and waits for the result (POST
 * line), so p members remain. In round r a remaining member swaps its
 * partial result with the member 2^r away (in the remaining numbering) and
 * combines: log2(p) rounds of one put and one flag each, against the
 * tree's 2 log2(n) steps. Partners combine the lower rank's partial first,
 * so both get the same bits, and by induction every member does.
 *
 * Lines (lines.h): each line has one writer (the round's partner is fixed
 * by n and the ranks); every member's result needs every member's vector,
 * which is what lines.h needs for reuse.
 *
 * No barrier: sources and dests are read and written only by their owner
 * (in place is safe: the source is copied first), and lines are only
 * written after their reader is done with them, as just said. */
#include <stddef.h>
#include <string.h>

#include "coll/coll.h"
#include "coll/lines.h"

int shoal_coll_rd_fits(const struct shoal_group *g, size_t bytes) { return shoal_coll_lines_fit(g, bytes); }

shoal_status_t shoal_coll_rd_among(struct shoal_group *g, uint64_t tag, int p, const int *rank_of, int n, int me,
                                   unsigned char *acc, size_t bytes, size_t es, shoal_coll_combine_fn combine)
{
#define RANK(i) (rank_of ? rank_of[i] : (i))
    const int pow2 = shoal_coll_rd_pow2(n), rem = n - pow2;
    shoal_status_t st = SHOAL_OK;
    int vrank;
    if (me < 2 * rem && !(me & 1)) {
        st = shoal_coll_line_send(g, RANK(me + 1), p, SHOAL_LINE_PRE, tag, acc, bytes);
        memcpy(acc, shoal_coll_line_receive(g, p, SHOAL_LINE_POST, tag, bytes), bytes);
        return st;
    }
    if (me < 2 * rem) {
        shoal_coll_rd_combine(acc, shoal_coll_line_receive(g, p, SHOAL_LINE_PRE, tag, bytes), 1, bytes, es, combine);
        vrank = me / 2;
    } else {
        vrank = me - rem;
    }
    for (int r = 0, d = 1; d < pow2; r++, d <<= 1) {
        const int partner = shoal_coll_rd_participant(vrank ^ d, rem);
        shoal_status_t s = shoal_coll_line_send(g, RANK(partner), p, r, tag, acc, bytes);
        if (st == SHOAL_OK) st = s;
        shoal_coll_rd_combine(acc, shoal_coll_line_receive(g, p, r, tag, bytes), partner < me, bytes, es, combine);
    }
    if (me < 2 * rem) {
        shoal_status_t s = shoal_coll_line_send(g, RANK(me - 1), p, SHOAL_LINE_POST, tag, acc, bytes);
        if (st == SHOAL_OK) st = s;
    }
    return st;
#undef RANK
}

shoal_status_t shoal_coll_reduce_rd(struct shoal_group *g, struct shoal_coll_buf dest, struct shoal_coll_buf src,
                                    size_t nelems, size_t es, shoal_coll_combine_fn combine)
{
    int p;
    const uint64_t tag = shoal_coll_lines_begin(g, &p);
    const size_t bytes = nelems * es;
    _Alignas(64) unsigned char acc[SHOAL_RD_BYTES];
    memcpy(acc, shoal_coll_at(g, src, g->rank, 0), bytes);
    shoal_status_t st = shoal_coll_rd_among(g, tag, p, NULL, g->size, g->rank, acc, bytes, es, combine);
    memcpy(shoal_coll_at(g, dest, g->rank, 0), acc, bytes);
    return st;
}
