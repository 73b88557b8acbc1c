/* threads.c: SHMEM_THREAD_MULTIPLE. Four threads per PE put concurrently
 * into disjoint parts of the right neighbour's buffer (putmem, typed put,
 * p, put_nbi + quiet), and also get from it; after the joins and a barrier
 * every PE checks every byte it received. */
#include <pthread.h>
#include <shmem.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"

#define NTHREADS 4
#define PART (64 * 1024)
#define CHUNK 4096

static int me, npes, right, left;
static unsigned char *buf;    /* NTHREADS parts written by the left neighbour */
static unsigned char *expose; /* NTHREADS parts read by the left neighbour */
static int thread_failures[NTHREADS];

static void *worker(void *arg)
{
    const int t = (int)(intptr_t)arg;
    unsigned char *src = malloc(PART), *got = malloc(PART);
    if (!src || !got) {
        thread_failures[t]++;
        return NULL;
    }
    fill_pattern(src, PART, me, (size_t)t * PART, 77);
    unsigned char *dst = buf + (size_t)t * PART;
    for (int k = 0; k < PART / CHUNK; k++) {
        const size_t off = (size_t)k * CHUNK;
        switch ((k + t) % 4) {
        case 0: shmem_putmem(dst + off, src + off, CHUNK, right); break;
        case 1: shmem_int_put((int *)(dst + off), (const int *)(src + off), CHUNK / sizeof(int), right); break;
        case 2:
            for (size_t i = 0; i < CHUNK; i += 8) {
                long v;
                memcpy(&v, src + off + i, 8);
                shmem_long_p((long *)(dst + off + i), v, right);
            }
            break;
        default:
            shmem_putmem_nbi(dst + off, src + off, CHUNK, right);
            shmem_quiet();
            break;
        }
        /* Read back part of what the right neighbour exposes. */
        shmem_getmem(got + off, expose + (size_t)t * PART + off, CHUNK, right);
    }
    for (size_t i = 0; i < PART; i++)
        if (got[i] != test_pattern(right, (size_t)t * PART + i, 88)) {
            thread_failures[t]++;
            break;
        }
    free(src);
    free(got);
    return NULL;
}

int main(void)
{
    int provided = -1;
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    test_pe = me;
    right = (me + 1) % npes;
    left = (me - 1 + npes) % npes;
    CHECK(provided == SHMEM_THREAD_MULTIPLE);
    if (provided != SHMEM_THREAD_MULTIPLE) {
        shmem_finalize();
        return TEST_SKIP;
    }
    buf = shmem_malloc(NTHREADS * PART);
    expose = shmem_malloc(NTHREADS * PART);
    CHECK(buf && expose);
    if (!buf || !expose) return test_finish();
    memset(buf, GUARD_BYTE, NTHREADS * PART);
    fill_pattern(expose, NTHREADS * PART, me, 0, 88);
    shmem_barrier_all();

    for (int round = 0; round < 3; round++) {
        pthread_t th[NTHREADS];
        for (int t = 0; t < NTHREADS; t++)
            CHECK(pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t) == 0);
        for (int t = 0; t < NTHREADS; t++) pthread_join(th[t], NULL);
        shmem_quiet();
        shmem_barrier_all();
        check_pattern(buf, NTHREADS * PART, left, 0, 77, "threads' puts");
        for (int t = 0; t < NTHREADS; t++) CHECK_MSG(thread_failures[t] == 0, "thread %d: get mismatch", t);
        memset(buf, GUARD_BYTE, NTHREADS * PART);
        shmem_barrier_all();
    }
    shmem_free(expose);
    shmem_free(buf);
    shmem_finalize();
    return test_finish();
}
