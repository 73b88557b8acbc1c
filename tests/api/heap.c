/* heap.c: the symmetric heap. malloc/calloc (zeroed)/align (64 B to
 * 1 MiB)/realloc (grow and shrink keep the content; realloc(NULL) and
 * realloc(p, 0))/free/malloc_with_hints; every block is usable as a put
 * target on every PE and has the same offset on every PE (each PE sends its
 * offsets to PE 0, which compares); malloc(0) is NULL; a malloc larger than
 * the heap returns NULL on every PE and the job goes on; then 1000 rounds
 * of mixed allocations and frees, each new block written by the left
 * neighbour and checked. */
#include <shmem.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"

#define MAX_PES 64
#define MAX_OFFSETS 1200
#define LIVE 24
#define ROUNDS 1000

static int me, npes, right, left;
static char *anchor;      /* first block; offsets are taken from it */
static size_t offsets[MAX_OFFSETS];
static size_t n_offsets;
static size_t all_offsets[MAX_PES][MAX_OFFSETS]; /* on PE 0 */

static void record(const void *p)
{
    if (n_offsets < MAX_OFFSETS) offsets[n_offsets++] = p ? (size_t)((const char *)p - anchor) : SIZE_MAX;
}

/* The left neighbour writes size bytes of its pattern into p; then each PE
 * checks its own copy. */
static void exercise(unsigned char *p, size_t size, unsigned salt, const char *what)
{
    unsigned char *src = calloc(size, 1);
    CHECK(src != NULL);
    /* Peers may still be checking their own copy of this block. */
    shmem_barrier_all();
    if (src) {
        fill_pattern(src, size, me, 0, salt);
        shmem_putmem(p, src, size, right);
    }
    shmem_barrier_all();
    check_pattern(p, size, left, 0, salt, what);
    shmem_barrier_all();
    free(src);
}

