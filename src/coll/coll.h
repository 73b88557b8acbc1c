/* coll.h: the collectives layer. Every collective runs over a shoal_group
 * (a team, or a deprecated active set with the user's pSync) and moves
 * bytes between symmetric buffers named by (segment, offset), so the same
 * code serves every typed wrapper and both forms.
 *
 * Invariant shared by every algorithm here: a collective opens with an
 * entry sync (every member is inside the call, so sources are final and
 * dests are no longer read by anyone's previous call) and closes with an
 * exit sync (every remote read of a source and every remote write of a
 * dest of this call is done). No access of one call crosses its own syncs,
 * so collectives may run back to back on a team with nothing in between.
 * The direct algorithms need every member load/store reachable; the linear
 * ones move data through get/put that fall back to the transport. */
#ifndef SHOAL_COLL_COLL_H
#define SHOAL_COLL_COLL_H

#include <stddef.h>
#include <stdint.h>

#include "util/coll_setting.h"
#include "util/status.h"

struct shoal_group;

/* A symmetric buffer: the same (segment, offset) on every member, unless
 * `published`: then each member's copy is where that member said it is
 * (shoal_coll_publish). Sources are published: the standard lets every PE
 * pass its own symmetric source, only dest is one object everywhere. */
struct shoal_coll_buf {
    int seg;
    size_t off;
    int published;
};

/* Element types and operators of reductions and scans (same order as the
 * public layer's enum shoal_dtype and enum shoal_red_op). */
enum shoal_coll_dtype {
    SHOAL_COLL_I8, SHOAL_COLL_I16, SHOAL_COLL_I32, SHOAL_COLL_I64,
    SHOAL_COLL_U8, SHOAL_COLL_U16, SHOAL_COLL_U32, SHOAL_COLL_U64,
    SHOAL_COLL_FLOAT, SHOAL_COLL_DOUBLE, SHOAL_COLL_LONGDOUBLE,
    SHOAL_COLL_COMPLEXF, SHOAL_COLL_COMPLEXD,
    SHOAL_COLL_DTYPES
};
enum shoal_coll_op {
    SHOAL_COLL_AND, SHOAL_COLL_OR, SHOAL_COLL_XOR, SHOAL_COLL_MIN, SHOAL_COLL_MAX, SHOAL_COLL_SUM,
    SHOAL_COLL_PROD, SHOAL_COLL_OPS
};

/* acc[i] = acc[i] op in[i] for i < n. */
typedef void (*shoal_coll_combine_fn)(void *acc, const void *in, size_t n);

/* Bytes of one element of dtype (0 for an unknown dtype). */
size_t shoal_coll_dtype_size(int dtype);
/* The kernel of (dtype, op), or NULL when the standard has no such
 * reduction (bitwise on floats, min/max on complex, unknown values). */
shoal_coll_combine_fn shoal_coll_kernel(int dtype, int op);
const char *shoal_coll_dtype_name(int dtype);
const char *shoal_coll_op_name(int op);

/* Algorithm choice (algo.c); the kinds and algorithms are named in
 * util/coll_setting.h, with the setting that forces them. */

/* Whether a reduction or broadcast of bytes can run one-shot on g: a team
 * (not an active set) of at most SHOAL_ONESHOT_MEMBERS direct members and a
 * vector of at most SHOAL_ONESHOT_BYTES. */
int shoal_coll_oneshot_fits(const struct shoal_group *g, size_t bytes);

/* Whether the tree algorithm (tree.c) of kind (broadcast or reduce) can
 * run on g: teams always, active sets only for reduce. */
int shoal_coll_tree_fits(const struct shoal_group *g, enum shoal_coll_kind kind);
/* Whether g spans hosts and some host holds several of its members: where
 * the hierarchical barrier (hier.c) saves fabric rounds. */
int shoal_coll_hier_useful(const struct shoal_group *g);

