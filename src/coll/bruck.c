/* bruck.c: fcollect of small blocks by Bruck's allgather, for teams whose
 * members are reached through RMA. Member i keeps the blocks it has in
 * rotated order (block (i + k) mod n at position k). In round r, with
 * d = 2^r, it puts its first min(d, n - d) blocks into round r's line of
 * member i - d and receives as many from member i + d, which are blocks
 * i + d onwards: its positions d onwards. After ceil(log2 n) rounds of one
 * put and one flag each it holds all n blocks and unrotates them into its
 * dest. Any n, no barrier, no read-back: every wait is on this member's
 * own line.
 *
 * Lines (lines.h): round r's line of member i has one writer, member
 * i + 2^r; every member's result needs every member's block (each block
 * leaves its owner only once the owner is in the call), which is what
 * lines.h needs for reuse.
 *
 * No barrier: each member reads only its own source and writes only its
 * own dest, the lines carry everything else. */
#include <string.h>

#include "coll/coll.h"
#include "coll/lines.h"

/* The most this member holds: n blocks with ceil(n/2) of them fitting a
 * line, so at most twice a line. */
#define BRUCK_HELD (2 * SHOAL_RD_BYTES)

int shoal_coll_bruck_fits(const struct shoal_group *g, size_t bytes)
{
    const size_t half = ((size_t)g->size + 1) / 2;
    return bytes && bytes <= SHOAL_RD_BYTES && shoal_coll_lines_fit(g, bytes * half);
}

shoal_status_t shoal_coll_fcollect_bruck(struct shoal_group *g, struct shoal_coll_buf dest, struct shoal_coll_buf src,
                                         size_t bytes)
{
    const int n = g->size, me = g->rank;
    int p;
    const uint64_t tag = shoal_coll_lines_begin(g, &p);
    _Alignas(64) unsigned char held[BRUCK_HELD];
    memcpy(held, shoal_coll_at(g, src, me, 0), bytes);
    shoal_status_t st = SHOAL_OK;
    for (int r = 0, d = 1; d < n; r++, d <<= 1) {
        const size_t len = (size_t)(d < n - d ? d : n - d) * bytes;
        shoal_status_t s = shoal_coll_line_send(g, (me - d + n) % n, p, r, tag, held, len);
        if (st == SHOAL_OK) st = s;
        memcpy(held + (size_t)d * bytes, shoal_coll_line_receive(g, p, r, tag), len);
    }
    char *out = shoal_coll_at(g, dest, me, 0);
    const size_t head = (size_t)(n - me) * bytes; /* blocks me .. n-1 */
    memcpy(out + (size_t)me * bytes, held, head);
    memcpy(out, held + head, (size_t)me * bytes);
    return st;
}
