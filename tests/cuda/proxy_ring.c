/* proxy_ring.c: the proxy ring and proxy thread with CPU producers, no GPU
 * (issue 18). Three producer threads per PE post puts, put_signals, inline
 * puts with fences, gets and 64-bit atomics; the proxy serves them through
 * the host API. While they run, each PE's main thread watches what lands
 * in its memory:
 *   - progress[src][tid] (put_signal, fenced) = p means data[src][tid][0..p)
 *     have all arrived with the right values;
 *   - mono[src][tid] (inline puts separated by fences) never goes back.
 * Afterwards: every data word, the gets' read-back, fetch_add values (a
 * permutation on PE 0), the add total, one compare_swap winner, swap and
 * fetch. A ring of 16 slots makes producers wait for free slots. */
#include <pthread.h>
#include <shmem.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/proxy_serve.h"
#include "harness.h"

#define PRODUCERS 3
#define MSGS 600   /* put_signal and inline-put rounds per producer */
#define FADDS 100  /* fetch_adds per producer */
#define SLOTS 16

static int me, npes;
static uint64_t *data;      /* [npes][PRODUCERS][MSGS] */
static uint64_t *progress;  /* [npes][PRODUCERS] */
static uint64_t *mono;      /* [npes][PRODUCERS] */
static uint64_t *counter, *addword, *lockword, *winners, *swapword;
static uint64_t *fetched;   /* PE 0: [npes][PRODUCERS][FADDS] */
static shmemx_proxy_ring_t *ring;

static uint64_t value(int src, int tid, int i) { return ((uint64_t)(src + 1) << 40) | ((uint64_t)tid << 32) | (uint64_t)(i + 7); }
static int target_of(int src, int tid) { return (src + 1 + tid) % npes; }
static size_t slot(int src, int tid) { return (size_t)src * PRODUCERS + (size_t)tid; }

static void post_wait(shmemx_proxy_request_t *r) { shoal_proxy_ring_wait(ring, shoal_proxy_ring_post(ring, r)); }

static void *producer(void *arg)
{
    int tid = (int)(intptr_t)arg, pe = target_of(me, tid);
    uint64_t *mine = calloc(MSGS, sizeof *mine), *back = calloc(MSGS, sizeof *back);
    uint64_t *got = malloc(FADDS * sizeof *got);
    for (int i = 0; i < MSGS; i++) {
        mine[i] = value(me, tid, i);
        uint64_t *dst = &data[slot(me, tid) * MSGS + (size_t)i];
        /* Blocking put_signal: mine[i] may be reused once it returns. */
        shmemx_proxy_request_t ps = {.op = SHMEMX_PROXY_PUT_SIGNAL, .pe = pe, .dest = (uintptr_t)dst,
                                     .src = (uintptr_t)&mine[i], .size = 8, .operand = (uint64_t)i + 1,
                                     .operand2 = SHMEM_SIGNAL_SET, .aux = (uintptr_t)&progress[slot(me, tid)]};
        post_wait(&ps);
        shmemx_proxy_request_t fence = {.op = SHMEMX_PROXY_FENCE};
        shoal_proxy_ring_post(ring, &fence);
        /* Inline puts, not waited for: fences keep them in order. */
        shmemx_proxy_request_t p = {.op = SHMEMX_PROXY_PUT_INLINE, .pe = pe, .dest = (uintptr_t)&mono[slot(me, tid)],
                                    .size = 8, .operand = (uint64_t)i + 1};
        shoal_proxy_ring_post(ring, &p);
        shoal_proxy_ring_post(ring, &fence);
        shmemx_proxy_request_t add = {.op = SHMEMX_PROXY_ADD, .pe = (i + tid) % npes, .dest = (uintptr_t)addword,
                                      .operand = 3};
        shoal_proxy_ring_post(ring, &add);
    }
    shmemx_proxy_request_t quiet = {.op = SHMEMX_PROXY_QUIET};
    post_wait(&quiet);
    /* Read back what this thread wrote, with one get. */
    shmemx_proxy_request_t get = {.op = SHMEMX_PROXY_GET, .pe = pe, .dest = (uintptr_t)&data[slot(me, tid) * MSGS],
                                  .src = (uintptr_t)back, .size = MSGS * sizeof(uint64_t)};
    post_wait(&get);
    for (int i = 0; i < MSGS; i++) CHECK_MSG(back[i] == mine[i], "get[%d] = %#llx", i, (unsigned long long)back[i]);
    shmemx_proxy_request_t ig = {.op = SHMEMX_PROXY_GET_INLINE, .pe = pe, .dest = (uintptr_t)&data[slot(me, tid) * MSGS],
                                 .size = 8};
    CHECK(shoal_proxy_ring_fetch(ring, &ig) == mine[0]);
    for (int i = 0; i < FADDS; i++) {
        shmemx_proxy_request_t fa = {.op = SHMEMX_PROXY_FETCH_ADD, .pe = 0, .dest = (uintptr_t)counter, .operand = 1};
        got[i] = shoal_proxy_ring_fetch(ring, &fa);
    }
    /* The fetched values go to PE 0 for the permutation check. */
    shmemx_proxy_request_t put = {.op = SHMEMX_PROXY_PUT, .pe = 0, .dest = (uintptr_t)&fetched[slot(me, tid) * FADDS],
                                  .src = (uintptr_t)got, .size = FADDS * sizeof(uint64_t)};
    post_wait(&put);
    shmemx_proxy_request_t cs = {.op = SHMEMX_PROXY_CSWAP, .pe = 0, .dest = (uintptr_t)lockword,
                                 .operand = slot(me, tid) + 1, .operand2 = 0};
    if (shoal_proxy_ring_fetch(ring, &cs) == 0) {
        shmemx_proxy_request_t win = {.op = SHMEMX_PROXY_ADD, .pe = 0, .dest = (uintptr_t)winners, .operand = 1};
        shoal_proxy_ring_post(ring, &win);
    }
    shmemx_proxy_request_t sw = {.op = SHMEMX_PROXY_SWAP, .pe = me, .dest = (uintptr_t)&swapword[tid],
                                 .operand = value(me, tid, 1)};
    CHECK(shoal_proxy_ring_fetch(ring, &sw) == 0);
    shmemx_proxy_request_t fe = {.op = SHMEMX_PROXY_FETCH, .pe = me, .dest = (uintptr_t)&swapword[tid]};
    CHECK(shoal_proxy_ring_fetch(ring, &fe) == value(me, tid, 1));
    post_wait(&quiet);
    free(mine);
    free(back);
    free(got);
    return NULL;
}

