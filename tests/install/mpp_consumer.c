/* mpp_consumer.c: an old program's includes (<mpp/shmem.h>, <mpp/shmemx.h>)
 * and both C11 shapes of shmem_sync, built with the installed oshcc. Every
 * PE puts its number into its right neighbour, quiets and syncs; each
 * checks its left neighbour's number. Prints "mpp ok on N PEs". */
#include <mpp/shmem.h>
#include <mpp/shmemx.h>
#include <stdio.h>

static long box;
static long psync[SHMEM_SYNC_SIZE];

int main(void)
{
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes();
    for (int i = 0; i < SHMEM_SYNC_SIZE; i++) psync[i] = SHMEM_SYNC_VALUE;
    int bad = shmemx_wtime() < 0;
    shmem_barrier_all();
    for (int round = 0; round < 2; round++) {
        shmem_long_p(&box, 10L * round + me, (me + 1) % n);
        shmem_quiet();
        if (round == 0) bad |= shmem_sync(SHMEM_TEAM_WORLD) != 0;
        else shmem_sync(0, 0, n, psync);
        bad |= box != 10L * round + (me + n - 1) % n;
        shmem_sync_all();
    }
    if (me == 0 && !bad) printf("mpp ok on %d PEs\n", n);
    shmem_finalize();
    return bad;
}
