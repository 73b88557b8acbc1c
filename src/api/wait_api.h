/* wait_api.h: the byte-based point-to-point synchronisation entry points
 * behind every typed wait/test wrapper. A scalar's kind is its size and
 * signedness, SHOAL_KIND(sizeof(T), is_signed). ivars must be symmetric
 * objects of this PE; status may be NULL (all included). `values` is the
 * per-element comparison array of the _vector forms, NULL otherwise, in
 * which case `value` is used for every element. Bad input ends the job with
 * one line naming `call`. */
#ifndef SHOAL_API_WAIT_API_H
#define SHOAL_API_WAIT_API_H

#include <stddef.h>

typedef unsigned shoal_kind_t;
#define SHOAL_KIND(size, is_signed) ((shoal_kind_t)(size) * 2u + ((is_signed) ? 1u : 0u))

void shoal_api_wait_until(void *ivar, shoal_kind_t kind, int cmp, const void *value, const char *call);
void shoal_api_wait_until_all(void *ivars, size_t nelems, const int *status, shoal_kind_t kind, int cmp,
                              const void *value, const void *values, const char *call);
size_t shoal_api_wait_until_any(void *ivars, size_t nelems, const int *status, shoal_kind_t kind, int cmp,
                                const void *value, const void *values, const char *call);
size_t shoal_api_wait_until_some(void *ivars, size_t nelems, size_t *indices, const int *status,
                                 shoal_kind_t kind, int cmp, const void *value, const void *values,
                                 const char *call);
int shoal_api_test(void *ivar, shoal_kind_t kind, int cmp, const void *value, const char *call);
int shoal_api_test_all(void *ivars, size_t nelems, const int *status, shoal_kind_t kind, int cmp,
                       const void *value, const void *values, const char *call);
size_t shoal_api_test_any(void *ivars, size_t nelems, const int *status, shoal_kind_t kind, int cmp,
                          const void *value, const void *values, const char *call);
size_t shoal_api_test_some(void *ivars, size_t nelems, size_t *indices, const int *status,
                           shoal_kind_t kind, int cmp, const void *value, const void *values,
                           const char *call);

#endif
