/* lock.c: shmem_set_lock, shmem_test_lock, shmem_clear_lock.
 *
 * The queue lock (sync/lock.c) uses this PE's copy of the lock variable as
 * the PE's queue node, so only one thread of a PE may be queued on a lock
 * at a time. This PE keeps the locks its threads hold or are acquiring
 * (claims): another thread of the PE asking for a claimed lock waits here,
 * locally, until the claim ends, so threads of one PE exclude each other
 * too. The claims also catch misuse: clearing a lock this PE does not
 * hold, and a thread setting a lock it already holds (it would wait for
 * itself forever). */
#include <pthread.h>
#include <shmem.h>
#include <stdlib.h>

#include "api/check.h"
#include "api/profiling.h"
#include "observe/observe.h"
#include "observe/blocked.h"
#include "sync/backoff.h"
#include "sync/lock.h"

struct claim {
    long *lock;
    pthread_t thread; /* the thread that set (or is setting) it */
    int held;         /* 0 while being acquired */
};

static struct claim *claims;
static int n_claims, claims_cap;
static pthread_mutex_t claims_lock = PTHREAD_MUTEX_INITIALIZER;

/* Under claims_lock. */
static struct claim *find_claim(const long *lock)
{
    for (int i = 0; i < n_claims; i++)
        if (claims[i].lock == lock) return &claims[i];
    return NULL;
}

/* Claims lock for this thread: 1 done, 0 another thread of this PE has it
 * (and then nothing changed). A blocking caller that already has it is
 * misusing the lock; a test by the holder just finds it taken. */
static int try_claim(const char *call, long *lock, int blocking)
{
    int done = 0;
    pthread_mutex_lock(&claims_lock);
    struct claim *c = find_claim(lock);
    if (c && blocking && pthread_equal(c->thread, pthread_self())) {
        pthread_mutex_unlock(&claims_lock);
        shoal_api_fail(call, "lock %p is already held by this thread (it would wait for itself)", (void *)lock);
    }
    if (!c) {
        if (n_claims == claims_cap) {
            int cap = claims_cap ? 2 * claims_cap : 16;
            struct claim *grown = realloc(claims, (size_t)cap * sizeof *grown);
            if (!grown) {
                pthread_mutex_unlock(&claims_lock);
                shoal_api_fail(call, "out of memory recording the lock %p", (void *)lock);
            }
            claims = grown;
            claims_cap = cap;
        }
        claims[n_claims++] = (struct claim){.lock = lock, .thread = pthread_self(), .held = 0};
        done = 1;
    }
    pthread_mutex_unlock(&claims_lock);
    return done;
}

static void set_held(long *lock)
{
    pthread_mutex_lock(&claims_lock);
    find_claim(lock)->held = 1;
    pthread_mutex_unlock(&claims_lock);
}

static void drop_claim(long *lock)
{
    pthread_mutex_lock(&claims_lock);
    struct claim *c = find_claim(lock);
    *c = claims[--n_claims];
    pthread_mutex_unlock(&claims_lock);
}

static int held_by_this_pe(long *lock)
{
    pthread_mutex_lock(&claims_lock);
    const struct claim *c = find_claim(lock);
    int held = c && c->held;
    pthread_mutex_unlock(&claims_lock);
    return held;
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

SHOAL_WEAK_ALIAS(shmem_set_lock);
void pshmem_set_lock(long *lock)
{
    size_t off;
    int seg = lock_segment("shmem_set_lock", lock, &off);
    SHOAL_OBS_SPAN(sp, SHOAL_OBS_LOCK, "shmem_set_lock", -1, 0);
    struct shoal_backoff b = {0};
    shoal_blocked_call("shmem_set_lock", SHOAL_WHERE_LOCK, lock, -1);
    SHOAL_BACKOFF_WHILE(&b, !try_claim("shmem_set_lock", lock, 1));
    lock_result("shmem_set_lock", shoal_lock_acquire(seg, off));
    set_held(lock);
    shoal_blocked_lock_held(lock, 1);
    shoal_blocked_end();
}

SHOAL_WEAK_ALIAS(shmem_test_lock);
int pshmem_test_lock(long *lock)
{
    size_t off;
    int acquired = 0;
    int seg = lock_segment("shmem_test_lock", lock, &off);
    SHOAL_OBS_SPAN(sp, SHOAL_OBS_LOCK, "shmem_test_lock", -1, 0);
    if (!try_claim("shmem_test_lock", lock, 0)) {
        shoal_backoff_poll_failed();
        return 1;
    }
    lock_result("shmem_test_lock", shoal_lock_try(seg, off, &acquired));
    if (acquired) set_held(lock);
    else drop_claim(lock);
    if (acquired) shoal_blocked_lock_held(lock, 1);
    return acquired ? 0 : 1;
}

SHOAL_WEAK_ALIAS(shmem_clear_lock);
void pshmem_clear_lock(long *lock)
{
    size_t off;
    int seg = lock_segment("shmem_clear_lock", lock, &off);
    SHOAL_OBS_SPAN(sp, SHOAL_OBS_LOCK, "shmem_clear_lock", -1, 0);
    if (SHOAL_UNLIKELY(!held_by_this_pe(lock)))
        shoal_api_fail("shmem_clear_lock", "lock %p is not held by this PE (clear only a lock this PE set)",
                       (void *)lock);
    /* Updates made while holding the lock complete before it passes on. */
    shoal_rt.transport->quiet(NULL);
    lock_result("shmem_clear_lock", shoal_lock_release(seg, off));
    /* Only now may another thread of this PE queue on it (our node is free). */
    drop_claim(lock);
    shoal_blocked_lock_held(lock, 0);
}
