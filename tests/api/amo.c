/* amo.c: every atomic memory operation on every type of its type set,
 * checked against a serial reference.
 * Each PE owns slot me + 1 of an array on its right neighbour (slots 0 and
 * npes + 1 are guards nobody touches), so its results are exactly those of
 * the serial reference. Per type:
 *  - standard set (fetch, set, swap), also float and double: plain, ctx on
 *    SHMEM_CTX_DEFAULT, _nbi + quiet, and the C11 generic shmem_atomic_*;
 *  - extended set (compare_swap success and failure, fetch_inc/inc,
 *    fetch_add/add) with wrap-around (MAX + 1, 0 - 1) and sign edges, a
 *    failing compare that differs only in the top or the bottom bit, and
 *    several outstanding fetch_inc_nbi before one quiet;
 *  - bitwise set (and/or/xor and the fetch_ forms) with top-bit masks;
 *  - the deprecated names (shmem_int_fadd, shmem_long_cswap, shmem_float_swap...).
 * Every sequence runs on a shmem_malloc'd array and on a static array; the
 * owner then checks in its own memory that the slot holds the reference
 * value (sent along with shmem_putmem) and that the guards are untouched. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <shmem.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"

#define MAXPES 64

static int me, npes, right, left;
static unsigned char *xref; /* symmetric: (npes + 2) * 16 bytes of reference values */

/* Bitwise equality: tells -0.0 from 0.0 and catches a value that went
 * through the wrong type. */
#define SAME(a, b) (memcmp(&(a), &(b), sizeof(a)) == 0)
#define CHECK_SAME(got, want, ...)                                                         \
    do {                                                                                   \
        __typeof__(want) want_ = (want), got_ = (got);                                     \
        CHECK_MSG(SAME(got_, want_), __VA_ARGS__);                                         \
    } while (0)

/* The owner's view: after a sequence on base[me + 1] of the right
 * neighbour, each PE sends its reference value; the owner compares its
 * own slot of the left neighbour and the guards. */
static void verify_bytes(void *base, const void *ref, size_t elem, const void *guard, const char *what)
{
    unsigned char *b = base;
    shmem_putmem(xref + (size_t)(me + 1) * 16, ref, elem, right);
    shmem_barrier_all();
    CHECK_MSG(memcmp(b + (size_t)(left + 1) * elem, xref + (size_t)(left + 1) * 16, elem) == 0,
              "%s: slot of PE %d in owner's memory differs from its reference", what, left);
    CHECK_MSG(memcmp(b, guard, elem) == 0, "%s: low guard changed", what);
    CHECK_MSG(memcmp(b + (size_t)(npes + 1) * elem, guard, elem) == 0, "%s: high guard changed", what);
    shmem_barrier_all();
}

