/* lock.c: a queue lock over the symmetric lock variable (a 64-bit long).
 *
 * Every PE's copy of the variable is that PE's queue node; PE 0's copy also
 * holds the queue's tail:
 *   bits  0..31  tail: 1 + the last PE in the queue, 0 when free (PE 0 only)
 *   bits 32..62  next: 1 + the PE queued behind this one, 0 if none yet
 *   bit  63      waiting: set while this PE waits for the lock
 * A PE sets its waiting bit, swaps itself into the tail, links itself
 * behind the previous tail and spins on its own copy, which only its
 * predecessor writes: no PE spins on a shared line, and the lock passes in
 * arrival order, so no PE starves. Every update is an atomic AND/OR/CAS on
 * the whole word, so PE 0's node bits and the tail never clobber each other.
 * A zero-initialised variable is a free lock, as the standard requires. */
#include "sync/lock.h"

#include <stdint.h>

#include "core/route.h"
#include "core/runtime.h"
#include "sync/backoff.h"

#define TAIL_MASK UINT64_C(0x00000000FFFFFFFF)
#define NEXT_SHIFT 32
#define NEXT_MASK UINT64_C(0x7FFFFFFF00000000)
#define WAITING UINT64_C(0x8000000000000000)
#define HOME_PE 0

_Static_assert(sizeof(long) == 8, "the lock word layout needs a 64-bit long");

struct lock_ref {
    int seg;
    size_t offset;
};

static shoal_status_t amo(struct lock_ref l, int pe, enum shoal_amo_op op, uint64_t operand, uint64_t cond,
                          uint64_t *old)
{
    return shoal_route_amo(l.seg, l.offset, pe, 8, op, operand, cond, old);
}

/* Replaces the tail on the home PE when it equals expected_tail; returns the
 * tail found. Other bits of the word are preserved. */
static shoal_status_t swap_tail(struct lock_ref l, int conditional, uint64_t expected_tail, uint64_t new_tail,
                                uint64_t *found_tail)
{
    uint64_t word;
    shoal_status_t st = amo(l, HOME_PE, SHOAL_AMO_FETCH, 0, 0, &word);
    while (st == SHOAL_OK) {
        if (conditional && (word & TAIL_MASK) != expected_tail) break;
        uint64_t seen;
        st = amo(l, HOME_PE, SHOAL_AMO_CSWAP, (word & ~TAIL_MASK) | new_tail, word, &seen);
        if (st != SHOAL_OK || seen == word) break;
        word = seen;
    }
    *found_tail = word & TAIL_MASK;
    return st;
}

static uint64_t my_word(struct lock_ref l)
{
    const uint64_t *mine = shoal_route_direct(l.seg, l.offset, shoal_rt.my_pe);
    return __atomic_load_n(mine, __ATOMIC_ACQUIRE);
}

/* Clears this PE's node (next and waiting) before it joins the queue. */
static shoal_status_t reset_node(struct lock_ref l, uint64_t waiting)
{
    shoal_status_t st = amo(l, shoal_rt.my_pe, SHOAL_AMO_AND, TAIL_MASK, 0, NULL);
    if (st == SHOAL_OK && waiting) st = amo(l, shoal_rt.my_pe, SHOAL_AMO_OR, WAITING, 0, NULL);
    return st;
}

shoal_status_t shoal_lock_acquire(int seg, size_t offset)
{
    struct lock_ref l = {seg, offset};
    const uint64_t me = (uint64_t)shoal_rt.my_pe + 1;
    uint64_t prev;
    shoal_status_t st = reset_node(l, 1);
    if (st == SHOAL_OK) st = swap_tail(l, 0, 0, me, &prev);
    if (st != SHOAL_OK) return st;
    if (prev == 0) return amo(l, shoal_rt.my_pe, SHOAL_AMO_AND, ~WAITING, 0, NULL);
    st = amo(l, (int)prev - 1, SHOAL_AMO_OR, me << NEXT_SHIFT, 0, NULL);
    if (st != SHOAL_OK) return st;
    struct shoal_backoff b = {0};
    while (my_word(l) & WAITING) shoal_backoff_wait(&b);
    return SHOAL_OK;
}

shoal_status_t shoal_lock_try(int seg, size_t offset, int *acquired)
{
    struct lock_ref l = {seg, offset};
    const uint64_t me = (uint64_t)shoal_rt.my_pe + 1;
    uint64_t found;
    *acquired = 0;
    shoal_status_t st = amo(l, HOME_PE, SHOAL_AMO_FETCH, 0, 0, &found);
    if (st != SHOAL_OK || (found & TAIL_MASK) != 0) return st;
    st = reset_node(l, 0);
    if (st == SHOAL_OK) st = swap_tail(l, 1, 0, me, &found);
    if (st == SHOAL_OK && found == 0) *acquired = 1;
    return st;
}

shoal_status_t shoal_lock_release(int seg, size_t offset)
{
    struct lock_ref l = {seg, offset};
    const uint64_t me = (uint64_t)shoal_rt.my_pe + 1;
    uint64_t next = (my_word(l) & NEXT_MASK) >> NEXT_SHIFT;
    if (next == 0) {
        uint64_t found;
        shoal_status_t st = swap_tail(l, 1, me, 0, &found);
        if (st != SHOAL_OK) return st;
        if (found == me) return SHOAL_OK; /* nobody queued: the lock is free */
        /* A successor swapped itself in and is about to link behind us. */
        struct shoal_backoff b = {0};
        while ((next = (my_word(l) & NEXT_MASK) >> NEXT_SHIFT) == 0) shoal_backoff_wait(&b);
    }
    shoal_status_t st = amo(l, shoal_rt.my_pe, SHOAL_AMO_AND, ~NEXT_MASK, 0, NULL);
    if (st == SHOAL_OK) st = amo(l, (int)next - 1, SHOAL_AMO_AND, ~WAITING, 0, NULL);
    return st;
}
