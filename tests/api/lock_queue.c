/* lock_queue.c: the queue lock's promises, checked from inside (linked
 * with shoal_internal to see the lock's home tail and to count what goes
 * to the transport).
 * 1. FIFO: one PE holds the lock; the others queue one at a time in a
 *    chosen order (each starts only once the previous one is the queue's
 *    tail); the order in which they then get the lock must be exactly the
 *    order they queued in. Six orders (rotations, forward and reversed).
 * 2. test_lock with a queue: while one PE holds and another waits,
 *    test_lock by a third (and by the holder) returns 1 and does not jump
 *    the queue; the waiter gets the lock before the tester.
 * 3. Cost: with every other PE idle, one PE's set_lock + clear_lock sends
 *    at most 2 operations through the transport (the swap and the
 *    compare-swap on the home tail), a successful test_lock + clear_lock
 *    at most 2 and a failed test_lock exactly 1; none when the home PE is
 *    reached directly. Counted by wrapping the runtime's transport table.
 * 4. Contention: every PE loops set/clear; an occupancy count on PE 0
 *    sees one PE inside at a time and a non-atomic get-increment-put of a
 *    counter on the last PE ends exact.
 * 5. Threads: two threads per PE contend for one lock (the lock's node is
 *    the PE's, so the library must keep them apart locally). */
#include <pthread.h>
#include <sched.h>
#include <shmem.h>
#include <stdatomic.h>
#include <stdio.h>

#include "api_util.h"
#include "core/runtime.h"
#include "sync/lock.h"

#define FIFO_ROUNDS 6
#define CONTENDED_TOTAL 1200L
#define THREAD_ROUNDS 100

static int me, npes;
static long lock_a, lock_b;
static int order[64];   /* on PE 0: who got the lock, in turn */
static int order_n;     /* on PE 0 */
static int occupancy;   /* on PE 0 */

/* The home tail: the last PE queued plus one, 0 when free. */
static int tail_of(long *lock)
{
    return shmem_int_atomic_fetch((int *)((char *)lock + SHOAL_LOCK_TAIL_AT), 0);
}

static void wait_tail(long *lock, int pe)
{
    for (int spins = 0; tail_of(lock) != pe + 1;)
        if (++spins % 16 == 0) sched_yield();
}

/* Returns this PE's turn (0 = first). */
static int record_turn(void)
{
    int pos = shmem_int_atomic_fetch_inc(&order_n, 0);
    shmem_int_p(&order[pos], me, 0); /* completed by clear_lock's quiet */
    return pos;
}

static void fifo_rounds(long *lock)
{
    for (int r = 0; r < FIFO_ROUNDS; r++) {
        int perm[64];
        for (int k = 0; k < npes; k++) {
            int rot = (k + r) % npes;
            perm[k] = r % 2 ? npes - 1 - rot : rot;
        }
        if (me == 0) order_n = 0;
        shmem_barrier_all();
        int k_me = 0;
        while (perm[k_me] != me) k_me++;
        if (k_me == 0) {
            shmem_set_lock(lock);
            record_turn();
            wait_tail(lock, perm[npes - 1]); /* everyone has queued */
            shmem_clear_lock(lock);
        } else {
            wait_tail(lock, perm[k_me - 1]);
            shmem_set_lock(lock);
            /* Said at once: a lock that skips a waiter may leave it hanging. */
            int turn = record_turn();
            CHECK_MSG(turn == k_me, "FIFO round %d: PE %d queued %d-th but got the lock %d-th", r, me, k_me + 1,
                      turn + 1);
            shmem_clear_lock(lock);
        }
        shmem_barrier_all();
        if (me == 0) {
            CHECK_MSG(order_n == npes, "FIFO round %d: %d acquisitions recorded, expected %d", r, order_n, npes);
            for (int k = 0; k < npes && k < order_n; k++)
                CHECK_MSG(order[k] == perm[k], "FIFO round %d: turn %d went to PE %d, PE %d queued %s", r, k,
                          order[k], perm[k], k ? "there" : "first");
        }
        CHECK_MSG(tail_of(lock) == 0, "FIFO round %d: tail %d after every PE cleared", r, tail_of(lock));
    }
}

static int tested; /* on PE 0: PE 2 has tested */

