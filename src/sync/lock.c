/* lock.c: OpenSHMEM locks as a queue (MCS) lock whose waiters spin on
 * their own memory, not on a remote word.
 *
 * Layout. The symmetric `long` lock variable is split into two 32-bit
 * words, each only ever changed by 32-bit atomics (never the whole long):
 *   bytes 0..3  TAIL, used on the home PE (PE 0) only: the last PE in the
 *               queue plus one; 0 = free.
 *   bytes 4..7  NODE, every PE's own: this PE's queue node,
 *               bits 0..30 its successor plus one (0 = none yet),
 *               bit 31 GRANTED (its predecessor handed it the lock).
 * So each PE's copy of the variable is its queue node and no extra memory
 * is needed; a zero-initialised variable is a free lock with clean nodes,
 * as the standard requires. Halves are named by byte offset, not by bit
 * position, so the layout does not depend on endianness.
 *
 * Acquire: clear my NODE (a local store), SWAP me into the home TAIL. Old
 * tail 0: I hold the lock (1 round trip). Else OR my number into my
 * predecessor's NODE and wait, reading my own NODE, until GRANTED.
 * Release: if my NODE names no successor, COMPARE-SWAP the home TAIL from
 * me to 0; success means nobody queued behind me (1 round trip; an
 * uncontended acquire + release is 2). Otherwise a successor swapped in
 * after me: wait on my own NODE until it has linked, then OR GRANTED into
 * its NODE. Test: clear my NODE, COMPARE-SWAP the TAIL from 0 to me.
 * PEs are served in the order their swaps reach the home TAIL (FIFO).
 *
 * Races, and why they are harmless:
 * - Late link vs release: a successor that swapped in after me may not
 *   have linked yet when I release; my compare-swap then fails (the tail
 *   is no longer me) and I wait for the link before granting, so the grant
 *   never goes to nobody and the link never lands after I left.
 * - Link and grant on one NODE: my predecessor's grant and my successor's
 *   link may arrive at my NODE at the same time; both are ORs into
 *   disjoint bits, so neither erases the other.
 * - Reuse across rounds: I clear my NODE only before enqueueing, when
 *   nobody can write it: my successor of the last round linked before I
 *   let go (I waited for it), my predecessor granted before I held the
 *   lock (I waited for it), and nobody learns of me as a predecessor
 *   before my SWAP, which follows the clear. Likewise my predecessor's
 *   NODE was cleared before its SWAP, which came before mine, so my link
 *   is never erased.
 * - Home PE as both TAIL and NODE: the two halves are separate 32-bit
 *   atomics on separate bytes; neither operation touches the other half.
 * - Threads: the node is the PE's, so only one thread of a PE may be in a
 *   given lock's queue at a time; api/lock.c makes the others wait
 *   locally.
 *
 * Delivery: the link and the grant are fetching atomics, complete when
 * they return on every transport, so the successor sees its grant without
 * the releaser ever calling quiet again (a non-fetching atomic may wait in
 * a provider's queue until the initiator next drives progress). Waiting
 * drives this PE's transport progress (shoal_backoff_wait), so peers'
 * links and grants to this PE are applied while it waits. */
#include "sync/lock.h"

#include <stdint.h>

#include "core/route.h"
#include "core/runtime.h"
#include "sync/backoff.h"

#define HOME_PE 0
#define TAIL_AT SHOAL_LOCK_TAIL_AT
#define NODE_AT 4 /* byte offset of the node half */
#define GRANTED (UINT32_C(1) << 31)
#define SUCCESSOR_MASK (GRANTED - 1)

_Static_assert(sizeof(long) == 8, "the lock word layout needs a 64-bit long");

/* This PE's own node half, read and cleared in place. */
static uint32_t *my_node(int seg, size_t offset)
{
    return (uint32_t *)(shoal_rt.seg_start[seg] + offset + NODE_AT);
}

static uint32_t node_load(int seg, size_t offset)
{
    return __atomic_load_n(my_node(seg, offset), __ATOMIC_ACQUIRE);
}

/* Nobody else writes my node while I am outside the queue (header). */
static void node_clear(int seg, size_t offset)
{
    __atomic_store_n(my_node(seg, offset), 0, __ATOMIC_SEQ_CST);
}

static shoal_status_t tail_amo(int seg, size_t offset, enum shoal_amo_op op, uint32_t operand, uint32_t cond,
                               uint32_t *old)
{
    uint64_t fetched = 0;
    shoal_status_t st = shoal_route_amo(NULL, seg, offset + TAIL_AT, HOME_PE, 4, op, operand, cond, &fetched);
    *old = (uint32_t)fetched;
    return st;
}

/* ORs bits into pe's node; fetching, so it is delivered on return. */
static shoal_status_t node_or(int seg, size_t offset, int pe, uint32_t bits)
{
    uint64_t ignored;
    shoal_status_t st = shoal_route_amo(NULL, seg, offset + NODE_AT, pe, 4, SHOAL_AMO_OR, bits, 0, &ignored);
    shoal_wake(pe);
    return st;
}

static uint32_t me_plus_one(void) { return (uint32_t)shoal_rt.my_pe + 1; }

shoal_status_t shoal_lock_acquire(int seg, size_t offset)
{
    node_clear(seg, offset);
    uint32_t pred;
    shoal_status_t st = tail_amo(seg, offset, SHOAL_AMO_SWAP, me_plus_one(), 0, &pred);
    if (st != SHOAL_OK || pred == 0) return st;
    st = node_or(seg, offset, (int)pred - 1, me_plus_one());
    struct shoal_backoff b = {0};
    SHOAL_BACKOFF_WHILE(&b, st == SHOAL_OK && !(node_load(seg, offset) & GRANTED));
    return st;
}

shoal_status_t shoal_lock_try(int seg, size_t offset, int *acquired)
{
    node_clear(seg, offset);
    uint32_t seen;
    shoal_status_t st = tail_amo(seg, offset, SHOAL_AMO_CSWAP, me_plus_one(), 0, &seen);
    *acquired = st == SHOAL_OK && seen == 0;
    if (st == SHOAL_OK && !*acquired) shoal_backoff_poll_failed();
    return st;
}

shoal_status_t shoal_lock_release(int seg, size_t offset)
{
    uint32_t succ = node_load(seg, offset) & SUCCESSOR_MASK;
    if (succ == 0) {
        uint32_t seen;
        shoal_status_t st = tail_amo(seg, offset, SHOAL_AMO_CSWAP, 0, me_plus_one(), &seen);
        if (st != SHOAL_OK || seen == me_plus_one()) return st;
        /* Someone swapped in after me: wait until it has linked. */
        struct shoal_backoff b = {0};
        SHOAL_BACKOFF_WHILE(&b, !(succ = node_load(seg, offset) & SUCCESSOR_MASK));
    }
    return node_or(seg, offset, (int)succ - 1, GRANTED);
}
