/* ring.c: all-reduce of large vectors by a ring reduce-scatter and a ring
 * allgather, for teams whose members are reached through RMA. The vector
 * is cut into n slices (whole elements). Reduce-scatter, steps s = 0 ..
 * n-2: member i puts slice i-s (its source's at s = 0, else what it
 * combined the step before) into member i+1's dest and raises i+1's RING
 * word; it then waits for its own word and combines slice i-1-s, just put
 * into its dest, with its source's. After n-1 steps member i holds the
 * reduction of slice i+1, computed once, so every member gets the same
 * bits. Allgather, steps s = 0 .. n-2: member i puts slice i+1-s of its
 * dest into member i+1's and raises its word; it waits for slice i-s.
 * 2(n-1) steps of one put and one flag, each member sending 2(n-1)/n of
 * the vector: bandwidth-optimal, where the tree sends all of it per child
 * and reads children's partials back (a round trip per chunk and level).
 *
 * Words (shared with the ring scan, scan_ring.c, which runs the same
 * steps): RING on member i is written only by member i-1, which stores
 * (call tag << 24) | steps done, the tag being the team's epoch: values
 * only grow, and a later value says every earlier step's data are there
 * (the writer fences before each store).
 *
 * The coll.h invariant: an entry barrier frees every dest. A slice of
 * member i's dest is written by i-1 at most once per phase, and only when i
 * no longer touches it: in reduce-scatter i receives slice i-1-s at step s
 * and sends it at step s+1, and a slice's allgather copy reaches i only
 * after its final owner computed it, which needed i's step over it first;
 * i never sends or receives slice i in reduce-scatter, where its
 * predecessor's first allgather put lands. No exit barrier: a member
 * returns once its dest is complete, and nobody reads another's memory.
 * In place, the incoming partials would overwrite source slices still to
 * be combined, so the member works from a private copy of its source. */
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "coll/peer.h"
#include "core/runtime.h"
#include "sync/backoff.h"
#include "sync/word.h"

_Static_assert((int)SHOAL_COLL_AUX_RING < (int)SHOAL_COLL_AUX_LEAD_ROUND, "the ring word overlaps the leaders' rounds");
#define RING_TAG_SHIFT 24

int shoal_coll_ring_fits(const struct shoal_group *g)
{
    return g->epoch && g->size < 1 << (RING_TAG_SHIFT - 1);
}

uint64_t shoal_coll_ring_begin(struct shoal_group *g) { return ++*g->epoch << RING_TAG_SHIFT; }

static size_t ring_word(const struct shoal_group *g)
{
    return g->aux_offset + SHOAL_COLL_AUX_RING * sizeof(uint64_t);
}

/* Slice k: elements [*lo, *lo + return) of the vector. */
static size_t slice(size_t nelems, int n, int k, size_t *lo)
{
    const size_t per = (nelems + (size_t)n - 1) / (size_t)n, first = per * (size_t)k;
    *lo = first < nelems ? first : nelems;
    return nelems - *lo < per ? nelems - *lo : per;
}

shoal_status_t shoal_coll_ring_pass(const struct shoal_group *g, struct shoal_coll_buf dest, const char *from,
                                    size_t at, size_t len, uint64_t value)
{
    const int next = (g->rank + 1) % g->size;
    shoal_status_t st = len ? shoal_coll_put(g, dest, next, at, from, len) : SHOAL_OK;
    /* A full fence: a large memcpy into a direct member may use
     * non-temporal stores, which the release store alone does not order. */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    shoal_word_signal(g->seg, ring_word(g), shoal_group_pe(g, next), SHOAL_AMO_SET, value);
    return st;
}

void shoal_coll_ring_await(const struct shoal_group *g, uint64_t value)
{
    const uint64_t *w = shoal_route_direct(g->seg, ring_word(g), shoal_group_pe(g, g->rank));
    struct shoal_backoff b = {0};
    SHOAL_BACKOFF_WHILE(&b, __atomic_load_n(w, __ATOMIC_ACQUIRE) < value);
}

shoal_status_t shoal_coll_reduce_ring(struct shoal_group *g, struct shoal_coll_buf dest, struct shoal_coll_buf src,
                                      size_t nelems, size_t es, shoal_coll_combine_fn combine)
{
    const int n = g->size, me = g->rank;
    char *out = shoal_coll_at(g, dest, me, 0);
    const char *in = shoal_coll_at(g, src, me, 0);
    char *copy = NULL;
    if (n == 1) {
        if (out != in) memcpy(out, in, nelems * es);
        return SHOAL_OK;
    }
    const size_t bytes = nelems * es;
    if (in < out + bytes && out < in + bytes) {
        copy = malloc(bytes ? bytes : 1);
        /* Failing here would leave the other members waiting. */
        if (!copy) shoal_runtime_abort(1, "out of memory copying a reduction's source");
        memcpy(copy, in, bytes);
        in = copy;
    }
    shoal_coll_barrier(g);
    const uint64_t base = shoal_coll_ring_begin(g);
    shoal_status_t st = SHOAL_OK;
    size_t lo, len;
    for (int s = 0; s < n - 1; s++) {
        len = slice(nelems, n, ((me - s) % n + n) % n, &lo);
        shoal_status_t r =
            shoal_coll_ring_pass(g, dest, (s ? out : in) + lo * es, lo * es, len * es, base | (uint64_t)(s + 1));
        if (st == SHOAL_OK) st = r;
        shoal_coll_ring_await(g, base | (uint64_t)(s + 1));
        len = slice(nelems, n, ((me - 1 - s) % n + n) % n, &lo);
        combine(out + lo * es, in + lo * es, len);
    }
    for (int s = 0; s < n - 1; s++) {
        len = slice(nelems, n, ((me + 1 - s) % n + n) % n, &lo);
        shoal_status_t r = shoal_coll_ring_pass(g, dest, out + lo * es, lo * es, len * es, base | (uint64_t)(n + s));
        if (st == SHOAL_OK) st = r;
        shoal_coll_ring_await(g, base | (uint64_t)(n + s));
    }
    free(copy);
    return st;
}
