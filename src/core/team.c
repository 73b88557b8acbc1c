/* team.c: the predefined teams and the team slot bitmap. Splits are
 * orchestrated by the public layer (api/team.c), which needs barriers. */
#include "core/team.h"

#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "core/route.h"
#include "core/runtime.h"

struct shoal_team shmem_team_world_object;
struct shoal_team shmem_team_shared_object;

static void init_team(struct shoal_team *t, int start, int stride, int size, int slot)
{
    memset(t, 0, sizeof *t);
    t->magic = SHOAL_TEAM_MAGIC;
    t->start = start;
    t->stride = stride;
    t->size = size;
    t->my_rank = shoal_team_rank_of(t, shoal_rt.my_pe);
    t->slot = slot;
    t->predefined = 1;
    shoal_team_slot_set(slot, 1);
}

/* SHMEM_TEAM_SHARED: the PEs this PE reaches by load/store (its host's,
 * unless the fabric is forced). Teams are strided; hosts whose PEs are not
 * evenly spaced get a team of this PE alone, which the standard allows. */
static void shared_members(int *start, int *stride, int *size)
{
    int first = -1, second = -1, count = 0, last = -1, even = 1;
    for (int pe = 0; pe < shoal_rt.n_pes; pe++) {
        if (!shoal_rt.peers[pe].direct) continue;
        if (first < 0) first = pe;
        else if (second < 0) second = pe;
        else if (pe - last != second - first) even = 0;
        last = pe;
        count++;
    }
    if (!even || count == 0) {
        *start = shoal_rt.my_pe, *stride = 1, *size = 1;
        return;
    }
    *start = first, *stride = second < 0 ? 1 : second - first, *size = count;
}

void shoal_team_init_predefined(void)
{
    memset(shoal_internal_local()->team_slots_used, 0, sizeof shoal_internal_local()->team_slots_used);
    init_team(&shmem_team_world_object, 0, 1, shoal_rt.n_pes, 0);
    int start, stride, size;
    shared_members(&start, &stride, &size);
    init_team(&shmem_team_shared_object, start, stride, size, 1);
}

void shoal_team_fini_predefined(void)
{
    shmem_team_world_object.magic = 0;
    shmem_team_shared_object.magic = 0;
    free(shmem_team_world_object.coll_layout);
    free(shmem_team_shared_object.coll_layout);
    shmem_team_world_object.coll_layout = shmem_team_shared_object.coll_layout = NULL;
}

/* The stride may be negative (a split with a negative stride lists the
 * parent's PEs in reverse) or 0 (a team of one PE): rank = (pe - start) /
 * stride must be a whole number in [0, size). */
int shoal_team_rank_of(const struct shoal_team *t, int pe)
{
    int d = pe - t->start;
    if (t->stride == 0) return d == 0 && t->size > 0 ? 0 : -1;
    if (d % t->stride != 0) return -1;
    int rank = d / t->stride;
    return rank >= 0 && rank < t->size ? rank : -1;
}

int shoal_team_slot_used(int pe, int slot)
{
    const size_t word = offsetof(struct shoal_internal_area, team_slots_used) + (size_t)(slot / 64) * sizeof(uint64_t);
    const size_t off = shoal_internal_offset_of(word);
    const uint64_t *bits = shoal_route_direct(SHOAL_SEG_HEAP, off, pe);
    uint64_t v = 0;
    if (bits)
        v = __atomic_load_n(bits, __ATOMIC_ACQUIRE);
    else if (shoal_rt.transport->amo(NULL, pe, SHOAL_SEG_HEAP, off, 8, SHOAL_AMO_FETCH, 0, 0, &v) != SHOAL_OK)
        return 1; /* unreachable: never pick that slot */
    return (int)((v >> (slot % 64)) & 1u);
}

void shoal_team_slot_set(int slot, int used)
{
    uint64_t *bits = &shoal_internal_local()->team_slots_used[slot / 64];
    uint64_t bit = UINT64_C(1) << (slot % 64);
    if (used)
        __atomic_fetch_or(bits, bit, __ATOMIC_RELEASE);
    else
        __atomic_fetch_and(bits, ~bit, __ATOMIC_RELEASE);
}

int shoal_team_slot_limit(void)
{
    long max = shoal_rt.config.teams_max;
    if (max > SHOAL_TEAM_SLOTS_MAX) max = SHOAL_TEAM_SLOTS_MAX;
    if (max < 2) max = 2;
    return (int)max;
}
