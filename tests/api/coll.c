/* coll.c: the team data-movement collectives against a serial reference.
 * broadcast (from every root at size 37), collect (nelems differing per
 * PE, some zero), fcollect, alltoall and alltoalls (strides 1..3 on each
 * side), typed for all 24 standard RMA types and the mem forms, at sizes
 * 1 and 37 elements on the world team (int, double and long double also
 * at 1 MiB), and the mem forms at 0, 1, 37 and 1 MiB on the world team and
 * on split teams (one PE left out; strides 2 and 3
 * partitioning the world; both axes of split_2d with xrange 2 and 3), each
 * team call followed by a checked world collective. Every byte of dest is
 * compared with the expected bytes, and 64 guard bytes past it must stay. */
#include <shmem.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"

#define MIB (1024 * 1024)
#define GUARDN 64

static int me, npes;
static unsigned char *src, *dst, *exp_buf;
static long *wsrc, *wdst; /* world interleave */
static size_t dst_cap;

typedef int (*bcast_fn)(shmem_team_t, void *, const void *, size_t, int);
typedef int (*coll_fn)(shmem_team_t, void *, const void *, size_t);
typedef int (*a2as_fn)(shmem_team_t, void *, const void *, ptrdiff_t, ptrdiff_t, size_t);

struct ent {
    const char *name;
    size_t size;
    int big; /* also run at 1 MiB */
    bcast_fn bcast;
    coll_fn collect, fcollect, alltoall;
    a2as_fn alltoalls;
};

#define TYPES(X)                                                                                                   \
    X(float, float, 0) X(double, double, 1) X(long double, longdouble, 1) X(char, char, 0) X(signed char, schar, 0) \
    X(short, short, 0) X(int, int, 1) X(long, long, 0) X(long long, longlong, 0) X(unsigned char, uchar, 1)          \
    X(unsigned short, ushort, 0) X(unsigned int, uint, 0) X(unsigned long, ulong, 0)                                \
    X(unsigned long long, ulonglong, 0) X(int8_t, int8, 0) X(int16_t, int16, 0) X(int32_t, int32, 0)                \
    X(int64_t, int64, 0) X(uint8_t, uint8, 0) X(uint16_t, uint16, 0) X(uint32_t, uint32, 0) X(uint64_t, uint64, 0)  \
    X(size_t, size, 0) X(ptrdiff_t, ptrdiff, 0)

#define WRAP(T, N, B)                                                                                         \
    static int bc_##N(shmem_team_t t, void *d, const void *s, size_t n, int r)                                \
    {                                                                                                         \
        return shmem_##N##_broadcast(t, (T *)d, (const T *)s, n, r);                                          \
    }                                                                                                         \
    static int co_##N(shmem_team_t t, void *d, const void *s, size_t n)                                       \
    {                                                                                                         \
        return shmem_##N##_collect(t, (T *)d, (const T *)s, n);                                               \
    }                                                                                                         \
    static int fc_##N(shmem_team_t t, void *d, const void *s, size_t n)                                       \
    {                                                                                                         \
        return shmem_##N##_fcollect(t, (T *)d, (const T *)s, n);                                              \
    }                                                                                                         \
    static int aa_##N(shmem_team_t t, void *d, const void *s, size_t n)                                       \
    {                                                                                                         \
        return shmem_##N##_alltoall(t, (T *)d, (const T *)s, n);                                              \
    }                                                                                                         \
    static int as_##N(shmem_team_t t, void *d, const void *s, ptrdiff_t ds, ptrdiff_t ss, size_t n)           \
    {                                                                                                         \
        return shmem_##N##_alltoalls(t, (T *)d, (const T *)s, ds, ss, n);                                     \
    }
TYPES(WRAP)

static int bc_mem(shmem_team_t t, void *d, const void *s, size_t n, int r) { return shmem_broadcastmem(t, d, s, n, r); }
static int co_mem(shmem_team_t t, void *d, const void *s, size_t n) { return shmem_collectmem(t, d, s, n); }
static int fc_mem(shmem_team_t t, void *d, const void *s, size_t n) { return shmem_fcollectmem(t, d, s, n); }
static int aa_mem(shmem_team_t t, void *d, const void *s, size_t n) { return shmem_alltoallmem(t, d, s, n); }
static int as_mem(shmem_team_t t, void *d, const void *s, ptrdiff_t ds, ptrdiff_t ss, size_t n)
{
    return shmem_alltoallsmem(t, d, s, ds, ss, n);
}

