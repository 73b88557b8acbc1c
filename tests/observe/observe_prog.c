/* observe_prog.c: a program whose calls are known exactly, for the
 * SHMEM_TRACE and SHMEM_STATS tests (check_observe.py holds the same
 * counts). It checks its own data too.
 *
 *   observe_prog plain     the sequence below
 *   observe_prog pcontrol  plus calls under shmem_pcontrol(0) (never
 *                          recorded) and a put_signal under level 2 (its
 *                          nested put recorded)
 *   observe_prog overflow  plus OVERFLOW_PUTS more puts from the main thread
 *
 * The sequence, per PE (right = me+1, left = me-1, mod n):
 *   main thread: shmem_malloc(512), shmem_calloc(1, 8) twice, barrier_all,
 *     5 x shmem_long_put of 1 long to right, barrier_all,
 *     3 x shmem_long_get of 2 longs from left, 2 x shmem_long_atomic_fetch_add
 *     on PE 0, shmem_putmem_signal of 32 bytes to right (SIGNAL_ADD 1),
 *     shmem_signal_wait_until(GE 1), barrier_all, shmem_malloc(0),
 *     shmem_long_sum_reduce of 4 longs on the world team, barrier_all,
 *     shmem_free x 3
 *   a second thread, between the first two barriers: 3 x shmem_long_p to right */
#include <pthread.h>
#include <shmem.h>
#include <stdint.h>
#include <string.h>

#include "harness.h"

#define OVERFLOW_PUTS 200

static long *buf;
static int me, npes, right, left;

static void *side_thread(void *arg)
{
    (void)arg;
    for (int i = 0; i < 3; i++) shmem_long_p(buf + 40 + i, 1000 * me + i, right);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "plain";
    int provided;
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    me = test_pe = shmem_my_pe();
    npes = shmem_n_pes();
    right = (me + 1) % npes;
    left = (me + npes - 1) % npes;
    if (provided != SHMEM_THREAD_MULTIPLE) {
        fprintf(stderr, "PE %d: no SHMEM_THREAD_MULTIPLE\n", me);
        return TEST_FAIL;
    }

    buf = shmem_malloc(64 * sizeof(long));
    uint64_t *sig = shmem_calloc(1, sizeof *sig);
    long *ctr = shmem_calloc(1, sizeof *ctr);
    for (int i = 0; i < 64; i++) buf[i] = -1;
    shmem_barrier_all();

    pthread_t th;
    CHECK(pthread_create(&th, NULL, side_thread, NULL) == 0);
    for (int i = 0; i < 5; i++) {
        long v = 100 * me + i;
        shmem_long_put(buf + i, &v, 1, right);
    }
    CHECK(pthread_join(th, NULL) == 0);
    shmem_barrier_all();
    for (int i = 0; i < 5; i++) CHECK_MSG(buf[i] == 100 * left + i, "buf[%d] = %ld", i, buf[i]);
    for (int i = 0; i < 3; i++) CHECK_MSG(buf[40 + i] == 1000 * left + i, "buf[%d] = %ld", 40 + i, buf[40 + i]);

    long got[2];
    for (int i = 0; i < 3; i++) {
        shmem_long_get(got, buf + i, 2, left);
        /* left's buf holds what left's left put there. */
        int ll = (left + npes - 1) % npes;
        CHECK(got[0] == 100 * ll + i && got[1] == 100 * ll + i + 1);
    }
    shmem_long_atomic_fetch_add(ctr, 1, 0);
    shmem_long_atomic_fetch_add(ctr, 1, 0);

    long src[4] = {me, me + 1, me + 2, me + 3};
    shmem_putmem_signal(buf + 32, src, sizeof src, sig, 1, SHMEM_SIGNAL_ADD, right);
    shmem_signal_wait_until(sig, SHMEM_CMP_GE, 1);
    for (int i = 0; i < 4; i++) CHECK(buf[32 + i] == left + i);

    if (!strcmp(mode, "pcontrol")) {
        shmem_pcontrol(0);
        for (int i = 0; i < 7; i++) shmem_int_p((int *)(buf + 48), i, right); /* never recorded */
        shmem_pcontrol(2);
        shmem_putmem_signal(buf + 50, src, 8, sig, 1, SHMEM_SIGNAL_ADD, right); /* its put nested, recorded */
        shmem_signal_wait_until(sig, SHMEM_CMP_GE, 2);
        shmem_pcontrol(1);
    }
    if (!strcmp(mode, "overflow"))
        for (int i = 0; i < OVERFLOW_PUTS; i++) shmem_long_p(buf + 56, i, right);

    shmem_barrier_all();
    CHECK(shmem_malloc(0) == NULL); /* size 0: NULL, still an alloc call */
    long *rs = buf + 24, *rd = buf + 28;
    const long red_src[4] = {me, 1, 2 * me, 3};
    memcpy(rs, red_src, sizeof red_src);
    shmem_long_sum_reduce(SHMEM_TEAM_WORLD, rd, rs, 4);
    const long sum_pe = (long)npes * (npes - 1) / 2;
    CHECK(rd[0] == sum_pe && rd[1] == npes && rd[2] == 2 * sum_pe && rd[3] == 3 * npes);
    shmem_barrier_all();
    if (me == 0) CHECK_MSG(*ctr == 2L * npes, "ctr = %ld", *ctr);

    shmem_free(ctr);
    shmem_free(sig);
    shmem_free(buf);
    shmem_finalize();
    return test_finish();
}
