/* wait_untyped.c: the deprecated untyped shmem_wait and shmem_wait_until
 * (OpenSHMEM 1.0-1.3, on a long) as real functions, so C++ and C99
 * programs, which do not get the C11 generic macros of the same names,
 * link. Defined as pshmem_wait and pshmem_wait_until (profiling.h), names
 * no macro shadows. */
#include "api/profiling.h"
#include "api/wait_api.h"

#include <shmem.h>

SHOAL_WEAK_ALIAS(shmem_wait);
void pshmem_wait(long *ivar, long cmp_value)
{
    shoal_api_wait_until(ivar, SHOAL_KIND(sizeof(long), 1), SHMEM_CMP_NE, &cmp_value, "shmem_wait");
}

SHOAL_WEAK_ALIAS(shmem_wait_until);
void pshmem_wait_until(long *ivar, int cmp, long cmp_value)
{
    shoal_api_wait_until(ivar, SHOAL_KIND(sizeof(long), 1), cmp, &cmp_value, "shmem_wait_until");
}
