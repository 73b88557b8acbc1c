/* shmem.h: the OpenSHMEM C API as provided by Shoal.
 *
 * The typed families (put/get, wait/test, ...) are generated from one type
 * table by scripts/gen_api.py into the headers under include/shoal/; everything else is
 * declared here. Deprecated names that old programs still call are kept. */
#ifndef SHMEM_H
#define SHMEM_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SHMEM_MAJOR_VERSION 1
#define SHMEM_MINOR_VERSION 6
#define SHMEM_MAX_NAME_LEN 64
#define SHMEM_VENDOR_STRING "Shoal"
#define _SHMEM_MAJOR_VERSION SHMEM_MAJOR_VERSION
#define _SHMEM_MINOR_VERSION SHMEM_MINOR_VERSION
#define _SHMEM_MAX_NAME_LEN SHMEM_MAX_NAME_LEN
#define _SHMEM_VENDOR_STRING SHMEM_VENDOR_STRING

/* Thread levels. */
#define SHMEM_THREAD_SINGLE 0
#define SHMEM_THREAD_FUNNELED 1
#define SHMEM_THREAD_SERIALIZED 2
#define SHMEM_THREAD_MULTIPLE 3

/* Comparison operators of wait_until / test. */
#define SHMEM_CMP_EQ 0
#define SHMEM_CMP_NE 1
#define SHMEM_CMP_GT 2
#define SHMEM_CMP_GE 3
#define SHMEM_CMP_LT 4
#define SHMEM_CMP_LE 5
#define _SHMEM_CMP_EQ SHMEM_CMP_EQ
#define _SHMEM_CMP_NE SHMEM_CMP_NE
#define _SHMEM_CMP_GT SHMEM_CMP_GT
#define _SHMEM_CMP_GE SHMEM_CMP_GE
#define _SHMEM_CMP_LT SHMEM_CMP_LT
#define _SHMEM_CMP_LE SHMEM_CMP_LE

/* Memory hints for shmem_malloc_with_hints. */
#define SHMEM_MALLOC_ATOMICS_REMOTE (1L << 0)
#define SHMEM_MALLOC_SIGNAL_REMOTE (1L << 1)

/* Signal operators of put_signal. */
#define SHMEM_SIGNAL_SET 0
#define SHMEM_SIGNAL_ADD 1

/* Context options. */
#define SHMEM_CTX_SERIALIZED (1L << 0)
#define SHMEM_CTX_PRIVATE (1L << 1)
#define SHMEM_CTX_NOSTORE (1L << 2)

/* Sizes of the work arrays of the deprecated active-set collectives. pSync
 * holds one word per dissemination round (up to 32) and auxiliary words;
 * reductions read the peers' sources directly, so pWrk is never used. */
#define SHMEM_SYNC_VALUE 0L
#define SHMEM_BARRIER_SYNC_SIZE 64
#define SHMEM_BCAST_SYNC_SIZE 64
#define SHMEM_COLLECT_SYNC_SIZE 64
#define SHMEM_REDUCE_SYNC_SIZE 64
#define SHMEM_ALLTOALL_SYNC_SIZE 64
#define SHMEM_ALLTOALLS_SYNC_SIZE 64
#define SHMEM_SYNC_SIZE 64
#define SHMEM_REDUCE_MIN_WRKDATA_SIZE 1
#define _SHMEM_SYNC_VALUE SHMEM_SYNC_VALUE
#define _SHMEM_BARRIER_SYNC_SIZE SHMEM_BARRIER_SYNC_SIZE
#define _SHMEM_BCAST_SYNC_SIZE SHMEM_BCAST_SYNC_SIZE
#define _SHMEM_COLLECT_SYNC_SIZE SHMEM_COLLECT_SYNC_SIZE
#define _SHMEM_REDUCE_SYNC_SIZE SHMEM_REDUCE_SYNC_SIZE
#define _SHMEM_REDUCE_MIN_WRKDATA_SIZE SHMEM_REDUCE_MIN_WRKDATA_SIZE

