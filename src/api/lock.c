/* lock.c: shmem_set_lock, shmem_test_lock, shmem_clear_lock.
 *
 * This PE remembers the locks it holds (up to HELD_MAX; beyond that it
 * stops checking), so clearing a lock it does not hold is reported instead
 * of silently advancing the ticket lock past a ticket nobody drew (which
 * would later let two PEs hold it). */
#include <pthread.h>
#include <shmem.h>

#include "api/check.h"
#include "sync/lock.h"

#define HELD_MAX 64
static long *held[HELD_MAX];
static int n_held, held_overflow;
static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;

static void held_add(long *lock)
{
    pthread_mutex_lock(&held_lock);
    if (n_held < HELD_MAX) held[n_held++] = lock;
    else held_overflow = 1;
    pthread_mutex_unlock(&held_lock);
}

/* Removes lock from the held set; 0 if this PE does not hold it. */
static int held_remove(long *lock)
{
    int found = held_overflow;
    pthread_mutex_lock(&held_lock);
    for (int i = 0; i < n_held; i++)
        if (held[i] == lock) {
            held[i] = held[--n_held];
            found = 1;
            break;
        }
    pthread_mutex_unlock(&held_lock);
    return found;
}

static int lock_segment(const char *call, long *lock, size_t *offset)
{
    shoal_check_init(call);
    int seg = shoal_check_symmetric(call, "lock", lock, sizeof *lock, offset);
    shoal_check_writable(call, "lock", lock, seg, *offset, sizeof *lock, shoal_rt.my_pe);
    if (SHOAL_UNLIKELY((uintptr_t)lock % sizeof *lock))
        shoal_api_fail(call, "lock address %p is not aligned to a long", (void *)lock);
    return seg;
}

static void lock_result(const char *call, shoal_status_t st)
{
    if (SHOAL_UNLIKELY(st != SHOAL_OK)) shoal_api_fail(call, "lock operation failed: %s", shoal_status_str(st));
}

void shmem_set_lock(long *lock)
{
    size_t off;
    int seg = lock_segment("shmem_set_lock", lock, &off);
    lock_result("shmem_set_lock", shoal_lock_acquire(seg, off));
    held_add(lock);
}

int shmem_test_lock(long *lock)
{
    size_t off;
    int acquired;
    int seg = lock_segment("shmem_test_lock", lock, &off);
    lock_result("shmem_test_lock", shoal_lock_try(seg, off, &acquired));
    if (acquired) held_add(lock);
    return acquired ? 0 : 1;
}

void shmem_clear_lock(long *lock)
{
    size_t off;
    int seg = lock_segment("shmem_clear_lock", lock, &off);
    if (SHOAL_UNLIKELY(!held_remove(lock)))
        shoal_api_fail("shmem_clear_lock", "lock %p is not held by this PE (clear only a lock this PE set)",
                       (void *)lock);
    /* Updates made while holding the lock complete before it passes on. */
    shoal_rt.transport->quiet(NULL);
    lock_result("shmem_clear_lock", shoal_lock_release(seg, off));
}
