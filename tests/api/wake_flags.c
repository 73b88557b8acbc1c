/* wake_flags: every wait lowers the sleepers flag it raised (sync/wake.h),
 * linked with the internal layers to read the flag. A flag left up after
 * its wait ended makes the next writer pay a futex wake for nothing and
 * tells peers this PE sleeps while it runs (the oversubscribed policy
 * counts awake PEs by these flags). With the policy set to sleep, so every
 * wait raises its flag at once, each round delays one PE (the others wait
 * and sleep), runs one call, checks its result, and then every PE checks
 * its own flag is down: only this PE's waits raise it, writers only clear
 * it. Calls: barrier_all, the active-set barrier (pSync, counting mode),
 * team sync, sum reduce, fcollect, broadcast, alltoall, the deprecated
 * active-set sum_to_all, set_lock/clear_lock and wait_until. The ctest
 * entries run it with several forced collective algorithms. */
#include <shmem.h>
#include <stdio.h>
#include <time.h>

#include "api_util.h"
#include "core/runtime.h"
#include "sync/backoff.h"
#include "sync/wake.h"

#define ROUNDS 200
#define N 4

static long psync[SHMEM_REDUCE_SYNC_SIZE], pwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
static long src[N * 64], dst[N * 64], lock, flag, counter;

static void pause_ms(long ms)
{
    struct timespec ts = {0, ms * 1000000l};
    nanosleep(&ts, NULL);
}

enum call { BARRIER_ALL, ACTIVE_BARRIER, TEAM_SYNC, REDUCE, FCOLLECT, BROADCAST, ALLTOALL, SUM_TO_ALL, LOCK, WAIT, CALLS };
static const char *const names[CALLS] = {"barrier_all", "active-set barrier", "team_sync", "sum_reduce",
                                         "fcollect",    "broadcast",          "alltoall",  "sum_to_all",
                                         "set_lock",    "wait_until"};

static void run(enum call c, int me, int npes, int round)
{
    for (int i = 0; i < N * npes && i < N * 64; i++) src[i] = me * 1000 + i + round;
    switch (c) {
    case BARRIER_ALL: shmem_barrier_all(); break;
    case ACTIVE_BARRIER: shmem_barrier(0, 0, npes, psync); break;
    case TEAM_SYNC: shmem_team_sync(SHMEM_TEAM_WORLD); break;
    case REDUCE:
        shmem_long_sum_reduce(SHMEM_TEAM_WORLD, dst, src, N);
        for (int i = 0; i < N; i++)
            CHECK_MSG(dst[i] == 1000l * npes * (npes - 1) / 2 + (long)npes * (i + round), "sum_reduce: [%d] = %ld", i,
                      dst[i]);
        break;
    case FCOLLECT:
        shmem_long_fcollect(SHMEM_TEAM_WORLD, dst, src, N);
        for (int p = 0; p < npes; p++)
            for (int i = 0; i < N; i++)
                CHECK_MSG(dst[p * N + i] == p * 1000 + i + round, "fcollect: [%d] = %ld", p * N + i, dst[p * N + i]);
        break;
    case BROADCAST:
        shmem_long_broadcast(SHMEM_TEAM_WORLD, dst, src, N, round % npes);
        for (int i = 0; i < N; i++)
            CHECK_MSG(dst[i] == (round % npes) * 1000 + i + round, "broadcast: [%d] = %ld", i, dst[i]);
        break;
    case ALLTOALL:
        shmem_long_alltoall(SHMEM_TEAM_WORLD, dst, src, 1);
        for (int p = 0; p < npes; p++)
            CHECK_MSG(dst[p] == p * 1000 + me + round, "alltoall: [%d] = %ld", p, dst[p]);
        break;
    case SUM_TO_ALL:
        shmem_long_sum_to_all(dst, src, N, 0, 0, npes, pwrk, psync);
        for (int i = 0; i < N; i++)
            CHECK_MSG(dst[i] == 1000l * npes * (npes - 1) / 2 + (long)npes * (i + round), "sum_to_all: [%d] = %ld", i,
                      dst[i]);
        break;
    case LOCK:
        shmem_set_lock(&lock);
        counter = shmem_long_g(&counter, 0) + 1;
        shmem_long_p(&counter, counter, 0);
        shmem_quiet();
        shmem_clear_lock(&lock);
        break;
    default:
        /* A ring of p + wait_until: each PE waits for the one before it. */
        if (me == 0) shmem_long_p(&flag, round + 1, 1 % npes);
        shmem_long_wait_until(&flag, SHMEM_CMP_GE, round + 1);
        if (me != 0) shmem_long_p(&flag, round + 1, (me + 1) % npes);
        break;
    }
}

int main(void)
{
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++) psync[i] = SHMEM_SYNC_VALUE;
    shmem_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    test_pe = me;
    if (!shoal_wake_word_of(me)) { /* no wake word (not mapped here) */
        shmem_finalize();
        return TEST_SKIP;
    }
    shoal_backoff_configure(65536, "sleep", shoal_rt.machine_pes);
    shmem_barrier_all();
    for (int round = 0; round < ROUNDS; round++)
        for (int c = 0; c < CALLS; c++) {
            /* The late PE keeps the others waiting long enough to sleep. */
            if (round % 20 == 0 && me == (round + c) % npes) pause_ms(3);
            run((enum call)c, me, npes, round);
            CHECK_MSG(!shoal_wake_peer_asleep(me), "%s (round %d): the flag is still up after the call returned",
                      names[c], round);
            /* The collectives' own pSync rules: a barrier before reuse. */
            if (c == ACTIVE_BARRIER || c == SUM_TO_ALL) shmem_barrier_all();
        }
    shmem_barrier_all();
    if (me == 0) CHECK_MSG(counter == (long)ROUNDS * npes, "lock counter %ld, expected %ld", counter, (long)ROUNDS * npes);
    shmem_finalize();
    return test_finish();
}
