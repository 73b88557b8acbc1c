/* cpu_atomic.h: OpenSHMEM atomics as CPU atomics on an address this process
 * can load and store, shared by the inlined direct path and the shm
 * transport. Values travel as the low elem bytes of a uint64_t; 4- and
 * 8-byte elements are lock-free on every target Shoal builds for, so an
 * atomic by one PE is atomic with respect to every other PE's. */
#ifndef SHOAL_TRANSPORT_CPU_ATOMIC_H
#define SHOAL_TRANSPORT_CPU_ATOMIC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum shoal_amo_op {
    SHOAL_AMO_FETCH, /* fetched = *dest */
    SHOAL_AMO_SET,   /* *dest = operand */
    SHOAL_AMO_SWAP,  /* fetched = *dest, *dest = operand */
    SHOAL_AMO_CSWAP, /* fetched = *dest, if (*dest == cond) *dest = operand */
    SHOAL_AMO_ADD,   /* fetched = *dest, *dest += operand (two's complement wrap) */
    SHOAL_AMO_AND,
    SHOAL_AMO_OR,
    SHOAL_AMO_XOR
};

/* An element's bytes (4 or 8) <-> the low bits of a uint64_t, independent
 * of endianness. */
static inline uint64_t shoal_elem_load(const void *p, size_t elem)
{
    if (elem == 4) {
        uint32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static inline void shoal_elem_store(void *p, uint64_t v, size_t elem)
{
    if (elem == 4) {
        uint32_t w = (uint32_t)v;
        memcpy(p, &w, 4);
    } else {
        memcpy(p, &v, 8);
    }
}

#define SHOAL_CPU_AMO_BODY(T, p, op, operand, cond)                                          \
    do {                                                                                     \
        T *a_ = (T *)(p), v_ = (T)(operand), c_ = (T)(cond);                                 \
        switch (op) {                                                                        \
        case SHOAL_AMO_FETCH: return __atomic_load_n(a_, __ATOMIC_SEQ_CST);                  \
        case SHOAL_AMO_SET: __atomic_store_n(a_, v_, __ATOMIC_SEQ_CST); return 0;            \
        case SHOAL_AMO_SWAP: return __atomic_exchange_n(a_, v_, __ATOMIC_SEQ_CST);           \
        case SHOAL_AMO_CSWAP:                                                                \
            __atomic_compare_exchange_n(a_, &c_, v_, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
            return c_;                                                                       \
        case SHOAL_AMO_ADD: return __atomic_fetch_add(a_, v_, __ATOMIC_SEQ_CST);             \
        case SHOAL_AMO_AND: return __atomic_fetch_and(a_, v_, __ATOMIC_SEQ_CST);             \
        case SHOAL_AMO_OR: return __atomic_fetch_or(a_, v_, __ATOMIC_SEQ_CST);               \
        case SHOAL_AMO_XOR: return __atomic_fetch_xor(a_, v_, __ATOMIC_SEQ_CST);             \
        }                                                                                    \
        return 0;                                                                            \
    } while (0)

static inline uint32_t shoal_cpu_amo32(void *p, enum shoal_amo_op op, uint32_t operand, uint32_t cond)
{
    SHOAL_CPU_AMO_BODY(uint32_t, p, op, operand, cond);
}

static inline uint64_t shoal_cpu_amo64(void *p, enum shoal_amo_op op, uint64_t operand, uint64_t cond)
{
    SHOAL_CPU_AMO_BODY(uint64_t, p, op, operand, cond);
}

/* elem is 4 or 8 (checked by the caller). Returns the old value (the value
 * read, for FETCH; 0 for SET). */
static inline uint64_t shoal_cpu_amo(void *p, size_t elem, enum shoal_amo_op op, uint64_t operand, uint64_t cond)
{
    return elem == 4 ? shoal_cpu_amo32(p, op, (uint32_t)operand, (uint32_t)cond)
                     : shoal_cpu_amo64(p, op, operand, cond);
}

/* Untorn single-element store/load (p, g, and the tls target's word puts
 * and gets): a peer polling the word never sees a mix of old and new
 * bytes. 16-byte elements (long double, 128-bit sized) have no such
 * guarantee in the standard and are copied. */
static inline void shoal_untorn_store(void *dst, const void *value, size_t elem)
{
    uint16_t v16;
    uint32_t v32;
    uint64_t v64;
    switch (elem) {
    case 1: __atomic_store_n((uint8_t *)dst, *(const uint8_t *)value, __ATOMIC_RELAXED); break;
    case 2: memcpy(&v16, value, 2); __atomic_store_n((uint16_t *)dst, v16, __ATOMIC_RELAXED); break;
    case 4: memcpy(&v32, value, 4); __atomic_store_n((uint32_t *)dst, v32, __ATOMIC_RELAXED); break;
    case 8: memcpy(&v64, value, 8); __atomic_store_n((uint64_t *)dst, v64, __ATOMIC_RELAXED); break;
    default: memcpy(dst, value, elem); break;
    }
}

static inline void shoal_untorn_load(void *out, const void *src, size_t elem)
{
    uint16_t v16;
    uint32_t v32;
    uint64_t v64;
    switch (elem) {
    case 1: *(uint8_t *)out = __atomic_load_n((const uint8_t *)src, __ATOMIC_RELAXED); break;
    case 2: v16 = __atomic_load_n((const uint16_t *)src, __ATOMIC_RELAXED); memcpy(out, &v16, 2); break;
    case 4: v32 = __atomic_load_n((const uint32_t *)src, __ATOMIC_RELAXED); memcpy(out, &v32, 4); break;
    case 8: v64 = __atomic_load_n((const uint64_t *)src, __ATOMIC_RELAXED); memcpy(out, &v64, 8); break;
    default: memcpy(out, src, elem); break;
    }
}

#endif
