/* scan_rd.c: sum scans of small vectors by recursive doubling through the
 * tagged lines (lines.h), for teams some of whose members are reached
 * through RMA. The direct scan pulls every lower rank's source, one round
 * trip each in a row, between three barriers.
 *
 * As in rd.c (lines.h), with p the largest power of two not above n, the
 * first 2(n-p) members pair up: each even one hands its source to the odd one
 * above it (PRE line), whose block is then the pair's sum, and waits for
 * the pair's prefix (POST line). The p remaining members run the hypercube
 * scan: each holds its block's sum so far (part) and the sum of the blocks
 * before its own among those seen (ex); in round r it sends part to the
 * member 2^r away and adds what comes back to part, and also to ex when it
 * comes from below, lower ranks' values first. After log2(p) rounds ex is
 * the sum of every block below this member's.
 *
 * Lines: each line has one writer per call, and every member's call ends
 * only once every member has entered it, as lines.h needs for reuse: the
 * remaining members' part ends as the sum of everything, and a paired even
 * member waits for the POST line, sent after its partner's last round.
 * Unlike the linear order's scan (member 0 needs nobody), no member can
 * run a call ahead of a member that has not yet read its line.
 *
 * No barrier: each member reads only its own source and writes only its
 * own dest (in place is safe: the source is copied first). The sums are
 * grouped by the hypercube rather than in rank order, so floating-point
 * results may differ in the last bits from the direct scan's. */
#include <string.h>

#include "coll/coll.h"
#include "coll/lines.h"

/* out = lower + own, or own alone when there is nothing lower. */
static void prefix_then(unsigned char *out, const unsigned char *lower, int have_lower, const unsigned char *own,
                        size_t bytes, size_t es, shoal_coll_combine_fn sum)
{
    if (!have_lower) {
        memcpy(out, own, bytes);
        return;
    }
    memcpy(out, lower, bytes);
    sum(out, own, bytes / es);
}

/* A member's result from the sum of everything below it (ex, when
 * have_ex) and its own source: inclusive ex + own, exclusive ex (zero, the
 * identity, where nothing is below). */
static void write_result(unsigned char *out, const unsigned char *ex, int have_ex, const unsigned char *own,
                         int inclusive, size_t bytes, size_t es, shoal_coll_combine_fn sum)
{
    if (inclusive)
        prefix_then(out, ex, have_ex, own, bytes, es, sum);
    else if (have_ex)
        memcpy(out, ex, bytes);
    else
        memset(out, 0, bytes);
}

shoal_status_t shoal_coll_scan_rd_local(struct shoal_group *g, unsigned char *out, const void *source, size_t nelems,
                                        size_t es, shoal_coll_combine_fn sum, int inclusive)
{
    const size_t bytes = nelems * es;
    const int n = g->size, me = g->rank;
    int p;
    const uint64_t tag = shoal_coll_lines_begin(g, &p);
    _Alignas(64) unsigned char own[SHOAL_RD_BYTES], part[SHOAL_RD_BYTES], ex[SHOAL_RD_BYTES],
        lower[SHOAL_RD_BYTES];
    memcpy(own, source, bytes);
    const int pow2 = shoal_coll_rd_pow2(n), rem = n - pow2;
    shoal_status_t st = SHOAL_OK;
    if (me < 2 * rem && !(me & 1)) {
        /* Paired even member: the odd one above holds the pair's block. */
        st = shoal_coll_line_send(g, me + 1, p, SHOAL_LINE_PRE, tag, own, bytes);
        memcpy(ex, shoal_coll_line_receive(g, p, SHOAL_LINE_POST, tag, bytes), bytes);
        const int have_ex = me > 0; /* the first pair has nothing below it */
        write_result(out, ex, have_ex, own, inclusive, bytes, es, sum);
        return st;
    }
    int vrank;
    if (me < 2 * rem) {
        memcpy(lower, shoal_coll_line_receive(g, p, SHOAL_LINE_PRE, tag, bytes), bytes);
        prefix_then(part, lower, 1, own, bytes, es, sum);
        vrank = me / 2;
    } else {
        memcpy(part, own, bytes);
        vrank = me - rem;
    }
    int have_ex = 0;
    for (int r = 0, d = 1; d < pow2; r++, d <<= 1) {
        const int vpartner = vrank ^ d, partner = shoal_coll_rd_participant(vpartner, rem);
        shoal_status_t s = shoal_coll_line_send(g, partner, p, r, tag, part, bytes);
        if (st == SHOAL_OK) st = s;
        const unsigned char *in = shoal_coll_line_receive(g, p, r, tag, bytes);
        if (vpartner < vrank) {
            if (have_ex)
                shoal_coll_rd_combine(ex, in, 1, bytes, es, sum);
            else
                memcpy(ex, in, bytes);
            have_ex = 1;
            shoal_coll_rd_combine(part, in, 1, bytes, es, sum);
        } else {
            sum(part, in, nelems);
        }
    }
    if (me < 2 * rem) {
        /* The pair's prefix to the even member (anything when there is
         * none: member 0 does not read it, but must wait for it). */
        if (!have_ex) memset(ex, 0, bytes);
        shoal_status_t s = shoal_coll_line_send(g, me - 1, p, SHOAL_LINE_POST, tag, ex, bytes);
        if (st == SHOAL_OK) st = s;
        /* Below this member: the prefix, then its even partner. */
        _Alignas(64) unsigned char before[SHOAL_RD_BYTES];
        prefix_then(before, ex, have_ex, lower, bytes, es, sum);
        write_result(out, before, 1, own, inclusive, bytes, es, sum);
        return st;
    }
    write_result(out, ex, have_ex, own, inclusive, bytes, es, sum);
    return st;
}

shoal_status_t shoal_coll_scan_rd(struct shoal_group *g, struct shoal_coll_buf dest, struct shoal_coll_buf src,
                                  size_t nelems, size_t es, shoal_coll_combine_fn sum, int inclusive)
{
    return shoal_coll_scan_rd_local(g, (unsigned char *)shoal_coll_at(g, dest, g->rank, 0),
                                    shoal_coll_at(g, src, g->rank, 0), nelems, es, sum, inclusive);
}
