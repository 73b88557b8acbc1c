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

/* Sizes of the work arrays of the deprecated active-set collectives. */
#define SHMEM_SYNC_VALUE 0L
#define SHMEM_BARRIER_SYNC_SIZE 8
#define SHMEM_BCAST_SYNC_SIZE 8
#define SHMEM_COLLECT_SYNC_SIZE 8
#define SHMEM_REDUCE_SYNC_SIZE 8
#define SHMEM_ALLTOALL_SYNC_SIZE 8
#define SHMEM_ALLTOALLS_SYNC_SIZE 8
#define SHMEM_SYNC_SIZE 8
#define SHMEM_REDUCE_MIN_WRKDATA_SIZE 8
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

/* Generated typed families. */
#include <shoal/rma_gen.h>
#include <shoal/wait_gen.h>
#include <shoal/generic_gen.h>

#endif /* SHMEM_H */
