/* coll_srcdiff: collectives whose source is a different symmetric address
 * on every PE (only dest must be one object everywhere): fcollect, reduce,
 * scan, broadcast, alltoall, on the world team and on active sets. */
#include <shmem.h>
#include <stdio.h>

#include "harness.h"

static long psync[SHMEM_COLLECT_SYNC_SIZE];

int main(void)
{
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes();
    test_pe = me;
    float *x = shmem_malloc(sizeof(float) * 4 * (size_t)n), *d = shmem_malloc(sizeof(float) * 4 * (size_t)n);
    long *s = shmem_malloc(sizeof(long) * 8 * (size_t)n), *r = shmem_malloc(sizeof(long) * 8 * (size_t)n);
    for (int i = 0; i < 4 * n; i++) x[i] = -1;
    for (int i = 0; i < 4; i++) x[me * 4 + i] = (float)(me * 10 + i);
    for (int i = 0; i < 8 * n; i++) s[i] = -7;
    for (int i = 0; i < 8; i++) s[me * 8 + i] = me + i;

    CHECK(shmem_float_fcollect(SHMEM_TEAM_WORLD, d, x + me * 4, 4) == 0);
    for (int p = 0; p < n; p++)
        for (int i = 0; i < 4; i++) CHECK_MSG(d[p * 4 + i] == (float)(p * 10 + i), "fcollect block %d[%d]", p, i);

    CHECK(shmem_long_sum_reduce(SHMEM_TEAM_WORLD, r, s + me * 8, 8) == 0);
    for (int i = 0; i < 8; i++) {
        long e = 0;
        for (int p = 0; p < n; p++) e += p + i;
        CHECK_MSG(r[i] == e, "sum_reduce[%d] = %ld, expected %ld", i, r[i], e);
    }
    CHECK(shmem_long_sum_inscan(SHMEM_TEAM_WORLD, r, s + me * 8, 8) == 0);
    for (int i = 0; i < 8; i++) {
        long e = 0;
        for (int p = 0; p <= me; p++) e += p + i;
        CHECK_MSG(r[i] == e, "sum_inscan[%d] = %ld, expected %ld", i, r[i], e);
    }
    CHECK(shmem_long_broadcast(SHMEM_TEAM_WORLD, r, s + me * 8, 8, n - 1) == 0);
    for (int i = 0; i < 8; i++) CHECK_MSG(r[i] == n - 1 + i, "broadcast[%d] = %ld", i, r[i]);

    /* alltoall: PE me's source block for PE p holds me*100+p. */
    long *a = shmem_malloc(sizeof(long) * (size_t)n * (size_t)(n + 1));
    for (int i = 0; i < n * (n + 1); i++) a[i] = -1;
    for (int p = 0; p < n; p++) a[me + p] = me * 100 + p;
    CHECK(shmem_long_alltoall(SHMEM_TEAM_WORLD, r, a + me, 1) == 0);
    for (int p = 0; p < n; p++) CHECK_MSG(r[p] == p * 100 + me, "alltoall from PE %d = %ld", p, r[p]);

    /* The active-set form, pSync left at SHMEM_SYNC_VALUE. */
    for (int i = 0; i < SHMEM_COLLECT_SYNC_SIZE; i++) psync[i] = SHMEM_SYNC_VALUE;
    shmem_barrier_all();
    shmem_fcollect64(r, s + me * 8, 1, 0, 0, n, psync);
    for (int p = 0; p < n; p++) CHECK_MSG(r[p] == p, "fcollect64 block %d = %ld", p, r[p]);
    for (int i = 0; i < SHMEM_COLLECT_SYNC_SIZE; i++) CHECK(psync[i] == SHMEM_SYNC_VALUE);

    shmem_barrier_all();
    shmem_free(a);
    shmem_free(r);
    shmem_free(s);
    shmem_free(d);
    shmem_free(x);
    shmem_finalize();
    return test_finish();
}
