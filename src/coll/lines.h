/* lines.h: the tagged lines of a team slot (core/internal.h) that carry
 * small vectors between members without a barrier: recursive doubling
 * (rd.c) and Bruck's allgather (bruck.c) share them.
 *
 * A writer puts its data into the reader's line, then stores the call's tag
 * (the team's epoch, so it only grows) after a fence; the reader waits on
 * its own memory. Two sets alternate by this member's count of line calls
 * (rd_calls), alike on every member since every member makes the same
 * calls. A line of set p written in line call k was last written in call
 * k-2, and its reader finished with it then, provided every such call
 * completes only once every member has entered it (each member's result
 * needs every member's contribution): the writer is in call k, so it
 * finished call k-1, so every member had entered call k-1 and was done with
 * call k-2. Each line has one writer per call. So a reader waits for its
 * call's tag exactly (word.h, flag): nothing else is written to the line
 * before it saw that tag, and a tag that lands in pieces shows it only
 * when whole. */
#ifndef SHOAL_COLL_LINES_H
#define SHOAL_COLL_LINES_H

#include <stddef.h>
#include <string.h>

#include "coll/peer.h"
#include "core/internal.h"
#include "sync/backoff.h"
#include "sync/word.h"

/* Whether g has lines (a team, not a pSync) for rounds of up to bytes, and
 * at most 2^SHOAL_RD_ROUNDS members. */
static inline int shoal_coll_lines_fit(const struct shoal_group *g, size_t bytes)
{
    return g->epoch && bytes <= SHOAL_RD_BYTES && g->size <= 1 << SHOAL_RD_ROUNDS;
}

static inline size_t shoal_coll_slot(const struct shoal_group *g)
{
    return g->sync_offset - offsetof(struct shoal_team_sync, round);
}

/* Offset of line i of set p in the team's slot. */
static inline size_t shoal_coll_line_off(const struct shoal_group *g, int p, int i)
{
    return shoal_coll_slot(g) + offsetof(struct shoal_team_sync, rd) +
           ((size_t)p * SHOAL_RD_LINES + (size_t)i) * sizeof(struct shoal_rd_line);
}

/* Starts a line call: its tag, and the set (0 or 1) it uses in *set. */
static inline uint64_t shoal_coll_lines_begin(struct shoal_group *g, int *set)
{
    uint64_t *calls = shoal_route_direct(SHOAL_SEG_HEAP, shoal_coll_slot(g) + offsetof(struct shoal_team_sync, rd_calls),
                                         shoal_group_pe(g, g->rank));
    *set = (int)(++*calls & 1);
    return ++*g->epoch;
}

/* Data and tag in one message where the transport can (word.h, flag). The
 * data go to the end of the line's data, right before the tag, so the two
 * are one contiguous write: a fabric then sends them as one injected
 * message (transport/ofi/ofi_ops.c, flag_in_one_write). Their start stays
 * aligned to any element size that divides SHOAL_RD_BYTES. The tag stays
 * in place, so no earlier call's data can pose as it. A release store
 * orders a direct copy: at most SHOAL_RD_BYTES, far below where memcpy
 * turns to non-temporal stores. */
static inline shoal_status_t shoal_coll_line_send(const struct shoal_group *g, int rank, int p, int i, uint64_t tag,
                                                  const void *data, size_t bytes)
{
    const size_t at = shoal_coll_line_off(g, p, i);
    return shoal_word_flag_fenced(SHOAL_SEG_HEAP, at + SHOAL_RD_BYTES - bytes, data, bytes, SHOAL_SEG_HEAP,
                                  at + offsetof(struct shoal_rd_line, tag), shoal_group_pe(g, rank), tag, NULL);
}

/* Waits for the call's tag on line i of set p; returns the bytes its
 * writer sent (the same count as shoal_coll_line_send's). */
static inline const unsigned char *shoal_coll_line_receive(const struct shoal_group *g, int p, int i, uint64_t tag,
                                                           size_t bytes)
{
    const struct shoal_rd_line *line =
        shoal_route_direct(SHOAL_SEG_HEAP, shoal_coll_line_off(g, p, i), shoal_group_pe(g, g->rank));
    struct shoal_backoff b = {0};
    SHOAL_BACKOFF_WHILE(&b, __atomic_load_n(&line->tag, __ATOMIC_ACQUIRE) != tag);
    return line->data + SHOAL_RD_BYTES - bytes;
}

/* Recursive doubling among n participants (rd.c, scan_rd.c): with p the
 * largest power of two not above n, the first 2(n - p) pair up, each even
 * one handing its vector to the odd one above it on the PRE line and
 * waiting for the result on the POST line; the p others run log2(p) rounds
 * in a virtual numbering. */
enum { SHOAL_LINE_PRE = SHOAL_RD_ROUNDS, SHOAL_LINE_POST = SHOAL_RD_ROUNDS + 1 };

/* The number of participants left after the pairing of n: p above. */
static inline int shoal_coll_rd_pow2(int n)
{
    int pow2 = 1;
    while (pow2 * 2 <= n) pow2 *= 2;
    return pow2;
}

/* The participant of virtual rank v, rem pairs having folded. */
static inline int shoal_coll_rd_participant(int v, int rem) { return v < rem ? 2 * v + 1 : v + rem; }

/* acc = lower op higher, whichever of acc and in is the lower
 * participant's: both partners then combine alike and get the same bits. */
static inline void shoal_coll_rd_combine(unsigned char *acc, const unsigned char *in, int in_is_lower, size_t bytes,
                                         size_t es, void (*combine)(void *, const void *, size_t))
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

#endif
