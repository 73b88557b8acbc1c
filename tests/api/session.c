/* session.c: the 1.6 communication sessions have the standard's shape,
 *   shmem_ctx_session_start(ctx, options, &config, config_mask)
 *   shmem_ctx_session_stop(ctx)
 * and change nothing about what the operations inside them do. On a
 * created context, on SHMEM_CTX_DEFAULT and on a team context, every PE
 * in a session puts a block into its right neighbour, adds to a counter on
 * every PE with non-fetching atomics and sets a word with shmem_p; after
 * stop, quiet and a barrier each PE checks all of it. Also: a second start
 * on a started context (the options combine), a stop on a stopped one,
 * config NULL with mask 0, options and mask bits the library does not
 * know (hints: ignored), and SHMEM_CTX_INVALID (both calls do nothing). */
#include <shmem.h>

#include "api_util.h"

#define BLOCK 1024
#define ADDS 50

static int me, npes;

struct target {
    unsigned char block[BLOCK];
    long word;
    uint64_t counter;
};

/* Operations inside the session on ctx; peers are numbered in ctx's team,
 * which here is always the world team or one with the same numbering. */
static void exercise(shmem_ctx_t ctx, struct target *t, const unsigned char *src, int round)
{
    const int next = (me + 1) % npes;
    shmem_ctx_putmem(ctx, t->block, src, BLOCK, next);
    shmem_ctx_long_p(ctx, &t->word, 1000L * (round + 1) + me, next);
    for (int i = 0; i < ADDS; i++)
        for (int pe = 0; pe < npes; pe++) shmem_ctx_uint64_atomic_add(ctx, &t->counter, (uint64_t)(me + 1), pe);
}

static void judge(struct target *t, int round, const char *how)
{
    const int prev = (me + npes - 1) % npes;
    char what[96];
    snprintf(what, sizeof what, "%s round %d: block from PE %d", how, round, prev);
    check_pattern(t->block, BLOCK, prev, 0, 700u + (unsigned)round, what);
    CHECK_MSG(t->word == 1000L * (round + 1) + prev, "%s round %d: word %ld, expected %ld", how, round, t->word,
              1000L * (round + 1) + prev);
    const uint64_t want = (uint64_t)ADDS * (uint64_t)npes * (uint64_t)(npes + 1) / 2;
    CHECK_MSG(t->counter == want, "%s round %d: counter %llu, expected %llu", how, round,
              (unsigned long long)t->counter, (unsigned long long)want);
}

static void round_on(shmem_ctx_t ctx, struct target *t, unsigned char *src, int round, int variant, const char *how)
{
    memset(t, 0, sizeof *t);
    shmem_barrier_all();
    fill_pattern(src, BLOCK, me, 0, 700u + (unsigned)round);
    shmem_ctx_session_config_t config = {.total_ops = (size_t)(2 + ADDS * npes)};
    switch (variant) {
    case 0: /* the standard's example: batch, with the expected count */
        shmem_ctx_session_start(ctx, SHMEM_CTX_SESSION_BATCH, &config, SHMEM_CTX_SESSION_TOTAL_OPS);
        break;
    case 1: /* defaults: no config at all */
        shmem_ctx_session_start(ctx, SHMEM_CTX_SESSION_BATCH, NULL, 0);
        break;
    default: /* unknown option and mask bits, then a second start that combines */
        shmem_ctx_session_start(ctx, 1L << 20, &config, SHMEM_CTX_SESSION_TOTAL_OPS | (1L << 21));
        shmem_ctx_session_start(ctx, SHMEM_CTX_SESSION_BATCH, &config, 0);
        break;
    }
    exercise(ctx, t, src, round);
    shmem_ctx_session_stop(ctx);
    if (variant == 2) shmem_ctx_session_stop(ctx); /* already stopped: no effect */
    shmem_ctx_quiet(ctx);                          /* stop neither quiets nor synchronises */
    shmem_barrier_all();
    judge(t, round, how);
}

int main(void)
{
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    test_pe = me;
    struct target *t = shmem_malloc(sizeof *t);
    unsigned char *src = malloc(BLOCK);

    shmem_ctx_t ctx, team_ctx;
    CHECK(shmem_ctx_create(0, &ctx) == 0);
    shmem_team_t dup;
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes, NULL, 0, &dup) == 0);
    CHECK(shmem_team_create_ctx(dup, SHMEM_CTX_PRIVATE, &team_ctx) == 0);

    int round = 0;
    for (int variant = 0; variant < 3; variant++) {
        round_on(ctx, t, src, round++, variant, "created context");
        round_on(SHMEM_CTX_DEFAULT, t, src, round++, variant, "SHMEM_CTX_DEFAULT");
        round_on(team_ctx, t, src, round++, variant, "team context");
    }

    /* SHMEM_CTX_INVALID: no action, the program goes on. */
    shmem_ctx_session_config_t config = {.total_ops = 1};
    shmem_ctx_session_start(SHMEM_CTX_INVALID, SHMEM_CTX_SESSION_BATCH, &config, SHMEM_CTX_SESSION_TOTAL_OPS);
    shmem_ctx_session_stop(SHMEM_CTX_INVALID);

    shmem_ctx_destroy(team_ctx);
    shmem_ctx_destroy(ctx);
    shmem_team_destroy(dup);
    shmem_barrier_all();
    shmem_free(t);
    free(src);
    int rc = test_finish();
    shmem_finalize();
    return rc;
}
