/* typed.c: the typed RMA families for every standard RMA type: put, get,
 * p, g, put_nbi, get_nbi under their typed names, their ctx_ forms with
 * SHMEM_CTX_DEFAULT, and the C11 generic macros with and without a
 * context; then the sized put/get 8..128 (and ctx, nbi). Values are
 * checked exactly (floating values included), and the elements around each
 * target range must be untouched. Ring: PE i writes to and reads from
 * PE i+1. */
#include <shmem.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"

#define N 37         /* elements per transfer */
#define SLOT (N + 2) /* one guard element on each side */
#define NPUTS 12     /* put forms, each into its own slot */
#define NGETS 12     /* get forms */

static int me, npes, right, left;

#define VAL(T, pe, i, salt) ((T)TEST_VALUE(T, pe, i, salt))

/* For type T: region[NPUTS * SLOT] receives the puts of the left
 * neighbour; exposed[SLOT] is what the right neighbour reads. */
#define DEFINE_TYPED_TEST(T, NAME)                                                                             \
    static void typed_##NAME(void *sym_mem, unsigned salt)                                                       \
    {                                                                                                           \
        T *region = sym_mem, *exposed = region + NPUTS * SLOT;                                                  \
        const T guard = VAL(T, 999, 1, salt);                                                                   \
        T src[N], got[SLOT];                                                                                    \
        for (int i = 0; i < NPUTS * SLOT; i++) region[i] = guard;                                               \
        for (int i = 0; i < SLOT; i++) exposed[i] = VAL(T, me, (size_t)i, salt + 100);                          \
        shmem_barrier_all();                                                                                    \
        for (int r = 0; r < NPUTS; r++) {                                                                       \
            T *dst = region + r * SLOT + 1;                                                                     \
            for (int i = 0; i < N; i++) src[i] = VAL(T, me, (size_t)i, salt + (unsigned)r);                     \
            switch (r) {                                                                                        \
            case 0: shmem_##NAME##_put(dst, src, N, right); break;                                              \
            case 1: shmem_ctx_##NAME##_put(SHMEM_CTX_DEFAULT, dst, src, N, right); break;                       \
            case 2: shmem_##NAME##_put_nbi(dst, src, N, right); shmem_quiet(); break;                           \
            case 3:                                                                                             \
                shmem_ctx_##NAME##_put_nbi(SHMEM_CTX_DEFAULT, dst, src, N, right);                              \
                shmem_ctx_quiet(SHMEM_CTX_DEFAULT);                                                             \
                break;                                                                                          \
            case 4: for (int i = 0; i < N; i++) shmem_##NAME##_p(dst + i, src[i], right); break;                \
            case 5:                                                                                             \
                for (int i = 0; i < N; i++) shmem_ctx_##NAME##_p(SHMEM_CTX_DEFAULT, dst + i, src[i], right);    \
                break;                                                                                          \
            case 6: shmem_put(dst, src, N, right); break;                                                       \
            case 7: shmem_put(SHMEM_CTX_DEFAULT, dst, src, N, right); break;                                    \
            case 8: for (int i = 0; i < N; i++) shmem_p(dst + i, src[i], right); break;                         \
            case 9: for (int i = 0; i < N; i++) shmem_p(SHMEM_CTX_DEFAULT, dst + i, src[i], right); break;      \
            case 10: shmem_put_nbi(dst, src, N, right); shmem_quiet(); break;                                   \
            default: shmem_put_nbi(SHMEM_CTX_DEFAULT, dst, src, N, right); shmem_quiet(); break;                \
            }                                                                                                   \
        }                                                                                                       \
        for (int r = 0; r < NGETS; r++) {                                                                       \
            T *from = exposed + 1;                                                                              \
            for (int i = 0; i < SLOT; i++) got[i] = guard;                                                      \
            switch (r) {                                                                                        \
            case 0: shmem_##NAME##_get(got + 1, from, N, right); break;                                         \
            case 1: shmem_ctx_##NAME##_get(SHMEM_CTX_DEFAULT, got + 1, from, N, right); break;                  \
            case 2: shmem_##NAME##_get_nbi(got + 1, from, N, right); shmem_quiet(); break;                      \
            case 3:                                                                                             \
                shmem_ctx_##NAME##_get_nbi(SHMEM_CTX_DEFAULT, got + 1, from, N, right);                         \
                shmem_ctx_quiet(SHMEM_CTX_DEFAULT);                                                             \
                break;                                                                                          \
            case 4: for (int i = 0; i < N; i++) got[1 + i] = shmem_##NAME##_g(from + i, right); break;          \
            case 5:                                                                                             \
                for (int i = 0; i < N; i++) got[1 + i] = shmem_ctx_##NAME##_g(SHMEM_CTX_DEFAULT, from + i, right); \
                break;                                                                                          \
            case 6: shmem_get(got + 1, from, N, right); break;                                                  \
            case 7: shmem_get(SHMEM_CTX_DEFAULT, got + 1, from, N, right); break;                               \
            case 8: for (int i = 0; i < N; i++) got[1 + i] = shmem_g(from + i, right); break;                   \
            case 9: for (int i = 0; i < N; i++) got[1 + i] = shmem_g(SHMEM_CTX_DEFAULT, from + i, right); break; \
            case 10: shmem_get_nbi(got + 1, from, N, right); shmem_quiet(); break;                              \
            default: shmem_get_nbi(SHMEM_CTX_DEFAULT, got + 1, from, N, right); shmem_quiet(); break;           \
            }                                                                                                   \
            CHECK_MSG(got[0] == guard && got[SLOT - 1] == guard, #NAME " get form %d wrote outside its range", r); \
            for (int i = 0; i < N; i++)                                                                         \
                CHECK_MSG(got[1 + i] == VAL(T, right, (size_t)i + 1, salt + 100), #NAME " get form %d element %d", \
                          r, i);                                                                                \
        }                                                                                                       \
        shmem_barrier_all();                                                                                    \
        for (int r = 0; r < NPUTS; r++) {                                                                       \
            const T *slot = region + r * SLOT;                                                                  \
            CHECK_MSG(slot[0] == guard && slot[SLOT - 1] == guard, #NAME " put form %d wrote outside its range", r); \
            for (int i = 0; i < N; i++)                                                                         \
                CHECK_MSG(slot[1 + i] == VAL(T, left, (size_t)i, salt + (unsigned)r),                           \
                          #NAME " put form %d element %d from PE %d", r, i, left);                              \
        }                                                                                                       \
        /* The exposed slot was only read. */                                                                   \
        for (int i = 0; i < SLOT; i++) CHECK_MSG(exposed[i] == VAL(T, me, (size_t)i, salt + 100), #NAME " source changed"); \
        shmem_barrier_all();                                                                                    \
    }

DEFINE_TYPED_TEST(float, float)
DEFINE_TYPED_TEST(double, double)
DEFINE_TYPED_TEST(long double, longdouble)
DEFINE_TYPED_TEST(char, char)
DEFINE_TYPED_TEST(signed char, schar)
DEFINE_TYPED_TEST(short, short)
DEFINE_TYPED_TEST(int, int)
DEFINE_TYPED_TEST(long, long)
DEFINE_TYPED_TEST(long long, longlong)
DEFINE_TYPED_TEST(unsigned char, uchar)
DEFINE_TYPED_TEST(unsigned short, ushort)
DEFINE_TYPED_TEST(unsigned int, uint)
DEFINE_TYPED_TEST(unsigned long, ulong)
DEFINE_TYPED_TEST(unsigned long long, ulonglong)
DEFINE_TYPED_TEST(int8_t, int8)
DEFINE_TYPED_TEST(int16_t, int16)
DEFINE_TYPED_TEST(int32_t, int32)
DEFINE_TYPED_TEST(int64_t, int64)
DEFINE_TYPED_TEST(uint8_t, uint8)
DEFINE_TYPED_TEST(uint16_t, uint16)
DEFINE_TYPED_TEST(uint32_t, uint32)
DEFINE_TYPED_TEST(uint64_t, uint64)
DEFINE_TYPED_TEST(size_t, size)
DEFINE_TYPED_TEST(ptrdiff_t, ptrdiff)

/* Sized forms: bytes, checked against the pattern, guards around. */
#define SN 29
static void sized_put(int form, int bits, void *d, const void *s, size_t n, int pe)
{
    shmem_ctx_t c = SHMEM_CTX_DEFAULT;
    switch (form * 1000 + bits) {
    case 8: shmem_put8(d, s, n, pe); break;
    case 16: shmem_put16(d, s, n, pe); break;
    case 32: shmem_put32(d, s, n, pe); break;
    case 64: shmem_put64(d, s, n, pe); break;
    case 128: shmem_put128(d, s, n, pe); break;
    case 1008: shmem_ctx_put8(c, d, s, n, pe); break;
    case 1016: shmem_ctx_put16(c, d, s, n, pe); break;
    case 1032: shmem_ctx_put32(c, d, s, n, pe); break;
    case 1064: shmem_ctx_put64(c, d, s, n, pe); break;
    case 1128: shmem_ctx_put128(c, d, s, n, pe); break;
    case 2008: shmem_put8_nbi(d, s, n, pe); break;
    case 2016: shmem_put16_nbi(d, s, n, pe); break;
    case 2032: shmem_put32_nbi(d, s, n, pe); break;
    case 2064: shmem_put64_nbi(d, s, n, pe); break;
    case 2128: shmem_put128_nbi(d, s, n, pe); break;
    case 3008: shmem_ctx_put8_nbi(c, d, s, n, pe); break;
    case 3016: shmem_ctx_put16_nbi(c, d, s, n, pe); break;
    case 3032: shmem_ctx_put32_nbi(c, d, s, n, pe); break;
    case 3064: shmem_ctx_put64_nbi(c, d, s, n, pe); break;
    case 3128: shmem_ctx_put128_nbi(c, d, s, n, pe); break;
    default: CHECK(!"bad sized put form");
    }
    shmem_quiet();
}

static void sized_get(int form, int bits, void *d, const void *s, size_t n, int pe)
{
    shmem_ctx_t c = SHMEM_CTX_DEFAULT;
    switch (form * 1000 + bits) {
    case 8: shmem_get8(d, s, n, pe); break;
    case 16: shmem_get16(d, s, n, pe); break;
    case 32: shmem_get32(d, s, n, pe); break;
    case 64: shmem_get64(d, s, n, pe); break;
    case 128: shmem_get128(d, s, n, pe); break;
    case 1008: shmem_ctx_get8(c, d, s, n, pe); break;
    case 1016: shmem_ctx_get16(c, d, s, n, pe); break;
    case 1032: shmem_ctx_get32(c, d, s, n, pe); break;
    case 1064: shmem_ctx_get64(c, d, s, n, pe); break;
    case 1128: shmem_ctx_get128(c, d, s, n, pe); break;
    case 2008: shmem_get8_nbi(d, s, n, pe); break;
    case 2016: shmem_get16_nbi(d, s, n, pe); break;
    case 2032: shmem_get32_nbi(d, s, n, pe); break;
    case 2064: shmem_get64_nbi(d, s, n, pe); break;
    case 2128: shmem_get128_nbi(d, s, n, pe); break;
    case 3008: shmem_ctx_get8_nbi(c, d, s, n, pe); break;
    case 3016: shmem_ctx_get16_nbi(c, d, s, n, pe); break;
    case 3032: shmem_ctx_get32_nbi(c, d, s, n, pe); break;
    case 3064: shmem_ctx_get64_nbi(c, d, s, n, pe); break;
    case 3128: shmem_ctx_get128_nbi(c, d, s, n, pe); break;
    default: CHECK(!"bad sized get form");
    }
    shmem_quiet();
}

static void test_sized(unsigned char *sym, unsigned salt)
{
    static const int bits[] = {8, 16, 32, 64, 128};
    const size_t slot = SN * 16 + 32; /* 16 guard bytes on each side */
    unsigned char src[SN * 16], got[SN * 16 + 32];
    unsigned char *exposed = sym + 20 * slot;
    char what[96];
    memset(sym, GUARD_BYTE, 20 * slot);
    fill_pattern(exposed, SN * 16, me, 0, salt + 500);
    shmem_barrier_all();
    for (int f = 0; f < 4; f++)
        for (int b = 0; b < 5; b++) {
            const size_t bytes = SN * (size_t)bits[b] / 8;
            fill_pattern(src, bytes, me, 0, salt + (unsigned)(f * 5 + b));
            sized_put(f, bits[b], sym + (size_t)(f * 5 + b) * slot + 16, src, SN, right);
            memset(got, GUARD_BYTE, sizeof got);
            sized_get(f, bits[b], got + 16, exposed, SN, right);
            snprintf(what, sizeof what, "sized get%d form %d", bits[b], f);
            check_fill(got, 16, GUARD_BYTE, what);
            check_pattern(got + 16, bytes, right, 0, salt + 500, what);
            check_fill(got + 16 + bytes, sizeof got - 16 - bytes, GUARD_BYTE, what);
        }
    shmem_barrier_all();
    for (int f = 0; f < 4; f++)
        for (int b = 0; b < 5; b++) {
            const size_t bytes = SN * (size_t)bits[b] / 8;
            const unsigned char *s = sym + (size_t)(f * 5 + b) * slot;
            snprintf(what, sizeof what, "sized put%d form %d from PE %d", bits[b], f, left);
            check_fill(s, 16, GUARD_BYTE, what);
            check_pattern(s + 16, bytes, left, 0, salt + (unsigned)(f * 5 + b), what);
            check_fill(s + 16 + bytes, slot - 16 - bytes, GUARD_BYTE, what);
        }
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

    void *sym = shmem_malloc((NPUTS + 1) * SLOT * 16 + 21 * (SN * 16 + 32));
    CHECK(sym != NULL);
    if (!sym) return test_finish();
    unsigned salt = 11;
    typed_float(sym, salt += 1000);
    typed_double(sym, salt += 1000);
    typed_longdouble(sym, salt += 1000);
    typed_char(sym, salt += 1000);
    typed_schar(sym, salt += 1000);
    typed_short(sym, salt += 1000);
    typed_int(sym, salt += 1000);
    typed_long(sym, salt += 1000);
    typed_longlong(sym, salt += 1000);
    typed_uchar(sym, salt += 1000);
    typed_ushort(sym, salt += 1000);
    typed_uint(sym, salt += 1000);
    typed_ulong(sym, salt += 1000);
    typed_ulonglong(sym, salt += 1000);
    typed_int8(sym, salt += 1000);
    typed_int16(sym, salt += 1000);
    typed_int32(sym, salt += 1000);
    typed_int64(sym, salt += 1000);
    typed_uint8(sym, salt += 1000);
    typed_uint16(sym, salt += 1000);
    typed_uint32(sym, salt += 1000);
    typed_uint64(sym, salt += 1000);
    typed_size(sym, salt += 1000);
    typed_ptrdiff(sym, salt += 1000);
    test_sized(sym, salt += 1000);
    shmem_free(sym);
    shmem_finalize();
    return test_finish();
}