/* Communication contexts. The default context is a real object inside the
 * library; SHMEM_CTX_INVALID is the null handle. */
typedef struct shoal_ctx *shmem_ctx_t;
extern struct shoal_ctx shmem_ctx_default_object;
#define SHMEM_CTX_DEFAULT ((shmem_ctx_t)&shmem_ctx_default_object)
#define SHMEM_CTX_INVALID ((shmem_ctx_t)0)

/* Teams. SHMEM_TEAM_WORLD and SHMEM_TEAM_SHARED are objects inside the
 * library; SHMEM_TEAM_INVALID is the null handle. */
typedef struct shoal_team *shmem_team_t;
typedef struct {
    int num_contexts;
} shmem_team_config_t;
#define SHMEM_TEAM_NUM_CONTEXTS (1L << 0)
extern struct shoal_team shmem_team_world_object;
extern struct shoal_team shmem_team_shared_object;
#define SHMEM_TEAM_WORLD ((shmem_team_t)&shmem_team_world_object)
#define SHMEM_TEAM_SHARED ((shmem_team_t)&shmem_team_shared_object)
#define SHMEM_TEAM_INVALID ((shmem_team_t)0)

int shmem_team_my_pe(shmem_team_t team);
int shmem_team_n_pes(shmem_team_t team);
int shmem_team_get_config(shmem_team_t team, long config_mask, shmem_team_config_t *config);
int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team);
int shmem_team_split_strided(shmem_team_t parent_team, int start, int stride, int size,
                             const shmem_team_config_t *config, long config_mask, shmem_team_t *new_team);
int shmem_team_split_2d(shmem_team_t parent_team, int xrange, const shmem_team_config_t *xaxis_config,
                        long xaxis_mask, shmem_team_t *xaxis_team, const shmem_team_config_t *yaxis_config,
                        long yaxis_mask, shmem_team_t *yaxis_team);
void shmem_team_destroy(shmem_team_t team);
void *shmem_team_ptr(shmem_team_t team, const void *dest, int pe);
int shmem_team_sync(shmem_team_t team);
/* Deprecated active-set form; C11 programs reach it through the shmem_sync
 * macro below, C and C++ programs call it directly. */
void shmem_sync(int PE_start, int logPE_stride, int PE_size, long *pSync);
void shmem_barrier(int PE_start, int logPE_stride, int PE_size, long *pSync);

/* Contexts. */
int shmem_ctx_create(long options, shmem_ctx_t *ctx);
int shmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t *ctx);
void shmem_ctx_destroy(shmem_ctx_t ctx);
int shmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t *team);

/* Communication sessions (1.6): hints that a burst of operations follows. */
typedef struct {
    size_t total_ops;
} shmem_ctx_session_config_t;
#define SHMEM_CTX_SESSION_BATCH (1L << 0)
#define SHMEM_CTX_SESSION_TOTAL_OPS (1L << 0)
void shmem_ctx_session_start(shmem_ctx_t ctx, long options, const shmem_ctx_session_config_t *config,
                             long config_mask);
void shmem_ctx_session_stop(shmem_ctx_t ctx);

/* Set-up, query, tear-down. */
void shmem_init(void);
int shmem_init_thread(int requested, int *provided);
void shmem_query_thread(int *provided);
int shmem_query_initialized(void);
void shmem_finalize(void);
void shmem_global_exit(int status);
int shmem_my_pe(void);
int shmem_n_pes(void);
int shmem_pe_accessible(int pe);
int shmem_addr_accessible(const void *addr, int pe);
void *shmem_ptr(const void *dest, int pe);
void shmem_info_get_version(int *major, int *minor);
void shmem_info_get_name(char *name);
void shmem_pcontrol(int level, ...);

/* Symmetric heap. */
void *shmem_malloc(size_t size);
void *shmem_calloc(size_t count, size_t size);
void *shmem_align(size_t alignment, size_t size);
void *shmem_realloc(void *ptr, size_t size);
void shmem_free(void *ptr);
void *shmem_malloc_with_hints(size_t size, long hints);

