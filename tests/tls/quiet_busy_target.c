/* quiet_busy_target.c: a quiet must not wait for its target to call the
 * library again. PE 1 waits for a flag that PE 0's put sets, then computes
 * for 50 ms without calling the library; PE 0 times its quiet after that
 * put. The put was applied inside PE 1's wait, which ended on it; its
 * acknowledgement may not be left for PE 1's next call, 50 ms later (on
 * loaded cores scheduling may delay it a few ms, not by the computation).
 * Run with 2 PEs over a transport (SHMEM_TRANSPORT=tls or ofi). */
#include <shmem.h>
#include <stdint.h>
#include <time.h>

#include "harness.h"

#define ROUNDS 40
#define COMPUTE_NS 50000000L
#define QUIET_LIMIT_NS 25000000L

static long flag, done;

static long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

int main(void)
{
    shmem_init();
    const int me = shmem_my_pe();
    test_pe = me;
    if (shmem_n_pes() != 2) {
        if (me == 0) printf("quiet_busy_target: needs 2 PEs; skipped\n");
        shmem_finalize();
        return TEST_SKIP;
    }
    long slowest = 0;
    int slow = 0;
    for (long i = 1; i <= ROUNDS; i++) {
        if (me == 0) {
            shmem_long_p(&flag, i, 1);
            const long t = now_ns();
            shmem_quiet();
            const long took = now_ns() - t;
            if (took > slowest) slowest = took;
            slow += took > QUIET_LIMIT_NS;
            shmem_long_wait_until(&done, SHMEM_CMP_GE, i);
        } else {
            shmem_long_wait_until(&flag, SHMEM_CMP_GE, i);
            /* Compute, calling nothing of the library. */
            const long until = now_ns() + COMPUTE_NS;
            volatile unsigned long spin = 0;
            while (now_ns() < until) spin++;
            shmem_long_p(&done, i, 0);
            shmem_quiet();
        }
    }
    if (me == 0) {
        printf("quiet after a put the target applied while waiting: slowest %.3f ms of %d\n", slowest / 1e6, ROUNDS);
        CHECK_MSG(slow == 0, "%d of %d quiets took over %ld ms (slowest %.1f ms): they waited for the target's "
                  "next call", slow, ROUNDS, QUIET_LIMIT_NS / 1000000, slowest / 1e6);
    }
    shmem_finalize();
    return test_finish();
}