#define ENTRY(T, N, B) {#N, sizeof(T), B, bc_##N, co_##N, fc_##N, aa_##N, as_##N},
static const struct ent ents[] = {TYPES(ENTRY){"mem", 1, 1, bc_mem, co_mem, fc_mem, aa_mem, as_mem}};
#define NENTS (sizeof ents / sizeof ents[0])

/* This PE's team in one layout: world PEs start + r*stride, r < size. */
struct tinfo {
    shmem_team_t t;
    int start, stride, size, rank;
    char name[64];
};

static int world_of(const struct tinfo *ti, int r) { return ti->start + r * ti->stride; }

/* Compares n bytes; reports the first difference. */
static void compare(const unsigned char *got, const unsigned char *want, size_t n, const char *what)
{
    if (!memcmp(got, want, n)) return;
    size_t i = 0, bad = 0;
    while (got[i] == want[i]) i++;
    for (size_t j = i; j < n; j++) bad += got[j] != want[j];
    CHECK_MSG(0, "%s: %zu of %zu bytes differ, first at byte %zu: 0x%02x, expected 0x%02x", what, bad, n, i, got[i],
              want[i]);
}

/* Prepares dest (guard bytes over need + GUARDN), syncs the team. */
static void prepare(const struct tinfo *ti, size_t need)
{
    if (need + GUARDN > dst_cap) {
        CHECK_MSG(0, "test bug: need %zu bytes of dest", need);
        need = dst_cap - GUARDN;
    }
    memset(dst, GUARD_BYTE, need + GUARDN);
    memset(exp_buf, GUARD_BYTE, need + GUARDN);
    shmem_team_sync(ti->t);
}

static void finish(size_t need, int rc, const char *what)
{
    CHECK_MSG(rc == 0, "%s returned %d", what, rc);
    compare(dst, exp_buf, need + GUARDN, what);
}

/* A checked world collective between team ones. */
static unsigned world_round;
static void world_interleave(void)
{
    world_round++;
    for (int i = 0; i < 4; i++) wsrc[i] = (long)world_round * 1000 + me * 10 + i;
    shmem_barrier_all();
    shmem_long_fcollect(SHMEM_TEAM_WORLD, wdst, wsrc, 4);
    for (int p = 0; p < npes; p++)
        for (int i = 0; i < 4; i++)
            CHECK_MSG(wdst[p * 4 + i] == (long)world_round * 1000 + p * 10 + i, "world fcollect round %u: PE %d elem %d",
                      world_round, p, i);
}

static void do_bcast(const struct ent *e, const struct tinfo *ti, size_t n, int root, unsigned salt)
{
    char what[160];
    snprintf(what, sizeof what, "%s: %s broadcast n=%zu root=%d", ti->name, e->name, n, root);
    const size_t bytes = n * e->size;
    fill_pattern(src, bytes, me, 0, salt);
    prepare(ti, bytes);
    fill_pattern(exp_buf, bytes, world_of(ti, root), 0, salt);
    int rc = e->bcast(ti->t, dst, src, n, root);
    finish(bytes, rc, what);
}

static size_t collect_count(size_t n, int r)
{
    if (n == 0) return 0;
    if (n == 1) return (size_t)(r % 2); /* some PEs give nothing */
    if (n > 1000) return n - (size_t)r * 3;
    return n + (size_t)(r * 7 % 5);
}

static void do_collect(const struct ent *e, const struct tinfo *ti, size_t n, int fixed, unsigned salt)
{
    char what[160];
    snprintf(what, sizeof what, "%s: %s %s n=%zu", ti->name, e->name, fixed ? "fcollect" : "collect", n);
    const size_t mine = fixed ? n : collect_count(n, ti->rank);
    fill_pattern(src, mine * e->size, me, 0, salt);
    size_t total = 0;
    for (int r = 0; r < ti->size; r++) total += (fixed ? n : collect_count(n, r)) * e->size;
    prepare(ti, total);
    size_t off = 0;
    for (int r = 0; r < ti->size; r++) {
        const size_t b = (fixed ? n : collect_count(n, r)) * e->size;
        fill_pattern(exp_buf + off, b, world_of(ti, r), 0, salt);
        off += b;
    }
    int rc = fixed ? e->fcollect(ti->t, dst, src, mine) : e->collect(ti->t, dst, src, mine);
    finish(total, rc, what);
}

