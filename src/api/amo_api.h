/* amo_api.h: the byte-based atomic entry point behind every typed, ctx,
 * nbi and deprecated AMO wrapper. Atomics on a direct peer are CPU atomics
 * on the mapped address (lock-free for 4- and 8-byte elements), so they are
 * atomic with respect to every other PE's atomics on the same object. */
#ifndef SHOAL_API_AMO_API_H
#define SHOAL_API_AMO_API_H

#include <stddef.h>

#include <shmem.h>

#include "transport/cpu_atomic.h" /* enum shoal_amo_op */

/* Performs op on the elem-byte element at symmetric address dest on pe.
 * operand and cond point to elem-byte values (cond only for CSWAP);
 * fetched receives the old value and may be NULL for non-fetching forms.
 * elem is 4 or 8 (float and double travel as their bits). Bad input ends
 * the job with one line naming call. The _nbi forms call this too: on the
 * direct path they complete at once. */
void shoal_api_amo(shmem_ctx_t ctx, enum shoal_amo_op op, void *dest, void *fetched, const void *operand,
                   const void *cond, size_t elem, int pe, const char *call);

#endif
