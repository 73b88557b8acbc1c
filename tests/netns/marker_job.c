/* marker_job.c: moves a known marker between hosts with every kind of
 * operation, for the capture tests. Usage: netns_marker_job TAG [ROUNDS].
 *
 * The marker is "shoal-marker:TAG:" repeated. Each PE puts 64 KiB of it
 * (and an 8-byte piece with shmem_p-sized puts) to its partner on the other
 * half of the job, gets the partner's copy back, and runs atomics whose
 * operands are marker bytes, each round; every value is checked. A capture
 * of the job must not show the marker unless the data go in the clear. */
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define BYTES (64 * 1024)

static char inbox[BYTES];

static void fill(char *buf, size_t len, const char *tag)
{
    char unit[128];
    int n = snprintf(unit, sizeof unit, "shoal-marker:%s:", tag);
    for (size_t i = 0; i < len; i++) buf[i] = unit[i % (size_t)n];
}

int main(int argc, char **argv)
{
    const char *tag = argc > 1 ? argv[1] : "none";
    long rounds = argc > 2 ? strtol(argv[2], NULL, 10) : 5;
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    test_pe = me;
    const int partner = (me + n / 2) % n;
    char *want = malloc(BYTES), *back = malloc(BYTES);
    uint64_t *counter = shmem_calloc(1, sizeof *counter);
    uint64_t *word = shmem_malloc(sizeof *word);
    if (!want || !back || !counter || !word) {
        fprintf(stderr, "marker_job: out of memory\n");
        shmem_global_exit(1);
    }
    fill(want, BYTES, tag);
    uint64_t marker_word;
    memcpy(&marker_word, want, sizeof marker_word);
    for (long r = 0; r < rounds; r++) {
        memset(inbox, 0, BYTES);
        *word = 0;
        shmem_barrier_all();
        shmem_putmem(inbox, want, BYTES, partner);
        shmem_uint64_p(word, marker_word, partner);
        shmem_uint64_atomic_add(counter, marker_word, partner);
        shmem_quiet();
        shmem_barrier_all();
        CHECK(memcmp(inbox, want, BYTES) == 0);
        CHECK(*word == marker_word);
        memset(back, 0, BYTES);
        shmem_getmem(back, inbox, BYTES, partner);
        CHECK(memcmp(back, want, BYTES) == 0);
        shmem_barrier_all(); /* every PE has read its word before it changes */
        uint64_t old = shmem_uint64_atomic_fetch_xor(word, marker_word, partner);
        CHECK(old == marker_word);
        shmem_barrier_all();
        CHECK(*word == 0);
    }
    CHECK(*counter == marker_word * (uint64_t)rounds);
    if (me == 0) printf("marker_job: %ld rounds on %d PEs\n", rounds, n);
    shmem_free(word);
    shmem_free(counter);
    free(back);
    free(want);
    shmem_finalize();
    return test_finish();
}
