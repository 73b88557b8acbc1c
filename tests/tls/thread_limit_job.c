/* thread_limit_job.c: PE 0 opens a context per put to PE 1, each a new
 * stream that PE 1 serves with a thread of its own, until PE 1 can start
 * no more (tls.thread_limit preloads thread_limit_shim.c there). PE 1 must
 * end the job at once with one line naming the limit; the test passes on
 * that line, and PE 0's line below (all streams served, nothing ended the
 * job) fails it. */
#include <shmem.h>
#include <stdio.h>

#define STREAMS 40

int main(void)
{
    static long word;
    shmem_init();
    shmem_barrier_all();
    if (shmem_my_pe() == 0) {
        for (long i = 0; i < STREAMS; i++) {
            shmem_ctx_t ctx;
            if (shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) != 0) {
                printf("FAIL: shmem_ctx_create refused context %ld\n", i);
                return 1;
            }
            shmem_ctx_long_p(ctx, &word, i, 1);
            shmem_ctx_quiet(ctx);
        }
        printf("FAIL: PE 1 served all %d streams: nothing reached its thread limit\n", STREAMS);
    }
    shmem_barrier_all();
    shmem_finalize();
    return 1;
}
