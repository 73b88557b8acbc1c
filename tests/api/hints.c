/* hints.c: hints are advisory. shmem_malloc_with_hints with hint bits the
 * library does not know (alone, mixed with known ones, or every bit) gives
 * a usable symmetric block, like shmem_malloc; shmem_ctx_create and
 * shmem_team_create_ctx with unknown option bits give a usable context.
 * Each block and context carries data: every PE puts a pattern into its
 * right neighbour's block through it and checks what its left neighbour
 * put. With the same calls on every PE the blocks sit at the same place on
 * every PE (the put lands where the peer reads), and a block of unknown
 * hints takes the place a plain shmem_malloc takes. */
#include <shmem.h>
#include <stdint.h>

#include "api_util.h"

static int me, npes;

static void ring(shmem_ctx_t ctx, unsigned char *block, size_t n, unsigned salt, const char *what)
{
    unsigned char *src = malloc(n);
    fill_pattern(src, n, me, 0, salt);
    memset(block, 0, n);
    shmem_barrier_all();
    shmem_ctx_putmem(ctx, block, src, n, (me + 1) % npes);
    shmem_ctx_quiet(ctx);
    shmem_barrier_all();
    check_pattern(block, n, (me + npes - 1) % npes, 0, salt, what);
    free(src);
}

int main(void)
{
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    test_pe = me;

    const long unknown[] = {1L << 2, 1L << 20, 1L << 62, SHMEM_MALLOC_ATOMICS_REMOTE | (1L << 9), -1L};
    const size_t sizes[] = {1, 100, 4096, 70000, 333};
    for (int k = 0; k < 5; k++) {
        unsigned char *p = shmem_malloc_with_hints(sizes[k], unknown[k]);
        CHECK_MSG(p != NULL, "shmem_malloc_with_hints(%zu, 0x%lx) returned NULL", sizes[k], unknown[k]);
        if (!p) continue;
        char what[80];
        snprintf(what, sizeof what, "block of hints 0x%lx", unknown[k]);
        ring(SHMEM_CTX_DEFAULT, p, sizes[k], 40u + (unsigned)k, what);
        /* It is a heap block like any: realloc keeps the data, free takes it. */
        unsigned char *q = shmem_realloc(p, sizes[k] + 512);
        CHECK(q != NULL);
        if (q) check_pattern(q, sizes[k], (me + npes - 1) % npes, 0, 40u + (unsigned)k, "after realloc");
        shmem_free(q);
    }
    CHECK(shmem_malloc_with_hints(0, 1L << 20) == NULL);

    /* Unknown bits only: the block is the one shmem_malloc gives in the same state. */
    unsigned char *a = shmem_malloc_with_hints(200, 1L << 30);
    const uintptr_t where = (uintptr_t)a;
    shmem_free(a);
    unsigned char *b = shmem_malloc(200);
    CHECK_MSG((uintptr_t)b == where, "shmem_malloc_with_hints(200, 1<<30) gave %p, shmem_malloc(200) %p", (void *)where,
              (void *)b);

    /* Contexts with unknown option bits. */
    shmem_ctx_t ctx = SHMEM_CTX_INVALID, team_ctx = SHMEM_CTX_INVALID;
    CHECK(shmem_ctx_create(1L << 20, &ctx) == 0 && ctx != SHMEM_CTX_INVALID);
    CHECK(shmem_team_create_ctx(SHMEM_TEAM_WORLD, SHMEM_CTX_SERIALIZED | (1L << 40), &team_ctx) == 0 &&
          team_ctx != SHMEM_CTX_INVALID);
    if (ctx != SHMEM_CTX_INVALID) ring(ctx, b, 200, 60u, "through a context of options 1<<20");
    if (team_ctx != SHMEM_CTX_INVALID) ring(team_ctx, b, 200, 61u, "through a team context of options SERIALIZED|1<<40");
    shmem_ctx_destroy(ctx);
    shmem_ctx_destroy(team_ctx);
    shmem_free(b);

    int rc = test_finish();
    shmem_finalize();
    return rc;
}
