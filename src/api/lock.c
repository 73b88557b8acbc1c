/* lock.c: shmem_set_lock, shmem_test_lock, shmem_clear_lock. */
#include <shmem.h>

#include "api/check.h"
#include "sync/lock.h"

static int lock_segment(const char *call, long *lock, size_t *offset)
{
    shoal_check_init(call);
    int seg = shoal_check_symmetric(call, "lock", lock, sizeof *lock, offset);
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
}

int shmem_test_lock(long *lock)
{
    size_t off;
    int acquired;
    int seg = lock_segment("shmem_test_lock", lock, &off);
    lock_result("shmem_test_lock", shoal_lock_try(seg, off, &acquired));
    return acquired ? 0 : 1;
}

void shmem_clear_lock(long *lock)
{
    size_t off;
    int seg = lock_segment("shmem_clear_lock", lock, &off);
    /* Updates made while holding the lock complete before it passes on. */
    shoal_rt.transport->quiet();
    lock_result("shmem_clear_lock", shoal_lock_release(seg, off));
}
