/* ctx_invalid.c: SHMEM_CTX_INVALID where the standard gives it a meaning:
 * 1. shmem_ctx_fence, shmem_ctx_quiet and shmem_ctx_pe_quiet on it return
 *    and do nothing; shmem_ctx_destroy of it does nothing.
 * 2. shmem_ctx_get_team on it sets SHMEM_TEAM_INVALID and returns nonzero.
 * 3. The handle a failed shmem_team_create_ctx leaves (a team this PE is
 *    not in) is SHMEM_CTX_INVALID and behaves the same.
 * Between the calls real puts, fenced and quieted on live contexts, must
 * arrive in order with their data, so the calls on the invalid handle
 * neither ended the job nor disturbed anything. */
#include <shmem.h>
#include <stdint.h>

#include "harness.h"

#define ROUNDS 50

static int me, npes;
static long data[ROUNDS];
static long flag;

static void invalid_calls(shmem_ctx_t bad)
{
    const int target[1] = {0};
    shmem_ctx_fence(bad);
    shmem_ctx_quiet(bad);
    shmem_ctx_pe_quiet(bad, target, 1);
    shmem_ctx_pe_quiet(bad, NULL, 0);
    shmem_ctx_destroy(bad);
    shmem_team_t team = SHMEM_TEAM_WORLD;
    CHECK(shmem_ctx_get_team(bad, &team) != 0);
    CHECK(team == SHMEM_TEAM_INVALID);
}

/* Each PE puts ROUNDS values into its right neighbour, each followed by a
 * fence and the calls on the invalid handle, then a flag after a quiet. */
static void puts_between(shmem_ctx_t ctx, shmem_ctx_t bad, long salt)
{
    const int right = (me + 1) % npes, left = (me + npes - 1) % npes;
    for (int i = 0; i < ROUNDS; i++) data[i] = -1;
    flag = 0;
    shmem_barrier_all();
    for (int i = 0; i < ROUNDS; i++) {
        shmem_ctx_long_p(ctx, &data[i], salt + 1000L * me + i, right);
        shmem_ctx_fence(ctx);
        invalid_calls(bad);
    }
    shmem_ctx_quiet(ctx);
    shmem_ctx_long_p(ctx, &flag, 1, right);
    shmem_ctx_quiet(ctx);
    shmem_long_wait_until(&flag, SHMEM_CMP_EQ, 1);
    for (int i = 0; i < ROUNDS; i++)
        CHECK_MSG(data[i] == salt + 1000L * left + i, "data[%d] is %ld, expected %ld", i, data[i],
                  salt + 1000L * left + i);
    shmem_barrier_all();
}

int main(void)
{
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    test_pe = me;

    invalid_calls(SHMEM_CTX_INVALID);
    puts_between(SHMEM_CTX_DEFAULT, SHMEM_CTX_INVALID, 1);

    shmem_ctx_t ctx = SHMEM_CTX_INVALID;
    CHECK(shmem_ctx_create(0, &ctx) == 0 && ctx != SHMEM_CTX_INVALID);
    shmem_team_t team = SHMEM_TEAM_INVALID;
    CHECK(shmem_ctx_get_team(ctx, &team) == 0 && team == SHMEM_TEAM_WORLD);
    puts_between(ctx, SHMEM_CTX_INVALID, 2);

    /* A team of PE 0 alone: the others' contexts on it fail as INVALID. */
    shmem_team_t solo = SHMEM_TEAM_INVALID;
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, 1, NULL, 0, &solo) == 0);
    shmem_ctx_t from_solo = SHMEM_CTX_DEFAULT;
    int rc = shmem_team_create_ctx(solo, 0, &from_solo);
    if (me == 0) {
        CHECK(rc == 0 && from_solo != SHMEM_CTX_INVALID);
        shmem_team_t got = SHMEM_TEAM_INVALID;
        CHECK(shmem_ctx_get_team(from_solo, &got) == 0 && got == solo);
        shmem_ctx_quiet(from_solo);
        shmem_ctx_destroy(from_solo);
        from_solo = SHMEM_CTX_INVALID;
    } else {
        CHECK(rc != 0 && from_solo == SHMEM_CTX_INVALID);
    }
    puts_between(ctx, from_solo, 3);
    shmem_ctx_destroy(ctx);
    shmem_team_destroy(solo);

    shmem_barrier_all();
    shmem_finalize();
    return test_finish();
}
