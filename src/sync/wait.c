/* wait.c: point-to-point waits and tests over scalars of 2, 4 or 8 bytes. */
#include "sync/wait.h"

#include <shmem.h>
#include <string.h>

#include "sync/backoff.h"

int shoal_cmp_valid(int cmp) { return cmp >= SHMEM_CMP_EQ && cmp <= SHMEM_CMP_LE; }

static uint64_t widen(struct shoal_scalar t, uint64_t bits)
{
    switch (t.size) {
    case 2: return t.is_signed ? (uint64_t)(int64_t)(int16_t)bits : (uint16_t)bits;
    case 4: return t.is_signed ? (uint64_t)(int64_t)(int32_t)bits : (uint32_t)bits;
    default: return bits;
    }
}

uint64_t shoal_scalar_load(struct shoal_scalar t, const void *p)
{
    switch (t.size) {
    case 2: return widen(t, __atomic_load_n((const uint16_t *)p, __ATOMIC_ACQUIRE));
    case 4: return widen(t, __atomic_load_n((const uint32_t *)p, __ATOMIC_ACQUIRE));
    default: return __atomic_load_n((const uint64_t *)p, __ATOMIC_ACQUIRE);
    }
}

uint64_t shoal_scalar_read(struct shoal_scalar t, const void *p)
{
    uint16_t v16;
    uint32_t v32;
    uint64_t v64;
    switch (t.size) {
    case 2: memcpy(&v16, p, 2); return widen(t, v16);
    case 4: memcpy(&v32, p, 4); return widen(t, v32);
    default: memcpy(&v64, p, 8); return v64;
    }
}

int shoal_cmp_holds(struct shoal_scalar t, int cmp, uint64_t lhs, uint64_t rhs)
{
    if (t.is_signed) {
        int64_t a = (int64_t)lhs, b = (int64_t)rhs;
        switch (cmp) {
        case SHMEM_CMP_EQ: return a == b;
        case SHMEM_CMP_NE: return a != b;
        case SHMEM_CMP_GT: return a > b;
        case SHMEM_CMP_GE: return a >= b;
        case SHMEM_CMP_LT: return a < b;
        default: return a <= b;
        }
    }
    switch (cmp) {
    case SHMEM_CMP_EQ: return lhs == rhs;
    case SHMEM_CMP_NE: return lhs != rhs;
    case SHMEM_CMP_GT: return lhs > rhs;
    case SHMEM_CMP_GE: return lhs >= rhs;
    case SHMEM_CMP_LT: return lhs < rhs;
    default: return lhs <= rhs;
    }
}

void shoal_wait_scalar(struct shoal_scalar t, const void *ivar, int cmp, uint64_t value)
{
    struct shoal_backoff b = {0};
    SHOAL_BACKOFF_WHILE(&b, !shoal_cmp_holds(t, cmp, shoal_scalar_load(t, ivar), value));
}

static size_t wait_set_loop(struct shoal_scalar t, const void *ivars, size_t nelems, size_t *indices,
                            const int *status, int cmp, uint64_t value, const void *values,
                            enum shoal_wait_mode mode, int blocking, size_t start, struct shoal_backoff *b)
{
    const char *base = ivars;
    const char *rhs_base = values;
    if (start >= nelems) start = 0;
    for (;;) {
        size_t active = 0, satisfied = 0;
        for (size_t k = 0; k < nelems; k++) {
            const size_t i = k < nelems - start ? start + k : k - (nelems - start);
            if (status && status[i]) continue;
            active++;
            uint64_t rhs = rhs_base ? shoal_scalar_read(t, rhs_base + i * t.size) : value;
            if (!shoal_cmp_holds(t, cmp, shoal_scalar_load(t, base + i * t.size), rhs)) {
                if (mode == SHOAL_WAIT_ALL) break;
                continue;
            }
            satisfied++;
            if (mode == SHOAL_WAIT_ANY) return i;
            if (mode == SHOAL_WAIT_SOME) indices[satisfied - 1] = i;
        }
        switch (mode) {
        case SHOAL_WAIT_ALL:
            if (satisfied == active) return 1;
            if (!blocking) return 0;
            break;
        case SHOAL_WAIT_ANY:
            if (active == 0 || !blocking) return SIZE_MAX;
            break;
        case SHOAL_WAIT_SOME:
            if (satisfied > 0 || active == 0 || !blocking) return satisfied;
            break;
        }
        shoal_backoff_wait(b);
    }
}

size_t shoal_wait_set(struct shoal_scalar t, const void *ivars, size_t nelems, size_t *indices,
                      const int *status, int cmp, uint64_t value, const void *values,
                      enum shoal_wait_mode mode, int blocking, size_t start)
{
    struct shoal_backoff b = {0};
    size_t result = wait_set_loop(t, ivars, nelems, indices, status, cmp, value, values, mode, blocking, start, &b);
    shoal_backoff_end(&b);
    return result;
}
