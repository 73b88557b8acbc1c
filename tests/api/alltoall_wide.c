/* alltoall_wide.c: alltoall and alltoalls on teams wider than the
 * collective lines (more than 19 members: the pairwise alltoall then
 * counts landed blocks instead of raising line tags), and world collects
 * and fcollects between them (the pushed collect, where forced, counts
 * the same way), back to back with no barrier between calls, the data
 * changing every round: contiguous blocks past a line's share (so Bruck's
 * rounds do not take them) and strided ones, on the world team and on a
 * stride-2 team at the same time.
 * Every dest is checked as soon as its call returns, guard bytes too.
 * Run at any PE count; the wide path needs 20 or more. */
#include <shmem.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"

#define ROUNDS 12
#define GUARD_WORDS 8

static int64_t value_of(int from, int to, int round, size_t i)
{
    return (int64_t)from * 1000003 + (int64_t)to * 1009 + (int64_t)round * 7919 + (int64_t)i;
}

/* One call on team t (this PE is rank r of size): nelems 64-bit elements
 * per block, strided (dest stride 2, source stride 3) every third round. */
static void one_round(shmem_team_t t, int r, int size, int round, int64_t *src, int64_t *dst, size_t nelems,
                      const char *name)
{
    const int strided = round % 3 == 2;
    const ptrdiff_t dst_stride = strided ? 2 : 1, src_stride = strided ? 3 : 1;
    const size_t dst_words = (size_t)size * nelems * (size_t)dst_stride;
    for (int to = 0; to < size; to++)
        for (size_t i = 0; i < nelems; i++)
            src[((size_t)to * nelems + i) * (size_t)src_stride] = value_of(r, to, round, i);
    /* Gaps of a strided dest and the guard past it must stay untouched. */
    for (size_t w = 0; w < dst_words + GUARD_WORDS; w++) dst[w] = -1;
    int rc = strided ? shmem_int64_alltoalls(t, dst, src, dst_stride, src_stride, nelems)
                     : shmem_int64_alltoall(t, dst, src, nelems);
    CHECK_MSG(rc == 0, "%s round %d: alltoall returned %d", name, round, rc);
    int bad = 0;
    for (int from = 0; from < size; from++)
        for (size_t i = 0; i < nelems; i++) {
            const int64_t got = dst[((size_t)from * nelems + i) * (size_t)dst_stride];
            if (got != value_of(from, r, round, i) && bad++ == 0)
                CHECK_MSG(0, "%s round %d (%zu elements%s): block from rank %d element %zu = %lld, expected %lld",
                          name, round, nelems, strided ? ", strided" : "", from, i, (long long)got,
                          (long long)value_of(from, r, round, i));
        }
    for (size_t w = 0; w < dst_words + GUARD_WORDS; w++) {
        const int in_block = w < dst_words && w % (size_t)dst_stride == 0;
        if (!in_block && dst[w] != -1 && bad++ == 0)
            CHECK_MSG(0, "%s round %d: word %zu outside the blocks changed (%lld)", name, round, w, (long long)dst[w]);
    }
}

/* A collect of blocks of varying size (rank r gives (r + round) % 5 * 24
 * bytes, some none) and an fcollect of 40 bytes on team t. */
static void collect_round(shmem_team_t t, int r, int size, int round, unsigned char *src, unsigned char *dst,
                          const char *name)
{
    size_t total = 0, mine = (size_t)((r + round) % 5) * 24;
    for (int q = 0; q < size; q++) total += (size_t)((q + round) % 5) * 24;
    for (size_t i = 0; i < mine; i++) src[i] = (unsigned char)(r * 7 + round * 3 + (int)i);
    memset(dst, 0xEE, total + 64);
    CHECK_MSG(shmem_collectmem(t, dst, src, mine) == 0, "%s round %d: collect returned nonzero", name, round);
    size_t at = 0;
    int bad = 0;
    for (int q = 0; q < size; q++) {
        const size_t len = (size_t)((q + round) % 5) * 24;
        for (size_t i = 0; i < len; i++, at++)
            if (dst[at] != (unsigned char)(q * 7 + round * 3 + (int)i) && bad++ == 0)
                CHECK_MSG(0, "%s round %d: collect block of rank %d byte %zu = 0x%02x", name, round, q, i, dst[at]);
    }
    for (size_t i = 0; i < 64; i++)
        if (dst[total + i] != 0xEE && bad++ == 0) CHECK_MSG(0, "%s round %d: collect wrote past its total", name, round);
    for (size_t i = 0; i < 40; i++) src[i] = (unsigned char)(r * 5 + round + (int)i);
    CHECK_MSG(shmem_fcollectmem(t, dst, src, 40) == 0, "%s round %d: fcollect returned nonzero", name, round);
    for (int q = 0; q < size; q++)
        for (size_t i = 0; i < 40; i++)
            if (dst[(size_t)q * 40 + i] != (unsigned char)(q * 5 + round + (int)i) && bad++ == 0)
                CHECK_MSG(0, "%s round %d: fcollect block of rank %d byte %zu = 0x%02x", name, round, q, i,
                          dst[(size_t)q * 40 + i]);
}

int main(void)
{
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes();
    test_pe = me;
    static const size_t sizes[] = {40, 5, 600, 40};
    const size_t max_elems = 600, words = (size_t)n * max_elems * 3 + GUARD_WORDS;
    int64_t *src[2] = {shmem_malloc(words * 8), shmem_malloc(words * 8)};
    int64_t *dst[2] = {shmem_malloc(words * 8), shmem_malloc(words * 8)};
    int64_t *hsrc = shmem_malloc(words * 8), *hdst = shmem_malloc(words * 8);
    CHECK(src[0] && src[1] && dst[0] && dst[1] && hsrc && hdst);
    shmem_team_t half = SHMEM_TEAM_INVALID;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (n + 1) / 2, NULL, 0, &half);
    for (int round = 0; round < ROUNDS; round++) {
        /* Two buffer pairs alternate: a pair is rewritten two calls later,
         * after every member entered the call in between. */
        const size_t ne = sizes[round % 4];
        one_round(SHMEM_TEAM_WORLD, me, n, round, src[round % 2], dst[round % 2], ne, "world");
        if (half != SHMEM_TEAM_INVALID)
            one_round(half, shmem_team_my_pe(half), shmem_team_n_pes(half), round, hsrc, hdst, ne, "stride-2");
        collect_round(SHMEM_TEAM_WORLD, me, n, round, (unsigned char *)src[round % 2],
                      (unsigned char *)dst[round % 2], "world");
    }
    if (half != SHMEM_TEAM_INVALID) shmem_team_destroy(half);
    shmem_finalize();
    return test_finish();
}
