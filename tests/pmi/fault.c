/* fault.c: the last PE ends the job while the others wait in a barrier it
 * will never reach. Under a PMI or PMIx launcher the whole job must end
 * (no hang) with a non-zero status.
 *
 *   pmi_fault global_exit   the last PE calls shmem_global_exit(3)
 *   pmi_fault global_exit0  the last PE calls shmem_global_exit(0): the job
 *                           still ends, with status 0
 *   pmi_fault abort         the last PE calls abort() */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv)
{
    if (argc != 2 || (strcmp(argv[1], "global_exit") && strcmp(argv[1], "global_exit0") && strcmp(argv[1], "abort"))) {
        fprintf(stderr, "usage: pmi_fault global_exit|global_exit0|abort\n");
        return 2;
    }
    shmem_init();
    shmem_barrier_all();
    if (shmem_my_pe() == shmem_n_pes() - 1) {
        /* Let the others block first. */
        struct timespec t = {0, 200 * 1000 * 1000};
        nanosleep(&t, NULL);
        if (strcmp(argv[1], "abort") == 0) abort();
        shmem_global_exit(strcmp(argv[1], "global_exit0") == 0 ? 0 : 3);
    }
    shmem_barrier_all();
    fprintf(stderr, "pmi_fault: PE %d got past a barrier the last PE never reached\n", shmem_my_pe());
    shmem_finalize();
    return 0;
}
