/* coll_reduce.c: team reductions and sum scans against a serial reference.
 * Every reduction the standard lists on every type it lists it for: and,
 * or, xor on the 14 bitwise types; min, max on the 24 arithmetic types;
 * sum, prod on those and complexf/complexd. Values are chosen so every
 * result is exact (small integers for sum and prod, full-range bits for
 * the bitwise ones and min/max), so the reference, folded here in rank
 * order, must equal the result in any combining order. Each at 37
 * elements out of place and in place (dest == source); sizes 0 and 1 and
 * 1 MiB for one type per class. sum_inscan and sum_exscan on all 26 types,
 * out of place and in place, and past the ring scan's 64 KiB chunk in
 * place (exscan: rank 0's dest is not checked). On the world team, then a
 * subset on split teams (one PE left out, strides 2 and 3 partitioning the
 * world, both axes of split_2d with xrange 2 and 3).
 * No barrier between calls: two source/dest pairs alternate; a pair is
 * cleaned right after its check, which the next-but-one call of any PE
 * cannot precede (each result needs every member's entry). */
#include <complex.h>
#include <shmem.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"

#define MIB (1024 * 1024)
#define GUARDN 64

static int me, npes;
static unsigned char *srcs[2], *dsts[2];
static unsigned round_no;

struct tinfo {
    shmem_team_t t;
    int start, stride, size, rank;
    char name[64];
};
static struct tinfo cur;

static int world_of(const struct tinfo *ti, int r) { return ti->start + r * ti->stride; }

/* Value generators: exact results whatever the order of combining. */
static long long v_sum(int pe, size_t i, unsigned salt, size_t size)
{
    unsigned long long m = test_mix(pe, i, salt);
    return size == 1 ? (long long)(m % 31) - 15 : (long long)(m % 2001) - 1000;
}
static long long v_prod(int pe, size_t i, unsigned salt)
{
    const int neg = (int)((test_mix(pe, i, salt) >> 7) & 1);
    const int two = (pe + (int)(i % 4)) % 4 == 0 && i % 3 == 0;
    return (neg ? -1 : 1) * (two ? 2 : 1);
}
#define VAL_and(T, pe, i, s) ((T)(test_mix(pe, i, s) | test_mix(pe, i, (s) + 1) | test_mix(pe, i, (s) + 2)))
#define VAL_or(T, pe, i, s) ((T)(test_mix(pe, i, s) & test_mix(pe, i, (s) + 1) & test_mix(pe, i, (s) + 2)))
#define VAL_xor(T, pe, i, s) ((T)test_mix(pe, i, s))
#define VAL_min(T, pe, i, s) ((T)TEST_VALUE(T, pe, i, s))
#define VAL_max(T, pe, i, s) ((T)TEST_VALUE(T, pe, i, s))
#define VAL_sum(T, pe, i, s) ((T)v_sum(pe, i, s, sizeof(T)))
#define VAL_prod(T, pe, i, s) ((T)v_prod(pe, i, s))
#define VAL_csum(T, pe, i, s) ((T)v_sum(pe, i, s, 8) + (T)v_sum(pe, i, (s) + 1, 8) * (T)I)
static const double complex units[4] = {1.0, -1.0, 1.0 * I, -1.0 * I};
#define VAL_cprod(T, pe, i, s) ((T)units[test_mix(pe, i, (s) + 3) % 4] * (T)(v_prod(pe, i, s) < 0 ? -v_prod(pe, i, s) : v_prod(pe, i, s)))

#define FOLD_and(a, b) ((a) & (b))
#define FOLD_or(a, b) ((a) | (b))
#define FOLD_xor(a, b) ((a) ^ (b))
#define FOLD_min(a, b) ((b) < (a) ? (b) : (a))
#define FOLD_max(a, b) ((b) > (a) ? (b) : (a))
#define FOLD_sum(a, b) ((a) + (b))
#define FOLD_prod(a, b) ((a) * (b))

