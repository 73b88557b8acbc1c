/* consumer: a program built against an installed Shoal. */
#include <shmem.h>
#include <stdio.h>

static long token;

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    shmem_long_p(&token, me + 1, (me + 1) % npes);
    shmem_barrier_all();
    int ok = token == (me + npes - 1) % npes + 1;
    int all_ok = ok;
    if (me == 0)
        for (int pe = 1; pe < npes; pe++) {
            long seen = shmem_long_g(&token, pe);
            all_ok &= seen == (pe + npes - 1) % npes + 1;
        }
    if (me == 0 && all_ok) printf("consumer ok on %d PEs\n", npes);
    shmem_barrier_all();
    shmem_finalize();
    return ok ? 0 : 1;
}
