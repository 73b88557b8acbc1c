/* peer.h: how collective algorithms reach a member's copy of a symmetric
 * buffer. A direct member is a pointer into its mapped segment; any other
 * goes through the transport's get/put, so the linear algorithms also run
 * where only RMA reaches a member. */
#ifndef SHOAL_COLL_PEER_H
#define SHOAL_COLL_PEER_H

#include <string.h>

#include "coll/coll.h"
#include "coll/hosts.h"
#include "core/route.h"
#include "sync/group.h"

/* Auxiliary words of a group (team slot or pSync) the collectives use:
 * ARRIVE (on rank 0) counts arrivals at a linear barrier, RELEASE (on each
 * member) is its release, COUNT publishes a member's collect size, SRC the
 * (segment, offset) of its source. In counting mode (pSync) every one is
 * back at zero when a call returns. */
enum { SHOAL_COLL_AUX_ARRIVE = 0, SHOAL_COLL_AUX_RELEASE = 1, SHOAL_COLL_AUX_COUNT = 2, SHOAL_COLL_AUX_SRC = 3 };
_Static_assert(SHOAL_COLL_AUX_SRC < SHOAL_GROUP_SET_AUX, "collective words must fit a user pSync");
/* The hierarchical barrier (hier.c): HOST_ARRIVE (on a host's leader)
 * counts its host's arrivals, HOST_RELEASE (on each member) is its release,
 * LEAD_ROUND + r is round r of the leaders' dissemination on an active set
 * (a team's are in its round lines). They fit a pSync, so active sets use
 * it too. */
enum { SHOAL_COLL_AUX_HOST_ARRIVE = 4, SHOAL_COLL_AUX_HOST_RELEASE = 5, SHOAL_COLL_AUX_LEAD_ROUND = 8 };
/* The ring all-reduce (ring.c, teams only): RING on a member is written
 * only by the member before it. */
enum { SHOAL_COLL_AUX_RING = 6 };
/* The pushed collectives' counted end (the pairwise alltoall past its
 * lines, alltoall.c, the pushed collect, and the linear broadcast, the only
 * one of them active sets run): LANDED on a member counts the blocks the
 * others wrote into its dest. */
enum { SHOAL_COLL_AUX_LANDED = 7 };
/* The flat barrier (sync.c, teams only): ARRIVED on a member holds the
 * epoch of the last barrier it arrived at, so that a waiter can tell which
 * members are missing (words 24 and up are free in a team: its leaders'
 * rounds sit in its round lines and the tree's chunks end before). */
enum { SHOAL_COLL_AUX_ARRIVED = 24 };
#define SHOAL_COLL_LEAD_ROUNDS 24
_Static_assert(SHOAL_COLL_AUX_LEAD_ROUND + SHOAL_COLL_LEAD_ROUNDS <= SHOAL_GROUP_SET_AUX,
               "the hierarchical barrier's words must fit a user pSync");
/* The tree algorithms (tree.c): UP + k on a member is written only by the
 * member 2^k positions after it, DOWN + k only by the one 2^k positions
 * before it. A team has room for all of them; in a pSync, UP uses the round
 * words and DOWN shares the leaders' round words (no call runs both), so an
 * active set may hold 2^24 members. */
/* Aux words 32 .. 63 of a team hold api/debug.c's heap and collective
 * records (the world team's are read remotely after a barrier, while the
 * next collective may already run): no collective word may sit there. */
enum { SHOAL_COLL_AUX_DEBUG = 32, SHOAL_COLL_AUX_DEBUG_END = 64 };
enum { SHOAL_COLL_AUX_UP = 96, SHOAL_COLL_AUX_DOWN = 64, SHOAL_COLL_AUX_SET_DOWN = SHOAL_COLL_AUX_LEAD_ROUND };
/* A team's broadcast over the tree (tree.c): CHUNK + c on a member is its
 * parent's flag for chunk c of the call. In a team the leaders' rounds sit
 * in its round lines, so the words an active set's pSync uses for them are
 * free there. */
enum { SHOAL_COLL_AUX_CHUNK = SHOAL_COLL_AUX_LEAD_ROUND };
#define SHOAL_COLL_TREE_CHUNKS 16
#define SHOAL_COLL_TREE_LEVELS 32
#define SHOAL_COLL_SET_TREE_LEVELS SHOAL_COLL_LEAD_ROUNDS

/* Publishes this member's source before the entry sync; readers see it
 * after the sync, and nobody reads it after the exit sync, when
 * shoal_coll_unpublish clears it (pSync must end as it began). The word is
 * never zero while published: segment + 1 sits in the top byte. */
