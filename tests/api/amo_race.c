/* amo_race.c: atomics under contention, every PE on the same objects.
 * 1. Every PE does fetch_add(me + 1) on one 64-bit counter of PE 0 (heap),
 *    100,000 operations in all (at least; each PE does ceil(100000/npes)):
 *    the total is exact and each PE's fetched values strictly increase.
 * 2. Every PE does fetch_inc on a static uint64_t counter of the last PE;
 *    PE 0 gathers every fetched value: each of 0..total-1 occurs exactly once.
 * 3. Non-fetching inc/add on an int counter of PE 0 from every PE (32-bit
 *    objects next to each other: a wide update would clobber a neighbour).
 * 4. compare_swap elects exactly one winner in each of 1,000 rounds: all PEs
 *    race to swap the round's slot (on PE round % npes) from 0 to me + 1;
 *    the winner counts itself on the slot's owner; afterwards every PE checks
 *    every round: one winner, and the slot names the PE that won. Also a
 *    32-bit election through the C11 generic. */
#include <sched.h>
#include <shmem.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"

#define TOTAL_OPS 100000L
#define ROUNDS 1000

static int me, npes;
static uint64_t inc_counter; /* static target of part 2 */
static int int_counters[4];  /* part 3: [1] is the counter, the others guards */
static long gate;            /* start gate on PE 0 */
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

static void fetch_add_counter(void)
{
    const long per = (TOTAL_OPS + npes - 1) / npes, total = per * npes;
    long *counter = shmem_calloc(1, sizeof(long));
    start_gate();
    long prev = -1, bad_order = 0;
    for (long i = 0; i < per; i++) {
        long f = shmem_long_atomic_fetch_add(counter, me + 1, 0);
        if (f <= prev) bad_order++;
        prev = f;
    }
    CHECK_MSG(bad_order == 0, "fetched values not strictly increasing %ld times", bad_order);
    shmem_barrier_all();
    const long want = per * (long)npes * (npes + 1) / 2;
    long got = shmem_long_atomic_fetch(counter, 0);
    CHECK_MSG(got == want, "fetch_add counter: %ld, expected %ld (%ld ops)", got, want, total);
    if (me == 0) CHECK_MSG(*counter == want, "fetch_add counter in PE 0's memory: %ld, expected %ld", *counter, want);
    shmem_barrier_all();
    shmem_free(counter);
}

static void fetch_inc_unique(void)
{
    const long per = (TOTAL_OPS + npes - 1) / npes, total = per * npes;
    const int owner = npes - 1;
    uint64_t *all = shmem_malloc((size_t)total * sizeof(uint64_t)); /* PE 0 gathers */
    uint64_t *mine = malloc((size_t)per * sizeof(uint64_t));
    if (!all || !mine) {
        CHECK(!"allocation failed");
        return;
    }
    inc_counter = 0;
    start_gate();
    long bad_order = 0;
    for (long i = 0; i < per; i++) {
        mine[i] = shmem_uint64_atomic_fetch_inc(&inc_counter, owner);
        if (i && mine[i] <= mine[i - 1]) bad_order++;
    }
    CHECK_MSG(bad_order == 0, "fetch_inc values not strictly increasing %ld times", bad_order);
    shmem_putmem(all + (size_t)me * (size_t)per, mine, (size_t)per * sizeof(uint64_t), 0);
    shmem_barrier_all();
    if (me == owner) CHECK_MSG(inc_counter == (uint64_t)total, "fetch_inc counter %llu, expected %ld",
                               (unsigned long long)inc_counter, total);
    if (me == 0) {
        unsigned char *seen = calloc((size_t)total, 1);
        long dup = 0, out = 0;
        for (long i = 0; i < total; i++) {
            if (all[i] >= (uint64_t)total) out++;
            else if (seen[all[i]]++) dup++;
        }
        long missing = 0;
        for (long i = 0; i < total; i++) missing += !seen[i];
        CHECK_MSG(dup == 0 && out == 0 && missing == 0, "fetch_inc values: %ld duplicated, %ld out of range, %ld missing",
                  dup, out, missing);
        free(seen);
    }
    shmem_barrier_all();
    free(mine);
    shmem_free(all);
}

