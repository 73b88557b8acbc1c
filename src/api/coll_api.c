/* coll_api.c: the byte-based collective entry points (coll_api.h). Each
 * checks its arguments, turns the team or active set into a shoal_group
 * and the buffers into (segment, offset) pairs, and runs the collective
 * from src/coll. A bad argument ends the job with one line naming the
 * call, the value and the limit; SHMEM_TEAM_INVALID returns -1 at once. */
#include "api/coll_api.h"

#include <stdint.h>

#include "api/check.h"
#include "api/debug.h"
#include "api/profiling.h"
#include "coll/coll.h"
#include "core/team.h"
#include "observe/observe.h"
#include "observe/blocked.h"
#include "sync/group.h"

/* The public enums index the layer's tables directly. */
_Static_assert(SHOAL_DT_I8 == (int)SHOAL_COLL_I8 && SHOAL_DT_I64 == (int)SHOAL_COLL_I64 &&
                   SHOAL_DT_U8 == (int)SHOAL_COLL_U8 && SHOAL_DT_U64 == (int)SHOAL_COLL_U64 &&
                   SHOAL_DT_FLOAT == (int)SHOAL_COLL_FLOAT && SHOAL_DT_LONGDOUBLE == (int)SHOAL_COLL_LONGDOUBLE &&
                   SHOAL_DT_COMPLEXD == (int)SHOAL_COLL_COMPLEXD && SHOAL_DT_COMPLEXD + 1 == (int)SHOAL_COLL_DTYPES,
               "enum shoal_dtype and enum shoal_coll_dtype differ");
_Static_assert(SHOAL_RED_AND == (int)SHOAL_COLL_AND && SHOAL_RED_OR == (int)SHOAL_COLL_OR &&
                   SHOAL_RED_XOR == (int)SHOAL_COLL_XOR && SHOAL_RED_MIN == (int)SHOAL_COLL_MIN &&
                   SHOAL_RED_MAX == (int)SHOAL_COLL_MAX && SHOAL_RED_SUM == (int)SHOAL_COLL_SUM &&
                   SHOAL_RED_PROD == (int)SHOAL_COLL_PROD,
               "enum shoal_red_op and enum shoal_coll_op differ");

/* The team behind a handle, or NULL for SHMEM_TEAM_INVALID (and for a
 * team this PE is not a member of, which has no collective to join). */
static struct shoal_team *team_of(const char *call, shmem_team_t team)
{
    shoal_check_init(call);
    if (team == SHMEM_TEAM_INVALID) return NULL;
    if (SHOAL_UNLIKELY(!shoal_api_team_known(team)))
        shoal_api_fail(call, "team handle %p is not a team (destroyed, or never created)", (void *)team);
    return team->my_rank >= 0 ? team : NULL;
}

/* A buffer of zero bytes may be a null pointer (check.h, shoal_check_empty).
 * The collective still runs, with its syncs, so every member makes the
 * same steps whatever its pointers; the null buffer stands at the end of
 * the heap, where an empty range is valid and anything more runs past the
 * segment (a collect whose other members contribute bytes then fails with
 * its range message: that dest must hold their blocks). */
static struct shoal_coll_buf sym(const char *call, const char *what, const void *addr, size_t bytes)
{
    struct shoal_coll_buf b = {.published = 0};
    if (!addr && bytes == 0) {
        b.seg = SHOAL_SEG_HEAP;
        b.off = shoal_rt.seg_size[SHOAL_SEG_HEAP];
        return b;
    }
    b.seg = shoal_check_symmetric(call, what, addr, bytes, &b.off);
    return b;
}

/* A collective's dest: every member writes its own, at the same offsets. */
static struct shoal_coll_buf sym_dest(const char *call, const void *dest, size_t bytes)
{
    struct shoal_coll_buf b = sym(call, "dest", dest, bytes);
    shoal_check_writable(call, "dest", dest, b.seg, b.off, bytes, shoal_rt.my_pe);
    return b;
}

static void finish(const char *call, shoal_status_t st)
{
    if (SHOAL_LIKELY(st == SHOAL_OK)) return;
    if (st == SHOAL_ERR_NOMEM) shoal_api_fail(call, "out of private memory for the collective's scratch");
    shoal_api_fail(call, "collective failed: %s", shoal_status_str(st));
}

static int check_dtype(const char *call, enum shoal_dtype dtype)
{
    if (SHOAL_UNLIKELY(shoal_coll_dtype_size((int)dtype) == 0))
        shoal_api_fail(call, "element type %d is unknown: valid types are 0 to %d", (int)dtype,
                       (int)SHOAL_COLL_DTYPES - 1);
    return (int)dtype;
}

