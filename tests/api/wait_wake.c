/* wait_wake: sleeping waits woken by the writer (sync/wake.h), linked with
 * the internal layers to read the wake counters. Run with 2 PEs on one
 * host; the policy is set to sleep (as SHMEM_WAIT_POLICY=sleep would), so a
 * wait sleeps at once:
 * 1. no sleeper flagged, no wake: PE 0 does 2,000 p, put, atomic add and
 *    signal_add into PE 1 while PE 1 computes outside Shoal; PE 0 rings no
 *    bell (rings counter unchanged) and PE 1 then checks every value;
 * 2. each of p, put, atomic add, signal_set wakes a sleeper: PE 1 sleeps in
 *    wait_until / signal_wait_until with a 5 s timer (so only a ring wakes
 *    it in time), PE 0 writes once PE 1 sleeps there; PE 1 checks the value,
 *    that it woke within 1 s of the store, and that the writer rang its
 *    bell during the wait; PE 0 checks it rang;
 * 3. the same after PE 0 has written another word of PE 1 for 100 ms: each
 *    of those writes that finds PE 1 asleep rings it, PE 1 wakes and raises
 *    its flag again, and no ring may leave it asleep with its flag down.
 * Other PE counts: skip (77), except PEs past 2, which just take part. */
#include <shmem.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "api_util.h"
#include "core/runtime.h"
#include "sync/backoff.h"
#include "sync/wake.h"

static long word_p, word_amo, data[64], ready, others_done;
/* PE 1's sleep counters (shoal_backoff_naps): waits that slept, sleeps. */
static uint64_t sig, naps[2];
static double stamp[4];

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000l};
    nanosleep(&ts, NULL);
}

static void no_sleeper_no_ring(int me)
{
    shmem_barrier_all();
    if (me == 0) {
        /* PE 1 says when it has left the barrier: until then its wait there
         * may still be flagged (armed, about to see the release). */
        shmem_long_wait_until(&ready, SHMEM_CMP_EQ, 1);
        CHECK(!shoal_wake_peer_asleep(1));
        const uint64_t rings = __atomic_load_n(&shoal_wake_stats.rings, __ATOMIC_RELAXED);
        long src[64];
        for (int i = 0; i < 2000; i++) {
            shmem_long_p(&word_p, i + 1, 1);
            for (int k = 0; k < 64; k++) src[k] = i * 64 + k;
            shmem_long_put(data, src, 64, 1);
            shmem_long_atomic_add(&word_amo, 1, 1);
            shmem_signal_add(&sig, 1, 1);
        }
        CHECK_MSG(__atomic_load_n(&shoal_wake_stats.rings, __ATOMIC_RELAXED) == rings,
                  "%llu futex wakes with no sleeper flagged",
                  (unsigned long long)(__atomic_load_n(&shoal_wake_stats.rings, __ATOMIC_RELAXED) - rings));
        shmem_long_p(&word_p, -1, 1); /* done */
    } else if (me == 1) {
        shmem_long_p(&ready, 1, 0);
        /* Computes (no Shoal wait) until PE 0 is done. */
        while (__atomic_load_n(&word_p, __ATOMIC_ACQUIRE) != -1) test_compute_for(0.001);
    }
    shmem_barrier_all();
    if (me == 1) {
        CHECK(word_amo == 2000);
        CHECK(sig == 2000);
        for (int k = 0; k < 64; k++) CHECK_MSG(data[k] == 1999 * 64 + k, "data[%d] = %ld", k, data[k]);
    }
    word_p = word_amo = ready = 0;
    sig = 0;
    shmem_barrier_all();
}

enum how { BY_P, BY_PUT, BY_AMO, BY_SIGNAL, AFTER_NOISE, HOWS };
static const char *const names[HOWS] = {"p", "put", "atomic add", "signal set", "p after 100 ms of other rings"};
static long noise, go_on, pe1_go;

/* PE 0 writes only once nothing but its store can touch PE 1's sleepers
 * flag and PE 1 sleeps in this wait, else the write may rightly ring nothing:
 * - every other PE was done with the barrier before PE 1 began its wait: a
 *   writer that stored PE 1's release and lost its core before its load of
 *   the flag would clear it later. PEs past 1 tell PE 0 (others_done), PE 0
 *   raises pe1_go in its own memory, PE 1 reads it (a write into PE 1 would
 *   be such a writer again); PEs past 1 then stay away from PE 1, in no
 *   barrier, until PE 0 is done (go_on);
 * - PE 1 left the barrier, whose wait may have left its flag up a moment
 *   (ready carries PE 1's sleep count from then, plus one);
 * - PE 1 slept since: it raised its flag in this wait and checked its word
 *   once more; its sleep, 5 s long, ends early only by a ring. */
