/* finalize.h: shmem_finalize's meeting of all PEs, and the exit handler
 * that finalizes a PE whose program did not (finalize.c). */
#ifndef SHOAL_API_FINALIZE_H
#define SHOAL_API_FINALIZE_H

/* After start-up: waits publish their counts for the exit watch. */
void shoal_finalize_start(void);
/* Registers the exit handler (once per process). */
void shoal_finalize_arm_exit(void);
/* Meets every PE, then tears the runtime down. at_exit: called by the
 * exit handler, which warns once for the job and never waits forever on
 * peers that wait for this PE. */
void shoal_finalize_run(int at_exit);

#endif