/* Ordering and completion. */
void shmem_fence(void);
void shmem_quiet(void);
void shmem_pe_quiet(const int *target_pes, size_t npes);
void shmem_ctx_fence(shmem_ctx_t ctx);
void shmem_ctx_quiet(shmem_ctx_t ctx);
void shmem_ctx_pe_quiet(shmem_ctx_t ctx, const int *target_pes, size_t npes);
void shmem_barrier_all(void);
void shmem_sync_all(void);

/* Signals (the typed put_signal family is generated). */
uint64_t shmem_signal_fetch(const uint64_t *sig_addr);
void shmem_signal_add(uint64_t *sig_addr, uint64_t signal, int pe);
void shmem_signal_set(uint64_t *sig_addr, uint64_t signal, int pe);
void shmem_ctx_signal_add(shmem_ctx_t ctx, uint64_t *sig_addr, uint64_t signal, int pe);
void shmem_ctx_signal_set(shmem_ctx_t ctx, uint64_t *sig_addr, uint64_t signal, int pe);
uint64_t shmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value);

/* Distributed locks: a zero-initialised symmetric long is a free lock. */
void shmem_set_lock(long *lock);
int shmem_test_lock(long *lock);
void shmem_clear_lock(long *lock);

/* Deprecated untyped waits on a long (1.0-1.3), real functions for C++ and
 * C99 programs; C11 programs get the generic macros of the same names
 * (shoal/generic_gen.h), which are defined after these declarations. */
void shmem_wait(long *ivar, long cmp_value);
void shmem_wait_until(long *ivar, int cmp, long cmp_value);

/* Deprecated cache-management calls: no effect on coherent hosts. */
void shmem_clear_cache_inv(void);
void shmem_clear_cache_line_inv(void *dest);
void shmem_set_cache_inv(void);
void shmem_set_cache_line_inv(void *dest);
void shmem_udcflush(void);
void shmem_udcflush_line(void *dest);

/* Deprecated set-up names that old programs still call. They are inline so
 * the library exports only shmem_* symbols. */
/* Programs written for start_pes never call a finalize: the library used to
 * finalize implicitly at exit, so start_pes registers that. */
static inline void start_pes(int npes)
{
    (void)npes;
    if (!shmem_query_initialized()) {
        shmem_init();
        atexit(shmem_finalize);
    }
}
static inline int _my_pe(void) { return shmem_my_pe(); }
static inline int _num_pes(void) { return shmem_n_pes(); }
static inline void *shmalloc(size_t size) { return shmem_malloc(size); }
static inline void shfree(void *ptr) { shmem_free(ptr); }
static inline void *shmemalign(size_t alignment, size_t size) { return shmem_align(alignment, size); }
static inline void *shrealloc(void *ptr, size_t size) { return shmem_realloc(ptr, size); }

#ifdef __cplusplus
}
#endif

/* C11 overloads shmem_sync by argument count: shmem_sync(team) is
 * shmem_team_sync, shmem_sync(PE_start, logPE_stride, PE_size, pSync) the
 * deprecated function (a macro does not expand inside itself, so the name
 * in the expansion is the function). C99 and C++ keep the function alone,
 * as the standard's C/C++ synopsis has it. */
#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && !defined(__cplusplus)
#define SHOAL_SYNC_BY_ARITY(a1, a2, a3, a4, name, ...) name
#define shmem_sync(...) \
    SHOAL_SYNC_BY_ARITY(__VA_ARGS__, shmem_sync, shmem_sync, shmem_sync, shmem_team_sync, )(__VA_ARGS__)
#endif

/* Generated typed families. */
#include <shoal/rma_gen.h>
#include <shoal/rma_strided_gen.h>
#include <shoal/wait_gen.h>
#include <shoal/amo_gen.h>
#include <shoal/signal_gen.h>
#include <shoal/coll_gen.h>
#include <shoal/generic_gen.h>

#endif /* SHMEM_H */
