/* coll_active.c: the deprecated active-set collectives on active sets with
 * logPE_stride 0 and 1 and PE_start offsets: broadcast32/64 (the root's
 * dest is NOT updated), collect32/64 (nelems differing per PE),
 * fcollect32/64, alltoall32/64, alltoalls32/64 (dst 2, sst 3), every
 * *_to_all on every type it has (pWrk of the documented size, in place
 * too), shmem_barrier (completes puts) and shmem_sync. Sizes 0, 1 and 37
 * elements. Every byte of dest is checked against a serial reference with
 * guard bytes past it, and pSync must be back at SHMEM_SYNC_VALUE after
 * every call. Non-members of a set call nothing; their dest stays. */
#include <complex.h>
#include <shmem.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"

#define GUARDN 64
#define BUFSZ (64 * 1024)

static int me, npes;
static long psync[SHMEM_REDUCE_SYNC_SIZE];
static unsigned char *src, *dst, *exp_buf, *wrk;
static int pstart, plog, psize, prank; /* current set; prank -1: not a member */

static int world_of(int r) { return pstart + r * (1 << plog); }

static void compare(const unsigned char *got, const unsigned char *want, size_t n, const char *what)
{
    if (!memcmp(got, want, n)) return;
    size_t i = 0, bad = 0;
    while (got[i] == want[i]) i++;
    for (size_t j = i; j < n; j++) bad += got[j] != want[j];
    CHECK_MSG(0, "%s: %zu of %zu bytes differ, first at byte %zu: 0x%02x, expected 0x%02x", what, bad, n, i, got[i],
              want[i]);
}

/* Before a call: dest and the expected image set to guard bytes, then a
 * barrier so nobody's call writes into a dest still being checked. */
static void prepare(size_t need)
{
    memset(dst, GUARD_BYTE, need + GUARDN);
    memset(exp_buf, GUARD_BYTE, need + GUARDN);
    shmem_barrier_all();
}

/* After: compare, then a barrier and the pSync check. */
static void finish_sync(const char *what)
{
    shmem_barrier_all();
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++)
        if (psync[i] != SHMEM_SYNC_VALUE) {
            CHECK_MSG(0, "%s: pSync[%d] = %ld after the call", what, i, psync[i]);
            psync[i] = SHMEM_SYNC_VALUE;
        }
    shmem_barrier_all();
}

static void finish(size_t need, const char *what)
{
    compare(dst, exp_buf, need + GUARDN, what);
    finish_sync(what);
}

static void do_bcast(int bits, size_t n, int root, unsigned salt)
{
    char what[128];
    snprintf(what, sizeof what, "broadcast%d set %d/%d/%d n=%zu root=%d", bits, pstart, plog, psize, n, root);
    const size_t bytes = n * (size_t)bits / 8;
    fill_pattern(src, bytes, me, 0, salt);
    prepare(bytes);
    if (prank >= 0 && prank != root) fill_pattern(exp_buf, bytes, world_of(root), 0, salt);
    if (prank >= 0) {
        if (bits == 32) shmem_broadcast32(dst, src, n, root, pstart, plog, psize, psync);
        else shmem_broadcast64(dst, src, n, root, pstart, plog, psize, psync);
    }
    finish(bytes, what);
}

static size_t count_of(size_t n, int r) { return n == 1 ? (size_t)(r % 2) : n == 0 ? 0 : n + (size_t)(r % 3); }

static void do_collect(int bits, size_t n, int fixed, unsigned salt)
{
    char what[128];
    snprintf(what, sizeof what, "%scollect%d set %d/%d/%d n=%zu", fixed ? "f" : "", bits, pstart, plog, psize, n);
    const size_t es = (size_t)bits / 8;
    const size_t mine = prank < 0 ? 0 : fixed ? n : count_of(n, prank);
    fill_pattern(src, mine * es, me, 0, salt);
    size_t total = 0;
    if (prank >= 0)
        for (int r = 0; r < psize; r++) {
            const size_t b = (fixed ? n : count_of(n, r)) * es;
            total += b;
        }
    prepare(total);
    if (prank >= 0) {
        size_t off = 0;
        for (int r = 0; r < psize; r++) {
            const size_t b = (fixed ? n : count_of(n, r)) * es;
            fill_pattern(exp_buf + off, b, world_of(r), 0, salt);
            off += b;
        }
        if (fixed) {
            if (bits == 32) shmem_fcollect32(dst, src, mine, pstart, plog, psize, psync);
            else shmem_fcollect64(dst, src, mine, pstart, plog, psize, psync);
        } else {
            if (bits == 32) shmem_collect32(dst, src, mine, pstart, plog, psize, psync);
            else shmem_collect64(dst, src, mine, pstart, plog, psize, psync);
        }
    }
    finish(total, what);
}

