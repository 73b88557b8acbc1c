/* bad_pe.c: a put to a PE that does not exist. "high": PE n_pes-1 calls
 * shmem_int_put to PE n_pes; "neg": PE 0 calls shmem_long_p to PE -1. The
 * other PEs wait in shmem_barrier_all and must be stopped. */
#include <shmem.h>
#include <string.h>

static int target_int[4];
static long target_long;

int main(int argc, char **argv)
{
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes();
    const int high = argc > 1 && strcmp(argv[1], "high") == 0;
    int src[4] = {1, 2, 3, 4};
    if (high && me == n - 1) shmem_int_put(target_int, src, 4, n);
    if (!high && me == 0) shmem_long_p(&target_long, 5, -1);
    shmem_barrier_all();
    shmem_finalize();
    return 0; /* not reached: the bad call ends the job */
}