static void test_lock_with_queue(long *lock)
{
    if (npes < 3) return;
    if (me == 0) order_n = 0;
    shmem_barrier_all();
    if (me == 0) {
        shmem_set_lock(lock);
        record_turn();
        wait_tail(lock, 1);
        CHECK_MSG(shmem_test_lock(lock) == 1, "test_lock by the holder returned 0");
        shmem_int_wait_until(&tested, SHMEM_CMP_EQ, 1);
        shmem_clear_lock(lock);
    } else if (me == 1) {
        wait_tail(lock, 0);
        shmem_set_lock(lock);
        record_turn();
        shmem_clear_lock(lock);
    } else if (me == 2) {
        wait_tail(lock, 1);
        CHECK_MSG(shmem_test_lock(lock) == 1, "test_lock while PE 0 holds and PE 1 waits returned 0");
        CHECK_MSG(tail_of(lock) == 2, "test_lock changed the queue's tail to %d", tail_of(lock));
        shmem_int_atomic_set(&tested, 1, 0);
        while (shmem_test_lock(lock) != 0) {
        }
        record_turn();
        shmem_clear_lock(lock);
    }
    shmem_barrier_all();
    if (me == 0) {
        CHECK_MSG(order_n == 3, "test_lock with a queue: %d acquisitions", order_n);
        for (int k = 0; k < 3; k++)
            CHECK_MSG(order[k] == k, "test_lock with a queue: turn %d went to PE %d (the tester jumped the queue?)",
                      k, order[k]);
    }
}

/* The runtime's transport table, wrapped to count operations sent. */
static struct shoal_transport_ops counted;
static const struct shoal_transport_ops *real;
static atomic_long sent, quiets;

static shoal_status_t count_put(shoal_tctx_t *c, int pe, enum shoal_segment_id s, size_t o, const void *p, size_t n)
{
    atomic_fetch_add(&sent, 1);
    return real->put(c, pe, s, o, p, n);
}

static shoal_status_t count_get(shoal_tctx_t *c, int pe, enum shoal_segment_id s, size_t o, void *p, size_t n)
{
    atomic_fetch_add(&sent, 1);
    return real->get(c, pe, s, o, p, n);
}

static shoal_status_t count_get_nbi(shoal_tctx_t *c, int pe, enum shoal_segment_id s, size_t o, void *p, size_t n)
{
    atomic_fetch_add(&sent, 1);
    return real->get_nbi(c, pe, s, o, p, n);
}

static shoal_status_t count_amo(shoal_tctx_t *c, int pe, enum shoal_segment_id s, size_t o, size_t elem,
                                enum shoal_amo_op op, uint64_t operand, uint64_t cond, uint64_t *fetched)
{
    atomic_fetch_add(&sent, 1);
    return real->amo(c, pe, s, o, elem, op, operand, cond, fetched);
}

static void count_quiet(shoal_tctx_t *c)
{
    atomic_fetch_add(&quiets, 1);
    real->quiet(c);
}

static void costs(long *lock)
{
    real = shoal_rt.transport;
    counted = *real;
    counted.put = count_put;
    counted.get = count_get;
    counted.get_nbi = count_get_nbi;
    counted.amo = count_amo;
    counted.quiet = count_quiet;
    const int remote_home = shoal_rt.amo_fabric || !shoal_rt.peers[0].direct;
    shmem_barrier_all();
    shoal_rt.transport = &counted;
    for (int p = 0; p < npes; p++) {
        shmem_barrier_all();
        if (me != p) continue;
        long by_step[4];
        atomic_store(&sent, 0);
        atomic_store(&quiets, 0);
        shmem_set_lock(lock);
        by_step[0] = atomic_exchange(&sent, 0);
        shmem_clear_lock(lock);
        by_step[1] = atomic_exchange(&sent, 0);
        const long set_clear = by_step[0] + by_step[1], q = atomic_load(&quiets);
        CHECK_MSG(shmem_test_lock(lock) == 0, "test_lock on a free lock");
        by_step[2] = atomic_exchange(&sent, 0);
        shmem_clear_lock(lock);
        by_step[3] = atomic_exchange(&sent, 0);
        printf("PE %d: uncontended set_lock %ld + clear_lock %ld operation(s) sent (%ld quiet), test_lock %ld + "
               "clear_lock %ld (home PE %s)\n", me, by_step[0], by_step[1], q, by_step[2], by_step[3],
               remote_home ? "through the transport" : "direct");
        fflush(stdout);
        if (remote_home) {
            CHECK_MSG(set_clear >= 1 && set_clear <= 2, "uncontended set+clear sent %ld operations (at most 2)",
                      set_clear);
            CHECK_MSG(by_step[2] + by_step[3] <= 2, "test_lock+clear sent %ld operations (at most 2)",
                      by_step[2] + by_step[3]);
        } else {
            CHECK_MSG(set_clear == 0 && by_step[2] + by_step[3] == 0,
                      "a direct home PE, yet set+clear sent %ld and test+clear %ld operations", set_clear,
                      by_step[2] + by_step[3]);
        }
    }
    /* A failed test_lock: one compare-swap. */
    shmem_barrier_all();
    if (me == 0) shmem_set_lock(lock);
    shmem_barrier_all();
    if (me == npes - 1 && me != 0) {
        atomic_store(&sent, 0);
        CHECK_MSG(shmem_test_lock(lock) == 1, "test_lock while PE 0 holds the lock");
        long n = atomic_exchange(&sent, 0);
        CHECK_MSG(n == (remote_home ? 1 : 0), "a failed test_lock sent %ld operations", n);
    }
    shmem_barrier_all();
    if (me == 0) shmem_clear_lock(lock);
    shmem_barrier_all();
    shoal_rt.transport = real;
    shmem_barrier_all();
}

