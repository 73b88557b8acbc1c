/* heap_api.c: the symmetric heap calls. They are collective: every PE makes
 * the same calls with the same sizes, so the deterministic allocator gives
 * every PE the same offsets. The barriers are the ones the standard
 * requires: after an allocation (no PE touches the block before all have
 * it), before a free (no PE frees what a peer may still access). */
#include <shmem.h>
#include <string.h>

#include "api/check.h"
#include "api/debug.h"
#include "api/profiling.h"
#include "coll/coll.h"
#include "observe/observe.h"
#include "observe/blocked.h"
#include "util/log.h"

static char *user_heap_base(void) { return shoal_rt.seg[SHOAL_SEG_HEAP].base; }

/* Why an allocation failed. The log line already names the PE. A request
 * larger than the whole heap can never succeed, so it names the setting to
 * change rather than calling the heap full. */
static void report_full(const char *call, size_t size)
{
    char want[32], free_b[32], largest[32], total[32];
    shoal_format_bytes(size, want, sizeof want);
    shoal_format_bytes(shoal_rt.config.symmetric_size, total, sizeof total);
    if (size > shoal_rt.internal_offset) {
        shoal_log_write(SHOAL_LOG_ERROR, NULL,
                        "%s: %s requested exceeds the symmetric heap size (SHMEM_SYMMETRIC_SIZE=%s); raise "
                        "SHMEM_SYMMETRIC_SIZE above %s", call, want, total, want);
        return;
    }
    shoal_log_write(SHOAL_LOG_ERROR, NULL,
                    "%s: symmetric heap is full: %s requested, %s free, largest free block %s; "
                    "raise SHMEM_SYMMETRIC_SIZE (now %s)",
                    call, want, shoal_format_bytes(shoal_alloc_free_bytes(shoal_rt.alloc), free_b, sizeof free_b),
                    shoal_format_bytes(shoal_alloc_largest_free(shoal_rt.alloc), largest, sizeof largest), total);
}

/* Allocates without the trailing barrier; NULL (reported) when full. */
static void *allocate(const char *call, size_t size, size_t alignment)
{
    size_t offset;
    pthread_mutex_lock(&shoal_rt.heap_lock);
    shoal_status_t st = shoal_alloc_alloc(shoal_rt.alloc, size, alignment, &offset);
    pthread_mutex_unlock(&shoal_rt.heap_lock);
    if (st == SHOAL_ERR_NOMEM) {
        report_full(call, size);
        return NULL;
    }
    if (st != SHOAL_OK) shoal_api_fail(call, "allocation of %zu bytes failed: %s", size, shoal_status_str(st));
    return user_heap_base() + offset;
}

/* Offset of a pointer the heap gave, failing the call for any other pointer. */
static size_t offset_of_block(const char *call, void *ptr)
{
    char *base = user_heap_base();
    size_t offset = (size_t)((char *)ptr - base);
    int inside = (char *)ptr >= base && offset < shoal_rt.internal_offset;
    if (!inside || shoal_alloc_block_size(shoal_rt.alloc, offset) == 0)
        shoal_api_fail(call, "pointer %p was not returned by shmem_malloc/calloc/align/realloc, or was already "
                       "freed (symmetric heap is [%p, %p))",
                       ptr, (void *)base, (void *)shoal_rt.internal);
    return offset;
}

/* The heap call's barrier; a hang report shows it as a world collective. */
static void barrier(const char *call, size_t bytes)
{
    SHOAL_OBS_SPAN(sp, SHOAL_OBS_BARRIER, "barrier of a heap call", -1, 0); /* nested: level 2 */
    SHOAL_OBS_TEAM(sp, 0);
    shoal_blocked_coll(call, SHMEM_TEAM_WORLD, 0, 0, 0, bytes, -1);
    shoal_rt.transport->quiet(NULL);
    shoal_coll_sync_all();
    shoal_blocked_end();
}

/* An allocation (zeroed for calloc) and the barrier after it, where the
 * PEs also compare what they asked for (debug.h). */
static void *allocate_collective(const char *call, enum shoal_heap_call kind, size_t size, size_t alignment)
{
    shoal_check_init(call);
    SHOAL_OBS_SPAN(sp, SHOAL_OBS_ALLOC, call, -1, size);
    if (size == 0) return NULL;
    shoal_debug_heap_publish(kind, size, kind == SHOAL_HEAP_ALIGN ? alignment : 0);
    void *p = allocate(call, size, alignment);
    if (p && kind == SHOAL_HEAP_CALLOC) memset(p, 0, size);
    barrier(call, size);
    shoal_debug_heap_compare(call);
    shoal_debug_heap_check(call);
    return p;
}

SHOAL_WEAK_ALIAS(shmem_malloc);
void *pshmem_malloc(size_t size) { return allocate_collective("shmem_malloc", SHOAL_HEAP_MALLOC, size, 0); }

