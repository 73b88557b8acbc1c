/* mpi_mix.c: one program that uses MPI and OpenSHMEM side by side.
 *
 *   pmi_mpi_mix mpi-first|shmem-first [mpi-finalize-first]
 *
 * Initialises both in the order given and finalises SHMEM first (or MPI
 * first with the third argument: fine under PMIx, a clear error under
 * MPICH's Hydra, see docs/launchers.md), then checks a put to the right neighbour, a fetch-add on PE 0,
 * a SHMEM sum reduction and an MPI_Allreduce. The data lives on the
 * symmetric heap: with MPI started first, helper threads may already run
 * and static data may not be remotely accessible. */
#include <mpi.h>
#include <shmem.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

static void init_both(int shmem_first, int *argc, char ***argv)
{
    if (shmem_first) shmem_init();
    MPI_Init(argc, argv);
    if (!shmem_first) shmem_init();
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3 || (strcmp(argv[1], "mpi-first") && strcmp(argv[1], "shmem-first")) ||
        (argc == 3 && strcmp(argv[2], "mpi-finalize-first"))) {
        fprintf(stderr, "usage: pmi_mpi_mix mpi-first|shmem-first [mpi-finalize-first]\n");
        return 2;
    }
    const int shmem_first = strcmp(argv[1], "shmem-first") == 0, mpi_fin_first = argc == 3;
    const char *mode = argv[1];
    init_both(shmem_first, &argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int me = shmem_my_pe(), n = shmem_n_pes();
    test_pe = me;
    CHECK_MSG(me == rank && n == size, "SHMEM PE %d of %d, MPI rank %d of %d", me, n, rank, size);

    long *slot = shmem_malloc(sizeof *slot);
    long *counter = shmem_calloc(1, sizeof *counter);
    int *src = shmem_malloc(4 * sizeof *src), *dst = shmem_malloc(4 * sizeof *dst);
    CHECK(slot && counter && src && dst);
    *slot = -1;
    for (int i = 0; i < 4; i++) src[i] = me + i;
    shmem_barrier_all();

    shmem_long_p(slot, 1000 + me, (me + 1) % n);
    long old = shmem_long_atomic_fetch_add(counter, 1, 0);
    CHECK_MSG(old >= 0 && old < n, "fetch_add returned %ld", old);
    shmem_int_sum_reduce(SHMEM_TEAM_WORLD, dst, src, 4);
    shmem_barrier_all();

    CHECK_MSG(*slot == 1000 + (me + n - 1) % n, "slot %ld", *slot);
    if (me == 0) CHECK_MSG(*counter == n, "counter %ld after %d fetch_adds", *counter, n);
    for (int i = 0; i < 4; i++)
        CHECK_MSG(dst[i] == n * (n - 1) / 2 + n * i, "reduce[%d] = %d", i, dst[i]);

    long mine = me + 1, total = 0;
    MPI_Allreduce(&mine, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    CHECK_MSG(total == (long)n * (n + 1) / 2, "MPI_Allreduce gave %ld", total);

    /* Every PE's verdict, through MPI, so one failing PE fails them all. */
    int bad = test_failures, any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    shmem_free(dst);
    shmem_free(src);
    shmem_free(counter);
    shmem_free(slot);
    if (mpi_fin_first) {
        MPI_Finalize();
        shmem_finalize();
    } else {
        shmem_finalize();
        MPI_Finalize();
    }
    if (me == 0 && !any)
        printf("mpi_mix ok on %d PEs (%s%s)\n", n, mode, mpi_fin_first ? ", MPI finalized first" : "");
    return any ? TEST_FAIL : TEST_PASS;
}
