/* machine_board: PEs of hosts that share one machine's cores (namespace
 * hosts) see which of them run (core/machine.h), linked with the internal
 * layers to read the board. On one host there is no board. Across hosts
 * on this machine, with every PE of the job here:
 * - all PEs but 0 sleep in wait_until: PE 0 must see itself as the only
 *   PE running, and so must the waiting policy's awake count where PEs
 *   outnumber cores; the board's name must be gone from /dev/shm by then
 *   (every PE mapped it, so nothing is left behind if the job dies);
 * - they wake and compute outside any wait: PE 0 must see all running;
 * - where PEs outnumber cores, a PE whose fetch from PE 0 goes through a
 *   transport publishes the CPU it runs on as it waits for the answer
 *   (util/own_wait.h), for waits on its stores to tell whether it shares
 *   their core (sync/backoff.h). */
#include <sched.h>
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "api_util.h"
#include "core/machine.h"
#include "core/runtime.h"
#include "sync/backoff.h"
#include "sync/wake.h"

static long go, seen, arrived;

/* Samples the board until it says `want` PEs run; returns the last count. */
static int await_running(int want, double seconds)
{
    const double end = test_now_s() + seconds;
    int r;
    do r = shoal_machine_running();
    while (r != want && test_now_s() < end);
    return r;
}

static int await_policy_awake(int want, double seconds)
{
    const double end = test_now_s() + seconds;
    struct shoal_backoff_state st;
    do {
        shoal_backoff_sense_now();
        shoal_backoff_query(&st);
    } while (st.awake != want && test_now_s() < end);
    return st.awake;
}

int main(void)
{
    /* Waits sleep at once: the PEs waiting in phase 1 leave their cores. */
    setenv("SHMEM_WAIT_POLICY", "sleep", 1);
    shmem_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    test_pe = me;
    shmem_barrier_all();
    if (shoal_rt.machine_pes == shoal_rt.node_pes) {
        CHECK_MSG(shoal_machine_running() == -1, "one host per machine, yet a board counts %d PEs",
                  shoal_machine_running());
        shmem_finalize();
        return test_finish();
    }
    if (shoal_rt.machine_pes != npes) { /* hosts on several machines: not this test's layout */
        shmem_finalize();
        return TEST_SKIP;
    }

    if (me != 0) {
        shmem_long_wait_until(&go, SHMEM_CMP_EQ, 1);
    } else {
        const int r = await_running(1, 10);
        CHECK_MSG(r == 1, "PEs 1..%d sleep in wait_until, yet the board says %d of %d run", npes - 1, r, npes);
        char path[64];
        snprintf(path, sizeof path, "/dev/shm/shoal-m-%016llx", (unsigned long long)shoal_rt.machine_board);
        CHECK_MSG(access(path, F_OK) != 0, "%s still exists after every PE joined the board", path);
        if (shoal_backoff_oversubscribed) {
            const int awake = await_policy_awake(1, 10);
            CHECK_MSG(awake == 1, "the waiting policy counts %d PEs awake, the board 1", awake);
        }
        for (int pe = 1; pe < npes; pe++) shmem_long_p(&go, 1, pe);
        shmem_quiet();
    }

    /* Everybody computes (no wait) until PE 0 has seen them all run. */
    if (me != 0) {
        shmem_long_atomic_add(&arrived, 1, 0);
        const double end = test_now_s() + 30;
        while (!shmem_long_test(&seen, SHMEM_CMP_EQ, 1) && test_now_s() < end) {}
        CHECK_MSG(seen == 1, "PE 0 did not report within 30 s");
    } else {
        const double end = test_now_s() + 30;
        while (shmem_long_atomic_fetch(&arrived, 0) < npes - 1 && test_now_s() < end) {}
        const int r = await_running(npes, 10);
        CHECK_MSG(r == npes, "every PE computes outside a wait, yet the board says %d of %d run", r, npes);
        for (int pe = 1; pe < npes; pe++) shmem_long_p(&seen, 1, pe);
        shmem_quiet();
    }
    /* The policy of the phases above (sleep) keeps fixed phases: back to auto. */
    shoal_backoff_configure(65536, "auto", shoal_rt.machine_pes);
    if (me != 0 && shoal_backoff_cpu_aware && !shoal_rt.peers[0].direct) {
        /* The CPU is read again after the fetch: a PE moved meanwhile tries again. */
        int published = -1, now = -2;
        for (int i = 0; i < 100 && published != now; i++) {
            __atomic_store_n(&shoal_wake_word_of(me)->cpu, 0, __ATOMIC_RELAXED);
            (void)shmem_long_atomic_fetch(&arrived, 0);
            published = shoal_backoff_cpu_of(me);
            now = sched_getcpu();
            if (published < 0) break;
        }
        CHECK_MSG(published >= 0, "a fetch from PE 0 through the transport published no CPU");
        if (published >= 0) CHECK_MSG(published == now, "published CPU %d, running on %d", published, now);
    }
    shmem_barrier_all();
    shmem_finalize();
    return test_finish();
}
