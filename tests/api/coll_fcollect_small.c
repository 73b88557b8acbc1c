/* coll_fcollect_small.c: small fcollects back to back with no barrier
 * between them, reusing one source and one dest, the data changing every
 * round: on the world team and on a stride-2 team (both at once), block
 * sizes around the one-shot lines' limits (1 to 200 bytes), some in place
 * (source = own block of dest), interleaved with one-shot sized broadcasts
 * and sum reductions on the same team (they share the one-shot count and
 * lines). Each round's dest is checked as soon as the call returns. */
#include <shmem.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"

#define ROUNDS 300
#define MAX_BLOCK 200

static unsigned char byte_of(int rank, int round, size_t i)
{
    return (unsigned char)(rank * 31 + round * 7 + (int)i * 13 + 1);
}

/* Round `round` on team t (this PE is rank r of size members). */
static void one_round(shmem_team_t t, int r, int size, int round, unsigned char *src, unsigned char *dst,
                      long *lsrc, long *ldst, const char *name)
{
    static const size_t blocks[] = {1, 8, 24, 48, 49, 112, 113, 200, 8, 16};
    const size_t b = blocks[round % (int)(sizeof blocks / sizeof blocks[0])];
    const int in_place = round % 5 == 3;
    unsigned char *from = in_place ? dst + (size_t)r * b : src;
    if (in_place) memset(dst, 0xEE, (size_t)size * b);
    for (size_t i = 0; i < b; i++) from[i] = byte_of(r, round, i);
    CHECK_MSG(shmem_fcollectmem(t, dst, from, b) == 0, "%s round %d: fcollect returned nonzero", name, round);
    int bad = 0;
    for (int p = 0; p < size; p++)
        for (size_t i = 0; i < b; i++)
            if (dst[(size_t)p * b + i] != byte_of(p, round, i) && bad++ == 0)
                CHECK_MSG(0, "%s round %d (%zu B%s): block %d byte %zu = 0x%02x, expected 0x%02x", name, round, b,
                          in_place ? ", in place" : "", p, i, dst[(size_t)p * b + i], byte_of(p, round, i));
    if (round % 3 == 1) {
        /* A broadcast from a rotating root, then a reduction: the one-shot
         * lines after a broadcast wait for every reader. */
        const int root = round % size;
        for (int i = 0; i < 4; i++) lsrc[i] = (long)r * 1000 + round * 10 + i;
        CHECK(shmem_long_broadcast(t, ldst, lsrc, 4, root) == 0);
        for (int i = 0; i < 4; i++)
            CHECK_MSG(ldst[i] == (long)root * 1000 + round * 10 + i, "%s round %d: broadcast[%d] = %ld", name, round,
                      i, ldst[i]);
        CHECK(shmem_long_sum_reduce(t, ldst, lsrc, 4) == 0);
        for (int i = 0; i < 4; i++) {
            const long e = (long)size * (size - 1) / 2 * 1000 + (long)size * (round * 10 + i);
            CHECK_MSG(ldst[i] == e, "%s round %d: sum_reduce[%d] = %ld, expected %ld", name, round, i, ldst[i], e);
        }
    }
}

int main(void)
{
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes();
    test_pe = me;
    unsigned char *src = shmem_malloc(MAX_BLOCK), *dst = shmem_malloc((size_t)n * MAX_BLOCK);
    unsigned char *hsrc = shmem_malloc(MAX_BLOCK), *hdst = shmem_malloc((size_t)n * MAX_BLOCK);
    long *lsrc = shmem_malloc(4 * sizeof(long)), *ldst = shmem_malloc(4 * sizeof(long));
    CHECK(src && dst && hsrc && hdst && lsrc && ldst);
    /* Stride-2 teams: the even PEs, and the odd ones (none at 1 PE). */
    shmem_team_t even = SHMEM_TEAM_INVALID, odd = SHMEM_TEAM_INVALID;
    const int hsize = (n - me % 2 + 1) / 2;
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (n + 1) / 2, NULL, 0, &even) == 0);
    if (n > 1) CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 2, n / 2, NULL, 0, &odd) == 0);
    const shmem_team_t half = me % 2 ? odd : even;
    CHECK(half != SHMEM_TEAM_INVALID && shmem_team_n_pes(half) == hsize);
    for (int round = 0; round < ROUNDS && test_failures == 0; round++) {
        one_round(SHMEM_TEAM_WORLD, me, n, round, src, dst, lsrc, ldst, "world");
        if (round % 2 == 0) one_round(half, me / 2, hsize, round, hsrc, hdst, lsrc, ldst, "stride-2");
    }
    shmem_barrier_all();
    shmem_team_destroy(even);
    if (n > 1) shmem_team_destroy(odd);
    return test_finish();
}
