/* barrier.h: set-up of waits and barriers (the barrier itself is
 * shoal_group_sync in sync/group.h). */
#ifndef SHOAL_SYNC_BARRIER_H
#define SHOAL_SYNC_BARRIER_H

/* Prepares the barrier state; called once by init after the transports are up. */
void shoal_barrier_init(void);

#endif
