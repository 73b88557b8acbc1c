/* barrier.c: the world barrier, a dissemination barrier over flags in every
 * PE's internal area. In round r, PE i raises a flag on PE (i + 2^r) mod N
 * and waits for its own flag from PE (i - 2^r) mod N: ceil(log2 N) rounds of
 * one remote store and one local wait, no shared counter to fight over.
 *
 * Invariant: each flag has exactly one writer, which stores the barrier's
 * epoch (a per-PE count of barriers, equal on all PEs for the same barrier).
 * Epochs only grow, so a fast PE that already raised the next epoch's flag
 * still satisfies a slow PE's wait for the current one: no reset needed. */
#include "sync/barrier.h"

#include <stdint.h>

#include "core/route.h"
#include "core/runtime.h"
#include "sync/backoff.h"

#define BARRIER_MAX_ROUNDS 32

struct barrier_flags {
    _Alignas(64) uint64_t round[BARRIER_MAX_ROUNDS][8]; /* one cache line per round */
};

_Static_assert(sizeof(struct barrier_flags) <= SHOAL_INTERNAL_AREA, "barrier flags exceed the internal area");

static uint64_t barrier_epoch;

void shoal_barrier_init(void)
{
    barrier_epoch = 0;
    int local = 0;
    for (int pe = 0; pe < shoal_rt.n_pes; pe++) local += shoal_rt.peers[pe].direct;
    shoal_backoff_configure(shoal_rt.config.wait_spin, local);
}

static struct barrier_flags *flags_of(int pe)
{
    return (struct barrier_flags *)shoal_route_direct(SHOAL_SEG_HEAP, shoal_rt.internal_offset, pe);
}

void shoal_sync_all(void)
{
    const int n = shoal_rt.n_pes, me = shoal_rt.my_pe;
    const uint64_t epoch = ++barrier_epoch;
    struct barrier_flags *mine = flags_of(me);
    for (int r = 0, dist = 1; dist < n; r++, dist <<= 1) {
        struct barrier_flags *peer = flags_of((me + dist) % n);
        __atomic_store_n(&peer->round[r][0], epoch, __ATOMIC_RELEASE);
        struct shoal_backoff b = {0};
        while (__atomic_load_n(&mine->round[r][0], __ATOMIC_ACQUIRE) < epoch) shoal_backoff_wait(&b);
    }
}