/* Parses SHMEM_COLL_ALGORITHM once; on a bad value writes one line to err
 * and returns SHOAL_ERR_INVAL (every later call returns the same). */
shoal_status_t shoal_coll_setup(char *err, size_t errlen);
/* The algorithm for one call: the forced one if the setting names one this
 * collective has, else chosen by size and membership. */
enum shoal_coll_algo shoal_coll_choose(enum shoal_coll_kind kind, const struct shoal_group *g, size_t bytes);

/* Barriers (sync.c). shoal_coll_barrier is a barrier of the chosen
 * algorithm; it orders every earlier store of this PE (non-temporal ones
 * included) before any member leaves it. */
void shoal_coll_barrier(struct shoal_group *g);
/* The barrier of SHMEM_TEAM_WORLD (shmem_sync_all, barrier_all, the heap
 * calls), with the chosen algorithm. */
void shoal_coll_sync_all(void);
/* The hierarchical barrier (hier.c); no fence of its own. */
void shoal_coll_barrier_hier(struct shoal_group *g);

/* Data movement (broadcast.c, collect.c, alltoall.c). Sizes are in bytes;
 * root is a group rank. With update_root 0 the root's dest is left alone
 * (the active-set broadcast). */
shoal_status_t shoal_coll_broadcast(struct shoal_group *g, struct shoal_coll_buf dest, struct shoal_coll_buf src,
                                    size_t bytes, int root, int update_root);
/* Each member contributes bytes (which may differ between members);
 * dest receives the contributions concatenated in rank order. Returns
 * SHOAL_ERR_RANGE on every member, after the entry sync, when the total
 * does not fit in dest's segment. */
shoal_status_t shoal_coll_collect(struct shoal_group *g, struct shoal_coll_buf dest, struct shoal_coll_buf src,
                                  size_t bytes);
shoal_status_t shoal_coll_fcollect(struct shoal_group *g, struct shoal_coll_buf dest, struct shoal_coll_buf src,
                                   size_t bytes);
/* Block j of nelems elements of member i's source lands as block i of
 * member j's dest; element k of a block sits at k*sst (source) and k*dst
 * (dest) elements from the block's first one, blocks nelems*sst and
 * nelems*dst elements apart. Contiguous alltoall is dst = sst = 1. */
shoal_status_t shoal_coll_alltoalls(struct shoal_group *g, struct shoal_coll_buf dest, struct shoal_coll_buf src,
                                    ptrdiff_t dst, ptrdiff_t sst, size_t nelems, size_t elem);

/* Reductions and sum scans (reduce.c, scan.c); dest may equal src. */
/* The one-shot broadcast and reduction (oneshot.c), when
 * shoal_coll_oneshot_fits. */
shoal_status_t shoal_coll_broadcast_oneshot(struct shoal_group *g, struct shoal_coll_buf dest,
                                            struct shoal_coll_buf src, size_t bytes, int root, int update_root);
/* The one-shot fcollect, when shoal_coll_fcollect_oneshot_fits: blocks of
 * 1 to SHOAL_ONESHOT_BYTES bytes on a team where one-shot reductions fit. */
int shoal_coll_fcollect_oneshot_fits(const struct shoal_group *g, size_t block);
shoal_status_t shoal_coll_fcollect_oneshot(struct shoal_group *g, struct shoal_coll_buf dest,
                                          struct shoal_coll_buf src, size_t bytes);
shoal_status_t shoal_coll_reduce_oneshot(struct shoal_group *g, struct shoal_coll_buf dest, struct shoal_coll_buf src,
                                         size_t nelems, size_t es, shoal_coll_combine_fn combine);
/* The binomial-tree broadcast and reduction (tree.c), when
 * shoal_coll_tree_fits. */
shoal_status_t shoal_coll_broadcast_tree(struct shoal_group *g, struct shoal_coll_buf dest, struct shoal_coll_buf src,
                                         size_t bytes, int root, int update_root);