static inline struct shoal_coll_buf shoal_coll_publish(const struct shoal_group *g, struct shoal_coll_buf src)
{
    __atomic_store_n(shoal_group_aux(g, SHOAL_COLL_AUX_SRC),
                     ((uint64_t)(src.seg + 1) << 56) | (uint64_t)src.off, __ATOMIC_RELAXED);
    src.published = 1;
    return src;
}

static inline void shoal_coll_unpublish(const struct shoal_group *g)
{
    __atomic_store_n(shoal_group_aux(g, SHOAL_COLL_AUX_SRC), 0, __ATOMIC_RELAXED);
}

/* Where member rank's copy of b starts. */
static inline struct shoal_coll_buf shoal_coll_member(const struct shoal_group *g, struct shoal_coll_buf b, int rank)
{
    if (!b.published || rank == g->rank) return b;
    uint64_t w = shoal_group_aux_load(g, rank, SHOAL_COLL_AUX_SRC);
    return (struct shoal_coll_buf){.seg = (int)(w >> 56) - 1, .off = (size_t)(w & ((UINT64_C(1) << 56) - 1)),
                                   .published = 1};
}

/* Member rank's copy of b, advanced by at bytes; NULL if not direct. */
static inline char *shoal_coll_at(const struct shoal_group *g, struct shoal_coll_buf b, int rank, size_t at)
{
    b = shoal_coll_member(g, b, rank);
    char *p = shoal_route_direct(b.seg, b.off, shoal_group_pe(g, rank));
    return p ? p + at : NULL;
}

/* Member rank's copy of b, looked up once: where b is published, each
 * lookup of a member reached through the transport is a round trip. */
static inline struct shoal_coll_buf shoal_coll_resolved(const struct shoal_group *g, struct shoal_coll_buf b, int rank)
{
    b = shoal_coll_member(g, b, rank);
    b.published = 0;
    return b;
}

/* Copies len bytes from member rank's b + at into dst: one round trip
 * through the transport, two where b is published. */
static inline shoal_status_t shoal_coll_get(const struct shoal_group *g, void *dst, struct shoal_coll_buf b,
                                            int rank, size_t at, size_t len)
{
    b = shoal_coll_resolved(g, b, rank);
    const char *p = shoal_coll_at(g, b, rank, at);
    if (p) {
        if (dst != p) memcpy(dst, p, len);
        return SHOAL_OK;
    }
    return shoal_rt.transport->get(NULL, shoal_group_pe(g, rank), (enum shoal_segment_id)b.seg, b.off + at, dst, len);
}

/* Copies len bytes from src into member rank's b + at. */
static inline shoal_status_t shoal_coll_put(const struct shoal_group *g, struct shoal_coll_buf b, int rank,
                                            size_t at, const void *src, size_t len)
{
    char *p = shoal_coll_at(g, b, rank, at);
    if (p) {
        if (p != src) memcpy(p, src, len);
        return SHOAL_OK;
    }
    return shoal_rt.transport->put(NULL, shoal_group_pe(g, rank), (enum shoal_segment_id)b.seg, b.off + at, src, len);
}

/* Copies nelems elements of elem bytes from elements from_step bytes apart
 * to elements to_step bytes apart (alltoalls' strides; a packed side has
 * step elem), in one memcpy where both sides are packed. */
static inline void shoal_coll_copy_elems(void *to, size_t to_step, const void *from, size_t from_step, size_t nelems,
                                         size_t elem)
{
    if (to_step == elem && from_step == elem) {
        memmove(to, from, nelems * elem);
        return;
    }
    for (size_t k = 0; k < nelems; k++) memcpy((char *)to + k * to_step, (const char *)from + k * from_step, elem);
}

/* Scratch of the combining loops: whole elements of every dtype, aligned
 * for all of them, small enough for any thread's stack. */
#define SHOAL_COLL_CHUNK 8192

/* Combines bytes [at, at+len) of the copies of b of ranks 0..last, in rank
 * order (so every member that does it gets the same bits), into out;
 * len is at most SHOAL_COLL_CHUNK. */
static inline shoal_status_t shoal_coll_combine_ranks(const struct shoal_group *g, struct shoal_coll_buf b, int last,
                                                      size_t at, size_t len, size_t es, shoal_coll_combine_fn combine,
                                                      void *out)
{
    _Alignas(64) unsigned char in[SHOAL_COLL_CHUNK];
    shoal_status_t st = shoal_coll_get(g, out, b, 0, at, len);
    for (int r = 1; r <= last && st == SHOAL_OK; r++) {
        const struct shoal_coll_buf mine = shoal_coll_resolved(g, b, r);
        const void *p = shoal_coll_at(g, mine, r, at);
        if (!p) {
            st = shoal_coll_get(g, in, mine, r, at, len);
            p = in;
        }
        combine(out, p, len / es);
    }
    return st;
}

#endif
