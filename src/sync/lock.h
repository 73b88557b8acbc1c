/* lock.h: OpenSHMEM distributed locks as a ticket lock, first come first
 * served. seg/offset locate the symmetric `long` lock variable. */
#ifndef SHOAL_SYNC_LOCK_H
#define SHOAL_SYNC_LOCK_H

#include <stddef.h>

#include "util/status.h"

shoal_status_t shoal_lock_acquire(int seg, size_t offset);
/* *acquired is 1 if the lock was free and is now held, else 0. */
shoal_status_t shoal_lock_try(int seg, size_t offset, int *acquired);
shoal_status_t shoal_lock_release(int seg, size_t offset);

#endif
