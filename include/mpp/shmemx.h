/* mpp/shmemx.h: <shmemx.h> under the deprecated mpp/ directory, beside
 * mpp/shmem.h. */
#ifndef SHOAL_MPP_SHMEMX_H
#define SHOAL_MPP_SHMEMX_H
#include "../shmemx.h"
#endif