static void int_adds(void)
{
    const int per = 20000 / npes + 1;
    for (int i = 0; i < 4; i++) int_counters[i] = -1;
    int_counters[1] = 0;
    start_gate();
    for (int i = 0; i < per; i++) {
        if (i % 2)
            shmem_int_atomic_inc(&int_counters[1], 0);
        else
            shmem_atomic_add(&int_counters[1], -3, 0);
    }
    shmem_barrier_all();
    const int odd = per / 2, even = per - odd;
    const int want = npes * (odd - 3 * even);
    if (me == 0) {
        CHECK_MSG(int_counters[1] == want, "int counter %d, expected %d", int_counters[1], want);
        CHECK(int_counters[0] == -1 && int_counters[2] == -1 && int_counters[3] == -1);
    }
    shmem_barrier_all();
}

static void elections(void)
{
    long *slot = shmem_calloc(ROUNDS, sizeof(long)); /* round r lives on PE r % npes */
    int *wins = shmem_calloc(ROUNDS, sizeof(int));
    int *slot32 = shmem_calloc(ROUNDS, sizeof(int)); /* second election, 32-bit, all on the last PE */
    long *winner = malloc(ROUNDS * sizeof(long));
    if (!slot || !wins || !slot32 || !winner) {
        CHECK(!"allocation failed");
        return;
    }
    start_gate();
    long my_wins = 0;
    for (int r = 0; r < ROUNDS; r++) {
        const int owner = r % npes;
        long old = shmem_long_atomic_compare_swap(&slot[r], 0, me + 1, owner);
        CHECK_MSG(old >= 0 && old <= npes && old != me + 1, "round %d: cswap returned %ld", r, old);
        if (old == 0) {
            my_wins++;
            shmem_int_atomic_inc(&wins[r], owner);
        }
        winner[r] = old == 0 ? me + 1 : old;
        int old32 = shmem_atomic_compare_swap(&slot32[r], 0, me + 1, npes - 1);
        if (old32 == 0) shmem_atomic_add(&wins[r], 1000, owner);
        if (r % 100 == 99) start_gate(); /* keep the PEs racing on the same rounds */
    }
    shmem_barrier_all();
    long total_wins = 0;
    for (int r = 0; r < ROUNDS; r++) {
        const int owner = r % npes;
        const int w = shmem_int_atomic_fetch(&wins[r], owner);
        CHECK_MSG(w == 1001, "round %d: %d 64-bit and %d 32-bit winners", r, w % 1000, w / 1000);
        const long s = shmem_long_atomic_fetch(&slot[r], owner);
        CHECK_MSG(s == winner[r], "round %d: slot says PE %ld won, this PE saw PE %ld", r, s - 1, winner[r] - 1);
        const int s32 = shmem_int_g(&slot32[r], npes - 1);
        CHECK_MSG(s32 >= 1 && s32 <= npes, "round %d: 32-bit slot %d", r, s32);
    }
    /* Sum of everyone's wins is exactly ROUNDS. */
    long *sum = shmem_calloc(1, sizeof(long));
    shmem_barrier_all();
    shmem_long_atomic_add(sum, my_wins, 0);
    shmem_barrier_all();
    total_wins = shmem_long_g(sum, 0);
    CHECK_MSG(total_wins == ROUNDS, "PEs won %ld rounds in all, expected %d", total_wins, ROUNDS);
    shmem_barrier_all();
    shmem_free(sum);
    free(winner);
    shmem_free(slot32);
    shmem_free(wins);
    shmem_free(slot);
}

int main(void)
{
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    test_pe = me;
    fetch_add_counter();
    fetch_inc_unique();
    int_adds();
    elections();
    shmem_finalize();
    return test_finish();
}
