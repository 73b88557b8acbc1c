/* oneshot.c: one-shot broadcast, all-reduce and fcollect of small vectors
 * on a team.
 *
 * The data travel in lines of the members' one-shot areas (core/internal.h)
 * instead of between the buffers, so no entry or exit barrier is needed:
 * - reduce: each member copies its source into its own line of every
 *   member's copy, tagged with the call's count, waits until its own copy
 *   holds all members' lines for that count and combines them in rank
 *   order (so every member's result is bit-identical);
 * - broadcast: the root copies its source into its line of every member's
 *   copy; each member waits for that line and copies it to its dest;
 * - fcollect: like reduce, but each line is copied to its block of the
 *   dest instead of combined; a member's own block goes straight from its
 *   source. Each member is scheduled once to write and once to read, the
 *   fewest steps there are when PEs outnumber cores.
 * A member's own source and dest are touched only by itself, so a
 * reduction in place (dest == source) is safe, and a source may be reused
 * as soon as the call returns.
 *
 * Invariants: calls on a team are counted alike on every member (the
 * team's oneshot count). Lines alternate between two sets by the count's
 * parity, and every member publishes in `done` the last count it finished
 * reading. A line of set p is rewritten at call k only when every reader
 * is done with call k-2: after a reduction (call k-1) that holds already,
 * since nobody completes k-1 before every member started it, which each
 * does only after finishing k-2; after a broadcast it need not (the root
 * waits for nobody), so then the writer waits until every member's done
 * is at least k-2. */
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

int shoal_coll_fcollect_oneshot_fits(const struct shoal_group *g, size_t block)
{
    return block && shoal_coll_oneshot_fits(g, block);
}

static void *area_word(const struct shoal_group *g, int owner, size_t offset)
{
    return shoal_route_direct(SHOAL_SEG_HEAP, g->oneshot_offset + offset, shoal_group_pe(g, owner));
}

/* Line of writer in the copy of member owner, set parity. */
static struct shoal_oneshot_line *line_of(const struct shoal_group *g, int owner, int parity, int writer)
{
    return area_word(g, owner,
                     offsetof(struct shoal_team_oneshot, line) +
                         ((size_t)parity * SHOAL_ONESHOT_MEMBERS + (size_t)writer) * sizeof(struct shoal_oneshot_line));
}

static uint64_t *done_of(const struct shoal_group *g, int owner)
{
    return area_word(g, owner, offsetof(struct shoal_team_oneshot, done));
}

/* Starts a call: its count, once every member is done with count - 2. */
static uint64_t begin(const struct shoal_group *g)
{
    if (shoal_backoff_crowd_team(g->size)) shoal_backoff_note_cpu(); /* for members' waits on crowded cores */
    const uint64_t tag = ++*g->oneshot;
    if (tag > 2 && *g->oneshot_bcast == tag - 1)
        for (int r = 0; r < g->size; r++) {
            struct shoal_backoff b = {0};
            SHOAL_BACKOFF_WHILE(&b, __atomic_load_n(done_of(g, r), __ATOMIC_ACQUIRE) < tag - 2);
        }
    return tag;
}

static void write_line(const struct shoal_group *g, int owner, uint64_t tag, const void *data, size_t bytes)
{
    struct shoal_oneshot_line *line = line_of(g, owner, (int)(tag & 1), g->rank);
    memcpy(line->data, data, bytes);
    __atomic_store_n(&line->tag, tag, __ATOMIC_RELEASE);
    shoal_wake(shoal_group_pe(g, owner));
}

struct line_wait {
    const struct shoal_group *g;
    uint64_t tag;
    int writer; /* the only member awaited, or -1: every member */
};

/* Whether a member whose line this member still awaits last ran on cpu (or
 * may have). */