int main(void)
{
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    test_pe = me;
    right = (me + 1) % npes;
    left = (me - 1 + npes) % npes;
    if (npes > MAX_PES) return TEST_SKIP;
    char what[128];

    anchor = shmem_malloc(1);
    CHECK(anchor != NULL);
    if (!anchor) return test_finish();

    /* malloc(0) and calloc with a zero are NULL. */
    CHECK(shmem_malloc(0) == NULL);
    CHECK(shmem_calloc(0, 8) == NULL);
    CHECK(shmem_calloc(8, 0) == NULL);
    CHECK(shmem_align(64, 0) == NULL);
    shmem_free(NULL);

    /* malloc, written by the neighbour. */
    static const size_t msizes[] = {1, 7, 64, 1000, 4096, 65536 + 13, (size_t)3 << 20};
    unsigned char *blocks[7];
    for (int i = 0; i < 7; i++) {
        blocks[i] = shmem_malloc(msizes[i]);
        CHECK(blocks[i] != NULL);
        record(blocks[i]);
        if (blocks[i]) CHECK_MSG((uintptr_t)blocks[i] % 8 == 0, "malloc(%zu) = %p", msizes[i], (void *)blocks[i]);
    }
    for (int i = 0; i < 7; i++)
        if (blocks[i]) {
            snprintf(what, sizeof what, "malloc(%zu)", msizes[i]);
            exercise(blocks[i], msizes[i], 10u + (unsigned)i, what);
        }
    /* Blocks do not overlap: each still holds its own data. */
    for (int i = 0; i < 7; i++)
        if (blocks[i]) check_pattern(blocks[i], msizes[i], left, 0, 10u + (unsigned)i, "block kept its data");
    for (int i = 6; i >= 0; i--) shmem_free(blocks[i]);

    /* calloc zeroes, also memory that held data before. */
    unsigned char *dirty = shmem_malloc(100000);
    CHECK(dirty != NULL);
    if (dirty) memset(dirty, 0xEE, 100000);
    shmem_free(dirty);
    unsigned char *zeroed = shmem_calloc(25000, 4);
    CHECK(zeroed != NULL);
    record(zeroed);
    if (zeroed) {
        check_fill(zeroed, 100000, 0, "calloc(25000, 4)");
        exercise(zeroed, 100000, 30, "calloc block");
    }
    shmem_free(zeroed);

    /* align: 64 B to 1 MiB. */
    unsigned char *aligned[15];
    int na = 0;
    for (size_t a = 64; a <= ((size_t)1 << 20); a *= 2, na++) {
        aligned[na] = shmem_align(a, 100 + (size_t)na);
        CHECK(aligned[na] != NULL);
        record(aligned[na]);
        if (aligned[na]) CHECK_MSG((uintptr_t)aligned[na] % a == 0, "align(%zu) = %p", a, (void *)aligned[na]);
    }
    for (int i = 0; i < na; i++)
        if (aligned[i]) {
            snprintf(what, sizeof what, "align block %d", i);
            exercise(aligned[i], 100 + (size_t)i, 40u + (unsigned)i, what);
        }
    for (int i = 0; i < na; i++) shmem_free(aligned[i]);

    /* malloc_with_hints. */
    unsigned char *h1 = shmem_malloc_with_hints(4096, SHMEM_MALLOC_ATOMICS_REMOTE);
    unsigned char *h2 = shmem_malloc_with_hints(333, SHMEM_MALLOC_SIGNAL_REMOTE | SHMEM_MALLOC_ATOMICS_REMOTE);
    unsigned char *h3 = shmem_malloc_with_hints(77, 0);
    CHECK(h1 && h2 && h3);
    CHECK(shmem_malloc_with_hints(0, SHMEM_MALLOC_ATOMICS_REMOTE) == NULL);
    record(h1);
    record(h2);
    record(h3);
    if (h1) exercise(h1, 4096, 60, "hints block 1");
    if (h2) exercise(h2, 333, 61, "hints block 2");
    if (h3) exercise(h3, 77, 62, "hints block 3");
    shmem_free(h3);
    shmem_free(h2);
    shmem_free(h1);

    /* realloc: NULL acts as malloc; grow and shrink keep the content;
     * size 0 frees. Blocks allocated after r keep r from growing in place. */
    unsigned char *r = shmem_realloc(NULL, 1000);
    CHECK(r != NULL);
    record(r);
    unsigned char *blocker = shmem_malloc(64);
    record(blocker);
    if (r) {
        exercise(r, 1000, 70, "realloc(NULL, 1000)");
        r = shmem_realloc(r, 300000); /* grow, probably moving */
        CHECK(r != NULL);
        record(r);
        if (r) {
            check_pattern(r, 1000, left, 0, 70, "realloc grow kept the content");
            exercise(r, 300000, 71, "realloc grown block");
            r = shmem_realloc(r, 300000 + 4096); /* grow again, maybe in place */
            CHECK(r != NULL);
            record(r);
        }
        if (r) {
            check_pattern(r, 300000, left, 0, 71, "second realloc grow kept the content");
            r = shmem_realloc(r, 5000); /* shrink */
            CHECK(r != NULL);
            record(r);
        }
        if (r) {
            check_pattern(r, 5000, left, 0, 71, "realloc shrink kept the content");
            exercise(r, 5000, 72, "realloc shrunk block");
            CHECK(shmem_realloc(r, 0) == NULL);
        }
    }
    shmem_free(blocker);

    /* Larger than the heap: NULL on every PE, and the job goes on. */
    CHECK(shmem_malloc((size_t)1 << 50) == NULL);
    CHECK(shmem_calloc((size_t)1 << 30, (size_t)1 << 20) == NULL);
    CHECK(shmem_align(4096, (size_t)1 << 50) == NULL);
    shmem_barrier_all();

    /* 1000 rounds of mixed allocation and free, the same sequence on every
     * PE (same seed). A block allocated in round k is written by the left
     * neighbour at once and checked in round k+1, after the next collective
     * call's barrier; it is freed no earlier than round k+2. */
    unsigned char *live[LIVE] = {0};
    size_t live_size[LIVE] = {0};
    int live_round[LIVE] = {0};
    unsigned long long seed = 0x1234567ull;
    int pending = -1; /* slot written last round, to check */
    int allocs = 0, frees = 0;
    for (int round = 0; round < ROUNDS; round++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        const unsigned rnd = (unsigned)(seed >> 33);
        int slot = (int)(rnd % LIVE);
        int checked_now = pending;
        if (live[slot] && live_round[slot] < round - 1) {
            if (pending == slot) { /* check before it goes */
                snprintf(what, sizeof what, "churn round %d", live_round[slot]);
                check_pattern(live[slot], live_size[slot], left, 0, 1000u + (unsigned)live_round[slot], what);
                checked_now = -1;
            }
            shmem_free(live[slot]);
            live[slot] = NULL;
            frees++;
        } else if (!live[slot]) {
            size_t size = 1 + (rnd >> 5) % ((rnd & 16) ? 200000 : 2000);
            live[slot] = shmem_malloc(size);
            CHECK(live[slot] != NULL);
            record(live[slot]);
            live_size[slot] = size;
            live_round[slot] = round;
            allocs++;
        } else {
            shmem_barrier_all();
        }
        /* Every branch went through a barrier: the last round's puts are done. */
        if (checked_now >= 0 && live[checked_now]) {
            snprintf(what, sizeof what, "churn round %d", live_round[checked_now]);
            check_pattern(live[checked_now], live_size[checked_now], left, 0, 1000u + (unsigned)live_round[checked_now],
                          what);
        }
        pending = -1;
        if (live[slot] && live_round[slot] == round) {
            unsigned char *src = malloc(live_size[slot]);
            if (src) {
                fill_pattern(src, live_size[slot], me, 0, 1000u + (unsigned)round);
                shmem_putmem(live[slot], src, live_size[slot], right);
                free(src);
            }
            pending = slot;
        }
    }
    shmem_barrier_all();
    if (pending >= 0 && live[pending])
        check_pattern(live[pending], live_size[pending], left, 0, 1000u + (unsigned)live_round[pending], "last churn");
    for (int i = 0; i < LIVE; i++) shmem_free(live[i]);
    CHECK(allocs > 100 && frees > 100);

    /* Offsets are the same on every PE. */
    shmem_putmem(all_offsets[me], offsets, sizeof offsets, 0);
    shmem_barrier_all();
    if (me == 0)
        for (int p = 1; p < npes; p++)
            for (size_t i = 0; i < n_offsets; i++)
                CHECK_MSG(all_offsets[p][i] == offsets[i], "block %zu: offset %zu on PE %d, %zu on PE 0", i,
                          all_offsets[p][i], p, offsets[i]);
    CHECK(n_offsets > 100);
    shmem_free(anchor);
    shmem_finalize();
    return test_finish();
}
