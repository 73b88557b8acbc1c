/* deferred_gets.c: over the encrypted transport a get_nbi's answer is read
 * later (at quiet, by the next other request on the stream, or by a wait),
 * and nothing may stall or be lost for it. Run with SHMEM_TRANSPORT=tls.
 * Each round, every get lands in private memory and is checked byte by byte:
 * - waits: PE 0 gets BIG bytes of PE 1's, tells PE 1 on another context,
 *   and computes until PE 1's answer flag arrives. PE 1 waits for the word
 *   and answers: a wait of PE 1's that wrote the get's answer itself would
 *   stay blocked in the write, since PE 0 reads it only at its quiet;
 * - each other: every PE gets BIG bytes of its right neighbour's, then all
 *   meet in shmem_sync_all (no quiet). A PE that wrote a peer's large
 *   answer from its wait while that peer did the same to it would leave
 *   both blocked in writes;
 * - mixed: small and large get_nbi, a put of BIG bytes, a fetch_add and a
 *   blocking get on one stream, in that order: the put's and the atomic's
 *   writes cannot block behind a target writing answers not yet read, and
 *   each reply is read in order. */
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"

#define BIG ((size_t)4 << 20) /* beyond what one stream leaves unread */
#define SMALL 24
#define ROUNDS 3
#define ANSWER_NS 5000000000L

static long go, answered, counter;

static long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static size_t check_bytes(const unsigned char *got, int pe, size_t len, unsigned salt)
{
    size_t wrong = 0;
    for (size_t i = 0; i < len; i++) wrong += got[i] != test_pattern(pe, i, salt);
    return wrong;
}

int main(void)
{
    shmem_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    test_pe = me;
    if (npes < 2) {
        printf("deferred_gets: needs 2 PEs or more; skipped\n");
        shmem_finalize();
        return TEST_SKIP;
    }
    unsigned char *pub = shmem_malloc(BIG);
    unsigned char *inbox = shmem_malloc(BIG);
    unsigned char *land = malloc(2 * BIG), *small = malloc(4 * SMALL);
    shmem_ctx_t side;
    CHECK(pub && inbox && land && small && shmem_ctx_create(0, &side) == 0);
    if (test_failures) shmem_global_exit(1);
    const int right = (me + 1) % npes;
    for (int r = 1; r <= ROUNDS; r++) {
        for (size_t i = 0; i < BIG; i++) pub[i] = test_pattern(me, i, (unsigned)r);
        memset(land, 0, 2 * BIG);
        shmem_barrier_all();

        if (me == 0) {
            shmem_getmem_nbi(land, pub, BIG, 1);
            shmem_ctx_long_p(side, &go, r, 1);
            shmem_ctx_quiet(side);
            /* Computing, no library call: nothing here reads the answer. */
            const long until = now_ns() + ANSWER_NS;
            while (__atomic_load_n(&answered, __ATOMIC_ACQUIRE) != r && now_ns() < until) continue;
            CHECK_MSG(__atomic_load_n(&answered, __ATOMIC_ACQUIRE) == r,
                      "round %d: PE 1 did not answer within %d s while PE 0 left its get unread", r,
                      (int)(ANSWER_NS / 1000000000L));
            shmem_quiet();
            CHECK_MSG(check_bytes(land, 1, BIG, (unsigned)r) == 0, "round %d: waits", r);
        } else if (me == 1) {
            shmem_long_wait_until(&go, SHMEM_CMP_EQ, r);
            shmem_long_p(&answered, r, 0);
        }
        shmem_barrier_all();

        memset(land, 0, 2 * BIG);
        shmem_getmem_nbi(land, pub, BIG, right);
        shmem_getmem_nbi(land + BIG, pub, BIG, right);
        shmem_sync_all();
        shmem_quiet();
        CHECK_MSG(check_bytes(land, right, BIG, (unsigned)r) == 0, "round %d: each other, first", r);
        CHECK_MSG(check_bytes(land + BIG, right, BIG, (unsigned)r) == 0, "round %d: each other, second", r);
        shmem_barrier_all();

        memset(land, 0, 2 * BIG);
        memset(small, 0, 4 * SMALL);
        shmem_getmem_nbi(small, pub + 100, SMALL, right);
        shmem_getmem_nbi(land, pub, BIG, right);
        shmem_getmem_nbi(small + SMALL, pub + 200, SMALL, right);
        shmem_putmem(inbox, pub, BIG, right);
        const long before = shmem_long_atomic_fetch_add(&counter, 1, right);
        shmem_getmem(small + 2 * SMALL, pub + 300, SMALL, right);
        shmem_getmem_nbi(small + 3 * SMALL, pub + 400, SMALL, right);
        shmem_quiet();
        CHECK_MSG(before == r - 1, "round %d: fetch_add gave %ld", r, before);
        CHECK_MSG(check_bytes(land, right, BIG, (unsigned)r) == 0, "round %d: mixed, large", r);
        for (int k = 0; k < 4; k++) {
            size_t wrong = 0;
            for (size_t i = 0; i < SMALL; i++)
                wrong += small[k * SMALL + i] != test_pattern(right, 100 * (k + 1) + i, (unsigned)r);
            CHECK_MSG(wrong == 0, "round %d: mixed, small get %d", r, k);
        }
        shmem_barrier_all();
        const int left = (me + npes - 1) % npes;
        CHECK_MSG(check_bytes(inbox, left, BIG, (unsigned)r) == 0, "round %d: the put behind the gets", r);
    }
    shmem_ctx_destroy(side);
    shmem_free(inbox);
    shmem_free(pub);
    free(land);
    free(small);
    const int rc = test_finish();
    shmem_finalize();
    return rc;
}