static int line_missing_here(const void *arg, int cpu)
{
    const struct line_wait *w = arg;
    const struct shoal_group *g = w->g;
    const int first = w->writer < 0 ? 0 : w->writer, end = w->writer < 0 ? g->size : w->writer + 1;
    for (int r = first; r < end; r++) {
        if (r != g->rank &&
            __atomic_load_n(&line_of(g, g->rank, (int)(w->tag & 1), r)->tag, __ATOMIC_RELAXED) != w->tag &&
            shoal_backoff_may_run_on(shoal_group_pe(g, r), cpu))
            return 1;
    }
    return 0;
}

/* all: every member's line is awaited in this call (reduce, fcollect), not
 * only writer's (broadcast). */
static const struct shoal_oneshot_line *await_line(const struct shoal_group *g, uint64_t tag, int writer, int all)
{
    const struct shoal_oneshot_line *line = line_of(g, g->rank, (int)(tag & 1), writer);
    struct shoal_backoff b = {.waits_on = shoal_group_pe(g, writer) + 1};
    const struct line_wait w = {g, tag, all ? -1 : writer};
    SHOAL_BACKOFF_WHILE_MEMBERS(&b, __atomic_load_n(&line->tag, __ATOMIC_ACQUIRE) != tag, g->size,
                                line_missing_here, &w);
    return line;
}

static void finish(const struct shoal_group *g, uint64_t tag)
{
    __atomic_store_n(done_of(g, g->rank), tag, __ATOMIC_RELEASE);
}

shoal_status_t shoal_coll_reduce_oneshot(struct shoal_group *g, struct shoal_coll_buf dest, struct shoal_coll_buf src,
                                         size_t nelems, size_t es, shoal_coll_combine_fn combine)
{
    const uint64_t tag = begin(g);
    const size_t bytes = nelems * es;
    const char *mine = shoal_coll_at(g, src, g->rank, 0);
    for (int r = 0; r < g->size; r++) write_line(g, r, tag, mine, bytes);
    _Alignas(64) unsigned char acc[SHOAL_ONESHOT_BYTES];
    for (int r = 0; r < g->size; r++) {
        const struct shoal_oneshot_line *line = await_line(g, tag, r, 1);
        if (r == 0)
            memcpy(acc, line->data, bytes);
        else
            combine(acc, line->data, nelems);
    }
    finish(g, tag);
    memcpy(shoal_coll_at(g, dest, g->rank, 0), acc, bytes);
    return SHOAL_OK;
}

shoal_status_t shoal_coll_broadcast_oneshot(struct shoal_group *g, struct shoal_coll_buf dest,
                                            struct shoal_coll_buf src, size_t bytes, int root, int update_root)
{
    const uint64_t tag = begin(g);
    *g->oneshot_bcast = tag;
    const int me = g->rank;
    if (me == root) {
        const char *from = shoal_coll_at(g, src, me, 0);
        for (int r = 0; r < g->size; r++) write_line(g, r, tag, from, bytes);
    }
    const struct shoal_oneshot_line *line = await_line(g, tag, root, 0);
    if (me != root || update_root) memcpy(shoal_coll_at(g, dest, me, 0), line->data, bytes);
    finish(g, tag);
    return SHOAL_OK;
}

shoal_status_t shoal_coll_fcollect_oneshot(struct shoal_group *g, struct shoal_coll_buf dest,
                                          struct shoal_coll_buf src, size_t bytes)
{
    const uint64_t tag = begin(g);
    const int n = g->size, me = g->rank;
    const char *mine = shoal_coll_at(g, src, me, 0);
    /* Next rank first, so that members do not all write the same copy at
     * once. */
    for (int k = 1; k < n; k++) write_line(g, (me + k) % n, tag, mine, bytes);
    char *out = shoal_coll_at(g, dest, me, 0);
    /* Own block now: after the lines left (an in-place source is dest's own
     * block, which nothing else here overwrites). */
    if (out + (size_t)me * bytes != mine) memcpy(out + (size_t)me * bytes, mine, bytes);
    for (int k = 1; k < n; k++) {
        const int r = (me + k) % n;
        memcpy(out + (size_t)r * bytes, await_line(g, tag, r, 1)->data, bytes);
    }
    finish(g, tag);
    return SHOAL_OK;
}
