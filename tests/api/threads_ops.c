/* threads_ops.c: SHMEM_THREAD_MULTIPLE stress on the default context. Four
 * threads per PE run at once, each paired with the thread of the same
 * number on the neighbouring PEs, and every value is checked:
 *  - put_signal (blocking and nbi, ADD, sizes 512 B..24 KiB so both sides of
 *    the 16 KiB fence threshold occur) into the right neighbour; the thread
 *    waits with signal_wait_until for each chunk from the left and checks it;
 *  - getmem, long_g and long_get_nbi + quiet from the right neighbour's
 *    read-only area;
 *  - fetch_add on a counter of every PE: fetched values strictly increase
 *    per thread and target, totals exact;
 *  - fetch_or of the thread's own bit into a word of every PE;
 *  - compare_swap elections on every slot of every PE: each slot won exactly
 *    once (wins summed with atomic_add on PE 0);
 *  - atomic_set + wait_until / test ping through a ring of threads.
 * Targets are heap objects (the static-data remap is refused under TSan).
 * Each thread counts its own failures; the main thread reports them. */
#include <pthread.h>
#include <sched.h>
#include <shmem.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"

#define NTHREADS 4
#define NCHUNK 16
#define SLOT (24 * 1024) /* largest chunk */
#define PART (64 * 1024) /* read-only area per thread */
#define ITER 500         /* fetch_adds per thread and target */
#define ELECT 32         /* cswap slots per PE */
#define PINGS 50
#define ROUNDS 3
#define SIG_STRIDE 8     /* signals one cache line apart */

static int me, npes, right, left;
static unsigned char *data;   /* [NTHREADS][NCHUNK][SLOT], written by the left neighbour */
static uint64_t *sig;         /* [NTHREADS * SIG_STRIDE] chunk counters */
static unsigned char *expose; /* [NTHREADS][PART], read by the left neighbour */
static long *counter;         /* fetch_add target */
static uint64_t *bits;        /* fetch_or target */
static long *slots;           /* [ELECT] election slots */
static long *wins;            /* on PE 0: wins of every thread */
static long *ping;            /* [NTHREADS * SIG_STRIDE] */
static int round_no;
static int thread_fail[NTHREADS];

#define TFAIL(t, ...)                                                \
    do {                                                             \
        if (thread_fail[t]++ < 5) {                                  \
            char m_[256];                                            \
            snprintf(m_, sizeof m_, __VA_ARGS__);                    \
            fprintf(stderr, "FAIL PE %d thread %d: %s\n", me, t, m_); \
        }                                                            \
    } while (0)

static size_t chunk_bytes(int t, int k) { return 512u * (size_t)(1 + (k * 7 + t * 5 + round_no) % 48); }
static unsigned salt_of(int t, int k) { return (unsigned)(round_no * 1000 + t * 100 + k); }

static void signal_stream(int t)
{
    unsigned char *src = malloc((size_t)NCHUNK * SLOT);
    if (!src) {
        TFAIL(t, "malloc");
        return;
    }
    uint64_t *my_sig = &sig[t * SIG_STRIDE];
    const uint64_t base = (uint64_t)round_no * NCHUNK;
    for (int k = 0; k < NCHUNK; k++) {
        size_t n = chunk_bytes(t, k);
        unsigned char *s = src + (size_t)k * SLOT;
        unsigned char *dst = data + ((size_t)t * NCHUNK + (size_t)k) * SLOT;
        fill_pattern(s, n, me, 0, salt_of(t, k));
        if (k % 2)
            shmem_putmem_signal_nbi(dst, s, n, my_sig, 1, SHMEM_SIGNAL_ADD, right);
        else
            shmem_putmem_signal(dst, s, n, my_sig, 1, SHMEM_SIGNAL_ADD, right);
        /* Chunk k from the left neighbour's thread t. */
        uint64_t v = shmem_signal_wait_until(my_sig, SHMEM_CMP_GE, base + (uint64_t)k + 1);
        if (v < base + (uint64_t)k + 1 || v > base + NCHUNK) TFAIL(t, "signal %llu after chunk %d", (unsigned long long)v, k);
        for (size_t i = 0; i < n; i++)
            if (dst[i] != test_pattern(left, i, salt_of(t, k))) {
                TFAIL(t, "round %d chunk %d (%zu bytes): byte %zu is 0x%02x, expected 0x%02x", round_no, k, n, i,
                      dst[i], test_pattern(left, i, salt_of(t, k)));
                break;
            }
    }
    shmem_quiet(); /* src of the nbi puts is reused only after this */
    free(src);
}

static void gets(int t)
{
    unsigned char *got = malloc(PART);
    if (!got) {
        TFAIL(t, "malloc");
        return;
    }
    const unsigned char *remote = expose + (size_t)t * PART;
    memset(got, 0, PART);
    shmem_getmem(got, remote, PART / 2, right);
    shmem_getmem_nbi(got + PART / 2, remote + PART / 2, PART / 2, right);
    shmem_quiet();
    for (size_t i = 0; i < PART; i++)
        if (got[i] != test_pattern(right, (size_t)t * PART + i, 88)) {
            TFAIL(t, "getmem byte %zu: 0x%02x", i, got[i]);
            break;
        }
    for (size_t i = 0; i < PART; i += 8 * 97) {
        long v = shmem_long_g((const long *)(remote + i), right), want;
        memcpy(&want, got + i, sizeof want);
        if (v != want) TFAIL(t, "long_g at %zu: %ld, expected %ld", i, v, want);
    }
    free(got);
}

