/* sum_to_root: every PE computes a partial sum and writes it into its own
 * slot of an array on PE 0 with a single-element put; PE 0 waits until all
 * slots are filled (wait_until_all) and prints the total. */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    long *partial = shmem_calloc((size_t)npes, sizeof *partial);
    long *ready = shmem_calloc((size_t)npes, sizeof *ready);

    long mine = 0;
    for (long i = me * 1000L; i < (me + 1) * 1000L; i++) mine += i;
    shmem_long_p(&partial[me], mine, 0);
    shmem_fence();
    shmem_long_p(&ready[me], 1, 0);

    int status = 0;
    if (me == 0) {
        shmem_long_wait_until_all(ready, (size_t)npes, NULL, SHMEM_CMP_EQ, 1);
        long total = 0;
        for (int pe = 0; pe < npes; pe++) total += partial[pe];
        long n = npes * 1000L;
        printf("PE 0: sum of 0..%ld gathered from %d PEs = %ld (expected %ld)\n", n - 1, npes, total,
               n * (n - 1) / 2);
        status = total == n * (n - 1) / 2 ? 0 : 1;
    }
    shmem_barrier_all();
    shmem_free(ready);
    shmem_free(partial);
    shmem_finalize();
    return status;
}
