/* reduce_small.c: one-shot all-reduce of small vectors on a team.
 *
 * Each member copies its source into its own line of every member's
 * one-shot area (core/internal.h), tagging the line with the call's count,
 * then waits until its own copy holds the lines of all members for this
 * count and combines them in rank order: one exchange of cache lines and
 * no barrier, against two barriers for the sliced algorithm.
 *
 * Invariants: lines alternate between two sets by the count's parity. A
 * member writes set p for call k only after it finished reading set p for
 * call k-2, because it cannot have completed call k-1 before every member
 * contributed to k-1, which each does only after finishing k-2: so a line
 * is never overwritten while its reader still needs it, and no entry or
 * exit barrier is needed. Every member combines the same lines in the
 * same order, so all results are bit-identical. A member's own source and
 * dest are touched only by itself, so in place (dest == source) is safe. */
#include <string.h>

#include "coll/coll.h"
#include "coll/peer.h"
#include "core/internal.h"
#include "sync/backoff.h"

int shoal_coll_oneshot_fits(const struct shoal_group *g, size_t bytes)
{
    return g->oneshot && bytes <= SHOAL_ONESHOT_BYTES && g->size <= SHOAL_ONESHOT_MEMBERS &&
           shoal_coll_all_direct(g);
}

/* Line of writer in the copy of member owner, set parity. */
static struct shoal_oneshot_line *line_of(const struct shoal_group *g, int owner, int parity, int writer)
{
    const size_t off = g->oneshot_offset + offsetof(struct shoal_team_oneshot, line) +
                       ((size_t)parity * SHOAL_ONESHOT_MEMBERS + (size_t)writer) * sizeof(struct shoal_oneshot_line);
    return shoal_route_direct(SHOAL_SEG_HEAP, off, shoal_group_pe(g, owner));
}

shoal_status_t shoal_coll_reduce_oneshot(struct shoal_group *g, struct shoal_coll_buf dest, struct shoal_coll_buf src,
                                         size_t nelems, size_t es, shoal_coll_combine_fn combine)
{
    const uint64_t tag = ++*g->oneshot;
    const int parity = (int)(tag & 1), me = g->rank;
    const size_t bytes = nelems * es;
    const char *mine = shoal_coll_at(g, src, me, 0);
    for (int r = 0; r < g->size; r++) {
        struct shoal_oneshot_line *line = line_of(g, r, parity, me);
        memcpy(line->data, mine, bytes);
        __atomic_store_n(&line->tag, tag, __ATOMIC_RELEASE);
    }
    _Alignas(64) unsigned char acc[SHOAL_ONESHOT_BYTES];
    for (int r = 0; r < g->size; r++) {
        const struct shoal_oneshot_line *line = line_of(g, me, parity, r);
        struct shoal_backoff b = {0};
        while (__atomic_load_n(&line->tag, __ATOMIC_ACQUIRE) != tag) shoal_backoff_wait(&b);
        if (r == 0)
            memcpy(acc, line->data, bytes);
        else
            combine(acc, line->data, nelems);
    }
    memcpy(shoal_coll_at(g, dest, me, 0), acc, bytes);
    return SHOAL_OK;
}
