/* lock.c: distributed locks.
 * 1. shmem_set_lock/shmem_clear_lock on a static long and on a
 *    shmem_calloc'd long protect a non-atomic get-increment-put of a counter
 *    on the last PE: 10,000 rounds in all per lock, the end value is exact.
 *    clear_lock itself must complete the put (no quiet before it). An
 *    occupancy count (atomic) checks that one PE at a time is inside; about
 *    1 us of work inside and outside makes the PEs overlap. Each
 *    PE prints its longest wait to acquire and how many acquisitions by
 *    others it saw during its waits; the wait must stay below 2 s (a FIFO
 *    lock starves nobody).
 * 2. shmem_test_lock: 0 when it acquires a free lock, 1 while another PE
 *    holds it; then a counter protected by test_lock spinning, and PEs mixing
 *    set_lock and test_lock on one lock. */
#include <sched.h>
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "api_util.h"

#define TOTAL_ROUNDS 10000L
#define MAX_WAIT_S 2.0

static int me, npes, owner;
static long static_lock;
static long static_lock2;
static int occupancy; /* on PE 0 */
static long gate;     /* start gate on PE 0 */
static long gate_uses;

/* Releases every PE at (nearly) the same moment, so that even at 2 PEs the
 * loops overlap instead of running one after the other. */
static void start_gate(void)
{
    shmem_barrier_all();
    const long target = ++gate_uses * npes;
    shmem_long_atomic_inc(&gate, 0);
    for (int spins = 0; shmem_long_atomic_fetch(&gate, 0) < target;)
        if (++spins % 64 == 0) sched_yield();
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* About ns nanoseconds of work: keeps a PE inside (or outside) the critical
 * section long enough that the PEs really overlap, even 8 PEs on 2 cores. */
static void busy(long ns)
{
    const double end = now() + 1e-9 * (double)ns;
    while (now() < end) {
    }
}

static void enter(const char *what, long round)
{
    int inside = shmem_int_atomic_fetch_inc(&occupancy, 0);
    CHECK_MSG(inside == 0, "%s round %ld: %d other PE(s) inside the critical section", what, round, inside);
}

static void leave(void)
{
    shmem_int_atomic_add(&occupancy, -1, 0);
}

static void protected_counter(long *lock, const char *what)
{
    const long per = (TOTAL_ROUNDS + npes - 1) / npes, total = per * npes;
    long *counter = shmem_calloc(1, sizeof(long));
    long *acq = shmem_calloc(1, sizeof(long)); /* acquisitions so far, on PE 0 */
    double max_wait = 0, sum_wait = 0;
    long max_bypass = 0;
    start_gate();
    for (long i = 0; i < per; i++) {
        const long before = shmem_long_atomic_fetch(acq, 0);
        const double t0 = now();
        shmem_set_lock(lock);
        const double w = now() - t0;
        sum_wait += w;
        if (w > max_wait) max_wait = w;
        const long bypass = shmem_long_atomic_fetch_inc(acq, 0) - before;
        if (bypass > max_bypass) max_bypass = bypass;
        enter(what, i);
        long v = shmem_long_g(counter, owner);
        busy(1000); /* widen the window between get and put */
        shmem_long_p(counter, v + 1, owner);
        leave();
        shmem_clear_lock(lock); /* completes the put */
        busy(1000);
    }
    shmem_barrier_all();
    const long got = shmem_long_g(counter, owner);
    CHECK_MSG(got == total, "%s: counter %ld after %ld locked increments", what, got, total);
    CHECK_MSG(max_wait < MAX_WAIT_S, "%s: longest wait for the lock %.3f s", what, max_wait);
    printf("PE %d %s: %ld acquisitions, longest wait %.3f ms, mean %.3f ms, most acquisitions by others during one wait %ld\n",
           me, what, per, max_wait * 1e3, sum_wait / (double)per * 1e3, max_bypass);
    fflush(stdout);
    shmem_barrier_all();
    shmem_free(acq);
    shmem_free(counter);
}

/* test_lock: held-by-another and free cases, PE by PE. */
static void test_lock_states(long *lock, const char *what)
{
    for (int holder = 0; holder < npes; holder += (npes > 2 ? npes - 1 : 1)) {
        shmem_barrier_all();
        if (me == holder) CHECK_MSG(shmem_test_lock(lock) == 0, "%s: test_lock on a free lock by PE %d", what, holder);
        shmem_barrier_all();
        if (me != holder) CHECK_MSG(shmem_test_lock(lock) == 1, "%s: test_lock while PE %d holds it", what, holder);
        shmem_barrier_all();
        if (me == holder) shmem_clear_lock(lock);
        shmem_barrier_all();
    }
    /* Held through set_lock, tested by the others. */
    if (me == npes - 1) shmem_set_lock(lock);
    shmem_barrier_all();
    if (me != npes - 1) CHECK_MSG(shmem_test_lock(lock) == 1, "%s: test_lock while set_lock holds it", what);
    shmem_barrier_all();
    if (me == npes - 1) shmem_clear_lock(lock);
    shmem_barrier_all();
    /* Free again: every PE in turn acquires with test_lock. */
    for (int p = 0; p < npes; p++) {
        if (me == p) {
            CHECK_MSG(shmem_test_lock(lock) == 0, "%s: test_lock after release (PE %d)", what, p);
            shmem_clear_lock(lock);
        }
        shmem_barrier_all();
    }
}

/* A counter protected by test_lock spinning; odd PEs use set_lock. */
static void test_lock_counter(long *lock, const char *what)
{
    const long per = 4000 / npes + 1;
    long *counter = shmem_calloc(1, sizeof(long));
    start_gate();
    long failed_tries = 0;
    for (long i = 0; i < per; i++) {
        if (me % 2 == 0) {
            while (shmem_test_lock(lock) != 0) failed_tries++;
        } else {
            shmem_set_lock(lock);
        }
        enter(what, i);
        long v = shmem_long_g(counter, owner);
        busy(500);
        shmem_long_p(counter, v + 2, owner);
        leave();
        shmem_clear_lock(lock);
    }
    shmem_barrier_all();
    const long got = shmem_long_g(counter, owner);
    CHECK_MSG(got == 2 * per * npes, "%s: counter %ld, expected %ld", what, got, 2 * per * npes);
    shmem_barrier_all();
    shmem_free(counter);
}

int main(void)
{
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    test_pe = me;
    owner = npes - 1;
    long *heap_lock = shmem_calloc(1, sizeof(long));
    long *heap_lock2 = shmem_calloc(1, sizeof(long));
    CHECK(heap_lock && heap_lock2);

    protected_counter(&static_lock, "static lock");
    protected_counter(heap_lock, "heap lock");
    test_lock_states(&static_lock2, "static lock test_lock");
    test_lock_states(heap_lock2, "heap lock test_lock");
    test_lock_counter(heap_lock, "heap lock test_lock counter");
    test_lock_counter(&static_lock, "static lock test_lock counter");

    shmem_barrier_all();
    CHECK_MSG(shmem_int_g(&occupancy, 0) == 0, "occupancy count %d at the end", shmem_int_g(&occupancy, 0));
    shmem_free(heap_lock2);
    shmem_free(heap_lock);
    shmem_finalize();
    return test_finish();
}
