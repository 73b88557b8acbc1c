/* barrier.c: barriers over a group, by dissemination. In round r member i
 * signals member (i + 2^r) mod N and waits for the signal of member
 * (i - 2^r) mod N: ceil(log2 N) rounds of one remote update and one local
 * wait, and no shared counter to fight over.
 *
 * Each round word has exactly one remote writer. In epoch mode the writer
 * stores the barrier's epoch (a per-group count, equal on all members for
 * the same barrier); epochs only grow, so a fast member that already raised
 * the next epoch still satisfies a slow member's wait: no reset needed. In
 * counting mode (user pSync) the writer adds one and the owner subtracts
 * one after seeing it, so no signal is lost and the words end at zero. */
#include "sync/barrier.h"

#include "core/route.h"
#include "sync/backoff.h"
#include "sync/group.h"

void shoal_barrier_init(void)
{
    int local = 0;
    for (int pe = 0; pe < shoal_rt.n_pes; pe++) local += shoal_rt.peers[pe].direct;
    shoal_backoff_configure(shoal_rt.config.wait_spin, local);
}

static uint64_t *round_word(const struct shoal_group *g, int pe, int r)
{
    return shoal_route_direct(g->seg, g->sync_offset + (size_t)r * g->round_stride, pe);
}

uint64_t *shoal_group_aux(const struct shoal_group *g, int rank, size_t i)
{
    return shoal_route_direct(g->seg, g->aux_offset + i * sizeof(uint64_t), shoal_group_pe(g, rank));
}

void shoal_group_sync(struct shoal_group *g)
{
    const int n = g->size, me = g->rank, my_pe = shoal_group_pe(g, me);
    const uint64_t epoch = g->epoch ? ++*g->epoch : 0;
    for (int r = 0, dist = 1; dist < n; r++, dist <<= 1) {
        uint64_t *peer = round_word(g, shoal_group_pe(g, (me + dist) % n), r);
        uint64_t *mine = round_word(g, my_pe, r);
        struct shoal_backoff b = {0};
        if (g->epoch) {
            __atomic_store_n(peer, epoch, __ATOMIC_RELEASE);
            while (__atomic_load_n(mine, __ATOMIC_ACQUIRE) < epoch) shoal_backoff_wait(&b);
        } else {
            __atomic_fetch_add(peer, 1, __ATOMIC_RELEASE);
            while (__atomic_load_n(mine, __ATOMIC_ACQUIRE) == 0) shoal_backoff_wait(&b);
            __atomic_fetch_sub(mine, 1, __ATOMIC_ACQ_REL);
        }
    }
}
