/* barrier.h: barriers over the runtime's internal symmetric area. */
#ifndef SHOAL_SYNC_BARRIER_H
#define SHOAL_SYNC_BARRIER_H

/* Prepares the barrier state; called once by init after the transports are up. */
void shoal_barrier_init(void);
/* Synchronises all PEs (no completion of puts implied: see shmem_quiet). */
void shoal_sync_all(void);

#endif