static void await_sleeping_pe1(const char *name)
{
    shmem_long_wait_until(&ready, SHMEM_CMP_NE, 0);
    const uint64_t before = (uint64_t)ready - 1;
    for (int i = 0; i < 10000 && shmem_uint64_atomic_fetch(&naps[1], 1) == before; i++) pause_ms(1);
    CHECK_MSG(shmem_uint64_atomic_fetch(&naps[1], 1) != before, "%s: PE 1 did not go to sleep in its wait within 10 s",
              name);
    CHECK_MSG(shoal_wake_peer_asleep(1), "%s: PE 1 sleeps with its sleepers flag down", name);
}

static void woken_by(int me, int npes, enum how how)
{
    shmem_barrier_all();
    if (me == 0) {
        const uint64_t rings = __atomic_load_n(&shoal_wake_stats.rings, __ATOMIC_RELAXED);
        shmem_long_wait_until(&others_done, SHMEM_CMP_EQ, npes - 2);
        __atomic_store_n(&pe1_go, 1, __ATOMIC_RELEASE);
        await_sleeping_pe1(names[how]);
        long v = 42 + how;
        if (how == AFTER_NOISE) {
            /* Each ring wakes PE 1, which raises its flag again: the rings
             * land in that window too, and must not leave it deaf. */
            const double end = test_now_s() + 0.1;
            for (long i = 1; test_now_s() < end; i++) shmem_long_p(&noise, i, 1);
            CHECK_MSG(__atomic_load_n(&shoal_wake_stats.rings, __ATOMIC_RELAXED) > rings, "%s: no ring", names[how]);
        }
        stamp[0] = test_now_s();
        switch (how) {
        case BY_P:
        case AFTER_NOISE: shmem_long_p(&word_p, v, 1); break;
        case BY_PUT: shmem_long_put(&word_p, &v, 1, 1); break;
        case BY_AMO: shmem_long_atomic_add(&word_p, v, 1); break;
        default: shmem_signal_set(&sig, (uint64_t)v, 1); break;
        }
        /* After the noise the flag may be down a moment, rightly: PE 1 is
         * awake then, and rechecks its word before sleeping again. */
        CHECK_MSG(how == AFTER_NOISE || __atomic_load_n(&shoal_wake_stats.rings, __ATOMIC_RELAXED) > rings,
                  "%s rang no bell", names[how]);
        shmem_double_p(&stamp[0], stamp[0], 1);
        for (int pe = 2; pe < npes; pe++) shmem_long_p(&go_on, 1, pe);
    } else if (me == 1) {
        while (shmem_long_g(&pe1_go, 0) == 0) test_compute_for(0.0001);
        const uint64_t rung = __atomic_load_n(&shoal_wake_stats.rung_waits, __ATOMIC_RELAXED);
        shmem_long_p(&ready, (long)__atomic_load_n(&naps[1], __ATOMIC_RELAXED) + 1, 0);
        __atomic_store_n(&shoal_backoff_futex_fixed_ns, 5000000000l, __ATOMIC_RELAXED);
        long got;
        if (how == BY_SIGNAL)
            got = (long)shmem_signal_wait_until(&sig, SHMEM_CMP_EQ, (uint64_t)(42 + how));
        else {
            shmem_long_wait_until(&word_p, SHMEM_CMP_EQ, 42 + how);
            got = word_p;
        }
        const double woke = test_now_s();
        __atomic_store_n(&shoal_backoff_futex_fixed_ns, 0, __ATOMIC_RELAXED);
        CHECK_MSG(got == 42 + how, "%s: woke with %ld, expected %d", names[how], got, 42 + how);
        CHECK_MSG(__atomic_load_n(&shoal_wake_stats.rung_waits, __ATOMIC_RELAXED) > rung,
                  "%s: the writer did not ring the sleeping wait's bell", names[how]);
        shmem_barrier_all();
        CHECK_MSG(woke - stamp[0] < 1.0, "%s: woke %.3f s after the store", names[how], woke - stamp[0]);
    } else {
        shmem_long_atomic_inc(&others_done, 0);
        shmem_long_wait_until(&go_on, SHMEM_CMP_NE, 0);
    }
    if (me != 1) shmem_barrier_all();
    word_p = noise = 0;
    sig = 0;
    ready = others_done = go_on = pe1_go = 0;
    shmem_barrier_all();
}

int main(void)
{
    shmem_init();
    const int me = shmem_my_pe();
    test_pe = me;
    if (shmem_n_pes() < 2) {
        shmem_finalize();
        return TEST_SKIP;
    }
    if (!shoal_wake_word_of(1)) { /* PE 1 not on this host's shared memory */
        shmem_finalize();
        return TEST_SKIP;
    }
    shoal_backoff_configure(65536, "sleep", shoal_rt.machine_pes);
    shoal_backoff_naps = naps;
    no_sleeper_no_ring(me);
    for (int how = 0; how < HOWS; how++) woken_by(me, shmem_n_pes(), (enum how)how);
    shmem_finalize();
    return test_finish();
}
