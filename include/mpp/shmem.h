/* mpp/shmem.h: the header directory of the first SHMEM libraries. The
 * standard deprecates it but still requires it, so old programs that
 * include <mpp/shmem.h> build unchanged. */
#ifndef SHOAL_MPP_SHMEM_H
#define SHOAL_MPP_SHMEM_H
#include "../shmem.h"
#endif
