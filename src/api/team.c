/* team.c: team management. A split is collective over the parent team:
 * the members agree on a free synchronisation slot by reading each other's
 * slot bitmaps between two parent barriers (so nobody changes a bitmap
 * while another reads it), then the new members clear and claim the slot
 * and a third barrier publishes it. Both axes of a 2-D split are made in
 * one such round: all x-axis teams share one slot number, all y-axis teams
 * another, since teams of one axis are disjoint. */
#include <shmem.h>
#include <stdlib.h>
#include <string.h>

#include "api/check.h"
#include "api/profiling.h"
#include "core/internal.h"
#include "observe/observe.h"
#include "observe/blocked.h"
#include "sync/group.h"
#include "util/log.h"

/* Split teams alive on this PE, by slot (a slot holds one team at a time),
 * so shoal_api_team_known never follows an unknown handle. */
static struct shoal_team *live_teams[SHOAL_TEAM_SLOTS_MAX];

int shoal_api_team_known(shmem_team_t team)
{
    if (team == SHMEM_TEAM_WORLD || team == SHMEM_TEAM_SHARED) return shoal_team_valid(team);
    if (!team) return 0;
    for (int s = 0, limit = shoal_team_slot_limit(); s < limit; s++)
        if (__atomic_load_n(&live_teams[s], __ATOMIC_ACQUIRE) == team) return shoal_team_valid(team);
    return 0;
}

struct team_geometry {
    int start, stride, size; /* world PEs; size 0: this PE is not a member */
    const shmem_team_config_t *config;
    long mask;
};

static struct shoal_team *check_team(const char *call, shmem_team_t team)
{
    if (team == SHMEM_TEAM_INVALID) return NULL;
    if (SHOAL_UNLIKELY(!shoal_api_team_known(team)))
        shoal_api_fail(call, "team %p is not a valid team (never created, or already destroyed)", (void *)team);
    return team;
}

static void check_config_mask(const char *call, long mask, const shmem_team_config_t *config)
{
    if (mask & ~SHMEM_TEAM_NUM_CONTEXTS)
        shoal_api_fail(call, "config_mask 0x%lx has unknown bits (known: SHMEM_TEAM_NUM_CONTEXTS)", mask);
    if (mask && !config) shoal_api_fail(call, "config_mask 0x%lx is set but config is a null pointer", mask);
    if ((mask & SHMEM_TEAM_NUM_CONTEXTS) && config->num_contexts < 0)
        shoal_api_fail(call, "config num_contexts %d is negative", config->num_contexts);
}

/* Lowest slots free on every member of parent, count of them, written to
 * slots; returns how many were found. Between two parent barriers. */
static int agree_on_slots(struct shoal_team *parent, int count, int *slots)
{
    const int limit = shoal_team_slot_limit();
    int found = 0;
    for (int s = 0; s < limit && found < count; s++) {
        int free_everywhere = 1;
        for (int r = 0; r < parent->size && free_everywhere; r++)
            free_everywhere = !shoal_team_slot_used(shoal_team_world_pe(parent, r), s);
        if (free_everywhere) slots[found++] = s;
    }
    return found;
}

static struct shoal_team *new_team(const struct team_geometry *g, int slot)
{
    struct shoal_team *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->magic = SHOAL_TEAM_MAGIC;
    t->start = g->start;
    t->stride = g->stride;
    t->size = g->size;
    t->my_rank = shoal_team_rank_of(t, shoal_rt.my_pe);
    t->slot = slot;
    t->config_mask = g->mask;
    if (g->mask & SHMEM_TEAM_NUM_CONTEXTS) t->config = *g->config;
    memset(&shoal_internal_local()->team_sync[slot], 0, sizeof(struct shoal_team_sync));
    memset(&shoal_internal_local()->team_oneshot[slot], 0, sizeof(struct shoal_team_oneshot));
    shoal_team_slot_set(slot, 1);
    shoal_blocked_team_new(slot);
    __atomic_store_n(&live_teams[slot], t, __ATOMIC_RELEASE);
    return t;
}

/* Makes count teams (one per geometry; a geometry of size 0 yields
 * SHMEM_TEAM_INVALID here). Collective over parent. Returns 0 or -1.
 * valid 0 (arguments the standard calls invalid) makes no team and claims
 * no slot, but the members still pass the same three parent syncs: should
 * some of them have been given other arguments, none waits for the rest. */
