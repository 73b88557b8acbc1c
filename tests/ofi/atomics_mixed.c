/* atomics_mixed.c: over ofi_rxm, whose target applies fabric atomics with
 * CPU atomic instructions, this PE's own atomics stay CPU atomics (the
 * runtime's amo_fabric is off), and both kinds on one word stay atomic
 * with respect to each other. Every PE, PE 0 included (the direct path),
 * updates words of PE 0 at once:
 * - fetch_add(1) on a 64-bit counter: the total is exact and the fetched
 *   values of all PEs together are 0 .. total-1 (their sum);
 * - compare_swap increments of a 64-bit word: exact total;
 * - fetch_add on one 32-bit half of a long while PE 0 swaps the other half
 *   (the lock's layout): neither half disturbs the other.
 * Linked with the internal layers to read which path atomics take. */
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/runtime.h"
#include "harness.h"

#define ROUNDS 4000

static uint64_t counter, cas_word, fetched_sum;
static uint32_t halves[2];

int main(void)
{
    shmem_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    test_pe = me;
    CHECK_MSG(!shoal_rt.amo_fabric, "atomics go through the fabric for this PE's own memory too (provider %s)",
              getenv("FI_PROVIDER") ? getenv("FI_PROVIDER") : "default");
    shmem_barrier_all();
    uint64_t sum = 0;
    for (int i = 0; i < ROUNDS; i++) {
        sum += shmem_uint64_atomic_fetch_add(&counter, 1, 0);
        uint64_t seen = shmem_uint64_atomic_fetch(&cas_word, 0), was;
        while ((was = shmem_uint64_atomic_compare_swap(&cas_word, seen, seen + 1, 0)) != seen) seen = was;
        if (me == 0)
            (void)shmem_uint32_atomic_swap(&halves[0], (uint32_t)i, 0);
        else
            (void)shmem_uint32_atomic_fetch_add(&halves[1], 1, 0);
    }
    shmem_uint64_atomic_add(&fetched_sum, sum, 0);
    shmem_barrier_all();
    if (me == 0) {
        const uint64_t total = (uint64_t)npes * ROUNDS;
        CHECK_MSG(counter == total, "fetch_add counter %llu, expected %llu", (unsigned long long)counter,
                  (unsigned long long)total);
        CHECK_MSG(fetched_sum == total * (total - 1) / 2, "fetched values sum to %llu, expected %llu",
                  (unsigned long long)fetched_sum, (unsigned long long)(total * (total - 1) / 2));
        CHECK_MSG(cas_word == total, "compare_swap word %llu, expected %llu", (unsigned long long)cas_word,
                  (unsigned long long)total);
        CHECK_MSG(halves[0] == ROUNDS - 1, "PE 0's swapped half holds %u, expected %u", halves[0], ROUNDS - 1);
        CHECK_MSG(halves[1] == (uint32_t)(npes - 1) * ROUNDS, "the added half holds %u, expected %u", halves[1],
                  (uint32_t)(npes - 1) * ROUNDS);
        printf("atomics_mixed: %d PEs x %d rounds, totals exact\n", npes, ROUNDS);
    }
    shmem_finalize();
    return test_finish();
}