static void check_op(const char *call, enum shoal_dtype dtype, enum shoal_red_op op)
{
    if (SHOAL_UNLIKELY(!shoal_coll_kernel((int)dtype, (int)op)))
        shoal_api_fail(call, "no %s reduction (%d) of %s: %s", shoal_coll_op_name((int)op), (int)op,
                       shoal_coll_dtype_name((int)dtype),
                       dtype >= SHOAL_DT_COMPLEXF ? "complex types have only sum and prod"
                                                  : "floating types have no and, or, xor");
}

/* Size of the blocks of all n members (bytes or elements): per * n,
 * failing on overflow. */
static size_t all_blocks(const char *call, size_t per, int n)
{
    size_t total;
    if (SHOAL_UNLIKELY(__builtin_mul_overflow(per, (size_t)n, &total)))
        shoal_api_fail(call, "blocks of %zu from each of %d PEs overflow the address space", per, n);
    return total;
}

/* Bytes spanned by count elements of elem bytes, stride apart, from the
 * first to the end of the last. */
static size_t strided_extent(const char *call, const char *what, ptrdiff_t stride, size_t count, size_t elem)
{
    if (SHOAL_UNLIKELY(stride < 1))
        shoal_api_fail(call, "%s stride %td is out of range: it must be at least 1", what, stride);
    size_t span;
    if (count == 0) return 0;
    if (SHOAL_UNLIKELY(__builtin_mul_overflow(count - 1, (size_t)stride, &span) ||
                       __builtin_add_overflow(span, 1, &span) || __builtin_mul_overflow(span, elem, &span)))
        shoal_api_fail(call, "%s stride %td over %zu elements overflows the address space", what, stride, count);
    return span;
}

/* ---- Team forms ---- */

/* Entering a team collective: the hang report's record (blocked.h) and,
 * with SHMEM_DEBUG, the members' agreement on the call and its arguments
 * (nelems 0: each member passes its own size, not compared). */
static void agree(const char *call, struct shoal_team *t, size_t nelems, size_t bytes, int root)
{
    shoal_blocked_coll(call, t, 0, 0, 0, bytes, root);
    if (SHOAL_UNLIKELY(shoal_rt.config.debug)) shoal_debug_coll_agree(call, t, nelems, nelems ? bytes : 0, root);
}

int shoal_api_broadcast(shmem_team_t team, void *dest, const void *source, size_t nelems, size_t elem, int root,
                        const char *call)
{
    struct shoal_team *t = team_of(call, team);
    if (!t) return -1;
    if (SHOAL_UNLIKELY((unsigned)root >= (unsigned)t->size))
        shoal_api_fail(call, "root %d is out of range: the team's PEs are 0 to %d", root, t->size - 1);
    size_t bytes = shoal_check_bytes(call, nelems, elem);
    SHOAL_OBS_SPAN(sp, SHOAL_OBS_COLL, call, -1, bytes);
    SHOAL_OBS_TEAM(sp, t->slot);
    struct shoal_coll_buf d = sym_dest(call, dest, bytes), s = sym(call, "source", source, bytes);
    agree(call, t, nelems, bytes, root);
    struct shoal_group g;
    shoal_group_from_team(&g, t);
    finish(call, shoal_coll_broadcast(&g, d, s, bytes, root, 1));
    shoal_blocked_end();
    return 0;
}

int shoal_api_collect(shmem_team_t team, void *dest, const void *source, size_t nelems, size_t elem,
                      const char *call)
{
    struct shoal_team *t = team_of(call, team);
    if (!t) return -1;
    size_t bytes = shoal_check_bytes(call, nelems, elem);
    SHOAL_OBS_SPAN(sp, SHOAL_OBS_COLL, call, -1, bytes);
    SHOAL_OBS_TEAM(sp, t->slot);
    struct shoal_coll_buf d = sym_dest(call, dest, bytes), s = sym(call, "source", source, bytes);
    agree(call, t, 0, bytes, -1); /* each member contributes its own nelems */
    struct shoal_group g;
    shoal_group_from_team(&g, t);
    shoal_status_t st = shoal_coll_collect(&g, d, s, bytes);
    if (SHOAL_UNLIKELY(st == SHOAL_ERR_RANGE))
        shoal_api_fail(call, "dest address %p cannot hold the blocks of all %d PEs: they run past the end of its "
                       "symmetric segment", dest, t->size);
    finish(call, st);
    shoal_blocked_end();
    return 0;
}

