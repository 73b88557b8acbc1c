/* team_triplet.c: a split with an invalid PE triplet returns nonzero on
 * every PE of the parent and sets the new team to SHMEM_TEAM_INVALID; the
 * job goes on:
 * 1. Triplets outside the parent (size 0 or negative, start outside, the
 *    last PE past either end, stride 0 with size > 1) on the world team and
 *    on a split team; split_2d with xrange 0 or negative (both axes INVALID).
 * 2. No team slot leaks: more invalid splits than SHMEM_TEAMS_MAX allows
 *    teams, then valid splits still succeed, with the right members.
 * 3. Valid corner triplets still work: size 1 with any stride (0 too), and
 *    the whole parent. A collective on the world team between the splits
 *    checks that no PE was left behind. */
#include <shmem.h>
#include <stdlib.h>

#include "harness.h"

static int me, npes;
static long *buf;

static void expect_invalid(shmem_team_t parent, int start, int stride, int size)
{
    shmem_team_t t = SHMEM_TEAM_WORLD;
    int rc = shmem_team_split_strided(parent, start, stride, size, NULL, 0, &t);
    CHECK_MSG(rc != 0 && t == SHMEM_TEAM_INVALID, "split (%d, %d, %d) of a team of %d: rc %d, team %s", start,
              stride, size, shmem_team_n_pes(parent), rc, t == SHMEM_TEAM_INVALID ? "INVALID" : "made");
}

/* Every PE adds its number: a world reduction that hangs or is wrong if
 * some PE took another path through the splits. */
static void world_sum(void)
{
    buf[0] = me;
    CHECK(shmem_long_sum_reduce(SHMEM_TEAM_WORLD, buf + 1, buf, 1) == 0);
    CHECK_MSG(buf[1] == (long)npes * (npes - 1) / 2, "world sum %ld", buf[1]);
}

static void invalid_triplets(shmem_team_t parent)
{
    if (parent == SHMEM_TEAM_INVALID) return;
    const int n = shmem_team_n_pes(parent);
    expect_invalid(parent, 0, 1, 0);
    expect_invalid(parent, 0, 1, -1);
    expect_invalid(parent, -1, 1, 1);
    expect_invalid(parent, n, 1, 1);
    expect_invalid(parent, 0, 1, n + 1);
    expect_invalid(parent, 1, 1, n);
    expect_invalid(parent, n - 1, 1, 2);
    expect_invalid(parent, 0, -1, 2);
    expect_invalid(parent, n - 1, -1, n + 1);
    expect_invalid(parent, 0, 0, 2);
    expect_invalid(parent, 0, n, 2);
    expect_invalid(parent, n - 1, -n, 2);
    expect_invalid(parent, 0, 0x40000000, 3);
    expect_invalid(parent, n - 1, -0x40000000, 3);
    shmem_team_t x = SHMEM_TEAM_WORLD, y = SHMEM_TEAM_WORLD;
    CHECK(shmem_team_split_2d(parent, 0, NULL, 0, &x, NULL, 0, &y) != 0);
    CHECK(x == SHMEM_TEAM_INVALID && y == SHMEM_TEAM_INVALID);
    x = y = SHMEM_TEAM_WORLD;
    CHECK(shmem_team_split_2d(parent, -3, NULL, 0, &x, NULL, 0, &y) != 0);
    CHECK(x == SHMEM_TEAM_INVALID && y == SHMEM_TEAM_INVALID);
}

/* A valid split, checked member by member, then destroyed. */
static void expect_valid(int start, int stride, int size)
{
    shmem_team_t t = SHMEM_TEAM_INVALID;
    int rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, start, stride, size, NULL, 0, &t);
    CHECK_MSG(rc == 0, "split (%d, %d, %d): rc %d", start, stride, size, rc);
    int my_index = -1;
    for (int i = 0; i < size; i++)
        if (start + i * stride == me) my_index = i;
    if (my_index < 0) {
        CHECK(t == SHMEM_TEAM_INVALID);
        return;
    }
    CHECK(t != SHMEM_TEAM_INVALID);
    if (t == SHMEM_TEAM_INVALID) return;
    CHECK_MSG(shmem_team_my_pe(t) == my_index && shmem_team_n_pes(t) == size,
              "split (%d, %d, %d): my_pe %d n_pes %d, expected %d %d", start, stride, size, shmem_team_my_pe(t),
              shmem_team_n_pes(t), my_index, size);
    for (int i = 0; i < size; i++)
        CHECK(shmem_team_translate_pe(t, i, SHMEM_TEAM_WORLD) == start + i * stride);
    shmem_team_destroy(t);
}

int main(void)
{
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    test_pe = me;
    buf = shmem_malloc(4 * sizeof(long));
    CHECK(buf != NULL);
    if (!buf) return test_finish();

    invalid_triplets(SHMEM_TEAM_WORLD);
    world_sum();
    /* The same on a split team: the upper half of the world. */
    shmem_team_t upper = SHMEM_TEAM_INVALID;
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, npes / 2, 1, npes - npes / 2, NULL, 0, &upper) == 0);
    invalid_triplets(upper);
    if (upper != SHMEM_TEAM_INVALID) shmem_team_destroy(upper);
    world_sum();

    /* More failures than the job may hold teams (SHMEM_TEAMS_MAX is 64 by
     * default): none may keep a slot. */
    for (int i = 0; i < 100; i++) expect_invalid(SHMEM_TEAM_WORLD, 0, 1, 0);
    shmem_team_t held[8];
    int made = 0;
    for (int i = 0; i < 8; i++) {
        held[i] = SHMEM_TEAM_INVALID;
        if (shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes, NULL, 0, &held[i]) == 0) made++;
    }
    CHECK_MSG(made == 8, "only %d of 8 valid splits succeeded after the invalid ones", made);
    for (int i = 0; i < 8; i++)
        if (held[i] != SHMEM_TEAM_INVALID) {
            CHECK(shmem_team_n_pes(held[i]) == npes && shmem_team_my_pe(held[i]) == me);
            shmem_team_destroy(held[i]);
        }
    world_sum();

    /* Valid corners. */
    for (int pe = 0; pe < npes; pe++) {
        expect_valid(pe, 0, 1);
        expect_valid(pe, 1, 1);
        expect_valid(pe, -7, 1);
        expect_valid(pe, 1000, 1);
    }
    expect_valid(0, 1, npes);
    expect_valid(npes - 1, -1, npes);
    world_sum();

    shmem_barrier_all();
    shmem_free(buf);
    shmem_finalize();
    return test_finish();
}
