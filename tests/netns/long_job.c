/* long_job.c: a job that runs for a while across hosts, for the netns
 * tests. Usage: netns_long_job ROUNDS [WORDS...] (the words are ignored;
 * the tests pass a unique tag that must not appear on the wire).
 *
 * Each round every PE puts its PE number and the round into the next PE's
 * symmetric slot, then barrier_all, checks what its left neighbour put, and
 * sleeps 10 ms. PE 0 prints "long_job: running on N PEs" after the first
 * round (the kill test waits for it) and "long_job: done" at the end.
 * Exit 0 when every round's data was right. */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "harness.h"

static long slot[2];

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? strtol(argv[1], NULL, 10) : 100;
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    test_pe = me;
    int right = (me + 1) % n, left = (me + n - 1) % n;
    struct timespec nap = {0, 10 * 1000 * 1000};
    for (long r = 0; r < rounds; r++) {
        long v[2] = {me, r};
        shmem_long_put(slot, v, 2, right);
        shmem_barrier_all();
        CHECK(slot[0] == left && slot[1] == r);
        if (r == 0 && me == 0) {
            printf("long_job: running on %d PEs\n", n);
            fflush(stdout);
        }
        shmem_barrier_all(); /* nobody overwrites slot before it is checked */
        nanosleep(&nap, NULL);
    }
    if (me == 0) printf("long_job: done, %ld rounds on %d PEs\n", rounds, n);
    shmem_finalize();
    return test_finish();
}
