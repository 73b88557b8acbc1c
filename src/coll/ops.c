/* ops.c: the reduction kernels, one small typed loop per (type, operator),
 * and the table that maps (dtype, op) to its loop.
 *
 * Integers wrap around in two's complement, as the standard expects from
 * sums and products: the arithmetic is done in the unsigned type of the
 * same width (1u * x keeps 8- and 16-bit operands out of signed int
 * promotion, where a product could overflow), and a signed type's sum,
 * product and bitwise operators are the unsigned type's loops, since the
 * bit patterns are the same. Only min and max depend on signedness. Floats
 * have no bitwise operators and complex types only sum and product; those
 * table entries are NULL and the public layer rejects them. Every member
 * combines the members' inputs in rank order, so a result is the same bit
 * pattern on every member. */
#include <stdint.h>

#include "coll/coll.h"

#define BINARY(name, T, expr)                                                   \
    static void name(void *restrict acc, const void *restrict in, size_t n)    \
    {                                                                           \
        T *a = acc;                                                             \
        const T *b = in;                                                        \
        for (size_t i = 0; i < n; i++) a[i] = (expr);                           \
    }

#define INT_KERNELS(w)                                                                \
    BINARY(and_u##w, uint##w##_t, a[i] & b[i])                                        \
    BINARY(or_u##w, uint##w##_t, a[i] | b[i])                                         \
    BINARY(xor_u##w, uint##w##_t, a[i] ^ b[i])                                        \
    BINARY(sum_u##w, uint##w##_t, (uint##w##_t)(1u * a[i] + b[i]))                   \
    BINARY(prod_u##w, uint##w##_t, (uint##w##_t)(1u * a[i] * b[i]))                   \
    BINARY(min_u##w, uint##w##_t, b[i] < a[i] ? b[i] : a[i])                          \
    BINARY(max_u##w, uint##w##_t, b[i] > a[i] ? b[i] : a[i])                          \
    BINARY(min_i##w, int##w##_t, b[i] < a[i] ? b[i] : a[i])                           \
    BINARY(max_i##w, int##w##_t, b[i] > a[i] ? b[i] : a[i])

INT_KERNELS(8)
INT_KERNELS(16)
INT_KERNELS(32)
INT_KERNELS(64)

#define REAL_KERNELS(tag, T)                                  \
    BINARY(sum_##tag, T, a[i] + b[i])                         \
    BINARY(prod_##tag, T, a[i] * b[i])                        \
    BINARY(min_##tag, T, b[i] < a[i] ? b[i] : a[i])           \
    BINARY(max_##tag, T, b[i] > a[i] ? b[i] : a[i])

REAL_KERNELS(f, float)
REAL_KERNELS(d, double)
REAL_KERNELS(ld, long double)

BINARY(sum_cf, float _Complex, a[i] + b[i])
BINARY(prod_cf, float _Complex, a[i] * b[i])
BINARY(sum_cd, double _Complex, a[i] + b[i])
BINARY(prod_cd, double _Complex, a[i] * b[i])

/* Columns: and, or, xor, min, max, sum, prod. */
#define INT_ROW(s, w) {and_u##w, or_u##w, xor_u##w, min_##s##w, max_##s##w, sum_u##w, prod_u##w}

static const shoal_coll_combine_fn kernels[SHOAL_COLL_DTYPES][SHOAL_COLL_OPS] = {
    [SHOAL_COLL_I8] = INT_ROW(i, 8),
    [SHOAL_COLL_I16] = INT_ROW(i, 16),
    [SHOAL_COLL_I32] = INT_ROW(i, 32),
    [SHOAL_COLL_I64] = INT_ROW(i, 64),
    [SHOAL_COLL_U8] = INT_ROW(u, 8),
    [SHOAL_COLL_U16] = INT_ROW(u, 16),
    [SHOAL_COLL_U32] = INT_ROW(u, 32),
    [SHOAL_COLL_U64] = INT_ROW(u, 64),
    [SHOAL_COLL_FLOAT] = {NULL, NULL, NULL, min_f, max_f, sum_f, prod_f},
    [SHOAL_COLL_DOUBLE] = {NULL, NULL, NULL, min_d, max_d, sum_d, prod_d},
    [SHOAL_COLL_LONGDOUBLE] = {NULL, NULL, NULL, min_ld, max_ld, sum_ld, prod_ld},
    [SHOAL_COLL_COMPLEXF] = {NULL, NULL, NULL, NULL, NULL, sum_cf, prod_cf},
    [SHOAL_COLL_COMPLEXD] = {NULL, NULL, NULL, NULL, NULL, sum_cd, prod_cd},
};

static const size_t sizes[SHOAL_COLL_DTYPES] = {
    1, 2, 4, 8, 1, 2, 4, 8, sizeof(float), sizeof(double), sizeof(long double),
    sizeof(float _Complex), sizeof(double _Complex)};

static const char *const dtype_names[SHOAL_COLL_DTYPES] = {
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float", "double", "long double", "complex float", "complex double"};

static const char *const op_names[SHOAL_COLL_OPS] = {"and", "or", "xor", "min", "max", "sum", "prod"};

size_t shoal_coll_dtype_size(int dtype)
{
    return dtype >= 0 && dtype < SHOAL_COLL_DTYPES ? sizes[dtype] : 0;
}

shoal_coll_combine_fn shoal_coll_kernel(int dtype, int op)
{
    if (dtype < 0 || dtype >= SHOAL_COLL_DTYPES || op < 0 || op >= SHOAL_COLL_OPS) return NULL;
    return kernels[dtype][op];
}

const char *shoal_coll_dtype_name(int dtype)
{
    return dtype >= 0 && dtype < SHOAL_COLL_DTYPES ? dtype_names[dtype] : "unknown type";
}

const char *shoal_coll_op_name(int op)
{
    return op >= 0 && op < SHOAL_COLL_OPS ? op_names[op] : "unknown operator";
}
