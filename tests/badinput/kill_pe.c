/* kill_pe.c: PE 1 kills itself with SIGKILL while the others wait in
 * shmem_barrier_all. If SHOAL_TEST_STAMP names a file, PE 1 writes the
 * CLOCK_REALTIME time of the kill there first, so the script can measure
 * how long the launcher takes to end the job. */
#include <shmem.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    shmem_init();
    void *heap = shmem_malloc(1 << 20); /* something to clean up */
    shmem_barrier_all();
    if (shmem_my_pe() == 1) {
        struct timespec pause = {0, 100 * 1000 * 1000}; /* let the others enter the barrier */
        nanosleep(&pause, NULL);
        const char *stamp = getenv("SHOAL_TEST_STAMP");
        if (stamp) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            FILE *f = fopen(stamp, "w");
            if (f) {
                fprintf(f, "%lld.%09ld\n", (long long)ts.tv_sec, ts.tv_nsec);
                fclose(f);
            }
        }
        raise(SIGKILL);
    }
    shmem_barrier_all();
    shmem_free(heap);
    shmem_finalize();
    return 0;
}
