/* alltoall.c: alltoall and its strided form alltoalls. Block j of member
 * i's source (nelems elements) becomes block i of member j's dest.
 *
 * direct: every member pulls its block from each member's source into its
 *   own dest, starting with its own rank so that members spread their
 *   reads. Contiguous blocks are one copy each; strided ones are copied an
 *   element at a time. After the entry sync every source is final and
 *   every dest free; each member writes only its own dest; the exit sync
 *   keeps the sources in place until every member has pulled its blocks.
 * bruck (bruck.c): small blocks through the tagged lines, no barrier.
 * pairwise: after one entry barrier each member writes its block for
 *   member j straight into j's dest, in the order me + 1, me + 2, ... (so
 *   members spread their writes), then raises the tag of j's line k - 1,
 *   k being j's distance from it (lines.h: one writer per line; every
 *   member entered the call, by the barrier, before any member returns).
 *   A contiguous block and its tag are one flag (word.h); a strided one
 *   goes an element at a time, then the tag. A member returns once its
 *   n - 1 lines hold the tag: its dest is complete, and its own writes
 *   left its source. No exit barrier and no read-back: the direct pull
 *   costs a second barrier and n - 1 gets in a row, each a round trip.
 *   Teams of more than SHOAL_RD_LINES + 1 members, which have too few
 *   lines, count instead: each member writes all its blocks, fences once,
 *   then adds one to every other member's LANDED word (peer.h); a member
 *   returns once its word holds n - 1, and clears it first. The next
 *   call's adds come after its entry barrier, which this member passes
 *   only after clearing it, so the word holds one call's. */
#include <stddef.h>
#include <string.h>

#include "coll/coll.h"
#include "coll/lines.h"
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
        shoal_coll_copy_elems(to, dstep, p, sstep, nelems, elem);
        return SHOAL_OK;
    }
    shoal_status_t st = SHOAL_OK;
    for (size_t k = 0; k < nelems && st == SHOAL_OK; k++, to += dstep, at += sstep)
        st = shoal_coll_get(g, to, src, r, at, elem);
    return st;
}

int shoal_coll_alltoall_pairwise_fits(const struct shoal_group *g) { return shoal_coll_lines_fit(g, 0); }

/* Members past this many have no line of their own in a call. */
#define PAIRWISE_LINES_MEMBERS (SHOAL_RD_LINES + 1)

/* Member to's block of this member's source into to's dest, an element at
 * a time. */
static shoal_status_t put_strided(const struct shoal_group *g, struct shoal_coll_buf dest, int to, const char *in,
                                  size_t nelems, size_t dstep, size_t sstep, size_t elem)
{
    const size_t me = (size_t)g->rank;
    shoal_status_t st = SHOAL_OK;
    for (size_t e = 0; e < nelems && st == SHOAL_OK; e++)
        st = shoal_coll_put(g, dest, to, (me * nelems + e) * dstep, in + ((size_t)to * nelems + e) * sstep, elem);
    return st;
}

void shoal_coll_landed_exchange(struct shoal_group *g)
{
    const int n = g->size, me = g->rank;
    const size_t landed = g->aux_offset + SHOAL_COLL_AUX_LANDED * sizeof(uint64_t);
    /* Direct copies (perhaps non-temporal) before the counts' stores; the
     * first count through the transport fences every put before it. */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    int fenced = 0;
    for (int k = 1; k < n; k++)
        shoal_word_signal_fenced(g->seg, landed, shoal_group_pe(g, (me + k) % n), SHOAL_AMO_ADD, 1, &fenced);
    shoal_coll_landed_await(g, (uint64_t)(n - 1), 0);
}

void shoal_coll_landed_await(struct shoal_group *g, uint64_t count, int waits_on)
{
    uint64_t *mine = shoal_group_aux(g, SHOAL_COLL_AUX_LANDED);
    struct shoal_backoff b = {.waits_on = waits_on};
    SHOAL_BACKOFF_WHILE(&b, __atomic_load_n(mine, __ATOMIC_ACQUIRE) < count);
    __atomic_store_n(mine, 0, __ATOMIC_RELEASE);
}

