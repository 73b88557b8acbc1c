/* mpp/pshmem.h: <pshmem.h> under the deprecated mpp/ directory, beside
 * mpp/shmem.h. */
#ifndef SHOAL_MPP_PSHMEM_H
#define SHOAL_MPP_PSHMEM_H
#include "../pshmem.h"
#endif
