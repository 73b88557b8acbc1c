// shmem.h compiles as C++: the typed names have C linkage and the C11
// generic macros are left out.
#include <shmem.h>

#if defined(shmem_put) || defined(shmem_wait_until) || defined(shmem_wait)
#error "the C11 generic macros must not be defined in C++"
#endif

void names_cxx(int *dest, const int *source, long *ivar);

void names_cxx(int *dest, const int *source, long *ivar)
{
    shmem_int_put(dest, source, 1, 0);
    shmem_ctx_int_iput(SHMEM_CTX_DEFAULT, dest, source, 2, 1, 1, 0);
    shmem_long_wait_until(ivar, SHMEM_CMP_NE, 0);
    size_t found = shmem_long_test_any(ivar, 1, nullptr, SHMEM_CMP_EQ, 0);
    (void)found;
}
