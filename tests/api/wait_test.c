/* wait_test.c: point-to-point synchronisation.
 * 1. Every SHMEM_CMP_* for test and wait_until on 14 types, with negative
 *    values for signed types and values near the maximum for unsigned
 *    ones: a local truth table, then one cross-PE round per comparison
 *    (the left neighbour writes with shmem_p, this PE waits).
 * 2. wait_until_all/any/some, their _vector forms and test_all/any/some
 *    (+_vector) on an array of PE 0 that every PE sets with shmem_p, with
 *    a status mask excluding a decoy element, and the empty-set results
 *    (any: SIZE_MAX, some: 0, test_all: 1).
 * 3. The deprecated shmem_int_wait and the generic shmem_wait. */
#include <limits.h>
#include <shmem.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"

static int me, npes, right, left;

static int truth(int cmp, int c) /* c: sign of (x - y) */
{
    switch (cmp) {
    case SHMEM_CMP_EQ: return c == 0;
    case SHMEM_CMP_NE: return c != 0;
    case SHMEM_CMP_GT: return c > 0;
    case SHMEM_CMP_GE: return c >= 0;
    case SHMEM_CMP_LT: return c < 0;
    default: return c <= 0;
    }
}

#define DEFINE_CMP_TEST(T, NAME, BASE, LO, HI)                                                                    \
    static T cmpvar_##NAME;                                                                                       \
    static void cmp_##NAME(void)                                                                                  \
    {                                                                                                             \
        T *v = &cmpvar_##NAME;                                                                                    \
        const T base = BASE, lo = LO, hi = HI;                                                                    \
        const T xs[3] = {lo, base, hi};                                                                           \
        const T ys[3] = {lo, base, hi};                                                                           \
        for (int a = 0; a < 3; a++)                                                                               \
            for (int b = 0; b < 3; b++)                                                                           \
                for (int cmp = SHMEM_CMP_EQ; cmp <= SHMEM_CMP_LE; cmp++) {                                        \
                    const int want = truth(cmp, a - b);                                                           \
                    *v = xs[a];                                                                                   \
                    CHECK_MSG(shmem_##NAME##_test(v, cmp, ys[b]) == want, #NAME " test cmp %d, value %d vs %d",   \
                              cmp, a, b);                                                                         \
                    CHECK_MSG(shmem_test(v, cmp, ys[b]) == want, #NAME " generic test cmp %d, value %d vs %d",    \
                              cmp, a, b);                                                                         \
                    if (want) { /* satisfied already: must return at once */                                      \
                        shmem_##NAME##_wait_until(v, cmp, ys[b]);                                                 \
                        shmem_wait_until(v, cmp, ys[b]);                                                          \
                    }                                                                                             \
                    CHECK(*v == xs[a]);                                                                           \
                }                                                                                                 \
        const struct {                                                                                            \
            int cmp;                                                                                              \
            T value, write;                                                                                       \
        } rounds[6] = {{SHMEM_CMP_EQ, hi, hi},   {SHMEM_CMP_NE, base, lo}, {SHMEM_CMP_GT, base, hi},             \
                       {SHMEM_CMP_GE, hi, hi},   {SHMEM_CMP_LT, base, lo}, {SHMEM_CMP_LE, lo, lo}};               \
        for (int k = 0; k < 6; k++) {                                                                             \
            *v = base;                                                                                            \
            CHECK_MSG(shmem_##NAME##_test(v, rounds[k].cmp, rounds[k].value) == 0, #NAME " round %d early", k);   \
            shmem_barrier_all();                                                                                  \
            shmem_##NAME##_p(v, rounds[k].write, right);                                                          \
            if (k % 2)                                                                                            \
                shmem_wait_until(v, rounds[k].cmp, rounds[k].value);                                              \
            else                                                                                                  \
                shmem_##NAME##_wait_until(v, rounds[k].cmp, rounds[k].value);                                     \
            CHECK_MSG(*v == rounds[k].write, #NAME " round %d: value after wait", k);                            \
            CHECK_MSG(shmem_##NAME##_test(v, rounds[k].cmp, rounds[k].value) == 1, #NAME " round %d late", k);    \
        }                                                                                                         \
        shmem_barrier_all();                                                                                      \
    }

DEFINE_CMP_TEST(short, short, -1000, -30000, 12345)
DEFINE_CMP_TEST(int, int, -7, INT_MIN + 1, INT_MAX)
DEFINE_CMP_TEST(long, long, -123456789L, LONG_MIN, 5)
DEFINE_CMP_TEST(long long, longlong, 0, LLONG_MIN + 3, LLONG_MAX - 3)
DEFINE_CMP_TEST(unsigned short, ushort, 60000, 1, USHRT_MAX)
DEFINE_CMP_TEST(unsigned int, uint, 4000000000u, 0, UINT_MAX)
DEFINE_CMP_TEST(unsigned long, ulong, ULONG_MAX - 10, 3, ULONG_MAX)
DEFINE_CMP_TEST(unsigned long long, ulonglong, ULLONG_MAX / 2 + 7, ULLONG_MAX / 2, ULLONG_MAX - 1)
DEFINE_CMP_TEST(int32_t, int32, -5, INT32_MIN, 100)
DEFINE_CMP_TEST(int64_t, int64, INT64_MIN + 100, INT64_MIN, -1)
DEFINE_CMP_TEST(uint32_t, uint32, UINT32_MAX - 1, 2, UINT32_MAX)
DEFINE_CMP_TEST(uint64_t, uint64, UINT64_MAX - 1000, 1, UINT64_MAX)
DEFINE_CMP_TEST(size_t, size, SIZE_MAX - 1, 0, SIZE_MAX)
DEFINE_CMP_TEST(ptrdiff_t, ptrdiff, -1, PTRDIFF_MIN, PTRDIFF_MAX)

/* Part 2. flags[0..npes) on PE 0 are set by the PEs (PE p writes p + 1);
 * flags[npes] is a decoy that status always excludes (a nonzero status entry excludes its element). */
#define DEFINE_MULTI_TEST(T, NAME)                                                                                \
    static void multi_reset_##NAME(T *flags, T decoy)                                                             \
    {                                                                                                             \
        if (me == 0) {                                                                                            \
            for (int p = 0; p < npes; p++) flags[p] = 0;                                                          \
            flags[npes] = decoy;                                                                                  \
        }                                                                                                         \
        shmem_barrier_all();                                                                                      \
        shmem_##NAME##_p(&flags[me], (T)(me + 1), 0);                                                             \
    }                                                                                                             \
    static void multi_check_##NAME(T *flags, T decoy, const char *what)                                           \
    {                                                                                                             \
        /* Every write must land before the next reset. */                                                        \
        shmem_##NAME##_wait_until_all(flags, (size_t)npes, NULL, SHMEM_CMP_NE, 0);                                \
        for (int p = 0; p < npes; p++) CHECK_MSG(flags[p] == (T)(p + 1), "%s: flag %d", what, p);                 \
        CHECK_MSG(flags[npes] == decoy, "%s: decoy changed", what);                                               \
    }                                                                                                             \
    static void multi_##NAME(void)                                                                                \
    {                                                                                                             \
        const size_t nel = (size_t)npes + 1;                                                                      \
        T *flags = shmem_malloc(nel * sizeof(T));                                                                 \
        int *status = malloc(nel * sizeof(int));                                                                  \
        int *none = malloc(nel * sizeof(int));                                                                     \
        size_t *idx = malloc(nel * sizeof(size_t));                                                               \
        T *cmpv = malloc(nel * sizeof(T));                                                                        \
        char *seen = malloc(nel);                                                                                 \
        if (!flags || !status || !none || !idx || !cmpv || !seen) {                                               \
            CHECK(!"allocation failed");                                                                          \
            return;                                                                                               \
        }                                                                                                         \
        for (size_t i = 0; i < nel; i++) status[i] = i == (size_t)npes, none[i] = 1, cmpv[i] = (T)(i + 1);                      \
        cmpv[npes] = 99;                                                                                          \
        const int z = me == 0;                                                                                    \
        size_t r, cnt;                                                                                            \
                                                                                                                  \
        /* wait_until_all: the decoy never satisfies; status excludes it. */                                      \
        multi_reset_##NAME(flags, 0);                                                                             \
        if (z) {                                                                                                  \
            shmem_##NAME##_wait_until_all(flags, nel, status, SHMEM_CMP_NE, 0);                                   \
            for (int p = 0; p < npes; p++) CHECK_MSG(flags[p] == (T)(p + 1), #NAME " all: flag %d", p);           \
            multi_check_##NAME(flags, 0, #NAME " all");                                                           \
        }                                                                                                         \
        /* Generic form, status NULL over the PEs' elements. */                                                   \
        multi_reset_##NAME(flags, 0);                                                                             \
        if (z) {                                                                                                  \
            shmem_wait_until_all(flags, (size_t)npes, NULL, SHMEM_CMP_GT, 0);                                     \
            for (int p = 0; p < npes; p++) CHECK_MSG(flags[p] == (T)(p + 1), #NAME " all generic: flag %d", p);   \
            multi_check_##NAME(flags, 0, #NAME " all generic");                                                   \
        }                                                                                                         \
        /* wait_until_any: the decoy satisfies but is excluded. */                                                \
        multi_reset_##NAME(flags, 7);                                                                             \
        if (z) {                                                                                                  \
            r = shmem_##NAME##_wait_until_any(flags, nel, status, SHMEM_CMP_NE, 0);                               \
            CHECK_MSG(r < (size_t)npes, #NAME " any returned %zu", r);                                            \
            if (r < (size_t)npes) CHECK(flags[r] == (T)(r + 1));                                                  \
            r = shmem_wait_until_any(flags, nel, status, SHMEM_CMP_NE, 0);                                        \
            CHECK_MSG(r < (size_t)npes, #NAME " generic any returned %zu", r);                                    \
            multi_check_##NAME(flags, 7, #NAME " any");                                                           \
        }                                                                                                         \
        /* wait_until_some until every PE was seen, excluding the ones seen. */                                   \
        multi_reset_##NAME(flags, 7);                                                                             \
        if (z) {                                                                                                  \
            int st[1024], left_to_see = npes;                                                                     \
            memcpy(st, status, nel * sizeof(int));                                                                \
            memset(seen, 0, nel);                                                                                 \
            for (int guard = 0; left_to_see > 0 && guard < 100000; guard++) {                                     \
                cnt = shmem_##NAME##_wait_until_some(flags, nel, idx, st, SHMEM_CMP_NE, 0);                       \
                CHECK_MSG(cnt >= 1 && cnt <= (size_t)left_to_see, #NAME " some returned %zu", cnt);               \
                for (size_t j = 0; j < cnt && j < nel; j++) {                                                     \
                    const size_t i = idx[j];                                                                      \
                    CHECK_MSG(i < (size_t)npes && !seen[i] && !st[i], #NAME " some index %zu", i);                 \
                    if (i < (size_t)npes && !seen[i]) {                                                           \
                        CHECK(flags[i] == (T)(i + 1));                                                            \
                        seen[i] = 1, st[i] = 1, left_to_see--;                                                    \
                    }                                                                                             \
                }                                                                                                 \
                if (cnt == 0) break;                                                                              \
            }                                                                                                     \
            CHECK_MSG(left_to_see == 0, #NAME " some: %d PEs never seen", left_to_see);                           \
            /* Everything excluded now: the empty set. */                                                         \
            CHECK(shmem_##NAME##_wait_until_some(flags, nel, idx, st, SHMEM_CMP_NE, 0) == 0);                     \
            multi_check_##NAME(flags, 7, #NAME " some");                                                          \
        }                                                                                                         \
        /* _vector forms: element i waits for the value i + 1. */                                                 \
        multi_reset_##NAME(flags, 0);                                                                             \
        if (z) {                                                                                                  \
            shmem_##NAME##_wait_until_all_vector(flags, nel, status, SHMEM_CMP_EQ, cmpv);                         \
            for (int p = 0; p < npes; p++) CHECK_MSG(flags[p] == (T)(p + 1), #NAME " all_vector: flag %d", p);    \
            multi_check_##NAME(flags, 0, #NAME " all_vector");                                                    \
        }                                                                                                         \
        multi_reset_##NAME(flags, 99);                                                                            \
        if (z) {                                                                                                  \
            r = shmem_##NAME##_wait_until_any_vector(flags, nel, status, SHMEM_CMP_EQ, cmpv);                     \
            CHECK_MSG(r < (size_t)npes, #NAME " any_vector returned %zu", r);                                     \
            if (r < (size_t)npes) CHECK(flags[r] == (T)(r + 1));                                                  \
            multi_check_##NAME(flags, 99, #NAME " any_vector");                                                   \
        }                                                                                                         \
        multi_reset_##NAME(flags, 99);                                                                            \
        if (z) {                                                                                                  \
            int st[1024], left_to_see = npes;                                                                     \
            memcpy(st, status, nel * sizeof(int));                                                                \
            memset(seen, 0, nel);                                                                                 \
            for (int guard = 0; left_to_see > 0 && guard < 100000; guard++) {                                     \
                cnt = shmem_##NAME##_wait_until_some_vector(flags, nel, idx, st, SHMEM_CMP_GE, cmpv);             \
                CHECK_MSG(cnt >= 1 && cnt <= (size_t)left_to_see, #NAME " some_vector returned %zu", cnt);        \
                for (size_t j = 0; j < cnt && j < nel; j++) {                                                     \
                    const size_t i = idx[j];                                                                      \
                    CHECK_MSG(i < (size_t)npes && !seen[i] && !st[i], #NAME " some_vector index %zu", i);          \
                    if (i < (size_t)npes && !seen[i]) seen[i] = 1, st[i] = 1, left_to_see--;                      \
                }                                                                                                 \
                if (cnt == 0) break;                                                                              \
            }                                                                                                     \
            CHECK_MSG(left_to_see == 0, #NAME " some_vector: %d PEs never seen", left_to_see);                    \
            CHECK(shmem_##NAME##_wait_until_some_vector(flags, nel, idx, st, SHMEM_CMP_GE, cmpv) == 0);           \
            multi_check_##NAME(flags, 99, #NAME " some_vector");                                                  \
        }                                                                                                         \
        /* test_*: nothing is written before the barrier of the reset. */                                         \
        if (z) {                                                                                                  \
            for (int p = 0; p < npes; p++) flags[p] = 0;                                                          \
            flags[npes] = 7;                                                                                      \
            CHECK(shmem_##NAME##_test_all(flags, nel, status, SHMEM_CMP_NE, 0) == 0);                             \
            CHECK(shmem_##NAME##_test_any(flags, nel, status, SHMEM_CMP_NE, 0) == SIZE_MAX);                      \
            CHECK(shmem_##NAME##_test_some(flags, nel, idx, status, SHMEM_CMP_NE, 0) == 0);                       \
            CHECK(shmem_##NAME##_test_all_vector(flags, nel, status, SHMEM_CMP_EQ, cmpv) == 0);                   \
            CHECK(shmem_##NAME##_test_any_vector(flags, nel, status, SHMEM_CMP_EQ, cmpv) == SIZE_MAX);            \
            CHECK(shmem_##NAME##_test_some_vector(flags, nel, idx, status, SHMEM_CMP_EQ, cmpv) == 0);             \
            /* The decoy alone satisfies, unmasked. */                                                            \
            CHECK(shmem_##NAME##_test_any(flags, nel, NULL, SHMEM_CMP_NE, 0) == (size_t)npes);                    \
            CHECK(shmem_##NAME##_test_some(flags, nel, idx, NULL, SHMEM_CMP_NE, 0) == 1 && idx[0] == (size_t)npes); \
        }                                                                                                         \
        multi_reset_##NAME(flags, 7);                                                                             \
        if (z) {                                                                                                  \
            long spins = 0;                                                                                       \
            while (!shmem_##NAME##_test_all(flags, nel, status, SHMEM_CMP_NE, 0)) spins++;                        \
            for (int p = 0; p < npes; p++) CHECK_MSG(flags[p] == (T)(p + 1), #NAME " test_all: flag %d", p);     \
            CHECK(shmem_test_all(flags, nel, status, SHMEM_CMP_NE, 0) == 1);                                      \
            CHECK(shmem_##NAME##_test_all_vector(flags, nel, status, SHMEM_CMP_EQ, cmpv) == 1);                   \
            cnt = shmem_##NAME##_test_some(flags, nel, idx, status, SHMEM_CMP_NE, 0);                             \
            CHECK_MSG(cnt == (size_t)npes, #NAME " test_some returned %zu", cnt);                                 \
            memset(seen, 0, nel);                                                                                 \
            for (size_t j = 0; j < cnt && j < nel; j++)                                                           \
                if (idx[j] < nel) seen[idx[j]]++;                                                                 \
            for (int p = 0; p < npes; p++) CHECK_MSG(seen[p] == 1, #NAME " test_some: PE %d seen %d times", p, seen[p]); \
            cnt = shmem_##NAME##_test_some_vector(flags, nel, idx, status, SHMEM_CMP_EQ, cmpv);                   \
            CHECK_MSG(cnt == (size_t)npes, #NAME " test_some_vector returned %zu", cnt);                          \
            /* Only the last PE's element allowed. */                                                             \
            int st[1024];                                                                                         \
            for (size_t i = 0; i < nel; i++) st[i] = 1;                                                           \
            st[npes - 1] = 0;                                                                                     \
            CHECK(shmem_##NAME##_test_any(flags, nel, st, SHMEM_CMP_NE, 0) == (size_t)npes - 1);                  \
            CHECK(shmem_test_any(flags, nel, st, SHMEM_CMP_NE, 0) == (size_t)npes - 1);                           \
            CHECK(shmem_##NAME##_test_any_vector(flags, nel, st, SHMEM_CMP_EQ, cmpv) == (size_t)npes - 1);        \
            /* A value that does not match its vector entry. */                                                   \
            cmpv[0] = 55;                                                                                         \
            CHECK(shmem_##NAME##_test_all_vector(flags, nel, status, SHMEM_CMP_EQ, cmpv) == 0);                   \
            cmpv[0] = 1;                                                                                          \
            multi_check_##NAME(flags, 7, #NAME " test");                                                          \
        }                                                                                                         \
        /* Empty sets: no elements, or every element excluded. */                                                 \
        if (z) {                                                                                                  \
            shmem_##NAME##_wait_until_all(flags, 0, NULL, SHMEM_CMP_EQ, 12);                                      \
            shmem_##NAME##_wait_until_all(flags, nel, none, SHMEM_CMP_EQ, 12);                                    \
            shmem_##NAME##_wait_until_all_vector(flags, nel, none, SHMEM_CMP_EQ, cmpv);                           \
            CHECK(shmem_##NAME##_wait_until_any(flags, 0, NULL, SHMEM_CMP_EQ, 12) == SIZE_MAX);                   \
            CHECK(shmem_##NAME##_wait_until_any(flags, nel, none, SHMEM_CMP_NE, 0) == SIZE_MAX);                  \
            CHECK(shmem_##NAME##_wait_until_any_vector(flags, nel, none, SHMEM_CMP_EQ, cmpv) == SIZE_MAX);        \
            CHECK(shmem_##NAME##_wait_until_some(flags, 0, idx, NULL, SHMEM_CMP_EQ, 12) == 0);                    \
            CHECK(shmem_##NAME##_wait_until_some(flags, nel, idx, none, SHMEM_CMP_NE, 0) == 0);                   \
            CHECK(shmem_##NAME##_wait_until_some_vector(flags, nel, idx, none, SHMEM_CMP_EQ, cmpv) == 0);         \
            CHECK(shmem_##NAME##_test_all(flags, 0, NULL, SHMEM_CMP_EQ, 12) == 1);                                \
            CHECK(shmem_##NAME##_test_all(flags, nel, none, SHMEM_CMP_EQ, 12) == 1);                              \
            CHECK(shmem_##NAME##_test_all_vector(flags, nel, none, SHMEM_CMP_EQ, cmpv) == 1);                     \
            CHECK(shmem_##NAME##_test_any(flags, 0, NULL, SHMEM_CMP_NE, 0) == SIZE_MAX);                          \
            CHECK(shmem_##NAME##_test_any(flags, nel, none, SHMEM_CMP_NE, 0) == SIZE_MAX);                        \
            CHECK(shmem_##NAME##_test_any_vector(flags, nel, none, SHMEM_CMP_EQ, cmpv) == SIZE_MAX);              \
            CHECK(shmem_##NAME##_test_some(flags, 0, idx, NULL, SHMEM_CMP_NE, 0) == 0);                           \
            CHECK(shmem_##NAME##_test_some(flags, nel, idx, none, SHMEM_CMP_NE, 0) == 0);                         \
            CHECK(shmem_##NAME##_test_some_vector(flags, nel, idx, none, SHMEM_CMP_EQ, cmpv) == 0);               \
        }                                                                                                         \
        shmem_barrier_all();                                                                                      \
        free(seen);                                                                                               \
        free(cmpv);                                                                                               \
        free(idx);                                                                                                \
        free(none);                                                                                               \
        free(status);                                                                                             \
        shmem_free(flags);                                                                                        \
    }

DEFINE_MULTI_TEST(int, int)
DEFINE_MULTI_TEST(uint64_t, uint64)
DEFINE_MULTI_TEST(size_t, size)
DEFINE_MULTI_TEST(short, short)

/* Part 3: deprecated forms. */
static int dep_int;
static long dep_long;

static void deprecated_waits(void)
{
    dep_int = -3;
    dep_long = 1L << 40;
    shmem_barrier_all();
    shmem_int_p(&dep_int, 1000 + me, right);
    shmem_int_wait(&dep_int, -3);
    CHECK_MSG(dep_int == 1000 + left, "dep_int %d", dep_int);
    shmem_long_p(&dep_long, -(long)me - 1, right);
    shmem_wait(&dep_long, 1L << 40);
    CHECK_MSG(dep_long == -(long)left - 1, "dep_long %ld", dep_long);
    shmem_barrier_all();
}

int main(void)
{
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    test_pe = me;
    right = (me + 1) % npes;
    left = (me - 1 + npes) % npes;
    if (npes + 1 > 1024) return TEST_SKIP;

    cmp_short();
    cmp_int();
    cmp_long();
    cmp_longlong();
    cmp_ushort();
    cmp_uint();
    cmp_ulong();
    cmp_ulonglong();
    cmp_int32();
    cmp_int64();
    cmp_uint32();
    cmp_uint64();
    cmp_size();
    cmp_ptrdiff();

    multi_int();
    multi_uint64();
    multi_size();
    multi_short();

    deprecated_waits();
    shmem_finalize();
    return test_finish();
}