static void do_alltoall(const struct ent *e, const struct tinfo *ti, size_t n, unsigned salt)
{
    char what[160];
    snprintf(what, sizeof what, "%s: %s alltoall n=%zu", ti->name, e->name, n);
    const size_t bytes = n * e->size, all = bytes * (size_t)ti->size;
    fill_pattern(src, all, me, 0, salt);
    prepare(ti, all);
    for (int i = 0; i < ti->size; i++)
        fill_pattern(exp_buf + (size_t)i * bytes, bytes, world_of(ti, i), (size_t)ti->rank * bytes, salt);
    int rc = e->alltoall(ti->t, dst, src, n);
    finish(all, rc, what);
}

static void do_alltoalls(const struct ent *e, const struct tinfo *ti, size_t n, ptrdiff_t ds, ptrdiff_t ss,
                         unsigned salt)
{
    char what[160];
    snprintf(what, sizeof what, "%s: %s alltoalls n=%zu dst=%td sst=%td", ti->name, e->name, n, ds, ss);
    const size_t es = e->size, nsz = (size_t)ti->size;
    const size_t src_bytes = nsz * n * (size_t)ss * es, need = nsz * n * (size_t)ds * es;
    fill_pattern(src, src_bytes, me, 0, salt);
    prepare(ti, need);
    for (size_t i = 0; i < nsz; i++)
        for (size_t k = 0; k < n; k++)
            fill_pattern(exp_buf + ((i * n + k) * (size_t)ds) * es, es, world_of(ti, (int)i),
                         (((size_t)ti->rank * n + k) * (size_t)ss) * es, salt);
    int rc = e->alltoalls(ti->t, dst, src, ds, ss, n);
    finish(need, rc, what);
}

/* One call of each collective on entry e at n elements. full: broadcast
 * from every root and alltoalls with every stride pair 1..3. */
static void run_ops(const struct ent *e, const struct tinfo *ti, size_t n, int full, unsigned salt)
{
    if (ti->t != SHMEM_TEAM_INVALID) {
        if (full)
            for (int root = 0; root < ti->size; root++) do_bcast(e, ti, n, root, salt + 1 + root);
        else
            do_bcast(e, ti, n, (int)(salt / 7 % (unsigned)ti->size), salt + 1);
        do_collect(e, ti, n, 0, salt + 2);
        do_collect(e, ti, n, 1, salt + 3);
        do_alltoall(e, ti, n, salt + 4);
        if (full)
            for (ptrdiff_t ds = 1; ds <= 3; ds++)
                for (ptrdiff_t ss = 1; ss <= 3; ss++) do_alltoalls(e, ti, n, ds, ss, salt + 5);
        else
            do_alltoalls(e, ti, n, n > 1000 ? 1 : 2, n > 1000 ? 1 : 3, salt + 6);
    }
    world_interleave();
}

/* World: every type at 1 and 37 elements, one type per class at 1 MiB.
 * Every layout: the mem forms at 0, 1, 37 (every root, every stride pair)
 * and 1 MiB, and int and long double at 37. */
static void run_layout(const struct tinfo *ti, int layout, int every_type)
{
    const unsigned base = (unsigned)layout * 100000u;
    for (size_t ei = 0; ei < NENTS; ei++) {
        const struct ent *e = &ents[ei];
        const int is_mem = !strcmp(e->name, "mem");
        const unsigned salt = base + (unsigned)ei * 100u;
        if (is_mem) {
            run_ops(e, ti, 0, 0, salt + 10);
            run_ops(e, ti, 1, 0, salt + 20);
            run_ops(e, ti, 37, 1, salt + 30);
            run_ops(e, ti, MIB, 0, salt + 40);
        } else if (every_type) {
            run_ops(e, ti, 1, 0, salt + 20);
            run_ops(e, ti, 37, 0, salt + 30);
            if (e->big) run_ops(e, ti, MIB / e->size, 0, salt + 40);
        } else if (!strcmp(e->name, "int") || !strcmp(e->name, "longdouble")) {
            run_ops(e, ti, 37, 0, salt + 30);
        }
    }
}

