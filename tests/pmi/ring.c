/* ring.c: a job of the size the launcher was asked for, checked by its
 * data: every PE sees NPES PEs, puts a block tagged with its rank into the
 * next PE's buffer, and checks the block the previous PE put into its
 * own; then the ranks are summed with a reduction. N one-PE jobs (what a
 * launcher the library misread would start) fail here.
 *
 *   pmi_ring NPES */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>

#define BLOCK 1024

static long inbox[BLOCK];
static long ranks_sum, my_rank;

int main(int argc, char **argv)
{
    int want = argc == 2 ? atoi(argv[1]) : 0, bad = 0;
    long block[BLOCK];
    if (want < 1) {
        fprintf(stderr, "usage: pmi_ring NPES\n");
        return 2;
    }
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    if (npes != want) {
        fprintf(stderr, "pmi_ring: PE %d sees %d PEs, the launcher started %d\n", me, npes, want);
        return 1;
    }
    for (int i = 0; i < BLOCK; i++) block[i] = (long)me * 100000 + i;
    shmem_long_put(inbox, block, BLOCK, (me + 1) % npes);
    shmem_barrier_all();
    int from = (me + npes - 1) % npes;
    for (int i = 0; i < BLOCK; i++) bad += inbox[i] != (long)from * 100000 + i;
    if (bad) fprintf(stderr, "pmi_ring: PE %d: %d of %d words from PE %d are wrong\n", me, bad, BLOCK, from);
    my_rank = me;
    shmem_long_sum_reduce(SHMEM_TEAM_WORLD, &ranks_sum, &my_rank, 1);
    if (ranks_sum != (long)npes * (npes - 1) / 2) {
        fprintf(stderr, "pmi_ring: PE %d: the ranks sum to %ld, want %ld\n", me, ranks_sum, (long)npes * (npes - 1) / 2);
        bad++;
    }
    shmem_finalize();
    if (!bad && me == 0) printf("pmi_ring: %d PEs ok\n", npes);
    return bad ? 1 : 0;
}
