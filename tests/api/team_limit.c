/* team_limit.c: the team limit. Run with SHMEM_TEAMS_MAX=4 (set by CTest):
 * SHMEM_TEAM_WORLD and SHMEM_TEAM_SHARED count, so two more teams fit.
 * Splits until one fails: the failing split returns nonzero on every PE,
 * sets new_team to SHMEM_TEAM_INVALID, writes a message naming
 * SHMEM_TEAMS_MAX on stderr (captured here), and the job goes on: the
 * teams made still work, a split_2d (two teams) fails the same way while
 * one slot is free, and after a destroy a split succeeds again. */
#include <fcntl.h>
#include <shmem.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api_util.h"

static int me, npes;
static long *buf;

/* stderr of the calls between capture_start and capture_end goes to a
 * file; capture_end returns its text (static buffer). */
static int saved_fd = -1, cap_fd = -1;
static char cap_text[4096];

static void capture_start(void)
{
    char path[] = "/tmp/shoal_team_limit_XXXXXX";
    fflush(stderr);
    cap_fd = mkstemp(path);
    if (cap_fd < 0) return;
    unlink(path);
    saved_fd = dup(2);
    dup2(cap_fd, 2);
}

static const char *capture_end(void)
{
    cap_text[0] = 0;
    if (cap_fd < 0) return cap_text;
    fflush(stderr);
    dup2(saved_fd, 2);
    close(saved_fd);
    lseek(cap_fd, 0, SEEK_SET);
    ssize_t n = read(cap_fd, cap_text, sizeof cap_text - 1);
    cap_text[n > 0 ? n : 0] = 0;
    close(cap_fd);
    cap_fd = -1;
    return cap_text;
}

/* A ring put inside t, checked: the team works. */
static void use_team(shmem_team_t t, long tag)
{
    const int n = shmem_team_n_pes(t), r = shmem_team_my_pe(t);
    buf[0] = -1;
    shmem_team_sync(t);
    shmem_long_p(&buf[0], tag * 100 + r, shmem_team_translate_pe(t, (r + 1) % n, SHMEM_TEAM_WORLD));
    shmem_quiet();
    shmem_team_sync(t);
    CHECK_MSG(buf[0] == tag * 100 + (r + n - 1) % n, "team %ld: ring value %ld", tag, buf[0]);
    shmem_team_sync(t);
}

int main(void)
{
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    test_pe = me;
    const char *env = getenv("SHMEM_TEAMS_MAX");
    if (!env || atoi(env) != 4) {
        if (me == 0) fprintf(stderr, "team_limit: needs SHMEM_TEAMS_MAX=4 in the environment\n");
        shmem_finalize();
        return TEST_SKIP;
    }
    buf = shmem_malloc(sizeof(long) * 2);

    shmem_team_t made[8];
    int nmade = 0, rc = 0;
    const char *msg = "";
    for (int i = 0; i < 8; i++) {
        shmem_team_t t = SHMEM_TEAM_WORLD;
        capture_start();
        rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes, NULL, 0, &t);
        msg = capture_end();
        if (rc != 0) {
            CHECK_MSG(t == SHMEM_TEAM_INVALID, "failed split left new_team %p", (void *)t);
            break;
        }
        CHECK_MSG(msg[0] == 0, "a successful split wrote to stderr: %s", msg);
        CHECK(t != SHMEM_TEAM_INVALID);
        made[nmade++] = t;
    }
    CHECK_MSG(rc != 0, "8 splits succeeded with SHMEM_TEAMS_MAX=4");
    CHECK_MSG(nmade == 2, "%d splits succeeded with SHMEM_TEAMS_MAX=4 (world and shared hold 2 of 4)", nmade);
    CHECK_MSG(strstr(msg, "SHMEM_TEAMS_MAX") != NULL, "the failed split's message does not name SHMEM_TEAMS_MAX: '%s'",
              msg);
    if (me == 0) fprintf(stderr, "team_limit: the failing split said: %s", msg);

    /* The job goes on: the teams made work, world collectives work. */
    for (int i = 0; i < nmade; i++) use_team(made[i], i + 1);
    use_team(SHMEM_TEAM_WORLD, 9);
    shmem_barrier_all();

    if (nmade >= 1) {
        /* One slot free: a 2-D split needs two and fails cleanly. */
        shmem_team_destroy(made[--nmade]);
        shmem_team_t x = SHMEM_TEAM_WORLD, y = SHMEM_TEAM_WORLD;
        capture_start();
        rc = shmem_team_split_2d(SHMEM_TEAM_WORLD, 1, NULL, 0, &x, NULL, 0, &y);
        msg = capture_end();
        CHECK_MSG(rc != 0, "split_2d with one free slot returned 0");
        CHECK(x == SHMEM_TEAM_INVALID && y == SHMEM_TEAM_INVALID);
        CHECK_MSG(strstr(msg, "SHMEM_TEAMS_MAX") != NULL, "split_2d message: '%s'", msg);
        /* The free slot is still usable. */
        shmem_team_t t;
        rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes, NULL, 0, &t);
        CHECK_MSG(rc == 0 && t != SHMEM_TEAM_INVALID, "split after a destroy failed (rc %d)", rc);
        if (t != SHMEM_TEAM_INVALID) {
            use_team(t, 5);
            made[nmade++] = t;
        }
    }
    while (nmade > 0) shmem_team_destroy(made[--nmade]);
    /* Everything free again: a 2-D split works, many times. */
    for (int round = 0; round < 20; round++) {
        shmem_team_t x, y;
        rc = shmem_team_split_2d(SHMEM_TEAM_WORLD, 2, NULL, 0, &x, NULL, 0, &y);
        CHECK_MSG(rc == 0 && x != SHMEM_TEAM_INVALID && y != SHMEM_TEAM_INVALID, "2-D split round %d rc %d", round, rc);
        if (x != SHMEM_TEAM_INVALID) use_team(x, 20 + round);
        if (y != SHMEM_TEAM_INVALID) use_team(y, 40 + round);
        shmem_team_destroy(x);
        shmem_team_destroy(y);
    }
    shmem_barrier_all();
    shmem_free(buf);
    shmem_finalize();
    return test_finish();
}
