/* wait.h: the point-to-point wait core. Values are compared after widening
 * to 64 bits with the scalar's signedness; loads are acquire loads so that
 * data written before the awaited store are visible after the wait. */
#ifndef SHOAL_SYNC_WAIT_H
#define SHOAL_SYNC_WAIT_H

#include <stddef.h>
#include <stdint.h>

/* size in bytes (2, 4 or 8) and signedness of a compared scalar */
struct shoal_scalar {
    unsigned size;
    int is_signed;
};

/* 1 if cmp (SHMEM_CMP_*) is a known operator. */
int shoal_cmp_valid(int cmp);
/* Reads the element at p (acquire) and widens its bits into 64 bits. */
uint64_t shoal_scalar_load(struct shoal_scalar t, const void *p);
/* Reads a plain (non-shared) value of type t, widened. */
uint64_t shoal_scalar_read(struct shoal_scalar t, const void *p);
int shoal_cmp_holds(struct shoal_scalar t, int cmp, uint64_t lhs, uint64_t rhs);

/* Waits until ivar cmp value holds. */
void shoal_wait_scalar(struct shoal_scalar t, const void *ivar, int cmp, uint64_t value);

/* The set forms. status may be NULL; values (per-element) may be NULL, then
 * value applies to all. The scan begins at index start (0 when start is
 * not below nelems) and wraps around. Return conventions follow OpenSHMEM:
 *   any: index of a satisfied element, the first one from start on,
 *        SIZE_MAX if the set is empty;
 *   some: number of satisfied indices written (0 only if the set is empty). */
enum shoal_wait_mode { SHOAL_WAIT_ALL, SHOAL_WAIT_ANY, SHOAL_WAIT_SOME };
size_t shoal_wait_set(struct shoal_scalar t, const void *ivars, size_t nelems, size_t *indices,
                      const int *status, int cmp, uint64_t value, const void *values,
                      enum shoal_wait_mode mode, int blocking, size_t start);

#endif
