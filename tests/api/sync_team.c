/* sync_team.c: shmem_sync in both of its C11 shapes, through the deprecated
 * header directory (<mpp/shmem.h>, <mpp/shmemx.h>).
 *   shmem_sync(team)                                the 1.5 team form
 *   shmem_sync(PE_start, logPE_stride, PE_size, pSync)  the deprecated active set
 * In each round every member puts a value for the round into its right
 * neighbour's box (within the team or active set), quiets, syncs, and
 * checks the value its left neighbour put; a sync that returned early, or
 * crossed two groups, shows as a stale or foreign value. The teams: world,
 * the even and the odd PEs (split_strided), and the active sets of all PEs
 * and of the even PEs (logPE_stride 1). The deprecated function is also
 * called through a pointer, as C99 and C++ programs reach it. */
#include <mpp/shmem.h>
#include <mpp/shmemx.h>

#include "api_util.h"

#define ROUNDS 20

static long box[2];
static long psync[2][SHMEM_SYNC_SIZE];
static int me, npes;

static long value(int round, int from) { return 100000L * (round + 1) + from; }

/* Puts into box[slot] of the member after me (members: world PEs of the
 * group, in order), quiets; the caller syncs; then checks mine. */
static void put_next(const int *members, int size, int my_index, int round, int slot)
{
    shmem_long_p(&box[slot], value(round, me), members[(my_index + 1) % size]);
    shmem_quiet();
}

static void check_prev(const int *members, int size, int my_index, int round, int slot, const char *how)
{
    const int from = members[(my_index + size - 1) % size];
    CHECK_MSG(box[slot] == value(round, from), "%s round %d: box holds %ld, expected %ld from PE %d", how, round,
              box[slot], value(round, from), from);
}

int main(void)
{
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    test_pe = me;
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < SHMEM_SYNC_SIZE; i++) psync[s][i] = SHMEM_SYNC_VALUE;
    const double t0 = shmemx_wtime();

    int *world = malloc((size_t)npes * sizeof(int)), *parity = malloc((size_t)npes * sizeof(int));
    int n_parity = 0, my_parity_index = -1;
    for (int p = 0; p < npes; p++) {
        world[p] = p;
        if (p % 2 == me % 2) {
            if (p == me) my_parity_index = n_parity;
            parity[n_parity++] = p;
        }
    }
    shmem_team_t evens, odds;
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2, NULL, 0, &evens) == 0);
    int odd_rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, npes > 1 ? 1 : 0, 2, npes > 1 ? npes / 2 : 1, NULL, 0,
                                          &odds);
    CHECK(odd_rc == 0);
    shmem_team_t mine = me % 2 ? odds : evens;
    CHECK(shmem_team_n_pes(mine) == n_parity && shmem_team_my_pe(mine) == my_parity_index);
    shmem_barrier_all();

    void (*deprecated_sync)(int, int, int, long *) = shmem_sync;
    for (int r = 0; r < ROUNDS; r++) {
        /* C11 one-argument form on the world team, then on my half. */
        put_next(world, npes, me, r, 0);
        CHECK(shmem_sync(SHMEM_TEAM_WORLD) == 0);
        check_prev(world, npes, me, r, 0, "shmem_sync(SHMEM_TEAM_WORLD)");
        put_next(parity, n_parity, my_parity_index, r, 1);
        CHECK(shmem_sync(mine) == 0);
        check_prev(parity, n_parity, my_parity_index, r, 1, "shmem_sync(parity team)");
        /* Nobody writes a box again before everyone has read it. */
        CHECK(shmem_team_sync(SHMEM_TEAM_WORLD) == 0);

        /* Deprecated four-argument form: all PEs, then the even PEs. */
        put_next(world, npes, me, r + ROUNDS, 0);
        shmem_sync(0, 0, npes, psync[0]);
        check_prev(world, npes, me, r + ROUNDS, 0, "shmem_sync(0, 0, npes, pSync)");
        if (me % 2 == 0) {
            put_next(parity, n_parity, my_parity_index, r + ROUNDS, 1);
            deprecated_sync(0, 1, n_parity, psync[1]);
            check_prev(parity, n_parity, my_parity_index, r + ROUNDS, 1, "shmem_sync(0, 1, evens, pSync) by pointer");
        }
        shmem_sync_all();
    }
    CHECK(shmemx_wtime() >= t0);

    if (evens != SHMEM_TEAM_INVALID) shmem_team_destroy(evens);
    if (odds != SHMEM_TEAM_INVALID) shmem_team_destroy(odds);
    free(parity);
    free(world);
    int rc = test_finish();
    shmem_finalize();
    return rc;
}
