// pshmem.h as C++: the complex forms take std::complex, as in shmem.h.
#include <mpp/pshmem.h>
#include <pshmem.h>

void (*prof_header_put)(void *, const void *, size_t, int) = pshmem_putmem;
int (*prof_header_prod)(shmem_team_t, std::complex<double> *, const std::complex<double> *, size_t) =
    pshmem_complexd_prod_reduce;