static void fill_info(struct tinfo *ti, shmem_team_t t, int start, int stride, int size, const char *name)
{
    ti->t = t;
    ti->start = start;
    ti->stride = stride;
    ti->size = size;
    ti->rank = t == SHMEM_TEAM_INVALID ? -1 : shmem_team_my_pe(t);
    snprintf(ti->name, sizeof ti->name, "%s (world PEs %d+%d*i, %d)", name, start, stride, size);
    if (t != SHMEM_TEAM_INVALID) {
        CHECK_MSG(shmem_team_n_pes(t) == size && world_of(ti, ti->rank) == me, "%s: geometry", ti->name);
        CHECK_MSG(shmem_team_translate_pe(t, 0, SHMEM_TEAM_WORLD) == start, "%s: translate", ti->name);
    }
}

int main(void)
{
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    test_pe = me;
    dst_cap = (size_t)npes * MIB + 64 * 1024;
    src = shmem_malloc((size_t)npes * MIB + 64 * 1024);
    dst = shmem_malloc(dst_cap);
    exp_buf = malloc(dst_cap);
    wsrc = shmem_malloc(4 * sizeof(long));
    wdst = shmem_malloc((size_t)npes * 4 * sizeof(long));
    CHECK(src && dst && exp_buf && wsrc && wdst);
    if (!(src && dst && exp_buf && wsrc && wdst)) return test_finish();

    int layout = 0;
    struct tinfo ti;
    /* World. */
    fill_info(&ti, SHMEM_TEAM_WORLD, 0, 1, npes, "world");
    run_layout(&ti, layout++, 1);
    /* All but PE 0 (PE 0 alone with one PE). */
    {
        const int start = npes > 1 ? 1 : 0;
        shmem_team_t t;
        shmem_team_split_strided(SHMEM_TEAM_WORLD, start, 1, npes - start, NULL, 0, &t);
        fill_info(&ti, t, start, 1, npes - start, "split stride 1");
        run_layout(&ti, layout++, 0);
        shmem_team_destroy(t);
    }
    /* Strides 2 and 3: teams from each start partition the world. */
    for (int stride = 2; stride <= 3; stride++) {
        shmem_team_t teams[3] = {SHMEM_TEAM_INVALID, SHMEM_TEAM_INVALID, SHMEM_TEAM_INVALID};
        for (int s = 0; s < stride && s < npes; s++) {
            const int size = (npes - 1 - s) / stride + 1;
            shmem_team_t t;
            shmem_team_split_strided(SHMEM_TEAM_WORLD, s, stride, size, NULL, 0, &t);
            teams[s] = t;
            if (me % stride == s) fill_info(&ti, t, s, stride, size, stride == 2 ? "split stride 2" : "split stride 3");
        }
        run_layout(&ti, layout++, 0);
        for (int s = 0; s < stride; s++) shmem_team_destroy(teams[s]);
    }
    /* Both axes of split_2d. */
    for (int xr = 2; xr <= 3; xr++) {
        shmem_team_t x, y;
        shmem_team_split_2d(SHMEM_TEAM_WORLD, xr, NULL, 0, &x, NULL, 0, &y);
        const int xrange = xr > npes ? npes : xr;
        const int x0 = me / xrange * xrange, col = me % xrange;
        fill_info(&ti, x, x0, 1, npes - x0 < xrange ? npes - x0 : xrange, xr == 2 ? "2d x axis, xrange 2" : "2d x axis, xrange 3");
        run_layout(&ti, layout++, 0);
        fill_info(&ti, y, col, xrange, (npes - col + xrange - 1) / xrange, xr == 2 ? "2d y axis, xrange 2" : "2d y axis, xrange 3");
        run_layout(&ti, layout++, 0);
        shmem_team_destroy(x);
        shmem_team_destroy(y);
    }
    shmem_barrier_all();
    free(exp_buf);
    shmem_free(wdst);
    shmem_free(wsrc);
    shmem_free(dst);
    shmem_free(src);
    shmem_finalize();
    return test_finish();
}