/* The counted form, for teams past the lines (the header says why the
 * word is safe to reuse). */
static shoal_status_t pairwise_counted(struct shoal_group *g, struct shoal_coll_buf dest, const char *in,
                                       size_t nelems, size_t dstep, size_t sstep, size_t elem, int contiguous)
{
    const int n = g->size, me = g->rank;
    const size_t block = nelems * elem;
    shoal_status_t st = SHOAL_OK;
    for (int k = 1; k < n; k++) {
        const int to = (me + k) % n;
        shoal_status_t s = contiguous ? shoal_coll_put(g, dest, to, (size_t)me * block, in + (size_t)to * block, block)
                                      : put_strided(g, dest, to, in, nelems, dstep, sstep, elem);
        if (st == SHOAL_OK) st = s;
    }
    shoal_coll_landed_exchange(g);
    return st;
}

static shoal_status_t pairwise(struct shoal_group *g, struct shoal_coll_buf dest, struct shoal_coll_buf src,
                               ptrdiff_t dst, ptrdiff_t sst, size_t nelems, size_t elem)
{
    const int n = g->size, me = g->rank;
    const size_t block = nelems * elem, dstep = (size_t)dst * elem, sstep = (size_t)sst * elem;
    const int contiguous = dst == 1 && sst == 1;
    const char *in = shoal_coll_at(g, src, me, 0);
    char *out = shoal_coll_at(g, dest, me, 0);
    shoal_coll_copy_elems(out + (size_t)me * nelems * dstep, dstep, in + (size_t)me * nelems * sstep, sstep, nelems,
                          elem);
    shoal_coll_barrier(g);
    if (n > PAIRWISE_LINES_MEMBERS) return pairwise_counted(g, dest, in, nelems, dstep, sstep, elem, contiguous);
    int p;
    const uint64_t tag = shoal_coll_lines_begin(g, &p);
    shoal_status_t st = SHOAL_OK;
    int fenced = 0;
    for (int k = 1; k < n; k++) {
        const int to = (me + k) % n;
        shoal_status_t s;
        if (contiguous) {
            /* One write where the fabric keeps writes in order, where a
             * put waited for its completion and a fence before the tag
             * waited again. */
            const size_t tag_off = shoal_coll_line_off(g, p, k - 1) + offsetof(struct shoal_rd_line, tag);
            s = shoal_word_flag_fenced(dest.seg, dest.off + (size_t)me * block, in + (size_t)to * block, block,
                                       SHOAL_SEG_HEAP, tag_off, shoal_group_pe(g, to), tag, &fenced);
        } else {
            s = put_strided(g, dest, to, in, nelems, dstep, sstep, elem);
            __atomic_thread_fence(__ATOMIC_SEQ_CST); /* direct copies before the tag's store */
            shoal_status_t t = shoal_coll_line_send(g, to, p, k - 1, tag, NULL, 0);
            if (s == SHOAL_OK) s = t;
        }
        if (st == SHOAL_OK) st = s;
    }
    for (int k = 1; k < n; k++) (void)shoal_coll_line_receive(g, p, k - 1, tag, 0);
    return st;
}

shoal_status_t shoal_coll_alltoalls(struct shoal_group *g, struct shoal_coll_buf dest, struct shoal_coll_buf src,
                                    ptrdiff_t dst, ptrdiff_t sst, size_t nelems, size_t elem)
{
    const enum shoal_coll_algo algo = shoal_coll_choose(SHOAL_COLL_ALLTOALL, g, nelems * elem);
    if (algo == SHOAL_ALGO_BRUCK) return shoal_coll_alltoall_bruck(g, dest, src, dst, sst, nelems, elem);
    if (algo == SHOAL_ALGO_PAIRWISE) return pairwise(g, dest, src, dst, sst, nelems, elem);
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