shoal_status_t shoal_coll_reduce_tree(struct shoal_group *g, struct shoal_coll_buf dest, struct shoal_coll_buf src,
                                      size_t nelems, size_t es, shoal_coll_combine_fn combine);
/* The recursive-doubling reduction of small vectors (rd.c): teams of at
 * most 2^16 members, vectors of at most SHOAL_RD_BYTES. */
int shoal_coll_rd_fits(const struct shoal_group *g, size_t bytes);
shoal_status_t shoal_coll_reduce_rd(struct shoal_group *g, struct shoal_coll_buf dest, struct shoal_coll_buf src,
                                    size_t nelems, size_t es, shoal_coll_combine_fn combine);
/* Recursive doubling of acc (bytes) among n participants, this one being
 * me, participant i being group rank rank_of[i] (rank i when rank_of is
 * NULL), in the lines of set p with tag (lines.h); acc ends as the
 * combination of all, in participant order. */
shoal_status_t shoal_coll_rd_among(struct shoal_group *g, uint64_t tag, int p, const int *rank_of, int n, int me,
                                   unsigned char *acc, size_t bytes, size_t es, shoal_coll_combine_fn combine);
/* All-reduce and fcollect of small vectors across hosts, one leader per
 * host (hier_small.c): teams whose hosts hold several members; vectors,
 * and each host's blocks together, of at most SHOAL_RD_BYTES. */
int shoal_coll_hier_reduce_fits(const struct shoal_group *g, size_t bytes);
int shoal_coll_hier_fcollect_fits(const struct shoal_group *g, size_t block);
shoal_status_t shoal_coll_reduce_hier(struct shoal_group *g, struct shoal_coll_buf dest, struct shoal_coll_buf src,
                                      size_t nelems, size_t es, shoal_coll_combine_fn combine);
shoal_status_t shoal_coll_fcollect_hier(struct shoal_group *g, struct shoal_coll_buf dest, struct shoal_coll_buf src,
                                        size_t bytes);
/* Bruck's allgather (bruck.c): teams of at most 2^16 members, blocks of
 * any nonzero size. */
int shoal_coll_bruck_fits(const struct shoal_group *g, size_t bytes);
shoal_status_t shoal_coll_fcollect_bruck(struct shoal_group *g, struct shoal_coll_buf dest, struct shoal_coll_buf src,
                                         size_t bytes);
/* Whether no member of g maps another's memory (each on a host of its
 * own, or SHMEM_TRANSPORT forced): algo.c's islands. */
int shoal_coll_islands(const struct shoal_group *g);
/* ... and collect, on teams of up to SHOAL_BRUCK_COLLECT_MEMBERS whose sizes
 * fit the lines (bruck.c). */
#define SHOAL_BRUCK_COLLECT_MEMBERS 64
int shoal_coll_collect_bruck_fits(const struct shoal_group *g);
/* Whether collect runs Bruck's rounds (algo.c): where they fit, on teams
 * not all in shared memory, or where the setting forces collect:bruck. */
int shoal_coll_collect_by_bruck(const struct shoal_group *g);
shoal_status_t shoal_coll_collect_bruck(struct shoal_group *g, struct shoal_coll_buf dest, struct shoal_coll_buf src,
                                        size_t bytes);
/* ... and the pushed collect (collect_pairwise.c), on any team: for teams
 * past Bruck's members across hosts, or where the setting forces
 * collect:pairwise (then fcollect too). */
int shoal_coll_collect_pairwise_fits(const struct shoal_group *g);
int shoal_coll_collect_by_pairwise(const struct shoal_group *g);
shoal_status_t shoal_coll_collect_pairwise(struct shoal_group *g, struct shoal_coll_buf dest,
                                           struct shoal_coll_buf src, size_t bytes);
/* ... and alltoall (strided too), where ceil(n/2) blocks of nelems * elem
 * bytes fit a line (bruck.c). */