int shoal_api_fcollect(shmem_team_t team, void *dest, const void *source, size_t nelems, size_t elem,
                       const char *call)
{
    struct shoal_team *t = team_of(call, team);
    if (!t) return -1;
    size_t bytes = shoal_check_bytes(call, nelems, elem);
    SHOAL_OBS_SPAN(sp, SHOAL_OBS_COLL, call, -1, bytes);
    SHOAL_OBS_TEAM(sp, t->slot);
    struct shoal_coll_buf d = sym_dest(call, dest, all_blocks(call, bytes, t->size));
    struct shoal_coll_buf s = sym(call, "source", source, bytes);
    agree(call, t, nelems, bytes, -1);
    struct shoal_group g;
    shoal_group_from_team(&g, t);
    finish(call, shoal_coll_fcollect(&g, d, s, bytes));
    shoal_blocked_end();
    return 0;
}

int shoal_api_alltoall(shmem_team_t team, void *dest, const void *source, size_t nelems, size_t elem,
                       const char *call)
{
    return shoal_api_alltoalls(team, dest, source, 1, 1, nelems, elem, call);
}

int shoal_api_alltoalls(shmem_team_t team, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,
                        size_t nelems, size_t elem, const char *call)
{
    struct shoal_team *t = team_of(call, team);
    if (!t) return -1;
    size_t bytes = shoal_check_bytes(call, nelems, elem);
    size_t count = all_blocks(call, nelems, t->size);
    SHOAL_OBS_SPAN(sp, SHOAL_OBS_COLL, call, -1, (uint64_t)count * elem);
    SHOAL_OBS_TEAM(sp, t->slot);
    struct shoal_coll_buf d = sym_dest(call, dest, strided_extent(call, "dest", dst, count, elem));
    struct shoal_coll_buf s = sym(call, "source", source, strided_extent(call, "source", sst, count, elem));
    agree(call, t, nelems, bytes, -1);
    struct shoal_group g;
    shoal_group_from_team(&g, t);
    finish(call, shoal_coll_alltoalls(&g, d, s, dst, sst, nelems, elem));
    shoal_blocked_end();
    return 0;
}

int shoal_api_reduce(shmem_team_t team, void *dest, const void *source, size_t nreduce, enum shoal_dtype dtype,
                     enum shoal_red_op op, const char *call)
{
    struct shoal_team *t = team_of(call, team);
    if (!t) return -1;
    size_t bytes = shoal_check_bytes(call, nreduce, shoal_coll_dtype_size(check_dtype(call, dtype)));
    check_op(call, dtype, op);
    SHOAL_OBS_SPAN(sp, SHOAL_OBS_COLL, call, -1, bytes);
    SHOAL_OBS_TEAM(sp, t->slot);
    struct shoal_coll_buf d = sym_dest(call, dest, bytes), s = sym(call, "source", source, bytes);
    agree(call, t, nreduce, bytes, -1);
    struct shoal_group g;
    shoal_group_from_team(&g, t);
    finish(call, shoal_coll_reduce(&g, d, s, nreduce, (int)dtype, (int)op));
    shoal_blocked_end();
    return 0;
}

int shoal_api_scan(shmem_team_t team, void *dest, const void *source, size_t nelems, enum shoal_dtype dtype,
                   int inclusive, const char *call)
{
    struct shoal_team *t = team_of(call, team);
    if (!t) return -1;
    size_t bytes = shoal_check_bytes(call, nelems, shoal_coll_dtype_size(check_dtype(call, dtype)));
    SHOAL_OBS_SPAN(sp, SHOAL_OBS_COLL, call, -1, bytes);
    SHOAL_OBS_TEAM(sp, t->slot);
    struct shoal_coll_buf d = sym_dest(call, dest, bytes), s = sym(call, "source", source, bytes);
    agree(call, t, nelems, bytes, -1);
    struct shoal_group g;
    shoal_group_from_team(&g, t);
    finish(call, shoal_coll_scan(&g, d, s, nelems, (int)dtype, inclusive));
    shoal_blocked_end();
    return 0;
}

SHOAL_WEAK_ALIAS(shmem_team_sync);
int pshmem_team_sync(shmem_team_t team)
{
    struct shoal_team *t = team_of("shmem_team_sync", team);
    if (!t) return -1;
    SHOAL_OBS_SPAN(sp, SHOAL_OBS_BARRIER, "shmem_team_sync", -1, 0);
    SHOAL_OBS_TEAM(sp, t->slot);
    agree("shmem_team_sync", t, 0, 0, -1);
    struct shoal_group g;
    shoal_group_from_team(&g, t);
    shoal_coll_barrier(&g);
    shoal_blocked_end();
    return 0;
}

