/* ctx_signal.c: a signal sent on a context nobody touches afterwards still
 * arrives. Each round, every PE opens a private context, sets a flag on
 * its right neighbour through it with a non-fetching atomic (or a put +
 * fence + p), and then only waits on its own memory for its left
 * neighbour's flag: nothing calls that context again until the flag has
 * come. With a provider that moves data only while an endpoint is
 * progressed (tcp;ofi_rxm), the operation (and the connection it opens to
 * the neighbour) must be progressed by somebody other than its caller.
 * The whole job is bounded by oshrun's timeout: a stall fails it. */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>

#define ROUNDS 40

static long flag[ROUNDS];
static long data[ROUNDS];

int main(void)
{
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &(int){0});
    const int me = shmem_my_pe(), n = shmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;
    int bad = 0;
    for (int r = 0; r < ROUNDS; r++) {
        shmem_ctx_t ctx;
        if (shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx)) {
            fprintf(stderr, "PE %d: shmem_ctx_create failed\n", me);
            return 1;
        }
        if (r % 2) {
            shmem_ctx_long_atomic_set(ctx, &flag[r], r + 1, right);
        } else {
            shmem_ctx_long_p(ctx, &data[r], 1000L * me + r, right);
            shmem_ctx_fence(ctx);
            shmem_ctx_long_p(ctx, &flag[r], r + 1, right);
        }
        shmem_long_wait_until(&flag[r], SHMEM_CMP_EQ, r + 1);
        if (r % 2 == 0 && data[r] != 1000L * left + r) {
            fprintf(stderr, "PE %d round %d: data %ld, expected %ld\n", me, r, data[r], 1000L * left + r);
            bad = 1;
        }
        shmem_ctx_destroy(ctx);
    }
    shmem_barrier_all();
    if (me == 0) printf("ctx_signal: %d PEs, %d rounds, %s\n", n, ROUNDS, bad ? "FAILED" : "ok");
    shmem_finalize();
    return bad;
}