int shoal_coll_alltoall_bruck_fits(const struct shoal_group *g, size_t block);
shoal_status_t shoal_coll_alltoall_bruck(struct shoal_group *g, struct shoal_coll_buf dest, struct shoal_coll_buf src,
                                         ptrdiff_t dst, ptrdiff_t sst, size_t nelems, size_t elem);
/* The pairwise alltoall (alltoall.c, strided too): teams (the lines' tags
 * up to SHOAL_RD_LINES + 1 members, a count of landed blocks past that). */
int shoal_coll_alltoall_pairwise_fits(const struct shoal_group *g);
/* The counted end of a pushed collective (alltoall.c says why it is safe):
 * after this member's puts into every other member's dest, one fence and
 * an add to each one's LANDED word; returns once its own word holds n - 1,
 * having cleared it. Teams only, after every member entered the call. */
void shoal_coll_landed_exchange(struct shoal_group *g);
/* Waits (on world PE waits_on - 1; 0: unknown) until this member's LANDED
 * word holds count, every add of this call, then clears it with a store.
 * No add can come between: the next call's writers add only after that
 * call's entry sync, which this member enters after the store. Where the
 * fabric applies atomics, taking the count back would be a fetching
 * atomic through it, a round trip to itself. */
void shoal_coll_landed_await(struct shoal_group *g, uint64_t count, int waits_on);
/* The ring all-reduce (ring.c): teams of fewer than 2^23 members. */
int shoal_coll_ring_fits(const struct shoal_group *g);
shoal_status_t shoal_coll_reduce_ring(struct shoal_group *g, struct shoal_coll_buf dest, struct shoal_coll_buf src,
                                      size_t nelems, size_t es, shoal_coll_combine_fn combine);
/* The ring's steps (ring.c), shared with the ring scan: a call's base
 * value (the team's next epoch, shifted: the low 24 bits count steps);
 * one step's put of len bytes from `from` into the next member's dest at
 * offset at, then its RING word raised to value; and the wait until this
 * member's RING word reaches value. Callers hold the coll.h invariant
 * (an entry barrier frees every dest) and send fewer than 2^24 steps. */
uint64_t shoal_coll_ring_begin(struct shoal_group *g);
shoal_status_t shoal_coll_ring_pass(const struct shoal_group *g, struct shoal_coll_buf dest, const char *from,
                                    size_t at, size_t len, uint64_t value);
void shoal_coll_ring_await(const struct shoal_group *g, uint64_t value);
shoal_status_t shoal_coll_reduce(struct shoal_group *g, struct shoal_coll_buf dest, struct shoal_coll_buf src,
                                 size_t nelems, int dtype, int op);
/* Rank r's dest gets the sum over ranks 0..r (inclusive) or 0..r-1
 * (exclusive; rank 0's dest is set to zero, the sum's identity). */
shoal_status_t shoal_coll_scan(struct shoal_group *g, struct shoal_coll_buf dest, struct shoal_coll_buf src,
                               size_t nelems, int dtype, int inclusive);
/* The same by recursive doubling through the lines (scan_rd.c), where
 * shoal_coll_rd_fits; sum adds in into acc. */
shoal_status_t shoal_coll_scan_rd(struct shoal_group *g, struct shoal_coll_buf dest, struct shoal_coll_buf src,
                                  size_t nelems, size_t es, shoal_coll_combine_fn sum, int inclusive);
/* The same from and into this member's private memory (source and out,
 * which may be the same). */
shoal_status_t shoal_coll_scan_rd_local(struct shoal_group *g, unsigned char *out, const void *source, size_t nelems,
                                        size_t es, shoal_coll_combine_fn sum, int inclusive);
/* The same along the ring order (scan_ring.c), pipelined in chunks:
 * teams where shoal_coll_ring_fits. */
shoal_status_t shoal_coll_scan_ring(struct shoal_group *g, struct shoal_coll_buf dest, struct shoal_coll_buf src,
                                    size_t nelems, size_t es, shoal_coll_combine_fn sum, int inclusive);

#endif
