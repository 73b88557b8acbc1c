/* shmem.h compiles as C99: the typed names are declared and the C11 generic
 * macros are left out. */
#include <shmem.h>

#if defined(shmem_put) || defined(shmem_wait_until) || defined(shmem_wait)
#error "the C11 generic macros must not be defined before C11"
#endif

void names_c99(int *dest, const int *source, long *ivar);

void names_c99(int *dest, const int *source, long *ivar)
{
    shmem_int_put(dest, source, 1, 0);
    shmem_ctx_int_iput(SHMEM_CTX_DEFAULT, dest, source, 2, 1, 1, 0);
    shmem_long_wait_until(ivar, SHMEM_CMP_NE, 0);
}