/* Buffers of this call; cleaned after the check. */
static void *cur_src(void) { return srcs[round_no % 2]; }
static void *cur_dst(void) { return dsts[round_no % 2]; }
static void round_done(size_t bytes)
{
    memset(srcs[round_no % 2], GUARD_BYTE, bytes + GUARDN);
    memset(dsts[round_no % 2], GUARD_BYTE, bytes + GUARDN);
    round_no++;
}

static void check_guard(const unsigned char *p, const char *what)
{
    for (int b = 0; b < GUARDN; b++)
        if (p[b] != GUARD_BYTE) {
            CHECK_MSG(0, "%s: guard byte %d past dest changed (0x%02x)", what, b, p[b]);
            return;
        }
}

#define DEF_RED(T, N, OP, VK)                                                                                     \
    static void red_##N##_##OP(size_t n, int inplace, unsigned salt)                                              \
    {                                                                                                             \
        const struct tinfo *ti = &cur;                                                                            \
        char what[160];                                                                                           \
        snprintf(what, sizeof what, "%s: shmem_" #N "_" #OP "_reduce n=%zu%s", ti->name, n,                        \
                 inplace ? " in place" : "");                                                                     \
        T *s = cur_src(), *d = inplace ? s : (T *)cur_dst();                                                      \
        for (size_t i = 0; i < n; i++) s[i] = VAL_##VK(T, me, i, salt);                                           \
        int rc = shmem_##N##_##OP##_reduce(ti->t, d, s, n);                                                       \
        CHECK_MSG(rc == 0, "%s returned %d", what, rc);                                                           \
        size_t bad = 0, first = 0;                                                                                \
        for (size_t i = 0; i < n; i++) {                                                                          \
            T ref = VAL_##VK(T, world_of(ti, 0), i, salt);                                                        \
            for (int r = 1; r < ti->size; r++) {                                                                  \
                T v = VAL_##VK(T, world_of(ti, r), i, salt);                                                      \
                ref = (T)FOLD_##OP(ref, v);                                                                       \
            }                                                                                                     \
            if (!(d[i] == ref)) {                                                                                 \
                if (!bad) first = i;                                                                              \
                bad++;                                                                                            \
            }                                                                                                     \
        }                                                                                                         \
        CHECK_MSG(bad == 0, "%s: %zu of %zu elements wrong, first at %zu", what, bad, n, first);                  \
        check_guard((unsigned char *)(d + n), what);                                                              \
        round_done(n * sizeof(T));                                                                                \
    }

