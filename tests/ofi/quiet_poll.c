/* quiet_poll.c: a program may wait for a peer's put by looping on
 * shmem_quiet and a plain read of its own memory, with nothing else to
 * move the fabric. Each round every PE puts a value and then a flag into
 * its right neighbour (fence between them) and loops on quiet until its
 * left neighbour's flag arrives, then checks the value. With a provider
 * that moves data only while an endpoint is progressed (tcp;ofi_rxm) and
 * no progress thread, those quiets are all that progresses this PE's
 * endpoint; with the thread, quiet leaves most of it to the thread. A
 * stall fails the round after STALL_S (and oshrun's timeout bounds the
 * job). */
#include <shmem.h>
#include <stdio.h>
#include <time.h>

#define ROUNDS 200
#define STALL_S 20.0

static long flag[ROUNDS];
static long data[ROUNDS];

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(void)
{
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;
    int bad = 0;
    long quiets = 0;
    for (int r = 0; r < ROUNDS && !bad; r++) {
        shmem_long_p(&data[r], 1000L * me + r, right);
        shmem_fence();
        shmem_long_p(&flag[r], r + 1, right);
        const double start = now_s();
        while (*(volatile long *)&flag[r] != r + 1) {
            shmem_quiet();
            quiets++;
            if (now_s() - start > STALL_S) {
                fprintf(stderr, "PE %d round %d: no flag from PE %d after %.0f s of quiets\n", me, r, left, STALL_S);
                bad = 1;
                break;
            }
        }
        if (!bad && data[r] != 1000L * left + r) {
            fprintf(stderr, "PE %d round %d: data %ld, expected %ld\n", me, r, data[r], 1000L * left + r);
            bad = 1;
        }
    }
    if (!bad) printf("PE %d: %d rounds, %ld quiets while waiting\n", me, ROUNDS, quiets);
    shmem_finalize();
    return bad;
}