static void do_alltoalls(int bits, size_t n, ptrdiff_t ds, ptrdiff_t ss, int plain, unsigned salt)
{
    char what[128];
    snprintf(what, sizeof what, "alltoall%s%d set %d/%d/%d n=%zu dst=%td sst=%td", plain ? "" : "s", bits, pstart,
             plog, psize, n, ds, ss);
    const size_t es = (size_t)bits / 8, ns = (size_t)psize;
    fill_pattern(src, ns * n * (size_t)ss * es, me, 0, salt);
    const size_t need = prank >= 0 ? ns * n * (size_t)ds * es : 0;
    prepare(need);
    if (prank >= 0) {
        for (size_t i = 0; i < ns; i++)
            for (size_t k = 0; k < n; k++)
                fill_pattern(exp_buf + (i * n + k) * (size_t)ds * es, es, world_of((int)i),
                             ((size_t)prank * n + k) * (size_t)ss * es, salt);
        if (plain) {
            if (bits == 32) shmem_alltoall32(dst, src, n, pstart, plog, psize, psync);
            else shmem_alltoall64(dst, src, n, pstart, plog, psize, psync);
        } else {
            if (bits == 32) shmem_alltoalls32(dst, src, ds, ss, n, pstart, plog, psize, psync);
            else shmem_alltoalls64(dst, src, ds, ss, n, pstart, plog, psize, psync);
        }
    }
    finish(need, what);
}

/* Values with exact results in any order (see coll_reduce.c). */
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

#define DEF_TOALL(T, N, OP, VK)                                                                                   \
    static void toall_##N##_##OP(size_t n, int inplace, unsigned salt)                                            \
    {                                                                                                             \
        char what[128];                                                                                           \
        snprintf(what, sizeof what, "shmem_" #N "_" #OP "_to_all set %d/%d/%d n=%zu%s", pstart, plog, psize, n,   \
                 inplace ? " in place" : "");                                                                     \
        T *s = (T *)(inplace ? dst : src), *d = (T *)dst, *e = (T *)exp_buf;                                      \
        memset(dst, GUARD_BYTE, n * sizeof(T) + GUARDN);                                                          \
        memset(exp_buf, GUARD_BYTE, n * sizeof(T) + GUARDN);                                                      \
        if (prank >= 0) {                                                                                         \
            for (size_t i = 0; i < n; i++) s[i] = VAL_##VK(T, me, i, salt);                                       \
            for (size_t i = 0; i < n; i++) {                                                                      \
                T ref = VAL_##VK(T, world_of(0), i, salt);                                                        \
                for (int r = 1; r < psize; r++) ref = (T)FOLD_##OP(ref, VAL_##VK(T, world_of(r), i, salt));       \
                e[i] = ref;                                                                                       \
            }                                                                                                     \
        }                                                                                                         \
        shmem_barrier_all(); /* every source ready, every dest cleared */                                          \
        if (prank >= 0) {                                                                                         \
            shmem_##N##_##OP##_to_all(d, s, (int)n, pstart, plog, psize, (T *)wrk, psync);                        \
            size_t bad = 0, first = 0;                                                                            \
            for (size_t i = 0; i < n; i++)                                                                        \
                if (!(d[i] == e[i])) {                                                                            \
                    if (!bad) first = i;                                                                          \
                    bad++;                                                                                        \
                }                                                                                                 \
            CHECK_MSG(bad == 0, "%s: %zu of %zu elements wrong, first at %zu", what, bad, n, first);              \
            compare(dst + n * sizeof(T), exp_buf + n * sizeof(T), GUARDN, what);                                  \
        } else {                                                                                                  \
            compare(dst, exp_buf, n * sizeof(T) + GUARDN, what);                                                  \
        }                                                                                                         \
        finish_sync(what);                                                                                        \
    }

#define INT4(X, OP, VK) X(short, short, OP, VK) X(int, int, OP, VK) X(long, long, OP, VK) X(long long, longlong, OP, VK)
#define REAL3(X, OP, VK) X(float, float, OP, VK) X(double, double, OP, VK) X(long double, longdouble, OP, VK)
#define CPLX2(X, OP, VK) X(float complex, complexf, OP, VK) X(double complex, complexd, OP, VK)
INT4(DEF_TOALL, and, and)
INT4(DEF_TOALL, or, or)
INT4(DEF_TOALL, xor, xor)
INT4(DEF_TOALL, min, min)
REAL3(DEF_TOALL, min, min)
INT4(DEF_TOALL, max, max)
REAL3(DEF_TOALL, max, max)
INT4(DEF_TOALL, sum, sum)
REAL3(DEF_TOALL, sum, sum)
CPLX2(DEF_TOALL, sum, csum)
INT4(DEF_TOALL, prod, prod)
REAL3(DEF_TOALL, prod, prod)
CPLX2(DEF_TOALL, prod, cprod)