/* mode: SCAN_INCL (else exclusive), | SCAN_IN_PLACE (dest == source). */
enum { SCAN_EXCL = 0, SCAN_INCL = 1, SCAN_IN_PLACE = 2 };
#define DEF_SCAN(T, N, VK)                                                                                        \
    static void scan_##N(size_t n, int mode, unsigned salt)                                                       \
    {                                                                                                             \
        const struct tinfo *ti = &cur;                                                                            \
        const int inclusive = mode & SCAN_INCL, inplace = mode & SCAN_IN_PLACE;                                   \
        char what[160];                                                                                           \
        snprintf(what, sizeof what, "%s: shmem_" #N "_sum_%s n=%zu%s", ti->name, inclusive ? "inscan" : "exscan", \
                 n, inplace ? " in place" : "");                                                                  \
        T *s = cur_src(), *d = inplace ? s : (T *)cur_dst();                                                      \
        for (size_t i = 0; i < n; i++) s[i] = VAL_##VK(T, me, i, salt);                                           \
        int rc = inclusive ? shmem_##N##_sum_inscan(ti->t, d, s, n) : shmem_##N##_sum_exscan(ti->t, d, s, n);     \
        CHECK_MSG(rc == 0, "%s returned %d", what, rc);                                                           \
        const int last = inclusive ? ti->rank : ti->rank - 1;                                                     \
        size_t bad = 0, first = 0;                                                                                \
        if (last >= 0)                                                                                            \
            for (size_t i = 0; i < n; i++) {                                                                      \
                T ref = VAL_##VK(T, world_of(ti, 0), i, salt);                                                    \
                for (int r = 1; r <= last; r++) ref = (T)(ref + VAL_##VK(T, world_of(ti, r), i, salt));           \
                if (!(d[i] == ref)) {                                                                             \
                    if (!bad) first = i;                                                                          \
                    bad++;                                                                                        \
                }                                                                                                 \
            }                                                                                                     \
        CHECK_MSG(bad == 0, "%s: %zu of %zu elements wrong, first at %zu", what, bad, n, first);                  \
        check_guard((unsigned char *)(d + n), what);                                                              \
        round_done(n * sizeof(T));                                                                                \
    }

/* The standard's type lists. */
#define BITWISE_TYPES(X, OP)                                                                                      \
    X(unsigned char, uchar, OP, OP) X(unsigned short, ushort, OP, OP) X(unsigned int, uint, OP, OP)               \
    X(unsigned long, ulong, OP, OP) X(unsigned long long, ulonglong, OP, OP) X(int8_t, int8, OP, OP)              \
    X(int16_t, int16, OP, OP) X(int32_t, int32, OP, OP) X(int64_t, int64, OP, OP) X(uint8_t, uint8, OP, OP)       \
    X(uint16_t, uint16, OP, OP) X(uint32_t, uint32, OP, OP) X(uint64_t, uint64, OP, OP) X(size_t, size, OP, OP)
#define ARITH_TYPES(X, OP, VK)                                                                                    \
    X(char, char, OP, VK) X(signed char, schar, OP, VK) X(short, short, OP, VK) X(int, int, OP, VK)               \
    X(long, long, OP, VK) X(long long, longlong, OP, VK) X(ptrdiff_t, ptrdiff, OP, VK)                            \
    X(unsigned char, uchar, OP, VK) X(unsigned short, ushort, OP, VK) X(unsigned int, uint, OP, VK)               \
    X(unsigned long, ulong, OP, VK) X(unsigned long long, ulonglong, OP, VK) X(int8_t, int8, OP, VK)              \
    X(int16_t, int16, OP, VK) X(int32_t, int32, OP, VK) X(int64_t, int64, OP, VK) X(uint8_t, uint8, OP, VK)       \
    X(uint16_t, uint16, OP, VK) X(uint32_t, uint32, OP, VK) X(uint64_t, uint64, OP, VK) X(size_t, size, OP, VK)   \
    X(float, float, OP, VK) X(double, double, OP, VK) X(long double, longdouble, OP, VK)
#define COMPLEX_TYPES(X, OP, VK) X(float complex, complexf, OP, VK) X(double complex, complexd, OP, VK)

BITWISE_TYPES(DEF_RED, and)
BITWISE_TYPES(DEF_RED, or)
BITWISE_TYPES(DEF_RED, xor)
ARITH_TYPES(DEF_RED, min, min)
ARITH_TYPES(DEF_RED, max, max)
ARITH_TYPES(DEF_RED, sum, sum)
ARITH_TYPES(DEF_RED, prod, prod)
COMPLEX_TYPES(DEF_RED, sum, csum)
COMPLEX_TYPES(DEF_RED, prod, cprod)

#define DEF_SCAN_ADAPT(T, N, OP, VK) DEF_SCAN(T, N, VK)
ARITH_TYPES(DEF_SCAN_ADAPT, sum, sum)
COMPLEX_TYPES(DEF_SCAN_ADAPT, sum, csum)

typedef void (*red_fn)(size_t, int, unsigned);
struct red_ent {
    const char *name;
    red_fn fn;
};
#define RED_ENT(T, N, OP, VK) {#N "_" #OP, red_##N##_##OP},
static const struct red_ent reds[] = {
    BITWISE_TYPES(RED_ENT, and) BITWISE_TYPES(RED_ENT, or) BITWISE_TYPES(RED_ENT, xor) ARITH_TYPES(RED_ENT, min, min)
    ARITH_TYPES(RED_ENT, max, max) ARITH_TYPES(RED_ENT, sum, sum) ARITH_TYPES(RED_ENT, prod, prod)
    COMPLEX_TYPES(RED_ENT, sum, csum) COMPLEX_TYPES(RED_ENT, prod, cprod)};
#define SCAN_ENT(T, N, OP, VK) {#N, scan_##N},
static const struct red_ent scans[] = {ARITH_TYPES(SCAN_ENT, sum, sum) COMPLEX_TYPES(SCAN_ENT, sum, csum)};

/* A checked world reduction between team ones (own buffers). */
static long *wsrc, *wdst;
static void world_interleave(unsigned salt)
{
    shmem_barrier_all();
    round_no = 0; /* every PE picks the same buffer pair next */
    for (int i = 0; i < 3; i++) wsrc[i] = (long)salt + me * 3 + i;
    shmem_long_sum_reduce(SHMEM_TEAM_WORLD, wdst, wsrc, 3);
    for (int i = 0; i < 3; i++) {
        long want = 0;
        for (int p = 0; p < npes; p++) want += (long)salt + p * 3 + i;
        CHECK_MSG(wdst[i] == want, "world interleave %u elem %d: %ld, expected %ld", salt, i, wdst[i], want);
    }
}

static void world_all(void)
{
    const size_t nreds = sizeof reds / sizeof reds[0], nscans = sizeof scans / sizeof scans[0];
    for (size_t k = 0; k < nreds; k++) {
        reds[k].fn(37, 0, (unsigned)k * 10);
        reds[k].fn(37, 1, (unsigned)k * 10 + 5);
    }
    for (size_t k = 0; k < nscans; k++) {
        scans[k].fn(37, SCAN_INCL, 7000 + (unsigned)k * 10);
        scans[k].fn(37, SCAN_EXCL, 7000 + (unsigned)k * 10 + 5);
        scans[k].fn(37, SCAN_INCL | SCAN_IN_PLACE, 7000 + (unsigned)k * 10 + 3);
        scans[k].fn(37, SCAN_EXCL | SCAN_IN_PLACE, 7000 + (unsigned)k * 10 + 7);
    }
    world_interleave(1);
    /* Sizes 0 and 1, one type per class and op. */
    red_int_sum(0, 0, 1);
    red_int_sum(1, 0, 2);
    red_uint64_xor(0, 0, 3);
    red_uint64_xor(1, 1, 4);
    red_double_max(1, 0, 5);
    red_complexd_prod(1, 0, 6);
    red_longdouble_min(1, 1, 7);
    scan_int(0, SCAN_INCL, 8);
    scan_long(1, SCAN_EXCL, 9);
    scan_double(1, SCAN_INCL, 10);
    world_interleave(2);
}

static void world_big(void)
{
    red_int_sum(MIB / sizeof(int), 0, 11);
    red_double_prod(MIB / sizeof(double), 0, 12);
    red_complexd_sum(MIB / sizeof(double complex), 1, 13);
    red_uint64_and(MIB / 8, 0, 14);
    red_float_max(MIB / sizeof(float), 0, 15);
    red_uchar_or(MIB, 0, 16);
    scan_long(MIB / sizeof(long), SCAN_INCL, 17);
    scan_double(MIB / sizeof(double), SCAN_EXCL, 18);
    /* Not a whole number of the ring scan's chunks, in place. */
    scan_int(100003, SCAN_INCL | SCAN_IN_PLACE, 19);
    scan_int(100003, SCAN_EXCL | SCAN_IN_PLACE, 20);
    world_interleave(3);
}

/* A subset on a split team: this PE's team is cur (INVALID: sits out). */
static void team_subset(unsigned salt)
{
    if (cur.t != SHMEM_TEAM_INVALID) {
        red_int_sum(0, 0, salt + 1);
        red_int_sum(1, 0, salt + 2);
        red_int_sum(37, 0, salt + 3);
        red_long_sum(37, 1, salt + 4);
        red_double_max(37, 0, salt + 5);
        red_short_min(37, 1, salt + 6);
        red_complexd_prod(37, 0, salt + 7);
        red_ushort_xor(37, 0, salt + 8);
        red_uint32_and(37, 1, salt + 9);
        red_size_or(37, 0, salt + 10);
        red_float_prod(37, 0, salt + 11);
        scan_int(37, SCAN_INCL, salt + 12);
        scan_int(37, SCAN_EXCL, salt + 13);
        scan_complexf(37, SCAN_INCL, salt + 14);
        scan_long(100, SCAN_EXCL | SCAN_IN_PLACE, salt + 18);
        scan_double(5000, SCAN_INCL, salt + 19);
        red_int_sum(MIB / sizeof(int), 0, salt + 15);
    }
    world_interleave(salt);
    if (cur.t != SHMEM_TEAM_INVALID) {
        red_longlong_max(37, 0, salt + 16);
        scan_double(37, SCAN_EXCL, salt + 17);
    }
    world_interleave(salt + 50);
}

static void set_cur(shmem_team_t t, int start, int stride, int size, const char *name)
{
    cur.t = t;
    cur.start = start;
    cur.stride = stride;
    cur.size = size;
    cur.rank = t == SHMEM_TEAM_INVALID ? -1 : shmem_team_my_pe(t);
    snprintf(cur.name, sizeof cur.name, "%s (world PEs %d+%d*i, %d)", name, start, stride, size);
    if (t != SHMEM_TEAM_INVALID)
        CHECK_MSG(shmem_team_n_pes(t) == size && world_of(&cur, cur.rank) == me, "%s: geometry", cur.name);
}

int main(void)
{
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    test_pe = me;
    for (int k = 0; k < 2; k++) {
        srcs[k] = shmem_malloc(MIB + GUARDN);
        dsts[k] = shmem_malloc(MIB + GUARDN);
        CHECK(srcs[k] && dsts[k]);
        if (!srcs[k] || !dsts[k]) return test_finish();
        memset(srcs[k], GUARD_BYTE, MIB + GUARDN);
        memset(dsts[k], GUARD_BYTE, MIB + GUARDN);
    }
    wsrc = shmem_malloc(3 * sizeof(long));
    wdst = shmem_malloc(3 * sizeof(long));
    shmem_barrier_all();

    set_cur(SHMEM_TEAM_WORLD, 0, 1, npes, "world");
    world_all();
    world_big();

    unsigned salt = 100000;
    {
        const int start = npes > 1 ? 1 : 0;
        shmem_team_t t;
        shmem_team_split_strided(SHMEM_TEAM_WORLD, start, 1, npes - start, NULL, 0, &t);
        set_cur(t, start, 1, npes - start, "split stride 1");
        team_subset(salt += 1000);
        shmem_team_destroy(t);
    }
    for (int stride = 2; stride <= 3; stride++) {
        shmem_team_t teams[3] = {SHMEM_TEAM_INVALID, SHMEM_TEAM_INVALID, SHMEM_TEAM_INVALID};
        for (int s = 0; s < stride && s < npes; s++) {
            const int size = (npes - 1 - s) / stride + 1;
            shmem_team_split_strided(SHMEM_TEAM_WORLD, s, stride, size, NULL, 0, &teams[s]);
            if (me % stride == s) set_cur(teams[s], s, stride, size, stride == 2 ? "split stride 2" : "split stride 3");
        }
        team_subset(salt += 1000);
        /* The world again, between uses of the split teams. */
        set_cur(SHMEM_TEAM_WORLD, 0, 1, npes, "world");
        red_int_sum(37, 0, salt + 500);
        for (int s = 0; s < stride && s < npes; s++)
            if (me % stride == s) set_cur(teams[s], s, stride, (npes - 1 - s) / stride + 1, "split again");
        team_subset(salt += 1000);
        for (int s = 0; s < stride; s++) shmem_team_destroy(teams[s]);
    }
    for (int xr = 2; xr <= 3; xr++) {
        shmem_team_t x, y;
        shmem_team_split_2d(SHMEM_TEAM_WORLD, xr, NULL, 0, &x, NULL, 0, &y);
        const int xrange = xr > npes ? npes : xr;
        const int x0 = me / xrange * xrange, col = me % xrange;
        set_cur(x, x0, 1, npes - x0 < xrange ? npes - x0 : xrange, "2d x axis");
        team_subset(salt += 1000);
        set_cur(y, col, xrange, (npes - col + xrange - 1) / xrange, "2d y axis");
        team_subset(salt += 1000);
        shmem_team_destroy(x);
        shmem_team_destroy(y);
    }
    shmem_barrier_all();
    shmem_finalize();
    return test_finish();
}
