/* scan_ring.c: sum scans of vectors past a line (256 B) on teams some of
 * whose members are reached through RMA, passed along the ring order
 * (ring.c's steps) instead of pulled: the direct scan reads every lower
 * member's source, one round trip each in a row, between three barriers.
 *
 * After one entry barrier (which frees every dest, coll.h), member i
 * waits for member i-1's inclusive prefix to land in its dest, chunk by
 * chunk; it adds its own source chunk (the prefix first, so sums run in
 * rank order as the direct scan's do) and puts the result into member
 * i+1's dest with a flag. Inclusive: the dest chunk itself becomes the
 * result and is sent from there; exclusive: the prefix that landed is the
 * result, and the sum goes out from private scratch. Member 0 starts the
 * chain from its source (exclusive: its dest gets zero, the identity, as
 * in scan.c). Chunks pipeline the chain: member i+1 works on chunk c
 * while member i works on c+1, so a large vector costs n - 1 steps plus
 * one step per chunk, and every member sends the vector once.
 *
 * No exit barrier: a member returns once every chunk of its dest has
 * landed (it waits for each) and its own puts are done; nobody reads
 * another's memory. In place, the incoming prefix would overwrite source
 * chunks still to be added, so the member works from a private copy of
 * its source, as the ring all-reduce does. */
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "coll/peer.h"
#include "core/runtime.h"

/* Big enough that a flag per chunk costs little over TCP, small enough
 * that a chain of several members overlaps its steps. */
#define SCAN_CHUNK ((size_t)64 * 1024)
/* ring.c's words count steps in 24 bits. */
#define SCAN_MAX_CHUNKS (((size_t)1 << 24) - 1)

/* Chunk size in bytes: whole elements, few enough chunks for the words. */
static size_t chunk_bytes(size_t nelems, size_t es)
{
    size_t per = SCAN_CHUNK / es;
    if (!per) per = 1;
    const size_t least = (nelems + SCAN_MAX_CHUNKS - 1) / SCAN_MAX_CHUNKS;
    return (per > least ? per : least) * es;
}

static void *alloc_or_die(size_t bytes, const char *what)
{
    void *p = malloc(bytes ? bytes : 1);
    /* Failing after the others started would leave them waiting. */
    if (!p) shoal_runtime_abort(1, what);
    return p;
}

shoal_status_t shoal_coll_scan_ring(struct shoal_group *g, struct shoal_coll_buf dest, struct shoal_coll_buf src,
                                    size_t nelems, size_t es, shoal_coll_combine_fn sum, int inclusive)
{
    const int n = g->size, me = g->rank;
    const size_t bytes = nelems * es;
    char *out = shoal_coll_at(g, dest, me, 0);
    const char *in = shoal_coll_at(g, src, me, 0);
    char *copy = NULL, *scratch = NULL;
    if (in < out + bytes && out < in + bytes) {
        copy = alloc_or_die(bytes, "out of memory copying a scan's source");
        memcpy(copy, in, bytes);
        in = copy;
    }
    const size_t chunk = chunk_bytes(nelems, es);
    /* Exclusive members between the first and the last send a sum their
     * dest must not hold. */
    if (!inclusive && me > 0 && me < n - 1) scratch = alloc_or_die(chunk, "out of memory in a scan");
    shoal_coll_barrier(g);
    const uint64_t base = shoal_coll_ring_begin(g);
    shoal_status_t st = SHOAL_OK;
    uint64_t step = 0;
    for (size_t lo = 0; lo < bytes; lo += chunk) {
        const size_t len = bytes - lo < chunk ? bytes - lo : chunk;
        step++;
        /* Member i-1's prefix of this chunk is in out + lo. */
        if (me > 0) shoal_coll_ring_await(g, base | step);
        const char *send = out + lo;
        if (me == 0 && inclusive) {
            memcpy(out + lo, in + lo, len);
        } else if (me == 0) {
            memset(out + lo, 0, len);
            send = in + lo;
        } else if (inclusive) {
            sum(out + lo, in + lo, len / es);
        } else if (scratch) {
            memcpy(scratch, out + lo, len);
            sum(scratch, in + lo, len / es);
            send = scratch;
        }
        if (me < n - 1) {
            shoal_status_t s = shoal_coll_ring_pass(g, dest, send, lo, len, base | step);
            if (st == SHOAL_OK) st = s;
        }
    }
    free(scratch);
    free(copy);
    return st;
}