static int make_teams(const char *call, struct shoal_team *parent, int count, const struct team_geometry *geo,
                      int valid, shmem_team_t *out)
{
    struct shoal_group pg;
    int slots[2];
    shoal_group_from_team(&pg, parent);
    shoal_group_sync(&pg);
    int found = valid ? agree_on_slots(parent, count, slots) : count;
    shoal_group_sync(&pg);
    int status = valid ? 0 : -1;
    for (int i = 0; i < count; i++) {
        out[i] = SHMEM_TEAM_INVALID;
        if (!valid || found < count) continue;
        if (geo[i].size == 0) continue;
        out[i] = new_team(&geo[i], slots[i]);
        if (!out[i]) status = -1;
    }
    if (found < count) {
        shoal_log_write(SHOAL_LOG_ERROR, NULL,
                        "%s: PE %d: no free team slot: the job holds the most teams SHMEM_TEAMS_MAX allows (%d); "
                        "destroy unused teams or raise SHMEM_TEAMS_MAX (at most %d)",
                        call, shoal_rt.my_pe, shoal_team_slot_limit(), SHOAL_TEAM_SLOTS_MAX);
        status = -1;
    }
    shoal_group_sync(&pg);
    return status;
}

/* Whether the triplet names size PEs of a parent of n: start + i*stride in
 * [0, n) for every i < size (the standard's valid triplet). The sequence is
 * monotone, so its ends decide. A negative stride runs downwards from start
 * (1.6: the new team lists those PEs in reverse); stride 0 names one PE,
 * valid with size 1 only (larger sizes are undefined in the standard, and
 * refused here). */
static int triplet_valid(int n, int start, int stride, int size)
{
    if (size < 1 || start < 0 || start >= n) return 0;
    if (size == 1) return 1;
    if (stride == 0) return 0;
    const long long last = (long long)start + (long long)(size - 1) * stride;
    return last >= 0 && last < n;
}

SHOAL_WEAK_ALIAS(shmem_team_split_strided);
int pshmem_team_split_strided(shmem_team_t parent_team, int start, int stride, int size,
                              const shmem_team_config_t *config, long config_mask, shmem_team_t *new_team_out)
{
    static const char *call = "shmem_team_split_strided";
    shoal_check_init(call);
    SHOAL_OBS_SPAN(sp, SHOAL_OBS_TEAM, call, -1, 0);
    if (!new_team_out) shoal_api_fail(call, "new_team is a null pointer");
    struct shoal_team *parent = check_team(call, parent_team);
    *new_team_out = SHMEM_TEAM_INVALID;
    if (!parent || parent->my_rank < 0) return -1;
    check_config_mask(call, config_mask, config);
    struct team_geometry g = {.size = 0};
    const int valid = triplet_valid(parent->size, start, stride, size);
    if (!valid) {
        if (parent->my_rank == 0)
            shoal_warn(NULL, "%s: start %d, stride %d, size %d do not name PEs of the parent team of %d PEs "
                       "(start + i*stride must lie in 0 to %d for every i < size, size >= 1, stride 0 only with "
                       "size 1): the new team is SHMEM_TEAM_INVALID", call, start, stride, size, parent->size,
                       parent->size - 1);
    } else {
        g = (struct team_geometry){.start = shoal_team_world_pe(parent, start),
                                   .stride = size > 1 ? parent->stride * stride : 1, .size = size,
                                   .config = config, .mask = config_mask};
        struct shoal_team probe = {.start = g.start, .stride = g.stride, .size = g.size};
        if (shoal_team_rank_of(&probe, shoal_rt.my_pe) < 0) g.size = 0;
    }
    return make_teams(call, parent, 1, &g, valid, new_team_out);
}

