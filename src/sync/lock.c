/* lock.c: OpenSHMEM locks as a ticket lock on PE 0's copy of the lock
 * variable (a 64-bit long):
 *   bits 32..63  next ticket to hand out
 *   bits  0..31  ticket now served
 * Acquiring is one fetch-add on the ticket half, then waiting until the
 * served half reaches that ticket; releasing adds one to the served half.
 * Every step is a single atomic that cannot fail, so PEs are served in the
 * order their fetch-add arrived: first come, first served, and no PE
 * starves. Only the holder changes the served half, so it can step it
 * from 2^32-1 back to 0 without carrying into the ticket half. A
 * zero-initialised variable is a free lock, as the standard requires. */
#include "sync/lock.h"

#include <stdint.h>

#include "core/route.h"
#include "core/runtime.h"
#include "sync/backoff.h"

#define HOME_PE 0
#define TICKET_ONE (UINT64_C(1) << 32)
#define SERVED_MASK UINT64_C(0xFFFFFFFF)

_Static_assert(sizeof(long) == 8, "the lock word layout needs a 64-bit long");

static shoal_status_t home_amo(int seg, size_t offset, enum shoal_amo_op op, uint64_t operand, uint64_t cond,
                               uint64_t *old)
{
    return shoal_route_amo(NULL, seg, offset, HOME_PE, 8, op, operand, cond, old);
}

shoal_status_t shoal_lock_acquire(int seg, size_t offset)
{
    uint64_t word;
    shoal_status_t st = home_amo(seg, offset, SHOAL_AMO_ADD, TICKET_ONE, 0, &word);
    const uint64_t ticket = word >> 32;
    struct shoal_backoff b = {0};
    while (st == SHOAL_OK && (word & SERVED_MASK) != ticket) {
        shoal_backoff_wait(&b);
        st = home_amo(seg, offset, SHOAL_AMO_FETCH, 0, 0, &word);
    }
    return st;
}

shoal_status_t shoal_lock_try(int seg, size_t offset, int *acquired)
{
    uint64_t word, seen;
    *acquired = 0;
    shoal_status_t st = home_amo(seg, offset, SHOAL_AMO_FETCH, 0, 0, &word);
    /* Free when the next ticket is the one being served. */
    if (st == SHOAL_OK && (word >> 32) == (word & SERVED_MASK)) {
        st = home_amo(seg, offset, SHOAL_AMO_CSWAP, word + TICKET_ONE, word, &seen);
        if (st == SHOAL_OK && seen == word) *acquired = 1;
    }
    if (st == SHOAL_OK && !*acquired) shoal_backoff_poll_failed();
    return st;
}

shoal_status_t shoal_lock_release(int seg, size_t offset)
{
    uint64_t word;
    shoal_status_t st = home_amo(seg, offset, SHOAL_AMO_FETCH, 0, 0, &word);
    if (st != SHOAL_OK) return st;
    /* The holder alone moves the served half: wrap it without a carry. */
    uint64_t step = (word & SERVED_MASK) == SERVED_MASK ? (uint64_t)1 - TICKET_ONE : 1;
    return home_amo(seg, offset, SHOAL_AMO_ADD, step, 0, NULL);
}