/* ---- Deprecated active-set forms ---- */

/* The group of the active set (PE_start, 2^logPE_stride, PE_size) over the
 * user's pSync, in counting mode so pSync ends as it started. */
static void active_set(const char *call, struct shoal_group *g, int PE_start, int logPE_stride, int PE_size,
                       long *pSync)
{
    shoal_check_init(call);
    const int n_pes = shoal_rt.n_pes;
    if (SHOAL_UNLIKELY(PE_start < 0 || PE_start >= n_pes))
        shoal_api_fail(call, "PE_start %d is out of range: valid PEs are 0 to %d", PE_start, n_pes - 1);
    if (SHOAL_UNLIKELY(logPE_stride < 0 || logPE_stride > 30))
        shoal_api_fail(call, "logPE_stride %d is out of range: 0 to 30", logPE_stride);
    if (SHOAL_UNLIKELY(PE_size < 1))
        shoal_api_fail(call, "PE_size %d is out of range: an active set has at least 1 PE", PE_size);
    const long stride = 1L << logPE_stride, last = PE_start + (long)(PE_size - 1) * stride;
    if (SHOAL_UNLIKELY(last >= n_pes))
        shoal_api_fail(call, "active set of %d PEs from PE %d with stride %ld reaches PE %ld: valid PEs are 0 to %d",
                       PE_size, PE_start, stride, last, n_pes - 1);
    const long d = shoal_rt.my_pe - PE_start;
    if (SHOAL_UNLIKELY(d < 0 || d % stride != 0 || d / stride >= PE_size))
        shoal_api_fail(call, "PE %d is not in the active set of %d PEs from PE %d with stride %ld", shoal_rt.my_pe,
                       PE_size, PE_start, stride);
    if (SHOAL_UNLIKELY(!pSync)) shoal_api_fail(call, "pSync is a null pointer");
    if (SHOAL_UNLIKELY((uintptr_t)pSync % sizeof(long) != 0))
        shoal_api_fail(call, "pSync address %p is not aligned to %zu bytes", (void *)pSync, sizeof(long));
    size_t off;
    int seg = shoal_check_symmetric(call, "pSync", pSync, SHMEM_SYNC_SIZE * sizeof(long), &off);
    /* An active set of every PE is the world team: use its synchronisation
     * slot (epoch barriers, one-shot reductions) rather than counting in
     * pSync. Every PE sees the same set, so all choose alike; pSync is left
     * as found either way. */
    if (PE_start == 0 && stride == 1 && PE_size == n_pes)
        shoal_group_from_team(g, SHMEM_TEAM_WORLD);
    else
        shoal_group_from_active_set(g, PE_start, (int)stride, PE_size, (int)(d / stride), seg, off);
    const int world = PE_start == 0 && stride == 1 && PE_size == n_pes;
    shoal_blocked_coll(call, world ? SHMEM_TEAM_WORLD : NULL, PE_start, (int)stride, PE_size, 0, -1);
}

void shoal_api_broadcast_set(void *dest, const void *source, size_t nelems, size_t elem, int PE_root, int PE_start,
                             int logPE_stride, int PE_size, long *pSync, const char *call)
{
    struct shoal_group g;
    active_set(call, &g, PE_start, logPE_stride, PE_size, pSync);
    SHOAL_OBS_SPAN(sp, SHOAL_OBS_COLL, call, -1, (uint64_t)nelems * elem);
    if (SHOAL_UNLIKELY(PE_root < 0 || PE_root >= PE_size))
        shoal_api_fail(call, "PE_root %d is out of range: the active set's PEs are 0 to %d", PE_root, PE_size - 1);
    size_t bytes = shoal_check_bytes(call, nelems, elem);
    struct shoal_coll_buf d = sym_dest(call, dest, bytes), s = sym(call, "source", source, bytes);
    finish(call, shoal_coll_broadcast(&g, d, s, bytes, PE_root, 0));
    shoal_blocked_end();
}