static void enter(const char *what, long round)
{
    int inside = shmem_int_atomic_fetch_inc(&occupancy, 0);
    CHECK_MSG(inside == 0, "%s round %ld: %d other holder(s) inside the critical section", what, round, inside);
}

static void leave(void) { shmem_int_atomic_add(&occupancy, -1, 0); }

static long *counter; /* on the last PE, non-atomic under the lock */

/* One non-atomic increment of the counter on the last PE, under the lock. */
static void locked_increment(long *lock, const char *what, long i)
{
    shmem_set_lock(lock);
    enter(what, i);
    long v = shmem_long_g(counter, npes - 1);
    shmem_long_p(counter, v + 1, npes - 1);
    leave();
    shmem_clear_lock(lock);
}

static void contended(long *lock)
{
    const long per = CONTENDED_TOTAL / npes;
    *counter = 0;
    shmem_barrier_all();
    for (long i = 0; i < per; i++) {
        locked_increment(lock, "contended", i);
    }
    shmem_barrier_all();
    long got = shmem_long_g(counter, npes - 1);
    CHECK_MSG(got == per * npes, "contended: counter %ld after %ld locked increments", got, per * npes);
    shmem_barrier_all();
}

static void *thread_rounds(void *arg)
{
    long *lock = arg;
    for (long i = 0; i < THREAD_ROUNDS; i++) {
        locked_increment(lock, "threads", i);
    }
    return NULL;
}

static void threads(long *lock)
{
    *counter = 0;
    shmem_barrier_all();
    pthread_t t;
    CHECK(pthread_create(&t, NULL, thread_rounds, lock) == 0);
    thread_rounds(lock);
    pthread_join(t, NULL);
    shmem_barrier_all();
    long got = shmem_long_g(counter, npes - 1);
    CHECK_MSG(got == 2L * THREAD_ROUNDS * npes, "threads: counter %ld, expected %ld", got, 2L * THREAD_ROUNDS * npes);
    shmem_barrier_all();
}

int main(void)
{
    int provided = 0;
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    test_pe = me;
    if (npes > 64) {
        if (me == 0) fprintf(stderr, "lock_queue: at most 64 PEs\n");
        shmem_finalize();
        return TEST_SKIP;
    }
    long *heap_lock = shmem_calloc(1, sizeof(long));
    counter = shmem_calloc(1, sizeof(long));
    CHECK(heap_lock && counter);

    fifo_rounds(&lock_a);
    fifo_rounds(heap_lock);
    test_lock_with_queue(&lock_b);
    costs(&lock_a);
    costs(heap_lock);
    contended(&lock_b);
    contended(heap_lock);
    if (provided == SHMEM_THREAD_MULTIPLE) threads(&lock_a);

    shmem_barrier_all();
    CHECK_MSG(shmem_int_g(&occupancy, 0) == 0, "occupancy %d at the end", shmem_int_g(&occupancy, 0));
    shmem_free(counter);
    shmem_free(heap_lock);
    shmem_finalize();
    return test_finish();
}
