/* hosts.h: a group's members ordered by host, for the algorithms that keep
 * traffic on a host where they can (hier.c, tree.c). Hosts come in the
 * order of their node index and members of a host in rank order, so every
 * member derives the same order from what all of them know (the node of
 * each PE), and the order does not depend on a call's arguments. */
#ifndef SHOAL_COLL_HOSTS_H
#define SHOAL_COLL_HOSTS_H

#include "sync/group.h"
#include "util/status.h"

#define SHOAL_COLL_HOSTS_SMALL 64

struct shoal_coll_hosts {
    int n;           /* members */
    int hosts;       /* hosts spanned */
    int pos;         /* this member's position */
    int host;        /* this member's host (index into start) */
    int in_order;    /* order[pos] == pos: members come in host order */
    int host_direct; /* every member of this host reaches its memory directly, so
                        their stores ring its bell (sync/wake.h) */
    int all_direct;  /* every member reaches every other's memory directly */
    int *order;      /* order[pos] = group rank */
    int *start;      /* host h holds positions start[h] .. start[h+1]-1 */
    int *heap;
    int small[2 * SHOAL_COLL_HOSTS_SMALL + 1];
};

/* Orders g's members. A team's order is made at its first call and kept
 * (order and start then point into the team's copy), and so is that of
 * each of the job's first 16 active sets: each call otherwise walked every
 * member's entry of the peer table, several times, which at scale costs
 * more than the barrier's messages (docs/scaling.md). Later active sets
 * are ordered per call. SHOAL_ERR_NOMEM only past SHOAL_COLL_HOSTS_SMALL
 * members, or for a team's first call. */
shoal_status_t shoal_coll_hosts_init(struct shoal_coll_hosts *h, const struct shoal_group *g);
void shoal_coll_hosts_fini(struct shoal_coll_hosts *h);
/* How many hosts g's members span; the same on every member (node indices
 * are known alike everywhere). */
int shoal_coll_group_hosts(const struct shoal_group *g);
/* Position of group rank r. */
int shoal_coll_hosts_pos(const struct shoal_coll_hosts *h, int r);
/* Whether every member of g reaches every other's memory directly (one
 * host, shared memory): kept with the order where that is kept. */
int shoal_coll_all_direct(const struct shoal_group *g);

#endif
