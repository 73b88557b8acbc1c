/* handshake_burst.c: every PE opens its stream to PE 0 at the same
 * moment, right after start-up, with a thread of each PE keeping a core
 * busy meanwhile, then to every other PE: bursts of
 * handshakes past the old fixed limit of 32 at once. Each PE gets a word
 * from each and checks it; the test's driver also fails on any "refused a
 * stream" line (a refusal the client had to retry). */
#include <pthread.h>
#include <shmem.h>

#include "api_util.h"

static long word;

/* Keeps a core busy meanwhile, so PE 0's handshakes queue up as on a
 * loaded machine. */
static void *hog(void *arg)
{
    (void)arg;
    test_compute_for(0.5);
    return NULL;
}

int main(void)
{
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes();
    test_pe = me;
    word = 1000 + me;
    shmem_barrier_all();
    pthread_t busy;
    const int hogging = pthread_create(&busy, NULL, hog, NULL) == 0;
    /* PE 0 first, everyone at once; then every other PE. */
    for (int k = 0; k < n; k++) {
        const int pe = k == 0 ? 0 : k == me ? 0 : k;
        const long got = shmem_long_g(&word, pe);
        CHECK_MSG(got == 1000 + pe, "got %ld from PE %d, expected %d", got, pe, 1000 + pe);
    }
    if (hogging) pthread_join(busy, NULL);
    shmem_barrier_all();
    shmem_finalize();
    return test_finish();
}
