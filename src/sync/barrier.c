/* barrier.c: barriers over a group, by dissemination. In round r member i
 * signals member (i + 2^r) mod N and waits for the signal of member
 * (i - 2^r) mod N: ceil(log2 N) rounds of one remote update and one local
 * wait, and no shared counter to fight over.
 *
 * Each round word has exactly one remote writer. In epoch mode the writer
 * stores the barrier's epoch (a per-group count, equal on all members for
 * the same barrier) into one of two words of the round, by the parity of
 * the team's count of these and the hierarchical barriers (coll/hier.c),
 * and the owner waits for exactly that epoch: the writer reaches counted
 * barrier k+2, and writes that word again, only after everyone arrived at
 * k+1, so after the owner left k. An exact wait
 * lets the store land in pieces (sync/word.h, flag): over a fabric that
 * keeps writes in order it is a write the target need not answer. In
 * counting mode (user pSync) the writer adds one and the owner subtracts
 * one after seeing it, so no signal is lost and the words end at zero. */
#include "sync/barrier.h"

#include "core/internal.h"
#include "core/route.h"
#include "sync/backoff.h"
#include "sync/group.h"
#include "sync/wake.h"
#include "sync/word.h"

#include <stdio.h>

void shoal_barrier_init(void)
{
    shoal_backoff_configure(shoal_rt.config.wait_spin, shoal_rt.config.wait_policy, shoal_rt.machine_pes);
    shoal_wake_setup();
    shoal_backoff_progress = shoal_rt.fabric ? shoal_rt.transport->progress : NULL;
    shoal_backoff_rest = shoal_rt.fabric && shoal_rt.transport->rest ? shoal_rt.transport->rest : shoal_backoff_progress;
    shoal_backoff_progress_optional =
        shoal_rt.fabric && shoal_rt.transport->serves_itself && shoal_rt.transport->serves_itself();
    shoal_backoff_incoming = shoal_rt.fabric ? shoal_rt.transport->incoming : NULL;
    shoal_backoff_threads_busy = shoal_rt.fabric ? shoal_rt.transport->threads_busy : NULL;
}

void shoal_word_fail(const char *what, int pe, shoal_status_t st)
{
    char reason[160];
    snprintf(reason, sizeof reason, "%s on PE %d failed: %s", what, pe, shoal_status_str(st));
    shoal_runtime_abort(1, reason);
}

static size_t round_offset(const struct shoal_group *g, int r) { return g->sync_offset + (size_t)r * g->round_stride; }
static size_t aux_offset(const struct shoal_group *g, size_t i) { return g->aux_offset + i * sizeof(uint64_t); }

uint64_t *shoal_group_aux(const struct shoal_group *g, size_t i)
{
    return shoal_route_direct(g->seg, aux_offset(g, i), shoal_group_pe(g, g->rank));
}

uint64_t shoal_group_aux_load(const struct shoal_group *g, int rank, size_t i)
{
    return shoal_word_load(g->seg, aux_offset(g, i), shoal_group_pe(g, rank));
}

void shoal_group_aux_store(const struct shoal_group *g, int rank, size_t i, uint64_t v)
{
    shoal_word_signal(g->seg, aux_offset(g, i), shoal_group_pe(g, rank), SHOAL_AMO_SET, v);
}

uint64_t shoal_group_aux_add(const struct shoal_group *g, int rank, size_t i, uint64_t v)
{
    return shoal_word_add(g->seg, aux_offset(g, i), shoal_group_pe(g, rank), v);
}

uint64_t shoal_group_aux_add_host(const struct shoal_group *g, int rank, size_t i, uint64_t v, int all_direct)
{
    if (!all_direct) return shoal_group_aux_add(g, rank, i, v);
    return shoal_word_add_direct(g->seg, aux_offset(g, i), shoal_group_pe(g, rank), v);
}

/* Signals round word off on pe: stores v (epoch mode) or adds one; only
 * the barrier's first signal through the transport fences (sync/word.h). */
static void round_signal(const struct shoal_group *g, size_t off, int pe, uint64_t v, int *fenced)
{
    if (g->epoch)
        shoal_word_flag_fenced(g->seg, 0, NULL, 0, g->seg, off, pe, v, fenced);
    else
        shoal_word_signal_fenced(g->seg, off, pe, SHOAL_AMO_ADD, 1, fenced);
}

_Static_assert(sizeof(((struct shoal_team_sync *)0)->round[0]) >= 4 * sizeof(uint64_t),
               "a team's round line holds a word of each parity for this barrier and coll/hier.c's");

void shoal_group_sync(struct shoal_group *g)
{
    const int n = g->size, me = g->rank, my_pe = shoal_group_pe(g, me);
    const uint64_t epoch = g->epoch ? ++*g->epoch : 0;
    /* Epoch mode: the word of this barrier's parity. */
    const size_t parity = g->epoch ? (size_t)(++*g->syncs & 1) * sizeof(uint64_t) : 0;
    int fenced = 0;
    for (int r = 0, dist = 1; dist < n; r++, dist <<= 1) {
        const int peer = shoal_group_pe(g, (me + dist) % n);
        const size_t off = round_offset(g, r) + parity;
        const uint64_t *mine = shoal_route_direct(g->seg, off, my_pe);
        struct shoal_backoff b = {.waits_on = shoal_group_pe(g, (me - dist % n + n) % n) + 1};
        round_signal(g, off, peer, epoch, &fenced);
        if (g->epoch) {
            while (__atomic_load_n(mine, __ATOMIC_ACQUIRE) != epoch) shoal_backoff_wait(&b);
        } else {
            while (__atomic_load_n(mine, __ATOMIC_ACQUIRE) == 0) shoal_backoff_wait(&b);
            shoal_word_add(g->seg, off, my_pe, (uint64_t)-1);
        }
        shoal_backoff_end(&b);
    }
}
