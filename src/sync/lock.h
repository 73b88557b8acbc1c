/* lock.h: OpenSHMEM distributed locks as a queue (MCS) lock, first come
 * first served; waiters spin on their own copy of the lock variable
 * (lock.c). seg/offset locate the symmetric `long` lock variable. Only one
 * thread of a PE may be queued on (or hold) a given lock at a time: the
 * caller ensures it (api/lock.c). */
#ifndef SHOAL_SYNC_LOCK_H
#define SHOAL_SYNC_LOCK_H

#include <stddef.h>

#include "util/status.h"

/* Byte offset, inside the lock variable on PE 0, of the 32-bit queue tail
 * (the last PE queued plus one, 0 when free). Tests read it to know a PE
 * has queued. */
#define SHOAL_LOCK_TAIL_AT 0

shoal_status_t shoal_lock_acquire(int seg, size_t offset);
/* *acquired is 1 if the lock was free and is now held, else 0. */
shoal_status_t shoal_lock_try(int seg, size_t offset, int *acquired);
shoal_status_t shoal_lock_release(int seg, size_t offset);

#endif
