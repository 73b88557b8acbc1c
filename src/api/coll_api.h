/* coll_api.h: the byte-based collective entry points behind every typed and
 * mem collective wrapper, team forms and the deprecated active-set forms.
 * They check their arguments (initialised, valid team, symmetric buffers,
 * root in range, no size overflow) and end the job with one line naming
 * `call` on bad input. Team forms return 0 on success, as the standard's
 * int results; a PE outside the team (SHMEM_TEAM_INVALID) gets -1 and
 * nothing happens. */
#ifndef SHOAL_API_COLL_API_H
#define SHOAL_API_COLL_API_H

#include <stddef.h>

#include <shmem.h>

/* Element types of reductions and scans. */
enum shoal_dtype {
    SHOAL_DT_I8, SHOAL_DT_I16, SHOAL_DT_I32, SHOAL_DT_I64,
    SHOAL_DT_U8, SHOAL_DT_U16, SHOAL_DT_U32, SHOAL_DT_U64,
    SHOAL_DT_FLOAT, SHOAL_DT_DOUBLE, SHOAL_DT_LONGDOUBLE,
    SHOAL_DT_COMPLEXF, SHOAL_DT_COMPLEXD
};

/* The dtype of an integer C type from its size and signedness (a constant
 * expression, so generated wrappers pass it at no cost). */
#define SHOAL_DTYPE_INT(size, is_signed)                                                          \
    ((is_signed) ? ((size) == 1 ? SHOAL_DT_I8 : (size) == 2 ? SHOAL_DT_I16 : (size) == 4 ? SHOAL_DT_I32 : SHOAL_DT_I64) \
                 : ((size) == 1 ? SHOAL_DT_U8 : (size) == 2 ? SHOAL_DT_U16 : (size) == 4 ? SHOAL_DT_U32 : SHOAL_DT_U64))

enum shoal_red_op { SHOAL_RED_AND, SHOAL_RED_OR, SHOAL_RED_XOR, SHOAL_RED_MIN, SHOAL_RED_MAX, SHOAL_RED_SUM, SHOAL_RED_PROD };

/* Team forms. nelems/nreduce count elements of elem bytes (or of dtype). */
int shoal_api_broadcast(shmem_team_t team, void *dest, const void *source, size_t nelems, size_t elem, int root,
                        const char *call);
int shoal_api_collect(shmem_team_t team, void *dest, const void *source, size_t nelems, size_t elem,
                      const char *call);
int shoal_api_fcollect(shmem_team_t team, void *dest, const void *source, size_t nelems, size_t elem,
                       const char *call);
int shoal_api_alltoall(shmem_team_t team, void *dest, const void *source, size_t nelems, size_t elem,
                       const char *call);
int shoal_api_alltoalls(shmem_team_t team, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,
                        size_t nelems, size_t elem, const char *call);
int shoal_api_reduce(shmem_team_t team, void *dest, const void *source, size_t nreduce, enum shoal_dtype dtype,
                     enum shoal_red_op op, const char *call);
/* Sum scans (OpenSHMEM 1.6): inclusive (inscan) or exclusive (exscan). */
int shoal_api_scan(shmem_team_t team, void *dest, const void *source, size_t nelems, enum shoal_dtype dtype,
                   int inclusive, const char *call);

/* Deprecated active-set forms: members are PE_start + i * 2^logPE_stride,
 * i < PE_size; pSync is the user's symmetric work array, left as found. */
void shoal_api_broadcast_set(void *dest, const void *source, size_t nelems, size_t elem, int PE_root, int PE_start,
                             int logPE_stride, int PE_size, long *pSync, const char *call);
void shoal_api_collect_set(void *dest, const void *source, size_t nelems, size_t elem, int PE_start,
                           int logPE_stride, int PE_size, long *pSync, const char *call);
void shoal_api_fcollect_set(void *dest, const void *source, size_t nelems, size_t elem, int PE_start,
                            int logPE_stride, int PE_size, long *pSync, const char *call);
void shoal_api_alltoall_set(void *dest, const void *source, size_t nelems, size_t elem, int PE_start,
                            int logPE_stride, int PE_size, long *pSync, const char *call);
void shoal_api_alltoalls_set(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,
                             size_t elem, int PE_start, int logPE_stride, int PE_size, long *pSync,
                             const char *call);
void shoal_api_reduce_set(void *dest, const void *source, size_t nreduce, enum shoal_dtype dtype,
                          enum shoal_red_op op, int PE_start, int logPE_stride, int PE_size, void *pWrk,
                          long *pSync, const char *call);

#endif