void shoal_api_collect_set(void *dest, const void *source, size_t nelems, size_t elem, int PE_start,
                           int logPE_stride, int PE_size, long *pSync, const char *call)
{
    struct shoal_group g;
    active_set(call, &g, PE_start, logPE_stride, PE_size, pSync);
    size_t bytes = shoal_check_bytes(call, nelems, elem);
    SHOAL_OBS_SPAN(sp, SHOAL_OBS_COLL, call, -1, bytes);
    struct shoal_coll_buf d = sym_dest(call, dest, bytes), s = sym(call, "source", source, bytes);
    shoal_status_t st = shoal_coll_collect(&g, d, s, bytes);
    if (SHOAL_UNLIKELY(st == SHOAL_ERR_RANGE))
        shoal_api_fail(call, "dest address %p cannot hold the blocks of all %d PEs: they run past the end of its "
                       "symmetric segment", dest, PE_size);
    finish(call, st);
    shoal_blocked_end();
}

void shoal_api_fcollect_set(void *dest, const void *source, size_t nelems, size_t elem, int PE_start,
                            int logPE_stride, int PE_size, long *pSync, const char *call)
{
    struct shoal_group g;
    active_set(call, &g, PE_start, logPE_stride, PE_size, pSync);
    size_t bytes = shoal_check_bytes(call, nelems, elem);
    SHOAL_OBS_SPAN(sp, SHOAL_OBS_COLL, call, -1, bytes);
    struct shoal_coll_buf d = sym_dest(call, dest, all_blocks(call, bytes, PE_size));
    struct shoal_coll_buf s = sym(call, "source", source, bytes);
    finish(call, shoal_coll_fcollect(&g, d, s, bytes));
    shoal_blocked_end();
}

void shoal_api_alltoall_set(void *dest, const void *source, size_t nelems, size_t elem, int PE_start,
                            int logPE_stride, int PE_size, long *pSync, const char *call)
{
    shoal_api_alltoalls_set(dest, source, 1, 1, nelems, elem, PE_start, logPE_stride, PE_size, pSync, call);
}

void shoal_api_alltoalls_set(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,
                             size_t elem, int PE_start, int logPE_stride, int PE_size, long *pSync,
                             const char *call)
{
    struct shoal_group g;
    active_set(call, &g, PE_start, logPE_stride, PE_size, pSync);
    shoal_check_bytes(call, nelems, elem);
    size_t count = all_blocks(call, nelems, PE_size);
    SHOAL_OBS_SPAN(sp, SHOAL_OBS_COLL, call, -1, (uint64_t)count * elem);
    struct shoal_coll_buf d = sym_dest(call, dest, strided_extent(call, "dest", dst, count, elem));
    struct shoal_coll_buf s = sym(call, "source", source, strided_extent(call, "source", sst, count, elem));
    finish(call, shoal_coll_alltoalls(&g, d, s, dst, sst, nelems, elem));
    shoal_blocked_end();
}

void shoal_api_reduce_set(void *dest, const void *source, size_t nreduce, enum shoal_dtype dtype,
                          enum shoal_red_op op, int PE_start, int logPE_stride, int PE_size, void *pWrk,
                          long *pSync, const char *call)
{
    (void)pWrk; /* members' sources are read directly; no staging needed */
    struct shoal_group g;
    active_set(call, &g, PE_start, logPE_stride, PE_size, pSync);
    size_t bytes = shoal_check_bytes(call, nreduce, shoal_coll_dtype_size(check_dtype(call, dtype)));
    check_op(call, dtype, op);
    SHOAL_OBS_SPAN(sp, SHOAL_OBS_COLL, call, -1, bytes);
    struct shoal_coll_buf d = sym_dest(call, dest, bytes), s = sym(call, "source", source, bytes);
    finish(call, shoal_coll_reduce(&g, d, s, nreduce, (int)dtype, (int)op));
    shoal_blocked_end();
}

SHOAL_WEAK_ALIAS(shmem_sync);
void pshmem_sync(int PE_start, int logPE_stride, int PE_size, long *pSync)
{
    struct shoal_group g;
    active_set("shmem_sync", &g, PE_start, logPE_stride, PE_size, pSync);
    SHOAL_OBS_SPAN(sp, SHOAL_OBS_BARRIER, "shmem_sync", -1, 0);
    shoal_coll_barrier(&g);
    shoal_blocked_end();
}

SHOAL_WEAK_ALIAS(shmem_barrier);
void pshmem_barrier(int PE_start, int logPE_stride, int PE_size, long *pSync)
{
    struct shoal_group g;
    active_set("shmem_barrier", &g, PE_start, logPE_stride, PE_size, pSync);
    SHOAL_OBS_SPAN(sp, SHOAL_OBS_BARRIER, "shmem_barrier", -1, 0);
    shoal_rt.transport->quiet(NULL);
    shoal_coll_barrier(&g);
    shoal_blocked_end();
}