SHOAL_WEAK_ALIAS(shmem_team_split_2d);
int pshmem_team_split_2d(shmem_team_t parent_team, int xrange, const shmem_team_config_t *xaxis_config,
                         long xaxis_mask, shmem_team_t *xaxis_team, const shmem_team_config_t *yaxis_config,
                         long yaxis_mask, shmem_team_t *yaxis_team)
{
    static const char *call = "shmem_team_split_2d";
    shoal_check_init(call);
    SHOAL_OBS_SPAN(sp, SHOAL_OBS_TEAM, call, -1, 0);
    if (!xaxis_team || !yaxis_team) shoal_api_fail(call, "xaxis_team or yaxis_team is a null pointer");
    struct shoal_team *parent = check_team(call, parent_team);
    *xaxis_team = *yaxis_team = SHMEM_TEAM_INVALID;
    if (!parent || parent->my_rank < 0) return -1;
    check_config_mask(call, xaxis_mask, xaxis_config);
    check_config_mask(call, yaxis_mask, yaxis_config);
    shmem_team_t out[2];
    if (xrange < 1) {
        if (parent->my_rank == 0)
            shoal_warn(NULL, "%s: xrange %d is not positive: both new teams are SHMEM_TEAM_INVALID", call, xrange);
        const struct team_geometry none[2] = {{.size = 0}, {.size = 0}};
        return make_teams(call, parent, 2, none, 0, out);
    }
    const int n = parent->size, r = parent->my_rank;
    if (xrange > n) xrange = n;
    const int x0 = r / xrange * xrange, col = r % xrange;
    struct team_geometry geo[2] = {
        {.start = shoal_team_world_pe(parent, x0), .stride = parent->stride,
         .size = (n - x0 < xrange ? n - x0 : xrange), .config = xaxis_config, .mask = xaxis_mask},
        {.start = shoal_team_world_pe(parent, col), .stride = parent->stride * xrange,
         .size = (n - col + xrange - 1) / xrange, .config = yaxis_config, .mask = yaxis_mask}};
    int st = make_teams(call, parent, 2, geo, 1, out);
    *xaxis_team = out[0];
    *yaxis_team = out[1];
    return st;
}

SHOAL_WEAK_ALIAS(shmem_team_destroy);
void pshmem_team_destroy(shmem_team_t team)
{
    static const char *call = "shmem_team_destroy";
    shoal_check_init(call);
    SHOAL_OBS_SPAN(sp, SHOAL_OBS_TEAM, call, -1, 0);
    struct shoal_team *t = check_team(call, team);
    if (!t) return;
    if (t->predefined) shoal_api_fail(call, "SHMEM_TEAM_WORLD and SHMEM_TEAM_SHARED cannot be destroyed");
    /* Contexts made from the team go with it. */
    while (t->ctx_list) pshmem_ctx_destroy(t->ctx_list);
    struct shoal_group g;
    shoal_group_from_team(&g, t);
    shoal_rt.transport->quiet(NULL);
    shoal_group_sync(&g);
    shoal_team_slot_set(t->slot, 0);
    __atomic_store_n(&live_teams[t->slot], NULL, __ATOMIC_RELEASE);
    t->magic = 0;
    free(t->coll_layout);
    free(t);
}

SHOAL_WEAK_ALIAS(shmem_team_my_pe);
int pshmem_team_my_pe(shmem_team_t team)
{
    shoal_check_init("shmem_team_my_pe");
    struct shoal_team *t = check_team("shmem_team_my_pe", team);
    return t ? t->my_rank : -1;
}

SHOAL_WEAK_ALIAS(shmem_team_n_pes);
int pshmem_team_n_pes(shmem_team_t team)
{
    shoal_check_init("shmem_team_n_pes");
    struct shoal_team *t = check_team("shmem_team_n_pes", team);
    return t ? t->size : -1;
}

SHOAL_WEAK_ALIAS(shmem_team_get_config);
int pshmem_team_get_config(shmem_team_t team, long config_mask, shmem_team_config_t *config)
{
    static const char *call = "shmem_team_get_config";
    shoal_check_init(call);
    struct shoal_team *t = check_team(call, team);
    if (!t) return -1;
    if (config_mask & ~SHMEM_TEAM_NUM_CONTEXTS)
        shoal_api_fail(call, "config_mask 0x%lx has unknown bits (known: SHMEM_TEAM_NUM_CONTEXTS)", config_mask);
    if (!config) shoal_api_fail(call, "config is a null pointer");
    if (config_mask & SHMEM_TEAM_NUM_CONTEXTS) config->num_contexts = t->config.num_contexts;
    return 0;
}

SHOAL_WEAK_ALIAS(shmem_team_translate_pe);
int pshmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team)
{
    static const char *call = "shmem_team_translate_pe";
    shoal_check_init(call);
    struct shoal_team *src = check_team(call, src_team), *dst = check_team(call, dest_team);
    if (!src || !dst || src_pe < 0 || src_pe >= src->size) return -1;
    return shoal_team_rank_of(dst, shoal_team_world_pe(src, src_pe));
}

SHOAL_WEAK_ALIAS(shmem_team_ptr);
void *pshmem_team_ptr(shmem_team_t team, const void *dest, int pe)
{
    static const char *call = "shmem_team_ptr";
    shoal_check_init(call);
    struct shoal_team *t = check_team(call, team);
    if (!t || pe < 0 || pe >= t->size) return NULL;
    return pshmem_ptr(dest, shoal_team_world_pe(t, pe));
}
