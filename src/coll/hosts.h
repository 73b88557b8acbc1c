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
    int n;      /* members */
    int hosts;  /* hosts spanned */
    int pos;    /* this member's position */
    int host;   /* this member's host (index into start) */
    int *order; /* order[pos] = group rank */
    int *start; /* host h holds positions start[h] .. start[h+1]-1 */
    int *heap;
    int small[2 * SHOAL_COLL_HOSTS_SMALL + 1];
};

/* Orders g's members; SHOAL_ERR_NOMEM only past SHOAL_COLL_HOSTS_SMALL
 * members. */
shoal_status_t shoal_coll_hosts_init(struct shoal_coll_hosts *h, const struct shoal_group *g);
void shoal_coll_hosts_fini(struct shoal_coll_hosts *h);
/* How many hosts g's members span; the same on every member (node indices
 * are known alike everywhere). */
int shoal_coll_group_hosts(const struct shoal_group *g);
/* Position of group rank r. */
int shoal_coll_hosts_pos(const struct shoal_coll_hosts *h, int r);
/* Whether every member of this member's host reaches its memory directly,
 * so that their stores ring its bell (sync/wake.h). */
int shoal_coll_host_direct(const struct shoal_coll_hosts *h, const struct shoal_group *g);

#endif
