/* hier.c: the hierarchical barrier, for groups whose members share hosts.
 *
 * The members of a host meet at its leader (its first member in host
 * order, hosts.h) as in the linear barrier: each adds one to the leader's
 * HOST_ARRIVE word and waits on its own HOST_RELEASE word; the leader waits
 * until HOST_ARRIVE holds the host's other members, takes them back off,
 * runs a dissemination barrier with the other hosts' leaders (LEAD_ROUND
 * words, one round per doubling of the distance between hosts), then
 * releases its host. On-host traffic stays in shared memory and only
 * ceil(log2 hosts) rounds cross the fabric, instead of ceil(log2 members).
 *
 * Why it is a barrier: a leader leaves the leaders' dissemination only
 * after every leader entered it, and a leader enters only after all of its
 * host arrived; members leave only when their leader releases them.
 * Words: HOST_ARRIVE is the linear barrier's counter (the leader takes the
 * arrivals back before releasing anyone, and nobody arrives again before
 * being released, so it only holds one barrier's arrivals); every other
 * word has one writer, fixed for the group (the leader of the host, or the
 * leader 2^r hosts before). In epoch mode writers store the barrier's
 * epoch, which only grows; the leaders' round words are two per round in
 * the team's round lines, chosen by the parity of the team's barrier count
 * and awaited for the exact epoch, as the dissemination's (sync/barrier.c
 * says why that is safe, and lets them be unanswered writes). In counting
 * mode (pSync) they add one and the owner takes it back, as in
 * sync/barrier.c. Only a host's members update
 * its HOST_ words: where they all share memory those adds are CPU atomics,
 * even over a fabric that applies atomics (2 namespace hosts x 2 PEs over
 * libfabric: barrier 264-342 -> 146-165 us). */
#include "coll/coll.h"
#include "coll/hosts.h"
#include "coll/peer.h"
#include "core/runtime.h"
#include "sync/backoff.h"
#include "sync/word.h"

/* Waits until this member's word at off signals (writer, a group rank, is
 * the one that does): for epoch or more (exact: for exactly epoch), or in
 * counting mode for one, which it consumes. */
static void await_word(const struct shoal_group *g, size_t off, uint64_t epoch, int exact, int writer,
                       int host_direct)
{
    const uint64_t *w = shoal_route_direct(g->seg, off, shoal_group_pe(g, g->rank));
    struct shoal_backoff b = {.waits_on = shoal_group_pe(g, writer) + 1};
    if (g->epoch) {
        while (exact ? __atomic_load_n(w, __ATOMIC_ACQUIRE) != epoch : __atomic_load_n(w, __ATOMIC_ACQUIRE) < epoch)
            shoal_backoff_wait(&b);
    } else {
        while (__atomic_load_n(w, __ATOMIC_ACQUIRE) == 0) shoal_backoff_wait(&b);
        const int me = shoal_group_pe(g, g->rank);
        if (host_direct)
            shoal_word_add_direct(g->seg, off, me, (uint64_t)-1);
        else
            shoal_word_add(g->seg, off, me, (uint64_t)-1);
    }
    shoal_backoff_end(&b);
}

static size_t aux_word(const struct shoal_group *g, size_t i) { return g->aux_offset + i * sizeof(uint64_t); }

/* The leaders' round r word: in epoch mode word 2 + parity of the team's
 * round line r (words 0 and 1 are the dissemination's), else an aux word. */
static size_t lead_word(const struct shoal_group *g, int r, size_t parity)
{
    if (g->epoch) return g->sync_offset + (size_t)r * g->round_stride + (2 + parity) * sizeof(uint64_t);
    return aux_word(g, SHOAL_COLL_AUX_LEAD_ROUND + (size_t)r);
}

/* The leader's release of a member of its host. */
static void release_word(const struct shoal_group *g, int rank, uint64_t epoch, int host_direct)
{
    if (g->epoch)
        shoal_group_aux_store(g, rank, SHOAL_COLL_AUX_HOST_RELEASE, epoch);
    else
        shoal_group_aux_add_host(g, rank, SHOAL_COLL_AUX_HOST_RELEASE, 1, host_direct);
}

/* A leaders' round signal; only a leader's first signal through the
 * transport fences (sync/word.h). */
static void lead_signal(const struct shoal_group *g, int rank, size_t off, uint64_t epoch, int *fenced)
{
    if (g->epoch)
        shoal_word_flag_fenced(g->seg, 0, NULL, 0, g->seg, off, shoal_group_pe(g, rank), epoch, fenced);
    else
        shoal_word_signal_fenced(g->seg, off, shoal_group_pe(g, rank), SHOAL_AMO_ADD, 1, fenced);
}

int shoal_coll_hier_useful(const struct shoal_group *g)
{
    const int hosts = shoal_coll_group_hosts(g);
    return hosts > 1 && hosts < g->size;
}

void shoal_coll_barrier_hier(struct shoal_group *g)
{
    const uint64_t epoch = g->epoch ? ++*g->epoch : 0;
    const size_t parity = g->epoch ? (size_t)(++*g->syncs & 1) : 0;
    if (g->size == 1) return;
    struct shoal_coll_hosts h;
    if (shoal_coll_hosts_init(&h, g) != SHOAL_OK) shoal_runtime_abort(1, "out of memory in a barrier");
    if (h.hosts > 1 << SHOAL_COLL_LEAD_ROUNDS) shoal_runtime_abort(1, "a barrier over more than 2^24 hosts");
    const int first = h.start[h.host], members = h.start[h.host + 1] - first, leader = h.order[first];
    const int host_direct = h.host_direct;
    if (g->rank != leader) {
        shoal_group_aux_add_host(g, leader, SHOAL_COLL_AUX_HOST_ARRIVE, 1, host_direct);
        await_word(g, aux_word(g, SHOAL_COLL_AUX_HOST_RELEASE), epoch, 0, leader, host_direct);
        shoal_coll_hosts_fini(&h);
        return;
    }
    const uint64_t *arrive = shoal_group_aux(g, SHOAL_COLL_AUX_HOST_ARRIVE);
    struct shoal_backoff b = {.writers_direct = host_direct};
    SHOAL_BACKOFF_WHILE(&b, __atomic_load_n(arrive, __ATOMIC_ACQUIRE) < (uint64_t)(members - 1));
    if (members > 1)
        shoal_group_aux_add_host(g, g->rank, SHOAL_COLL_AUX_HOST_ARRIVE, (uint64_t)-(int64_t)(members - 1),
                                 host_direct);
    int fenced = 0;
    for (int r = 0, dist = 1; dist < h.hosts; r++, dist <<= 1) {
        lead_signal(g, h.order[h.start[(h.host + dist) % h.hosts]], lead_word(g, r, parity), epoch, &fenced);
        const int from = h.order[h.start[(h.host - dist % h.hosts + h.hosts) % h.hosts]];
        /* Leaders of other hosts write it through the fabric. */
        await_word(g, lead_word(g, r, parity), epoch, 1, from, 0);
    }
    for (int p = first + 1; p < first + members; p++) release_word(g, h.order[p], epoch, host_direct);
    shoal_coll_hosts_fini(&h);
}