SHOAL_WEAK_ALIAS(shmem_calloc);
void *pshmem_calloc(size_t count, size_t size)
{
    static const char *call = "shmem_calloc";
    shoal_check_init(call);
    return allocate_collective(call, SHOAL_HEAP_CALLOC, shoal_check_bytes(call, count, size), 0);
}

SHOAL_WEAK_ALIAS(shmem_align);
void *pshmem_align(size_t alignment, size_t size)
{
    static const char *call = "shmem_align";
    shoal_check_init(call);
    /* A bad alignment is an allocation that cannot be made: NULL and one
     * line, as for a full heap. Every PE passes the same alignment, so all
     * return here together. */
    if (alignment == 0 || (alignment & (alignment - 1))) {
        shoal_log_write(SHOAL_LOG_ERROR, NULL,
                        "%s: alignment %zu is not a power of two (valid: 1, 2, 4, ... %zu); returning NULL", call,
                        alignment, (size_t)SHOAL_HEAP_BASE_ALIGN);
        return NULL;
    }
    if (alignment > SHOAL_HEAP_BASE_ALIGN) {
        shoal_log_write(SHOAL_LOG_ERROR, NULL,
                        "%s: alignment %zu exceeds the largest supported alignment %zu; returning NULL", call,
                        alignment, (size_t)SHOAL_HEAP_BASE_ALIGN);
        return NULL;
    }
    return allocate_collective(call, SHOAL_HEAP_ALIGN, size, alignment);
}

SHOAL_WEAK_ALIAS(shmem_malloc_with_hints);
void *pshmem_malloc_with_hints(size_t size, long hints)
{
    static const char *call = "shmem_malloc_with_hints";
    shoal_check_init(call);
    /* Hints are advisory: bits this library does not know (a later
     * standard's, or none at all) leave a plain shmem_malloc. Objects
     * updated remotely get cache lines of their own, so a peer's atomics do
     * not bounce a line that local code is also writing. */
    const long remote = hints & (SHMEM_MALLOC_ATOMICS_REMOTE | SHMEM_MALLOC_SIGNAL_REMOTE);
    return allocate_collective(call, SHOAL_HEAP_MALLOC_HINTS, size, remote ? 64 : 0);
}

SHOAL_WEAK_ALIAS(shmem_free);
void pshmem_free(void *ptr)
{
    static const char *call = "shmem_free";
    shoal_check_init(call);
    SHOAL_OBS_SPAN(sp, SHOAL_OBS_ALLOC, call, -1, 0);
    if (!ptr) return;
    size_t offset = offset_of_block(call, ptr);
    shoal_debug_heap_publish(SHOAL_HEAP_FREE, offset, 0);
    barrier(call, 0);
    shoal_debug_heap_compare(call);
    pthread_mutex_lock(&shoal_rt.heap_lock);
    shoal_status_t st = shoal_alloc_free(shoal_rt.alloc, offset);
    pthread_mutex_unlock(&shoal_rt.heap_lock);
    if (st != SHOAL_OK) shoal_api_fail(call, "pointer %p could not be freed: %s", ptr, shoal_status_str(st));
    shoal_debug_heap_check(call);
}

SHOAL_WEAK_ALIAS(shmem_realloc);
void *pshmem_realloc(void *ptr, size_t size)
{
    static const char *call = "shmem_realloc";
    shoal_check_init(call);
    SHOAL_OBS_SPAN(sp, SHOAL_OBS_ALLOC, call, -1, size);
    if (!ptr) return allocate_collective(call, SHOAL_HEAP_REALLOC, size, 0);
    if (size == 0) {
        pshmem_free(ptr);
        return NULL;
    }
    size_t offset = offset_of_block(call, ptr);
    size_t old_size = shoal_alloc_block_size(shoal_rt.alloc, offset);
    /* Peers may still be writing the old block. */
    shoal_debug_heap_publish(SHOAL_HEAP_REALLOC, size, offset);
    barrier(call, size);
    shoal_debug_heap_compare(call);
    void *result = ptr;
    pthread_mutex_lock(&shoal_rt.heap_lock);
    shoal_status_t st = shoal_alloc_resize(shoal_rt.alloc, offset, size);
    pthread_mutex_unlock(&shoal_rt.heap_lock);
    if (st == SHOAL_ERR_NOMEM) {
        result = allocate(call, size, 0);
        if (result) {
            memcpy(result, ptr, old_size < size ? old_size : size);
            pthread_mutex_lock(&shoal_rt.heap_lock);
            shoal_alloc_free(shoal_rt.alloc, offset);
            pthread_mutex_unlock(&shoal_rt.heap_lock);
        }
    } else if (st != SHOAL_OK) {
        shoal_api_fail(call, "resizing %p to %zu bytes failed: %s", ptr, size, shoal_status_str(st));
    }
    barrier(call, size);
    shoal_debug_heap_check(call);
    return result;
}
