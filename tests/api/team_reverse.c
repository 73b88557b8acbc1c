/* team_reverse.c: negative strides in shmem_team_split_strided (1.6):
 * 1. stride -1 from the last PE: the world in reverse. team_my_pe,
 *    team_n_pes, translate_pe both ways and team_ptr follow that order.
 * 2. Collectives on it put data in team order: fcollect and collect give
 *    the world PEs from last to first, broadcast from team PE 0 sends the
 *    last world PE's data, sum_inscan/exscan add in team order, alltoall
 *    delivers block i from team PE i, reductions and team_sync work.
 * 3. A context of the reversed team counts PEs in team order.
 * 4. stride -2, a split of the reversed team (forward and reversed again),
 *    split_2d of it, and stride 0 with size 1. */
#include <shmem.h>

#include "harness.h"

static int me, npes;
static long *src, *dst;

/* Checks a team whose member i is world PE first + i*step. */
static void check_members(shmem_team_t t, int first, int step, int size, const char *what)
{
    int mine = -1;
    for (int i = 0; i < size; i++)
        if (first + i * step == me) mine = i;
    if (mine < 0) {
        CHECK_MSG(t == SHMEM_TEAM_INVALID, "%s: PE %d is not a member but got a team", what, me);
        return;
    }
    CHECK_MSG(t != SHMEM_TEAM_INVALID, "%s: PE %d is a member but got SHMEM_TEAM_INVALID", what, me);
    if (t == SHMEM_TEAM_INVALID) return;
    CHECK_MSG(shmem_team_my_pe(t) == mine && shmem_team_n_pes(t) == size, "%s: my_pe %d n_pes %d, expected %d %d",
              what, shmem_team_my_pe(t), shmem_team_n_pes(t), mine, size);
    for (int i = 0; i < size; i++) {
        CHECK_MSG(shmem_team_translate_pe(t, i, SHMEM_TEAM_WORLD) == first + i * step, "%s: member %d is PE %d",
                  what, i, shmem_team_translate_pe(t, i, SHMEM_TEAM_WORLD));
        CHECK(shmem_team_translate_pe(SHMEM_TEAM_WORLD, first + i * step, t) == i);
    }
}

/* fcollect of every member's world PE: the members' PEs in team order. */
static void check_fcollect(shmem_team_t t, int first, int step, const char *what)
{
    if (t == SHMEM_TEAM_INVALID) return;
    const int n = shmem_team_n_pes(t);
    src[0] = me;
    CHECK(shmem_long_fcollect(t, dst, src, 1) == 0);
    for (int i = 0; i < n; i++)
        CHECK_MSG(dst[i] == first + i * step, "%s: fcollect element %d is %ld, expected %d", what, i, dst[i],
                  first + i * step);
}

static void reversed_collectives(shmem_team_t rev)
{
    const int n = npes, r = shmem_team_my_pe(rev);
    CHECK(r == n - 1 - me);
    check_fcollect(rev, n - 1, -1, "reversed");

    /* collect: team PE r contributes r+1 elements 100*world + k. */
    for (int k = 0; k <= r; k++) src[k] = 100L * me + k;
    CHECK(shmem_long_collect(rev, dst, src, (size_t)r + 1) == 0);
    int at = 0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k <= i; k++, at++)
            CHECK_MSG(dst[at] == 100L * (n - 1 - i) + k, "collect element %d is %ld, expected %ld", at, dst[at],
                      100L * (n - 1 - i) + k);

    /* broadcast from team PE 0, which is world PE n-1, and from the last. */
    src[0] = 7000 + me;
    src[1] = 8000 + me;
    CHECK(shmem_long_broadcast(rev, dst, src, 2, 0) == 0);
    CHECK_MSG(dst[0] == 7000 + n - 1 && dst[1] == 8000 + n - 1, "broadcast from 0: %ld %ld", dst[0], dst[1]);
    CHECK(shmem_long_broadcast(rev, dst, src, 2, n - 1) == 0);
    CHECK_MSG(dst[0] == 7000 && dst[1] == 8000, "broadcast from %d: %ld %ld", n - 1, dst[0], dst[1]);

    /* Scans add in team order: team PE r sums world PEs n-1 .. n-1-r. */
    src[0] = me;
    src[1] = 1;
    CHECK(shmem_long_sum_inscan(rev, dst, src, 2) == 0);
    long want = 0;
    for (int i = 0; i <= r; i++) want += n - 1 - i;
    CHECK_MSG(dst[0] == want && dst[1] == r + 1, "inscan %ld %ld, expected %ld %d", dst[0], dst[1], want, r + 1);
    CHECK(shmem_long_sum_exscan(rev, dst, src, 2) == 0);
    want -= me;
    if (r > 0) CHECK_MSG(dst[0] == want && dst[1] == r, "exscan %ld %ld, expected %ld %d", dst[0], dst[1], want, r);

    /* Reductions. */
    src[0] = me;
    src[1] = me * 3 + 1;
    CHECK(shmem_long_sum_reduce(rev, dst, src, 2) == 0);
    CHECK(dst[0] == (long)n * (n - 1) / 2 && dst[1] == 3L * n * (n - 1) / 2 + n);
    CHECK(shmem_long_max_reduce(rev, dst, src, 2) == 0);
    CHECK(dst[0] == n - 1 && dst[1] == 3L * (n - 1) + 1);

    /* alltoall: block j of team PE i lands as block i of team PE j. */
    for (int j = 0; j < n; j++) src[j] = 1000L * me + j;
    CHECK(shmem_long_alltoall(rev, dst, src, 1) == 0);
    for (int i = 0; i < n; i++)
        CHECK_MSG(dst[i] == 1000L * (n - 1 - i) + r, "alltoall block %d is %ld, expected %ld", i, dst[i],
                  1000L * (n - 1 - i) + r);
    CHECK(shmem_team_sync(rev) == 0);
}