typedef void (*toall_fn)(size_t, int, unsigned);
#define TOALL_ENT(T, N, OP, VK) toall_##N##_##OP,
static const toall_fn toalls[] = {
    INT4(TOALL_ENT, and, and) INT4(TOALL_ENT, or, or) INT4(TOALL_ENT, xor, xor) INT4(TOALL_ENT, min, min)
    REAL3(TOALL_ENT, min, min) INT4(TOALL_ENT, max, max) REAL3(TOALL_ENT, max, max) INT4(TOALL_ENT, sum, sum)
    REAL3(TOALL_ENT, sum, sum) CPLX2(TOALL_ENT, sum, csum) INT4(TOALL_ENT, prod, prod) REAL3(TOALL_ENT, prod, prod)
    CPLX2(TOALL_ENT, prod, cprod)};

static long *flag;

static void barrier_and_sync(unsigned salt)
{
    /* shmem_barrier completes each member's puts to the next member. */
    *flag = -1;
    shmem_barrier_all();
    if (prank >= 0) {
        const int next = world_of((prank + 1) % psize), prev = world_of((prank + psize - 1) % psize);
        for (int k = 0; k < 3; k++) {
            shmem_long_p(flag, (long)salt + k * 100 + prank, next);
            shmem_barrier(pstart, plog, psize, psync);
            const long want = (long)salt + k * 100 + (prank + psize - 1) % psize;
            CHECK_MSG(*flag == want, "shmem_barrier set %d/%d/%d round %d: flag %ld from PE %d, expected %ld", pstart,
                      plog, psize, k, *flag, prev, want);
            shmem_barrier(pstart, plog, psize, psync);
        }
        /* shmem_sync orders nothing by itself; with a quiet first it does. */
        shmem_long_p(flag, (long)salt + 999, next);
        shmem_quiet();
        shmem_sync(pstart, plog, psize, psync);
        CHECK_MSG(*flag == (long)salt + 999, "shmem_sync set %d/%d/%d: flag %ld", pstart, plog, psize, *flag);
        shmem_sync(pstart, plog, psize, psync);
    }
    finish_sync("barrier/sync");
}

static void run_set(int start, int logs, int size, unsigned salt)
{
    pstart = start;
    plog = logs;
    psize = size;
    prank = (me >= start && (me - start) % (1 << logs) == 0 && (me - start) / (1 << logs) < size)
                ? (me - start) / (1 << logs) : -1;
    const size_t sizes[3] = {0, 1, 37};
    for (int si = 0; si < 3; si++) {
        const size_t n = sizes[si];
        const unsigned s = salt + (unsigned)si * 1000;
        for (int bits = 32; bits <= 64; bits += 32) {
            if (n == 37)
                for (int root = 0; root < size; root++) do_bcast(bits, n, root, s + 1 + root);
            else
                do_bcast(bits, n, size - 1, s + 1);
            do_collect(bits, n, 0, s + 20);
            do_collect(bits, n, 1, s + 21);
            do_alltoalls(bits, n, 1, 1, 1, s + 22);
            do_alltoalls(bits, n, 2, 3, 0, s + 23);
        }
    }
    for (size_t k = 0; k < sizeof toalls / sizeof toalls[0]; k++) toalls[k](37, (int)(k % 2), salt + 500 + (unsigned)k);
    toalls[0](0, 0, salt + 600);
    toalls[sizeof toalls / sizeof toalls[0] - 1](1, 1, salt + 601);
    barrier_and_sync(salt + 700);
}

int main(void)
{
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    test_pe = me;
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++) psync[i] = SHMEM_SYNC_VALUE;
    src = shmem_malloc(BUFSZ);
    dst = shmem_malloc(BUFSZ);
    wrk = shmem_malloc(BUFSZ);
    flag = shmem_malloc(sizeof(long));
    exp_buf = malloc(BUFSZ);
    CHECK(src && dst && wrk && flag && exp_buf);
    if (!(src && dst && wrk && flag && exp_buf)) return test_finish();
    shmem_barrier_all();

    run_set(0, 0, npes, 1000000);                              /* everyone */
    if (npes > 1) run_set(1, 0, npes - 1, 2000000);            /* from PE 1 */
    run_set(0, 1, (npes + 1) / 2, 3000000);                    /* even PEs */
    if (npes > 1) run_set(1, 1, npes / 2, 4000000);            /* odd PEs */
    if (npes > 2) run_set(2, 1, (npes - 2 + 1) / 2, 5000000); /* even from 2 */
    if (npes >= 4) run_set(npes - 1, 0, 1, 6000000);           /* the last PE alone */

    shmem_barrier_all();
    free(exp_buf);
    shmem_finalize();
    return test_finish();
}
