/* count_calls.c: run with the interposer of interposer.c in front of Shoal
 * (preloaded, linked before libshoal.so, or linked with libshoal.a). Every
 * PE makes a known number of calls to the names the interposer wraps, some
 * through the C11 generic macros, checks the data they move, then checks
 * the interposer's counts: each call the program makes is counted once,
 * calls Shoal makes inside an API function and the program's own pshmem_
 * calls not at all. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr; the project's build defines it already */
#endif
#include <dlfcn.h>
#include <pshmem.h>
#include <shmem.h>
#include <string.h>

#include "harness.h"

#define ROUNDS 5  /* putmem calls per PE */
#define CHUNK 96  /* bytes per put */
#define GENERIC_ADDS 4
#define TYPED_ADDS 3

typedef long (*count_fn)(const char *name);

struct expected {
    const char *name;
    long calls;
};

static void check_data(const unsigned char *buf, int from, int mype)
{
    for (int r = 0; r <= ROUNDS; r++)
        for (size_t i = 0; i < CHUNK; i++)
            CHECK_MSG(buf[(size_t)r * CHUNK + i] == test_pattern(from, i, (unsigned)r),
                      "PE %d: byte %zu of round %d from PE %d is 0x%02x", mype, i, r, from,
                      buf[(size_t)r * CHUNK + i]);
}

int main(void)
{
    count_fn count = (count_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "prof_count");
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    test_pe = me;
    if (!count) {
        fprintf(stderr, "FAIL PE %d: no interposer (prof_count not found)\n", me);
        return TEST_FAIL;
    }
    /* The build says how Shoal is linked; this checks it is so. */
    Dl_info where;
    int in_so = dladdr((void *)(uintptr_t)pshmem_init, &where) && where.dli_fname &&
                strstr(where.dli_fname, "libshoal.so") != NULL;
#ifdef PROF_STATIC
    CHECK_MSG(!in_so, "pshmem_init is in %s, not in the program", where.dli_fname);
#else
    CHECK_MSG(in_so, "pshmem_init is not in libshoal.so");
#endif
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;

    unsigned char *buf = shmem_malloc((ROUNDS + 1) * CHUNK);
    long *ctr = shmem_malloc(sizeof(long));
    void *tmp = shmem_malloc(64);
    CHECK(buf && ctr && tmp);
    *ctr = 0;
    memset(buf, 0, (ROUNDS + 1) * CHUNK);
    shmem_barrier_all();

    /* Puts to the right neighbour; the last round through pshmem_, which a
     * tool must not see. */
    unsigned char src[CHUNK];
    for (int r = 0; r <= ROUNDS; r++) {
        for (size_t i = 0; i < CHUNK; i++) src[i] = test_pattern(me, i, (unsigned)r);
        if (r < ROUNDS)
            shmem_putmem(buf + (size_t)r * CHUNK, src, CHUNK, right);
        else
            pshmem_putmem(buf + (size_t)r * CHUNK, src, CHUNK, right);
    }
    /* Atomics on PE 0's counter: the C11 generic name resolves to
     * shmem_long_atomic_fetch_add, which the tool wraps. */
    for (int i = 0; i < GENERIC_ADDS; i++) CHECK(shmem_atomic_fetch_add(ctr, 1, 0) >= 0);
    for (int i = 0; i < TYPED_ADDS; i++) CHECK(shmem_long_atomic_fetch_add(ctr, 10, 0) >= 0);
    pshmem_barrier_all(); /* not counted */
    check_data(buf, left, me);
    if (me == 0)
        CHECK_MSG(*ctr == (long)npes * (GENERIC_ADDS + 10 * TYPED_ADDS), "counter %ld, expected %ld", *ctr,
                  (long)npes * (GENERIC_ADDS + 10 * TYPED_ADDS));
    shmem_barrier_all();

    /* Broadcasts from the first and the last PE, between chunks of buf
     * (the source must be symmetric too). */
    for (int k = 0; k < 2; k++) {
        int root = k ? npes - 1 : 0;
        unsigned char *from = buf + (size_t)(2 + k) * CHUNK, *dst = buf + (size_t)k * CHUNK;
        for (size_t i = 0; i < CHUNK; i++) from[i] = test_pattern(me, i, 100u + (unsigned)k);
        CHECK(shmem_broadcastmem(SHMEM_TEAM_WORLD, dst, from, CHUNK, root) == 0);
        for (size_t i = 0; i < CHUNK; i++)
            CHECK_MSG(dst[i] == test_pattern(root, i, 100u + (unsigned)k), "broadcast from %d: byte %zu is 0x%02x",
                      root, i, dst[i]);
    }

    /* Calls whose implementations reach other API functions: realloc to
     * size 0 frees, team_ptr translates through ptr, team_destroy destroys
     * the team's contexts. */
    CHECK(shmem_realloc(tmp, 0) == NULL);
    CHECK(shmem_team_ptr(SHMEM_TEAM_WORLD, buf, me) == buf);
    CHECK(shmem_ptr(buf, me) == buf);
    shmem_team_t team = SHMEM_TEAM_INVALID;
    shmem_ctx_t ctx = SHMEM_CTX_INVALID;
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes, NULL, 0, &team) == 0);
    CHECK(shmem_team_create_ctx(team, 0, &ctx) == 0);
    shmem_team_destroy(team);
    CHECK(shmem_ctx_create(0, &ctx) == 0);
    shmem_ctx_destroy(ctx);
    shmem_barrier_all();
    shmem_free(buf);
    shmem_free(ctr);

    const struct expected want[] = {
        {"shmem_putmem", ROUNDS},
        {"shmem_barrier_all", 3},
        {"shmem_long_atomic_fetch_add", GENERIC_ADDS + TYPED_ADDS},
        {"shmem_malloc", 3},
        {"shmem_broadcastmem", 2},
        {"shmem_free", 2},
        {"shmem_ptr", 1},
        {"shmem_ctx_destroy", 1},
        {"shmem_realloc", 1},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        long got = count(want[i].name);
        CHECK_MSG(got == want[i].calls, "the interposer counted %ld calls of %s, the program made %ld", got,
                  want[i].name, want[i].calls);
    }
    shmem_finalize();
    return test_finish();
}
