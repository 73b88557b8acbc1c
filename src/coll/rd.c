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
 * Lines (core/internal.h): a writer puts its data into the reader's line,
 * then stores the call's tag (the team's epoch, so it only grows) after a
 * fence. Each line has one writer (the round's partner is fixed by n and
 * the ranks). Two sets alternate by this member's count of rd calls, alike
 * on every member. A line of set p written in rd call k was last written
 * in call k-2, and its reader finished with it then: the writer is in call
 * k, so it finished call k-1, whose result needed every member's
 * contribution, so every member had entered call k-1 and was done with
 * call k-2.
 *
 * No barrier: sources and dests are read and written only by their owner
 * (in place is safe: the source is copied first), and lines are only
 * written after their reader is done with them, as just said. */
#include <stddef.h>
#include <string.h>

#include "coll/coll.h"
#include "coll/peer.h"
#include "core/internal.h"
#include "sync/backoff.h"
#include "sync/word.h"

enum { LINE_PRE = SHOAL_RD_ROUNDS, LINE_POST = SHOAL_RD_ROUNDS + 1 };

int shoal_coll_rd_fits(const struct shoal_group *g, size_t bytes)
{
    return g->epoch && bytes <= SHOAL_RD_BYTES && g->size <= 1 << SHOAL_RD_ROUNDS;
}

/* Offset of line i of set p in the team's slot. */
static size_t line_off(const struct shoal_group *g, int p, int i)
{
    const size_t slot = g->sync_offset - offsetof(struct shoal_team_sync, round);
    return slot + offsetof(struct shoal_team_sync, rd) + ((size_t)p * SHOAL_RD_LINES + (size_t)i) * sizeof(struct shoal_rd_line);
}

static shoal_status_t send(const struct shoal_group *g, int rank, int p, int i, uint64_t tag, const void *data,
                           size_t bytes)
{
    const size_t at = line_off(g, p, i);
    const struct shoal_coll_buf line = {.seg = SHOAL_SEG_HEAP, .off = at + offsetof(struct shoal_rd_line, data)};
    shoal_status_t st = shoal_coll_put(g, line, rank, 0, data, bytes);
    /* A release store orders the copy: at most SHOAL_RD_BYTES, far below
     * where memcpy turns to non-temporal stores. */
    shoal_word_store(SHOAL_SEG_HEAP, at + offsetof(struct shoal_rd_line, tag), shoal_group_pe(g, rank), tag);
    return st;
}

static const unsigned char *receive(const struct shoal_group *g, int p, int i, uint64_t tag)
{
    const struct shoal_rd_line *line = shoal_route_direct(SHOAL_SEG_HEAP, line_off(g, p, i), shoal_group_pe(g, g->rank));
    struct shoal_backoff b = {0};
    while (__atomic_load_n(&line->tag, __ATOMIC_ACQUIRE) < tag) shoal_backoff_wait(&b);
    return line->data;
}

/* acc = lower op higher, whichever of acc and in is the lower rank's. */
static void combine_ordered(unsigned char *acc, const unsigned char *in, int in_is_lower, size_t bytes, size_t es,
                            shoal_coll_combine_fn combine)
{
    if (!in_is_lower) {
        combine(acc, in, bytes / es);
        return;
    }
    _Alignas(64) unsigned char tmp[SHOAL_RD_BYTES];
    memcpy(tmp, in, bytes);
    combine(tmp, acc, bytes / es);
    memcpy(acc, tmp, bytes);
}

shoal_status_t shoal_coll_reduce_rd(struct shoal_group *g, struct shoal_coll_buf dest, struct shoal_coll_buf src,
                                    size_t nelems, size_t es, shoal_coll_combine_fn combine)
{
    const uint64_t tag = ++*g->epoch;
    const size_t bytes = nelems * es;
    uint64_t *calls = shoal_route_direct(SHOAL_SEG_HEAP, g->sync_offset - offsetof(struct shoal_team_sync, round) +
                                                             offsetof(struct shoal_team_sync, rd_calls),
                                         shoal_group_pe(g, g->rank));
    const int p = (int)(++*calls & 1);
    const int n = g->size, me = g->rank;
    _Alignas(64) unsigned char acc[SHOAL_RD_BYTES];
    memcpy(acc, shoal_coll_at(g, src, me, 0), bytes);
    int pow2 = 1;
    while (pow2 * 2 <= n) pow2 *= 2;
    const int rem = n - pow2;
    shoal_status_t st = SHOAL_OK;
    int vrank;
    if (me < 2 * rem && !(me & 1)) {
        st = send(g, me + 1, p, LINE_PRE, tag, acc, bytes);
        memcpy(acc, receive(g, p, LINE_POST, tag), bytes);
        memcpy(shoal_coll_at(g, dest, me, 0), acc, bytes);
        return st;
    }
    if (me < 2 * rem) {
        combine_ordered(acc, receive(g, p, LINE_PRE, tag), 1, bytes, es, combine);
        vrank = me / 2;
    } else {
        vrank = me - rem;
    }
    for (int r = 0, d = 1; d < pow2; r++, d <<= 1) {
        const int vpartner = vrank ^ d, partner = vpartner < rem ? 2 * vpartner + 1 : vpartner + rem;
        shoal_status_t s = send(g, partner, p, r, tag, acc, bytes);
        if (st == SHOAL_OK) st = s;
        combine_ordered(acc, receive(g, p, r, tag), partner < me, bytes, es, combine);
    }
    if (me < 2 * rem) {
        shoal_status_t s = send(g, me - 1, p, LINE_POST, tag, acc, bytes);
        if (st == SHOAL_OK) st = s;
    }
    memcpy(shoal_coll_at(g, dest, me, 0), acc, bytes);
    return st;
}