/* A context of the reversed team: PE 0 of its puts is world PE n-1. */
static void reversed_ctx(shmem_team_t rev)
{
    shmem_ctx_t ctx = SHMEM_CTX_INVALID;
    CHECK(shmem_team_create_ctx(rev, 0, &ctx) == 0);
    if (ctx == SHMEM_CTX_INVALID) return;
    dst[0] = -1;
    shmem_barrier_all();
    /* Team PE i gets world PE me's number at index me: in team order, team
     * PE (r+1) % n is world PE me-1 (wrapping). */
    const int r = shmem_team_my_pe(rev), to = (r + 1) % npes;
    shmem_ctx_long_p(ctx, &dst[0], me, to);
    shmem_ctx_quiet(ctx);
    shmem_barrier_all();
    const int from_team = (r + npes - 1) % npes, from_world = npes - 1 - from_team;
    CHECK_MSG(dst[0] == from_world, "ctx put: got %ld, expected world PE %d", dst[0], from_world);
    CHECK(shmem_team_ptr(rev, dst, 0) == shmem_ptr(dst, npes - 1));
    shmem_ctx_destroy(ctx);
    shmem_barrier_all();
}

static void other_splits(shmem_team_t rev)
{
    const int n = npes;
    shmem_team_t t = SHMEM_TEAM_INVALID;
    /* stride -2 from the last PE */
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, n - 1, -2, (n + 1) / 2, NULL, 0, &t) == 0);
    check_members(t, n - 1, -2, (n + 1) / 2, "stride -2");
    check_fcollect(t, n - 1, -2, "stride -2");
    if (t != SHMEM_TEAM_INVALID) shmem_team_destroy(t);

    /* The first half of the reversed team: world PEs n-1 down to n-k. */
    const int k = (n + 1) / 2;
    CHECK(shmem_team_split_strided(rev, 0, 1, k, NULL, 0, &t) == 0);
    check_members(t, n - 1, -1, k, "forward split of the reversed team");
    check_fcollect(t, n - 1, -1, "forward split of the reversed team");
    if (t != SHMEM_TEAM_INVALID) shmem_team_destroy(t);

    /* Reversing the reversed team gives the world order back. */
    CHECK(shmem_team_split_strided(rev, n - 1, -1, n, NULL, 0, &t) == 0);
    check_members(t, 0, 1, n, "reversed twice");
    check_fcollect(t, 0, 1, "reversed twice");
    if (t != SHMEM_TEAM_INVALID) shmem_team_destroy(t);

    /* split_2d of the reversed team, rows of 2: row member c of the row
     * starting at team rank x0 is world PE n-1-(x0+c). */
    shmem_team_t x = SHMEM_TEAM_INVALID, y = SHMEM_TEAM_INVALID;
    CHECK(shmem_team_split_2d(rev, 2, NULL, 0, &x, NULL, 0, &y) == 0);
    const int r = shmem_team_my_pe(rev), x0 = r / 2 * 2, col = r % 2;
    check_members(x, n - 1 - x0, -1, n - x0 < 2 ? n - x0 : 2, "2d rows of the reversed team");
    check_members(y, n - 1 - col, -2, (n - col + 1) / 2, "2d columns of the reversed team");
    check_fcollect(y, n - 1 - col, -2, "2d columns of the reversed team");
    if (x != SHMEM_TEAM_INVALID) shmem_team_destroy(x);
    if (y != SHMEM_TEAM_INVALID) shmem_team_destroy(y);

    /* stride 0, size 1: one PE */
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, n / 2, 0, 1, NULL, 0, &t) == 0);
    check_members(t, n / 2, 0, 1, "stride 0");
    check_fcollect(t, n / 2, 0, "stride 0");
    if (t != SHMEM_TEAM_INVALID) shmem_team_destroy(t);
}

int main(void)
{
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    test_pe = me;
    const size_t len = (size_t)npes * (size_t)(npes + 1) + 8;
    src = shmem_malloc(len * sizeof(long));
    dst = shmem_malloc(len * sizeof(long));
    CHECK(src && dst);
    if (!src || !dst) return test_finish();

    shmem_team_t rev = SHMEM_TEAM_INVALID;
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, npes - 1, -1, npes, NULL, 0, &rev) == 0);
    check_members(rev, npes - 1, -1, npes, "reversed world");
    if (rev != SHMEM_TEAM_INVALID) {
        for (int round = 0; round < 3; round++) reversed_collectives(rev);
        reversed_ctx(rev);
        other_splits(rev);
        shmem_team_destroy(rev);
    }
    shmem_barrier_all();
    shmem_free(dst);
    shmem_free(src);
    shmem_finalize();
    return test_finish();
}