static void atomics(int t)
{
    const int gid = me * NTHREADS + t; /* < 64 for up to 16 PEs */
    long last[64];
    for (int p = 0; p < npes && p < 64; p++) last[p] = -1;
    for (int i = 0; i < ITER; i++)
        for (int p = 0; p < npes && p < 64; p++) {
            int pe = (me + t + p) % npes;
            long old = shmem_long_atomic_fetch_add(counter, 1, pe);
            if (old <= last[pe]) TFAIL(t, "fetch_add on PE %d returned %ld after %ld", pe, old, last[pe]);
            last[pe] = old;
        }
    for (int p = 0; p < npes; p++) {
        uint64_t old = shmem_uint64_atomic_fetch_or(bits, 1ull << (gid % 64), p);
        if (old & (1ull << (gid % 64))) TFAIL(t, "bit %d already set on PE %d", gid % 64, p);
    }
    long won = 0;
    for (int k = 0; k < ELECT; k++)
        for (int p = 0; p < npes; p++) {
            int pe = (me + t + p) % npes;
            long old = shmem_long_atomic_compare_swap(&slots[k], -1, gid, pe);
            if (old == -1)
                won++;
            else if (old < 0 || old >= (long)npes * NTHREADS)
                TFAIL(t, "cswap slot %d on PE %d held %ld", k, pe, old);
        }
    shmem_long_atomic_add(wins, won, 0);
}

static void pings(int t)
{
    long *mine = &ping[t * SIG_STRIDE];
    const long base = (long)round_no * PINGS;
    for (long r = 1; r <= PINGS; r++) {
        shmem_long_atomic_set(mine, base + r, right);
        if (r % 2)
            shmem_long_wait_until(mine, SHMEM_CMP_GE, base + r);
        else
            while (!shmem_long_test(mine, SHMEM_CMP_GE, base + r)) sched_yield();
        long v = shmem_long_atomic_fetch(mine, me);
        if (v < base + r || v > base + PINGS) TFAIL(t, "ping %ld read %ld", base + r, v);
    }
}

static void *worker(void *arg)
{
    const int t = (int)(intptr_t)arg;
    /* Each thread runs all four, in an order of its own, so different
     * kinds of operation overlap. */
    for (int s = 0; s < 4; s++) switch ((s + t) % 4) {
        case 0: signal_stream(t); break;
        case 1: gets(t); break;
        case 2: atomics(t); break;
        default: pings(t); break;
        }
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
    if (provided != SHMEM_THREAD_MULTIPLE) {
        fprintf(stderr, "PE %d: SHMEM_THREAD_MULTIPLE not provided (%d)\n", me, provided);
        shmem_finalize();
        return TEST_SKIP;
    }
    if (npes > 16) {
        shmem_finalize();
        return TEST_SKIP;
    }
    data = shmem_malloc((size_t)NTHREADS * NCHUNK * SLOT);
    sig = shmem_calloc(NTHREADS * SIG_STRIDE, sizeof *sig);
    expose = shmem_malloc((size_t)NTHREADS * PART);
    counter = shmem_calloc(1, sizeof *counter);
    bits = shmem_calloc(1, sizeof *bits);
    slots = shmem_malloc(ELECT * sizeof *slots);
    wins = shmem_calloc(1, sizeof *wins);
    ping = shmem_calloc(NTHREADS * SIG_STRIDE, sizeof *ping);
    CHECK(data && sig && expose && counter && bits && slots && wins && ping);
    if (!(data && sig && expose && counter && bits && slots && wins && ping)) return test_finish();
    fill_pattern(expose, (size_t)NTHREADS * PART, me, 0, 88);

    for (round_no = 0; round_no < ROUNDS; round_no++) {
        for (int k = 0; k < ELECT; k++) slots[k] = -1;
        *bits = 0;
        *wins = 0;
        shmem_barrier_all();
        pthread_t th[NTHREADS];
        for (int t = 0; t < NTHREADS; t++)
            CHECK(pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t) == 0);
        for (int t = 0; t < NTHREADS; t++) pthread_join(th[t], NULL);
        shmem_barrier_all();
        for (int t = 0; t < NTHREADS; t++)
            CHECK_MSG(thread_fail[t] == 0, "round %d: thread %d had %d failure(s)", round_no, t, thread_fail[t]);
        long want = (long)(round_no + 1) * npes * NTHREADS * ITER;
        CHECK_MSG(*counter == want, "round %d: counter %ld, expected %ld", round_no, *counter, want);
        uint64_t all = npes * NTHREADS >= 64 ? ~0ull : (1ull << (npes * NTHREADS)) - 1;
        CHECK_MSG(*bits == all, "round %d: bits 0x%llx, expected 0x%llx", round_no, (unsigned long long)*bits,
                  (unsigned long long)all);
        for (int k = 0; k < ELECT; k++)
            CHECK_MSG(slots[k] >= 0 && slots[k] < (long)npes * NTHREADS, "round %d: slot %d = %ld", round_no, k,
                      slots[k]);
        if (me == 0) CHECK_MSG(*wins == (long)npes * ELECT, "round %d: %ld elections won, expected %ld", round_no,
                               *wins, (long)npes * ELECT);
        for (int t = 0; t < NTHREADS; t++) {
            uint64_t s = sig[t * SIG_STRIDE];
            CHECK_MSG(s == (uint64_t)(round_no + 1) * NCHUNK, "round %d: signal %d = %llu", round_no, t,
                      (unsigned long long)s);
        }
        shmem_barrier_all();
    }
    shmem_free(ping);
    shmem_free(wins);
    shmem_free(slots);
    shmem_free(bits);
    shmem_free(counter);
    shmem_free(expose);
    shmem_free(sig);
    shmem_free(data);
    shmem_finalize();
    return test_finish();
}