/* The main thread's watch over its own memory while producers run. */
static void observe(void)
{
    uint64_t last_mono[4096] = {0};
    int done = 0;
    while (!done) {
        done = 1;
        for (int src = 0; src < npes; src++)
            for (int tid = 0; tid < PRODUCERS; tid++) {
                if (target_of(src, tid) != me) continue;
                size_t s = slot(src, tid);
                uint64_t p = __atomic_load_n(&progress[s], __ATOMIC_ACQUIRE);
                for (uint64_t i = p > 4 ? p - 4 : 0; i < p; i++)
                    CHECK_MSG(__atomic_load_n(&data[s * MSGS + i], __ATOMIC_RELAXED) == value(src, tid, (int)i),
                              "signal %llu seen before data[%d][%d][%llu]", (unsigned long long)p, src, tid,
                              (unsigned long long)i);
                uint64_t m = __atomic_load_n(&mono[s], __ATOMIC_RELAXED);
                CHECK_MSG(m >= last_mono[s], "fenced puts from PE %d thread %d went back: %llu after %llu", src,
                          tid, (unsigned long long)m, (unsigned long long)last_mono[s]);
                last_mono[s] = m;
                if (p < MSGS || m < MSGS) done = 0;
            }
        if (test_failures) break;
    }
}

int main(void)
{
    int provided;
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    me = test_pe = shmem_my_pe();
    npes = shmem_n_pes();
    CHECK(provided == SHMEM_THREAD_MULTIPLE);
    size_t lanes = (size_t)npes * PRODUCERS;
    data = shmem_calloc(lanes * MSGS, sizeof *data);
    progress = shmem_calloc(lanes, sizeof *progress);
    mono = shmem_calloc(lanes, sizeof *mono);
    fetched = shmem_calloc(lanes * FADDS, sizeof *fetched);
    counter = shmem_calloc(5 + PRODUCERS, sizeof *counter);
    addword = counter + 1;
    lockword = counter + 2;
    winners = counter + 3;
    swapword = counter + 5;
    if (!data || !progress || !mono || !fetched || !counter) shmem_global_exit(1);

    void *mem = aligned_alloc(64, shoal_proxy_ring_bytes(SLOTS));
    CHECK(shoal_proxy_ring_init(mem, SLOTS, &ring) == SHOAL_OK);
    CHECK(shoal_proxy_ring_init(mem, 12, &ring) == SHOAL_ERR_INVAL); /* not a power of two */
    CHECK(shoal_proxy_ring_init(mem, SLOTS, &ring) == SHOAL_OK);
    struct shoal_proxy proxy = {.ring = ring};
    CHECK(shoal_proxy_start(&proxy) == SHOAL_OK);
    shmem_barrier_all();

    pthread_t th[PRODUCERS];
    for (int t = 0; t < PRODUCERS; t++) pthread_create(&th[t], NULL, producer, (void *)(intptr_t)t);
    observe();
    for (int t = 0; t < PRODUCERS; t++) pthread_join(th[t], NULL);
    shoal_proxy_stop(&proxy);
    CHECK(ring->served == ring->head);
    shmem_barrier_all();

    for (int src = 0; src < npes; src++)
        for (int tid = 0; tid < PRODUCERS; tid++) {
            if (target_of(src, tid) != me) continue;
            for (int i = 0; i < MSGS; i++)
                CHECK_MSG(data[slot(src, tid) * MSGS + (size_t)i] == value(src, tid, i), "data[%d][%d][%d]", src, tid, i);
            CHECK(progress[slot(src, tid)] == MSGS && mono[slot(src, tid)] == MSGS);
        }
    /* Every PE's producers added 3 MSGS times each, spread over the PEs by (i + tid) % npes. */
    uint64_t adds = 0;
    for (int tid = 0; tid < PRODUCERS; tid++)
        for (int i = 0; i < MSGS; i++)
            if ((i + tid) % npes == me) adds += 3;
    CHECK_MSG(*addword == adds * (uint64_t)npes, "add total %llu, expected %llu", (unsigned long long)*addword,
              (unsigned long long)(adds * (uint64_t)npes));
    if (me == 0) {
        uint64_t total = lanes * FADDS;
        CHECK(*counter == total);
        char *seen = calloc(total, 1);
        for (size_t k = 0; k < total; k++) {
            CHECK_MSG(fetched[k] < total && !seen[fetched[k]], "fetch_add value %llu repeated or out of range",
                      (unsigned long long)fetched[k]);
            if (fetched[k] < total) seen[fetched[k]] = 1;
        }
        free(seen);
        CHECK(*winners == 1 && *lockword >= 1 && *lockword <= lanes);
    }
    free(mem);
    shmem_free(data);
    shmem_free(progress);
    shmem_free(mono);
    shmem_free(fetched);
    shmem_free(counter);
    shmem_finalize();
    return test_finish();
}
