/* shmemx.h: Shoal's extensions to OpenSHMEM. Every name is shmemx_*. */
#ifndef SHMEMX_H
#define SHMEMX_H

#include <shmem.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Seconds since an arbitrary fixed point, for benchmarks and examples. */
double shmemx_wtime(void);

#ifdef __cplusplus
}
#endif

#endif
