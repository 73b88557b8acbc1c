/* group.c: groups of a team and of an active set. */
#include "sync/group.h"

#include "core/internal.h"
#include "core/team.h"

void shoal_group_from_team(struct shoal_group *g, struct shoal_team *t)
{
    const size_t slot = offsetof(struct shoal_internal_area, team_sync) + (size_t)t->slot * sizeof(struct shoal_team_sync);
    *g = (struct shoal_group){
        .start = t->start, .stride = t->stride, .size = t->size, .rank = t->my_rank, .seg = SHOAL_SEG_HEAP,
        .sync_offset = shoal_internal_offset_of(slot + offsetof(struct shoal_team_sync, round)),
        .round_stride = sizeof(((struct shoal_team_sync *)0)->round[0]),
        .aux_offset = shoal_internal_offset_of(slot + offsetof(struct shoal_team_sync, aux)),
        .epoch = &t->epoch, .syncs = &t->syncs, .oneshot = &t->oneshot, .oneshot_bcast = &t->oneshot_bcast,
        .oneshot_offset = shoal_internal_offset_of(offsetof(struct shoal_internal_area, team_oneshot) +
                                                   (size_t)t->slot * sizeof(struct shoal_team_oneshot)),
        .layout = &t->coll_layout};
}

void shoal_group_from_active_set(struct shoal_group *g, int start, int stride, int size, int rank, int seg,
                                 size_t psync_offset)
{
    *g = (struct shoal_group){
        .start = start, .stride = stride, .size = size, .rank = rank, .seg = seg,
        .sync_offset = psync_offset, .round_stride = sizeof(long),
        .aux_offset = psync_offset + SHOAL_GROUP_SET_ROUNDS * sizeof(long), .epoch = NULL};
}