/* Standard AMO set: fetch, set, swap. Returns the reference value. */
#define DEFINE_STD(T, NAME)                                                                                       \
    static T std_##NAME(T *base, unsigned salt, const T *edge, int nedge)                                       \
    {                                                                                                             \
        T *d = &base[me + 1];                                                                                     \
        const int pe = right;                                                                                     \
        const shmem_ctx_t ctx = SHMEM_CTX_DEFAULT;                                                                \
        T v[16], ref, f, fa, fb;                                                                                  \
        for (int k = 0; k < 16; k++) v[k] = (T)TEST_VALUE(T, me, (size_t)k, salt);                              \
        for (int k = 0; k < nedge && k < 16; k++) v[k * 2 + 1] = edge[k]; /* edge values interleaved */          \
        memset(&fa, 0xEE, sizeof fa);                                                                             \
        memset(&fb, 0xEE, sizeof fb);                                                                             \
        shmem_##NAME##_atomic_set(d, v[0], pe);                                                                   \
        ref = v[0];                                                                                               \
        CHECK_SAME(shmem_##NAME##_atomic_fetch(d, pe), ref, #NAME " set/fetch");                                 \
        f = shmem_##NAME##_atomic_swap(d, v[1], pe);                                                              \
        CHECK_SAME(f, ref, #NAME " swap returned the old value");                                                 \
        ref = v[1];                                                                                               \
        CHECK_SAME(shmem_##NAME##_atomic_fetch(d, pe), ref, #NAME " swap stored");                               \
        shmem_ctx_##NAME##_atomic_set(ctx, d, v[2], pe);                                                          \
        ref = v[2];                                                                                               \
        CHECK_SAME(shmem_ctx_##NAME##_atomic_fetch(ctx, d, pe), ref, #NAME " ctx set/fetch");                    \
        f = shmem_ctx_##NAME##_atomic_swap(ctx, d, v[3], pe);                                                     \
        CHECK_SAME(f, ref, #NAME " ctx swap");                                                                    \
        ref = v[3];                                                                                               \
        shmem_##NAME##_atomic_fetch_nbi(&fa, d, pe);                                                              \
        shmem_quiet();                                                                                            \
        CHECK_SAME(fa, ref, #NAME " fetch_nbi");                                                                  \
        shmem_##NAME##_atomic_swap_nbi(&fb, d, v[4], pe);                                                         \
        shmem_quiet();                                                                                            \
        CHECK_SAME(fb, ref, #NAME " swap_nbi");                                                                   \
        ref = v[4];                                                                                               \
        shmem_ctx_##NAME##_atomic_fetch_nbi(ctx, &fa, d, pe);                                                     \
        shmem_ctx_quiet(ctx);                                                                                     \
        CHECK_SAME(fa, ref, #NAME " ctx fetch_nbi");                                                              \
        shmem_ctx_##NAME##_atomic_swap_nbi(ctx, &fb, d, v[5], pe);                                                \
        shmem_ctx_quiet(ctx);                                                                                     \
        CHECK_SAME(fb, ref, #NAME " ctx swap_nbi");                                                               \
        ref = v[5];                                                                                               \
        /* C11 generics, with and without a ctx. */                                                               \
        CHECK_SAME(shmem_atomic_fetch(d, pe), ref, #NAME " generic fetch");                                      \
        shmem_atomic_set(d, v[6], pe);                                                                            \
        ref = v[6];                                                                                               \
        CHECK_SAME(shmem_atomic_fetch(ctx, d, pe), ref, #NAME " generic ctx fetch");                             \
        f = shmem_atomic_swap(d, v[7], pe);                                                                       \
        CHECK_SAME(f, ref, #NAME " generic swap");                                                                \
        ref = v[7];                                                                                               \
        shmem_atomic_set(ctx, d, v[8], pe);                                                                       \
        ref = v[8];                                                                                               \
        f = shmem_atomic_swap(ctx, d, v[9], pe);                                                                  \
        CHECK_SAME(f, ref, #NAME " generic ctx swap");                                                            \
        ref = v[9];                                                                                               \
        shmem_atomic_fetch_nbi(&fa, d, pe);                                                                       \
        shmem_atomic_swap_nbi(&fb, d, v[10], pe); /* unordered: fa sees either value */        \
        shmem_quiet();                                                                                            \
        CHECK_SAME(fb, ref, #NAME " generic swap_nbi");                                                           \
        CHECK(SAME(fa, ref) || SAME(fa, v[10]));                                                                  \
        ref = v[10];                                                                                              \
        shmem_atomic_swap_nbi(ctx, &fb, d, v[11], pe);                                                            \
        shmem_ctx_quiet(ctx);                                                                                     \
        shmem_atomic_fetch_nbi(ctx, &fa, d, pe);                                                                  \
        shmem_ctx_quiet(ctx);                                                                                     \
        CHECK_SAME(fb, ref, #NAME " generic ctx swap_nbi");                                                       \
        ref = v[11];                                                                                              \
        CHECK_SAME(fa, ref, #NAME " generic ctx fetch_nbi");                                                      \
        /* Every edge value through set, swap and fetch. */                                                       \
        for (int k = 0; k < nedge; k++) {                                                                         \
            f = shmem_##NAME##_atomic_swap(d, edge[k], pe);                                                       \
            CHECK_SAME(f, ref, #NAME " edge swap %d", k);                                                         \
            ref = edge[k];                                                                                        \
            CHECK_SAME(shmem_##NAME##_atomic_fetch(d, pe), ref, #NAME " edge fetch %d", k);                      \
        }                                                                                                         \
        return ref;                                                                                               \
    }

/* Extended AMO set: compare_swap, fetch_inc/inc, fetch_add/add. U is the
 * unsigned type of the same width: the reference wraps in it. */
#define DEFINE_EXT(T, NAME, U, MINV, MAXV)                                                                        \
    static T ext_##NAME(T *base, unsigned salt)                                                                   \
    {                                                                                                             \
        T *d = &base[me + 1];                                                                                     \
        const int pe = right;                                                                                     \
        const shmem_ctx_t ctx = SHMEM_CTX_DEFAULT;                                                                \
        const T mn = MINV, mx = MAXV, top = (T)((U)1 << (sizeof(T) * CHAR_BIT - 1));                              \
        T v[16], ref, f, fa, fb, fs[4];                                                                           \
        for (int k = 0; k < 16; k++) v[k] = (T)TEST_VALUE(T, me, (size_t)k, salt);                              \
        _Static_assert(sizeof(T) == sizeof(U), "U must match T");                                                 \
        /* Wrap-around: MAX + 1 is MIN (two's complement) or 0. */                                                \
        shmem_##NAME##_atomic_set(d, mx, pe);                                                                     \
        ref = mx;                                                                                                 \
        f = shmem_##NAME##_atomic_fetch_inc(d, pe);                                                               \
        CHECK_SAME(f, ref, #NAME " fetch_inc at MAX");                                                            \
        ref = mn;                                                                                                 \
        CHECK_SAME(shmem_##NAME##_atomic_fetch(d, pe), ref, #NAME " MAX + 1 wraps to MIN");                      \
        shmem_##NAME##_atomic_inc(d, pe);                                                                         \
        ref = (T)((U)ref + 1);                                                                                    \
        CHECK_SAME(shmem_##NAME##_atomic_fetch(d, pe), ref, #NAME " inc");                                       \
        /* MIN + 1 - 2 wraps back to MAX. */                                                                      \
        f = shmem_##NAME##_atomic_fetch_add(d, (T)((U)0 - 2), pe);                                               \
        CHECK_SAME(f, ref, #NAME " fetch_add -2");                                                                \
        ref = mx;                                                                                                 \
        CHECK_SAME(shmem_##NAME##_atomic_fetch(d, pe), ref, #NAME " MIN - 1 wraps to MAX");                      \
        shmem_##NAME##_atomic_add(d, mx, pe); /* MAX + MAX = -2 (mod 2^bits) */                                   \
        ref = (T)((U)0 - 2);                                                                                      \
        CHECK_SAME(shmem_##NAME##_atomic_fetch(d, pe), ref, #NAME " MAX + MAX");                                 \
        /* 0 - 1: -1 for signed types, MAX for unsigned ones. */                                                  \
        shmem_##NAME##_atomic_set(d, (T)0, pe);                                                                   \
        f = shmem_##NAME##_atomic_fetch_add(d, (T)((U)0 - 1), pe);                                               \
        CHECK_SAME(f, (T)0, #NAME " fetch_add on 0");                                                             \
        ref = (T)((U)0 - 1);                                                                                      \
        CHECK_SAME(shmem_##NAME##_atomic_fetch(d, pe), ref, #NAME " 0 - 1");                                     \
        if ((U)mn != 0) /* signed: 0 - 1 is negative */                                                           \
            CHECK_MSG(((U)shmem_##NAME##_atomic_fetch(d, pe) & (U)top) != 0, #NAME " 0 - 1 is negative");          \
        /* Pseudo-random operands of both signs. */                                                               \
        for (int k = 0; k < 4; k++) {                                                                             \
            f = shmem_##NAME##_atomic_fetch_add(d, v[k], pe);                                                     \
            CHECK_SAME(f, ref, #NAME " fetch_add %d", k);                                                         \
            ref = (T)((U)ref + (U)v[k]);                                                                          \
            shmem_##NAME##_atomic_add(d, v[k + 4], pe);                                                           \
            ref = (T)((U)ref + (U)v[k + 4]);                                                                      \
            CHECK_SAME(shmem_##NAME##_atomic_fetch(d, pe), ref, #NAME " add %d", k);                             \
        }                                                                                                         \
        /* compare_swap: failures differing in the top bit only, the low bit only, then success. */              \
        f = shmem_##NAME##_atomic_compare_swap(d, (T)((U)ref ^ (U)top), v[8], pe);                               \
        CHECK_SAME(f, ref, #NAME " cswap fail (top bit) returned");                                               \
        CHECK_SAME(shmem_##NAME##_atomic_fetch(d, pe), ref, #NAME " cswap fail (top bit) left the value");       \
        f = shmem_##NAME##_atomic_compare_swap(d, (T)((U)ref ^ 1u), v[8], pe);                                   \
        CHECK_SAME(f, ref, #NAME " cswap fail (low bit) returned");                                               \
        CHECK_SAME(shmem_##NAME##_atomic_fetch(d, pe), ref, #NAME " cswap fail (low bit) left the value");       \
        f = shmem_##NAME##_atomic_compare_swap(d, ref, v[8], pe);                                                 \
        CHECK_SAME(f, ref, #NAME " cswap success returned");                                                      \
        ref = v[8];                                                                                               \
        CHECK_SAME(shmem_##NAME##_atomic_fetch(d, pe), ref, #NAME " cswap success stored");                      \
        f = shmem_##NAME##_atomic_compare_swap(d, ref, mn, pe);                                                   \
        CHECK_SAME(f, ref, #NAME " cswap to MIN");                                                                \
        ref = mn;                                                                                                 \
        f = shmem_##NAME##_atomic_compare_swap(d, mn, mx, pe);                                                    \
        CHECK_SAME(f, ref, #NAME " cswap MIN to MAX");                                                            \
        ref = mx;                                                                                                 \
        /* ctx forms. */                                                                                          \
        f = shmem_ctx_##NAME##_atomic_fetch_inc(ctx, d, pe);                                                      \
        CHECK_SAME(f, ref, #NAME " ctx fetch_inc");                                                               \
        ref = (T)((U)ref + 1);                                                                                    \
        shmem_ctx_##NAME##_atomic_inc(ctx, d, pe);                                                                \
        ref = (T)((U)ref + 1);                                                                                    \
        f = shmem_ctx_##NAME##_atomic_fetch_add(ctx, d, v[9], pe);                                                \
        CHECK_SAME(f, ref, #NAME " ctx fetch_add");                                                               \
        ref = (T)((U)ref + (U)v[9]);                                                                              \
        shmem_ctx_##NAME##_atomic_add(ctx, d, v[10], pe);                                                         \
        ref = (T)((U)ref + (U)v[10]);                                                                             \
        f = shmem_ctx_##NAME##_atomic_compare_swap(ctx, d, (T)((U)ref + 1), v[11], pe);                          \
        CHECK_SAME(f, ref, #NAME " ctx cswap fail");                                                              \
        f = shmem_ctx_##NAME##_atomic_compare_swap(ctx, d, ref, v[11], pe);                                       \
        CHECK_SAME(f, ref, #NAME " ctx cswap success");                                                           \
        ref = v[11];                                                                                              \
        CHECK_SAME(shmem_ctx_##NAME##_atomic_fetch(ctx, d, pe), ref, #NAME " ctx sequence");                     \
        /* nbi forms, one at a time. */                                                                           \
        shmem_##NAME##_atomic_fetch_inc_nbi(&fa, d, pe);                                                          \
        shmem_quiet();                                                                                            \
        CHECK_SAME(fa, ref, #NAME " fetch_inc_nbi");                                                              \
        ref = (T)((U)ref + 1);                                                                                    \
        shmem_##NAME##_atomic_fetch_add_nbi(&fb, d, v[12], pe);                                                   \
        shmem_quiet();                                                                                            \
        CHECK_SAME(fb, ref, #NAME " fetch_add_nbi");                                                              \
        ref = (T)((U)ref + (U)v[12]);                                                                             \
        shmem_##NAME##_atomic_compare_swap_nbi(&fa, d, (T)((U)ref ^ (U)top), v[13], pe);                         \
        shmem_quiet();                                                                                            \
        CHECK_SAME(fa, ref, #NAME " compare_swap_nbi fail");                                                      \
        shmem_##NAME##_atomic_compare_swap_nbi(&fb, d, ref, v[13], pe);                                           \
        shmem_quiet();                                                                                            \
        CHECK_SAME(fb, ref, #NAME " compare_swap_nbi success");                                                   \
        ref = v[13];                                                                                              \
        shmem_ctx_##NAME##_atomic_fetch_inc_nbi(ctx, &fa, d, pe);                                                 \
        shmem_ctx_quiet(ctx);                                                                                     \
        CHECK_SAME(fa, ref, #NAME " ctx fetch_inc_nbi");                                                          \
        ref = (T)((U)ref + 1);                                                                                    \
        shmem_ctx_##NAME##_atomic_fetch_add_nbi(ctx, &fb, d, v[14], pe);                                          \
        shmem_ctx_quiet(ctx);                                                                                     \
        CHECK_SAME(fb, ref, #NAME " ctx fetch_add_nbi");                                                          \
        ref = (T)((U)ref + (U)v[14]);                                                                             \
        shmem_ctx_##NAME##_atomic_compare_swap_nbi(ctx, &fa, d, ref, v[15], pe);                                  \
        shmem_ctx_quiet(ctx);                                                                                     \
        CHECK_SAME(fa, ref, #NAME " ctx compare_swap_nbi");                                                       \
        ref = v[15];                                                                                              \
        /* Four outstanding fetch_inc_nbi, one quiet: a permutation of ref..ref+3. */                             \
        for (int k = 0; k < 4; k++) memset(&fs[k], 0xEE, sizeof fs[k]);                                           \
        for (int k = 0; k < 4; k++) shmem_##NAME##_atomic_fetch_inc_nbi(&fs[k], d, pe);                           \
        shmem_quiet();                                                                                            \
        {                                                                                                         \
            int seen = 0;                                                                                         \
            for (int k = 0; k < 4; k++) {                                                                         \
                U off = (U)fs[k] - (U)ref;                                                                        \
                CHECK_MSG(off < 4 && !(seen & (1 << off)), #NAME " outstanding fetch_inc_nbi %d", k);             \
                if (off < 4) seen |= 1 << off;                                                                    \
            }                                                                                                     \
        }                                                                                                         \
        ref = (T)((U)ref + 4);                                                                                    \
        CHECK_SAME(shmem_##NAME##_atomic_fetch(d, pe), ref, #NAME " after 4 fetch_inc_nbi");                     \
        /* C11 generics. */                                                                                       \
        f = shmem_atomic_fetch_inc(d, pe);                                                                        \
        CHECK_SAME(f, ref, #NAME " generic fetch_inc");                                                           \
        ref = (T)((U)ref + 1);                                                                                    \
        shmem_atomic_inc(d, pe);                                                                                  \
        ref = (T)((U)ref + 1);                                                                                    \
        f = shmem_atomic_fetch_add(d, v[1], pe);                                                                  \
        CHECK_SAME(f, ref, #NAME " generic fetch_add");                                                           \
        ref = (T)((U)ref + (U)v[1]);                                                                              \
        shmem_atomic_add(d, v[2], pe);                                                                            \
        ref = (T)((U)ref + (U)v[2]);                                                                              \
        f = shmem_atomic_compare_swap(d, (T)((U)ref ^ (U)top), v[3], pe);                                        \
        CHECK_SAME(f, ref, #NAME " generic cswap fail");                                                          \
        f = shmem_atomic_compare_swap(d, ref, v[3], pe);                                                          \
        CHECK_SAME(f, ref, #NAME " generic cswap");                                                               \
        ref = v[3];                                                                                               \
        f = shmem_atomic_fetch_inc(ctx, d, pe);                                                                   \
        CHECK_SAME(f, ref, #NAME " generic ctx fetch_inc");                                                       \
        ref = (T)((U)ref + 1);                                                                                    \
        shmem_atomic_inc(ctx, d, pe);                                                                             \
        ref = (T)((U)ref + 1);                                                                                    \
        f = shmem_atomic_fetch_add(ctx, d, v[4], pe);                                                             \
        CHECK_SAME(f, ref, #NAME " generic ctx fetch_add");                                                       \
        ref = (T)((U)ref + (U)v[4]);                                                                              \
        shmem_atomic_add(ctx, d, v[5], pe);                                                                       \
        ref = (T)((U)ref + (U)v[5]);                                                                              \
        f = shmem_atomic_compare_swap(ctx, d, ref, v[6], pe);                                                     \
        CHECK_SAME(f, ref, #NAME " generic ctx cswap");                                                           \
        ref = v[6];                                                                                               \
        shmem_atomic_fetch_inc_nbi(&fa, d, pe);                                                                   \
        shmem_quiet();                                                                                            \
        CHECK_SAME(fa, ref, #NAME " generic fetch_inc_nbi");                                                      \
        ref = (T)((U)ref + 1);                                                                                    \
        shmem_atomic_fetch_add_nbi(&fb, d, v[7], pe);                                                             \
        shmem_quiet();                                                                                            \
        CHECK_SAME(fb, ref, #NAME " generic fetch_add_nbi");                                                      \
        ref = (T)((U)ref + (U)v[7]);                                                                              \
        shmem_atomic_compare_swap_nbi(&fa, d, ref, v[9], pe);                                                     \
        shmem_quiet();                                                                                            \
        CHECK_SAME(fa, ref, #NAME " generic compare_swap_nbi");                                                   \
        ref = v[9];                                                                                               \
        shmem_atomic_fetch_inc_nbi(ctx, &fa, d, pe);                                                              \
        shmem_ctx_quiet(ctx);                                                                                     \
        CHECK_SAME(fa, ref, #NAME " generic ctx fetch_inc_nbi");                                                  \
        ref = (T)((U)ref + 1);                                                                                    \
        shmem_atomic_fetch_add_nbi(ctx, &fb, d, v[10], pe);                                                       \
        shmem_ctx_quiet(ctx);                                                                                     \
        CHECK_SAME(fb, ref, #NAME " generic ctx fetch_add_nbi");                                                  \
        ref = (T)((U)ref + (U)v[10]);                                                                             \
        shmem_atomic_compare_swap_nbi(ctx, &fa, d, (T)((U)ref + 1), v[11], pe);                                  \
        shmem_ctx_quiet(ctx);                                                                                     \
        CHECK_SAME(fa, ref, #NAME " generic ctx compare_swap_nbi fail");                                          \
        CHECK_SAME(shmem_##NAME##_atomic_fetch(d, pe), ref, #NAME " end of extended sequence");                  \
        return ref;                                                                                               \
    }

/* Bitwise AMO set: and, or, xor and their fetch_ forms. */
#define DEFINE_BIT(T, NAME, U)                                                                                    \
    static T bit_##NAME(T *base, unsigned salt)                                                                   \
    {                                                                                                             \
        T *d = &base[me + 1];                                                                                     \
        const int pe = right;                                                                                     \
        const shmem_ctx_t ctx = SHMEM_CTX_DEFAULT;                                                                \
        const T top = (T)((U)1 << (sizeof(T) * CHAR_BIT - 1)), ones = (T)~(U)0;                                   \
        T v[16], ref, f, fa;                                                                                      \
        for (int k = 0; k < 16; k++) v[k] = (T)TEST_VALUE(T, me, (size_t)k, salt);                              \
        shmem_##NAME##_atomic_set(d, v[0], pe);                                                                   \
        ref = v[0];                                                                                               \
        f = shmem_##NAME##_atomic_fetch_xor(d, ones, pe);                                                         \
        CHECK_SAME(f, ref, #NAME " fetch_xor ones");                                                              \
        ref = (T)((U)ref ^ (U)ones);                                                                              \
        CHECK_SAME(shmem_##NAME##_atomic_fetch(d, pe), ref, #NAME " xor ones");                                  \
        shmem_##NAME##_atomic_or(d, top, pe);                                                                     \
        ref = (T)((U)ref | (U)top);                                                                               \
        CHECK_SAME(shmem_##NAME##_atomic_fetch(d, pe), ref, #NAME " or top");                                    \
        f = shmem_##NAME##_atomic_fetch_and(d, (T)~(U)top, pe);                                                   \
        CHECK_SAME(f, ref, #NAME " fetch_and ~top");                                                              \
        ref = (T)((U)ref & ~(U)top);                                                                              \
        CHECK_SAME(shmem_##NAME##_atomic_fetch(d, pe), ref, #NAME " and ~top");                                  \
        for (int k = 1; k < 4; k++) {                                                                             \
            f = shmem_##NAME##_atomic_fetch_and(d, v[k], pe);                                                     \
            CHECK_SAME(f, ref, #NAME " fetch_and %d", k);                                                         \
            ref = (T)((U)ref & (U)v[k]);                                                                          \
            f = shmem_##NAME##_atomic_fetch_or(d, v[k + 3], pe);                                                  \
            CHECK_SAME(f, ref, #NAME " fetch_or %d", k);                                                          \
            ref = (T)((U)ref | (U)v[k + 3]);                                                                      \
            f = shmem_##NAME##_atomic_fetch_xor(d, v[k + 6], pe);                                                 \
            CHECK_SAME(f, ref, #NAME " fetch_xor %d", k);                                                         \
            ref = (T)((U)ref ^ (U)v[k + 6]);                                                                      \
            shmem_##NAME##_atomic_and(d, (T)((U)v[k + 9] | (U)top), pe);                                          \
            ref = (T)((U)ref & ((U)v[k + 9] | (U)top));                                                           \
            shmem_##NAME##_atomic_or(d, (T)((U)v[k + 12] & 0xF0F0u), pe);                                         \
            ref = (T)((U)ref | ((U)v[k + 12] & 0xF0F0u));                                                         \
            shmem_##NAME##_atomic_xor(d, v[k], pe);                                                               \
            ref = (T)((U)ref ^ (U)v[k]);                                                                          \
            CHECK_SAME(shmem_##NAME##_atomic_fetch(d, pe), ref, #NAME " bitwise round %d", k);                   \
        }                                                                                                         \
        /* ctx forms. */                                                                                          \
        f = shmem_ctx_##NAME##_atomic_fetch_and(ctx, d, v[4], pe);                                                \
        CHECK_SAME(f, ref, #NAME " ctx fetch_and");                                                               \
        ref = (T)((U)ref & (U)v[4]);                                                                              \
        f = shmem_ctx_##NAME##_atomic_fetch_or(ctx, d, v[5], pe);                                                 \
        CHECK_SAME(f, ref, #NAME " ctx fetch_or");                                                                \
        ref = (T)((U)ref | (U)v[5]);                                                                              \
        f = shmem_ctx_##NAME##_atomic_fetch_xor(ctx, d, v[6], pe);                                                \
        CHECK_SAME(f, ref, #NAME " ctx fetch_xor");                                                               \
        ref = (T)((U)ref ^ (U)v[6]);                                                                              \
        shmem_ctx_##NAME##_atomic_and(ctx, d, v[7], pe);                                                          \
        ref = (T)((U)ref & (U)v[7]);                                                                              \
        shmem_ctx_##NAME##_atomic_or(ctx, d, v[8], pe);                                                           \
        ref = (T)((U)ref | (U)v[8]);                                                                              \
        shmem_ctx_##NAME##_atomic_xor(ctx, d, v[9], pe);                                                          \
        ref = (T)((U)ref ^ (U)v[9]);                                                                              \
        CHECK_SAME(shmem_##NAME##_atomic_fetch(d, pe), ref, #NAME " ctx bitwise");                               \
        /* nbi forms. */                                                                                          \
        shmem_##NAME##_atomic_fetch_and_nbi(&fa, d, v[10], pe);                                                   \
        shmem_quiet();                                                                                            \
        CHECK_SAME(fa, ref, #NAME " fetch_and_nbi");                                                              \
        ref = (T)((U)ref & (U)v[10]);                                                                             \
        shmem_##NAME##_atomic_fetch_or_nbi(&fa, d, (T)((U)v[11] | (U)top), pe);                                   \
        shmem_quiet();                                                                                            \
        CHECK_SAME(fa, ref, #NAME " fetch_or_nbi");                                                               \
        ref = (T)((U)ref | (U)v[11] | (U)top);                                                                    \
        shmem_##NAME##_atomic_fetch_xor_nbi(&fa, d, v[12], pe);                                                   \
        shmem_quiet();                                                                                            \
        CHECK_SAME(fa, ref, #NAME " fetch_xor_nbi");                                                              \
        ref = (T)((U)ref ^ (U)v[12]);                                                                             \
        shmem_ctx_##NAME##_atomic_fetch_and_nbi(ctx, &fa, d, v[13], pe);                                          \
        shmem_ctx_quiet(ctx);                                                                                     \
        CHECK_SAME(fa, ref, #NAME " ctx fetch_and_nbi");                                                          \
        ref = (T)((U)ref & (U)v[13]);                                                                             \
        shmem_ctx_##NAME##_atomic_fetch_or_nbi(ctx, &fa, d, v[14], pe);                                           \
        shmem_ctx_quiet(ctx);                                                                                     \
        CHECK_SAME(fa, ref, #NAME " ctx fetch_or_nbi");                                                           \
        ref = (T)((U)ref | (U)v[14]);                                                                             \
        shmem_ctx_##NAME##_atomic_fetch_xor_nbi(ctx, &fa, d, v[15], pe);                                          \
        shmem_ctx_quiet(ctx);                                                                                     \
        CHECK_SAME(fa, ref, #NAME " ctx fetch_xor_nbi");                                                          \
        ref = (T)((U)ref ^ (U)v[15]);                                                                             \
        /* C11 generics. */                                                                                       \
        f = shmem_atomic_fetch_and(d, v[1], pe);                                                                  \
        CHECK_SAME(f, ref, #NAME " generic fetch_and");                                                           \
        ref = (T)((U)ref & (U)v[1]);                                                                              \
        f = shmem_atomic_fetch_or(d, v[2], pe);                                                                   \
        CHECK_SAME(f, ref, #NAME " generic fetch_or");                                                            \
        ref = (T)((U)ref | (U)v[2]);                                                                              \
        f = shmem_atomic_fetch_xor(d, v[3], pe);                                                                  \
        CHECK_SAME(f, ref, #NAME " generic fetch_xor");                                                           \
        ref = (T)((U)ref ^ (U)v[3]);                                                                              \
        shmem_atomic_and(d, (T)((U)v[4] | (U)top), pe);                                                           \
        ref = (T)((U)ref & ((U)v[4] | (U)top));                                                                   \
        shmem_atomic_or(d, v[5], pe);                                                                             \
        ref = (T)((U)ref | (U)v[5]);                                                                              \
        shmem_atomic_xor(d, top, pe);                                                                             \
        ref = (T)((U)ref ^ (U)top);                                                                               \
        f = shmem_atomic_fetch_and(ctx, d, v[6], pe);                                                             \
        CHECK_SAME(f, ref, #NAME " generic ctx fetch_and");                                                       \
        ref = (T)((U)ref & (U)v[6]);                                                                              \
        f = shmem_atomic_fetch_or(ctx, d, v[7], pe);                                                              \
        CHECK_SAME(f, ref, #NAME " generic ctx fetch_or");                                                        \
        ref = (T)((U)ref | (U)v[7]);                                                                              \
        f = shmem_atomic_fetch_xor(ctx, d, v[8], pe);                                                             \
        CHECK_SAME(f, ref, #NAME " generic ctx fetch_xor");                                                       \
        ref = (T)((U)ref ^ (U)v[8]);                                                                              \
        shmem_atomic_and(ctx, d, v[9], pe);                                                                       \
        ref = (T)((U)ref & (U)v[9]);                                                                              \
        shmem_atomic_or(ctx, d, v[10], pe);                                                                       \
        ref = (T)((U)ref | (U)v[10]);                                                                             \
        shmem_atomic_xor(ctx, d, v[11], pe);                                                                      \
        ref = (T)((U)ref ^ (U)v[11]);                                                                             \
        shmem_atomic_fetch_and_nbi(&fa, d, v[12], pe);                                                            \
        shmem_quiet();                                                                                            \
        CHECK_SAME(fa, ref, #NAME " generic fetch_and_nbi");                                                      \
        ref = (T)((U)ref & (U)v[12]);                                                                             \
        shmem_atomic_fetch_or_nbi(&fa, d, v[13], pe);                                                             \
        shmem_quiet();                                                                                            \
        CHECK_SAME(fa, ref, #NAME " generic fetch_or_nbi");                                                       \
        ref = (T)((U)ref | (U)v[13]);                                                                             \
        shmem_atomic_fetch_xor_nbi(ctx, &fa, d, v[14], pe);                                                       \
        shmem_ctx_quiet(ctx);                                                                                     \
        CHECK_SAME(fa, ref, #NAME " generic ctx fetch_xor_nbi");                                                  \
        ref = (T)((U)ref ^ (U)v[14]);                                                                             \
        CHECK_SAME(shmem_##NAME##_atomic_fetch(d, pe), ref, #NAME " end of bitwise sequence");                   \
        return ref;                                                                                               \
    }

/* Runs the sequences of one type on a heap array and on a static one. */
#define DEFINE_RUN(T, NAME, SEQS)                                                                                 \
    static T static_##NAME[MAXPES + 2];                                                                           \
    static void run_##NAME(void)                                                                                  \
    {                                                                                                             \
        T *heap = shmem_malloc((size_t)(npes + 2) * sizeof(T));                                                   \
        T guard;                                                                                                  \
        memset(&guard, 0x5A, sizeof guard);                                                                       \
        if (!heap) {                                                                                              \
            CHECK(!"shmem_malloc failed");                                                                        \
            return;                                                                                               \
        }                                                                                                         \
        T *bases[2] = {heap, static_##NAME};                                                                      \
        const char *where[2] = {#NAME " heap", #NAME " static"};                                                  \
        for (int b = 0; b < 2; b++) {                                                                             \
            for (int i = 0; i < npes + 2; i++) bases[b][i] = guard;                                               \
            shmem_barrier_all();                                                                                  \
            T ref;                                                                                                \
            SEQS                                                                                                  \
        }                                                                                                         \
        shmem_barrier_all();                                                                                      \
        shmem_free(heap);                                                                                         \
    }

#define SEQ_STD(NAME, EDGE, N)                                                                                    \
    ref = std_##NAME(bases[b], 11u + (unsigned)b, EDGE, N);                                                      \
    verify_bytes(bases[b], &ref, sizeof ref, &guard, where[b]);
#define SEQ_EXT(NAME)                                                                                             \
    ref = ext_##NAME(bases[b], 23u + (unsigned)b);                                                               \
    verify_bytes(bases[b], &ref, sizeof ref, &guard, where[b]);
#define SEQ_BIT(NAME)                                                                                             \
    ref = bit_##NAME(bases[b], 37u + (unsigned)b);                                                               \
    verify_bytes(bases[b], &ref, sizeof ref, &guard, where[b]);

/* Edge values of the standard set. */
static const int edge_int[] = {INT_MAX, INT_MIN, -1, 0};
static const long edge_long[] = {LONG_MAX, LONG_MIN, -1, 0};
static const long long edge_longlong[] = {LLONG_MAX, LLONG_MIN, -1, 0};
static const unsigned int edge_uint[] = {UINT_MAX, 0, 1u << 31};
static const unsigned long edge_ulong[] = {ULONG_MAX, 0, 1ul << 63};
static const unsigned long long edge_ulonglong[] = {ULLONG_MAX, 0, 1ull << 63};
static const int32_t edge_int32[] = {INT32_MAX, INT32_MIN, -1};
static const int64_t edge_int64[] = {INT64_MAX, INT64_MIN, -1};
static const uint32_t edge_uint32[] = {UINT32_MAX, 0x80000000u, 0};
static const uint64_t edge_uint64[] = {UINT64_MAX, UINT64_C(0x8000000000000000), 0};
static const size_t edge_size[] = {SIZE_MAX, 0};
static const ptrdiff_t edge_ptrdiff[] = {PTRDIFF_MAX, PTRDIFF_MIN, -1};
static float edge_float[6];
static double edge_double[6];

#define N_(a) (int)(sizeof(a) / sizeof((a)[0]))

DEFINE_STD(int, int)
DEFINE_STD(long, long)
DEFINE_STD(long long, longlong)
DEFINE_STD(unsigned int, uint)
DEFINE_STD(unsigned long, ulong)
DEFINE_STD(unsigned long long, ulonglong)
DEFINE_STD(int32_t, int32)
DEFINE_STD(int64_t, int64)
DEFINE_STD(uint32_t, uint32)
DEFINE_STD(uint64_t, uint64)
DEFINE_STD(size_t, size)
DEFINE_STD(ptrdiff_t, ptrdiff)
DEFINE_STD(float, float)
DEFINE_STD(double, double)

DEFINE_EXT(int, int, unsigned int, INT_MIN, INT_MAX)
DEFINE_EXT(long, long, unsigned long, LONG_MIN, LONG_MAX)
DEFINE_EXT(long long, longlong, unsigned long long, LLONG_MIN, LLONG_MAX)
DEFINE_EXT(unsigned int, uint, unsigned int, 0, UINT_MAX)
DEFINE_EXT(unsigned long, ulong, unsigned long, 0, ULONG_MAX)
DEFINE_EXT(unsigned long long, ulonglong, unsigned long long, 0, ULLONG_MAX)
DEFINE_EXT(int32_t, int32, uint32_t, INT32_MIN, INT32_MAX)
DEFINE_EXT(int64_t, int64, uint64_t, INT64_MIN, INT64_MAX)
DEFINE_EXT(uint32_t, uint32, uint32_t, 0, UINT32_MAX)
DEFINE_EXT(uint64_t, uint64, uint64_t, 0, UINT64_MAX)
DEFINE_EXT(size_t, size, size_t, 0, SIZE_MAX)
DEFINE_EXT(ptrdiff_t, ptrdiff, size_t, PTRDIFF_MIN, PTRDIFF_MAX)

DEFINE_BIT(unsigned int, uint, unsigned int)
DEFINE_BIT(unsigned long, ulong, unsigned long)
DEFINE_BIT(unsigned long long, ulonglong, unsigned long long)
DEFINE_BIT(int32_t, int32, uint32_t)
DEFINE_BIT(int64_t, int64, uint64_t)
DEFINE_BIT(uint32_t, uint32, uint32_t)
DEFINE_BIT(uint64_t, uint64, uint64_t)

DEFINE_RUN(int, int, SEQ_STD(int, edge_int, N_(edge_int)) SEQ_EXT(int))
DEFINE_RUN(long, long, SEQ_STD(long, edge_long, N_(edge_long)) SEQ_EXT(long))
DEFINE_RUN(long long, longlong, SEQ_STD(longlong, edge_longlong, N_(edge_longlong)) SEQ_EXT(longlong))
DEFINE_RUN(unsigned int, uint, SEQ_STD(uint, edge_uint, N_(edge_uint)) SEQ_EXT(uint) SEQ_BIT(uint))
DEFINE_RUN(unsigned long, ulong, SEQ_STD(ulong, edge_ulong, N_(edge_ulong)) SEQ_EXT(ulong) SEQ_BIT(ulong))
DEFINE_RUN(unsigned long long, ulonglong,
           SEQ_STD(ulonglong, edge_ulonglong, N_(edge_ulonglong)) SEQ_EXT(ulonglong) SEQ_BIT(ulonglong))
DEFINE_RUN(int32_t, int32, SEQ_STD(int32, edge_int32, N_(edge_int32)) SEQ_EXT(int32) SEQ_BIT(int32))
DEFINE_RUN(int64_t, int64, SEQ_STD(int64, edge_int64, N_(edge_int64)) SEQ_EXT(int64) SEQ_BIT(int64))
DEFINE_RUN(uint32_t, uint32, SEQ_STD(uint32, edge_uint32, N_(edge_uint32)) SEQ_EXT(uint32) SEQ_BIT(uint32))
DEFINE_RUN(uint64_t, uint64, SEQ_STD(uint64, edge_uint64, N_(edge_uint64)) SEQ_EXT(uint64) SEQ_BIT(uint64))
DEFINE_RUN(size_t, size, SEQ_STD(size, edge_size, N_(edge_size)) SEQ_EXT(size))
DEFINE_RUN(ptrdiff_t, ptrdiff, SEQ_STD(ptrdiff, edge_ptrdiff, N_(edge_ptrdiff)) SEQ_EXT(ptrdiff))
DEFINE_RUN(float, float, SEQ_STD(float, edge_float, N_(edge_float)))
DEFINE_RUN(double, double, SEQ_STD(double, edge_double, N_(edge_double)))

/* Deprecated names: int, long and long long have fadd, finc, add, inc,
 * cswap, swap, fetch and set; float and double have swap, fetch and set. */
#define DEFINE_DEPRECATED_INT(T, NAME, U, MINV, MAXV)                                                             \
    static T dep_static_##NAME[MAXPES + 2];                                                                       \
    static T dep_seq_##NAME(T *base)                                                                              \
    {                                                                                                             \
        T *d = &base[me + 1];                                                                                     \
        const int pe = right;                                                                                     \
        T ref, f;                                                                                                 \
        shmem_##NAME##_set(d, MAXV, pe);                                                                          \
        ref = MAXV;                                                                                               \
        CHECK_SAME(shmem_##NAME##_fetch(d, pe), ref, #NAME " deprecated set/fetch");                             \
        f = shmem_##NAME##_finc(d, pe);                                                                           \
        CHECK_SAME(f, ref, #NAME " deprecated finc");                                                             \
        ref = MINV;                                                                                               \
        CHECK_SAME(shmem_##NAME##_fetch(d, pe), ref, #NAME " deprecated finc wraps");                            \
        shmem_##NAME##_inc(d, pe);                                                                                \
        ref = (T)((U)ref + 1);                                                                                    \
        f = shmem_##NAME##_fadd(d, (T)-7, pe);                                                                    \
        CHECK_SAME(f, ref, #NAME " deprecated fadd");                                                             \
        ref = (T)((U)ref - 7);                                                                                    \
        CHECK_MSG(ref > 0, #NAME " MIN + 1 - 7 wraps positive");                                                  \
        shmem_##NAME##_add(d, (T)1000 + (T)me, pe);                                                               \
        ref = (T)((U)ref + 1000 + (U)me);                                                                         \
        CHECK_SAME(shmem_##NAME##_fetch(d, pe), ref, #NAME " deprecated add");                                   \
        f = shmem_##NAME##_cswap(d, (T)((U)ref + 1), (T)-5, pe);                                                  \
        CHECK_SAME(f, ref, #NAME " deprecated cswap fail");                                                       \
        CHECK_SAME(shmem_##NAME##_fetch(d, pe), ref, #NAME " deprecated cswap fail left the value");             \
        f = shmem_##NAME##_cswap(d, ref, (T)-5, pe);                                                              \
        CHECK_SAME(f, ref, #NAME " deprecated cswap success");                                                    \
        ref = (T)-5;                                                                                              \
        f = shmem_##NAME##_swap(d, (T)me * 3, pe);                                                                \
        CHECK_SAME(f, ref, #NAME " deprecated swap");                                                             \
        ref = (T)me * 3;                                                                                          \
        CHECK_SAME(shmem_##NAME##_fetch(d, pe), ref, #NAME " deprecated swap stored");                           \
        return ref;                                                                                               \
    }                                                                                                             \
    static void dep_##NAME(void)                                                                                  \
    {                                                                                                             \
        T *heap = shmem_malloc((size_t)(npes + 2) * sizeof(T)), guard;                                            \
        memset(&guard, 0x3C, sizeof guard);                                                                       \
        T *bases[2] = {heap, dep_static_##NAME};                                                                  \
        for (int b = 0; b < 2; b++) {                                                                             \
            for (int i = 0; i < npes + 2; i++) bases[b][i] = guard;                                               \
            shmem_barrier_all();                                                                                  \
            T ref = dep_seq_##NAME(bases[b]);                                                                     \
            verify_bytes(bases[b], &ref, sizeof ref, &guard, b ? #NAME " deprecated static" : #NAME " deprecated heap"); \
        }                                                                                                         \
        shmem_free(heap);                                                                                         \
    }

#define DEFINE_DEPRECATED_FLOAT(T, NAME)                                                                          \
    static T dep_static_##NAME[MAXPES + 2];                                                                       \
    static void dep_##NAME(void)                                                                                  \
    {                                                                                                             \
        T *heap = shmem_malloc((size_t)(npes + 2) * sizeof(T)), guard;                                            \
        memset(&guard, 0x3C, sizeof guard);                                                                       \
        T *bases[2] = {heap, dep_static_##NAME};                                                                  \
        for (int b = 0; b < 2; b++) {                                                                             \
            for (int i = 0; i < npes + 2; i++) bases[b][i] = guard;                                               \
            shmem_barrier_all();                                                                                  \
            T *d = &bases[b][me + 1], ref, f;                                                                     \
            const T a = (T)TEST_VALUE(T, me, 1, 5u + (unsigned)b), c = (T)-0.0, e = (T)TEST_VALUE(T, me, 2, 5u);  \
            shmem_##NAME##_set(d, a, right);                                                                      \
            ref = a;                                                                                              \
            CHECK_SAME(shmem_##NAME##_fetch(d, right), ref, #NAME " deprecated set/fetch");                      \
            f = shmem_##NAME##_swap(d, c, right);                                                                 \
            CHECK_SAME(f, ref, #NAME " deprecated swap");                                                         \
            ref = c;                                                                                              \
            CHECK_SAME(shmem_##NAME##_fetch(d, right), ref, #NAME " deprecated swap stored -0.0");               \
            f = shmem_##NAME##_swap(d, e, right);                                                                 \
            CHECK_SAME(f, ref, #NAME " deprecated swap returned -0.0");                                           \
            ref = e;                                                                                              \
            verify_bytes(bases[b], &ref, sizeof ref, &guard, b ? #NAME " deprecated static" : #NAME " deprecated heap"); \
        }                                                                                                         \
        shmem_free(heap);                                                                                         \
    }

DEFINE_DEPRECATED_INT(int, int, unsigned int, INT_MIN, INT_MAX)
DEFINE_DEPRECATED_INT(long, long, unsigned long, LONG_MIN, LONG_MAX)
DEFINE_DEPRECATED_INT(long long, longlong, unsigned long long, LLONG_MIN, LLONG_MAX)
DEFINE_DEPRECATED_FLOAT(float, float)
DEFINE_DEPRECATED_FLOAT(double, double)

int main(void)
{
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    test_pe = me;
    right = (me + 1) % npes;
    left = (me - 1 + npes) % npes;
    if (npes > MAXPES) {
        shmem_finalize();
        return TEST_SKIP;
    }
    xref = shmem_calloc((size_t)(npes + 2), 16);
    CHECK(xref != NULL);

    const float ef[6] = {-0.0f, FLT_MAX, -FLT_MIN, FLT_TRUE_MIN, INFINITY, -INFINITY};
    const double ed[6] = {-0.0, DBL_MAX, -DBL_MIN, DBL_TRUE_MIN, -INFINITY, 0x1.fffffffffffffp-3};
    memcpy(edge_float, ef, sizeof ef);
    memcpy(edge_double, ed, sizeof ed);

    run_int();
    run_long();
    run_longlong();
    run_uint();
    run_ulong();
    run_ulonglong();
    run_int32();
    run_int64();
    run_uint32();
    run_uint64();
    run_size();
    run_ptrdiff();
    run_float();
    run_double();

    dep_int();
    dep_long();
    dep_longlong();
    dep_float();
    dep_double();

    shmem_free(xref);
    shmem_finalize();
    return test_finish();
}
