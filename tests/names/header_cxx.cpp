// shmem.h compiles as C++: the typed names have C linkage and the C11
// generic macros are left out.
#include <shmem.h>

#if defined(shmem_put) || defined(shmem_wait_until) || defined(shmem_wait)
#error "the C11 generic macros must not be defined in C++"
#endif
#if defined(shmem_atomic_fetch_add) || defined(shmem_fadd) || defined(shmem_put_signal)
#error "the C11 generic AMO and signal macros must not be defined in C++"
#endif

void names_cxx(int *dest, const int *source, long *ivar, uint64_t *sig);

void names_cxx(int *dest, const int *source, long *ivar, uint64_t *sig)
{
    shmem_int_put(dest, source, 1, 0);
    shmem_ctx_int_iput(SHMEM_CTX_DEFAULT, dest, source, 2, 1, 1, 0);
    shmem_long_wait_until(ivar, SHMEM_CMP_NE, 0);
    size_t found = shmem_long_test_any(ivar, 1, nullptr, SHMEM_CMP_EQ, 0);
    (void)found;
    *dest = shmem_int_atomic_fetch_add(dest, 1, 0);
    shmem_ctx_long_atomic_compare_swap_nbi(SHMEM_CTX_DEFAULT, ivar, ivar, 0, 1, 0);
    *dest = shmem_int_fadd(dest, 1, 0);
    shmem_int_put_signal(dest, source, 1, sig, 1, SHMEM_SIGNAL_ADD, 0);
    shmem_ctx_putmem_signal_nbi(SHMEM_CTX_DEFAULT, dest, source, sizeof(int), sig, 1, SHMEM_SIGNAL_SET, 0);
}
