/* threads_ctx.c: SHMEM_THREAD_MULTIPLE with one private context per thread.
 * Four threads per PE each create their own context at the same time
 * (shmem_ctx_create(SHMEM_CTX_PRIVATE) or shmem_team_create_ctx on
 * SHMEM_TEAM_WORLD), and through it, concurrently with the others:
 *  - ctx_putmem_nbi of a block, ctx_fence, ctx_long_atomic_set of a flag:
 *    the right neighbour's thread waits for the flag and checks the block;
 *  - ctx_putmem_signal / ctx_putmem_signal_nbi (SET) into a second area,
 *    checked after signal_wait_until;
 *  - ctx_long_atomic_fetch_add / fetch_inc / add on every PE (fetched values
 *    strictly increase per thread and target, totals exact);
 *  - ctx_getmem, ctx_getmem_nbi + ctx_quiet and ctx_long_g from the right
 *    neighbour's read-only area;
 *  - ctx_destroy, then churn: 50 short-lived private contexts per thread,
 *    each used for one fetch_add.
 * Every value is checked; targets are heap objects. */
#include <pthread.h>
#include <shmem.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"

#define NTHREADS 4
#define BLOCK (48 * 1024)
#define PART (32 * 1024)
#define ITER 300
#define CHURN 50
#define ROUNDS 4
#define STRIDE 8 /* flags and signals one cache line apart */

static int me, npes, right, left;
static unsigned char *blocks; /* [NTHREADS][BLOCK], from the left neighbour via put_nbi + fence + flag */
static unsigned char *sigbuf; /* [NTHREADS][BLOCK], from the left neighbour via put_signal */
static long *flag;            /* [NTHREADS * STRIDE] */
static uint64_t *sig;         /* [NTHREADS * STRIDE] */
static unsigned char *expose; /* [NTHREADS][PART] read-only */
static long *counter;         /* [2]: fetch_add + add, churn */
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

static int check_block(int t, const unsigned char *p, size_t n, int pe, unsigned salt, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != test_pattern(pe, i, salt)) {
            TFAIL(t, "round %d %s: byte %zu of %zu is 0x%02x, expected 0x%02x", round_no, what, i, n, p[i],
                  test_pattern(pe, i, salt));
            return 1;
        }
    return 0;
}

static void *worker(void *arg)
{
    const int t = (int)(intptr_t)arg;
    shmem_ctx_t ctx = SHMEM_CTX_INVALID;
    int rc = (t % 2) ? shmem_team_create_ctx(SHMEM_TEAM_WORLD, SHMEM_CTX_PRIVATE, &ctx)
                     : shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx);
    if (rc != 0 || ctx == SHMEM_CTX_INVALID) {
        TFAIL(t, "context creation returned %d", rc);
        return NULL;
    }
    unsigned char *src = malloc(BLOCK), *src2 = malloc(BLOCK), *got = malloc(PART);
    if (!src || !src2 || !got) {
        TFAIL(t, "malloc");
        goto out;
    }
    const unsigned salt = (unsigned)(round_no * 10 + t), salt2 = salt + 500;
    const long rflag = round_no + 1;

    /* 1. put_nbi in pieces, fence, flag; then the left neighbour's block. */
    fill_pattern(src, BLOCK, me, 0, salt);
    unsigned char *dst = blocks + (size_t)t * BLOCK;
    for (size_t off = 0; off < BLOCK; off += BLOCK / 4)
        shmem_ctx_putmem_nbi(ctx, dst + off, src + off, BLOCK / 4, right);
    shmem_ctx_fence(ctx);
    shmem_ctx_long_atomic_set(ctx, &flag[t * STRIDE], rflag, right);

    /* 2. put_signal (blocking for even rounds, nbi for odd), SET. */
    fill_pattern(src2, BLOCK, me, 0, salt2);
    unsigned char *dst2 = sigbuf + (size_t)t * BLOCK;
    if (round_no % 2)
        shmem_ctx_putmem_signal_nbi(ctx, dst2, src2, BLOCK, &sig[t * STRIDE], (uint64_t)rflag, SHMEM_SIGNAL_SET,
                                    right);
    else
        shmem_ctx_putmem_signal(ctx, dst2, src2, BLOCK, &sig[t * STRIDE], (uint64_t)rflag, SHMEM_SIGNAL_SET, right);

    /* 3. atomics on every PE through the context. */
    long last[16];
    for (int p = 0; p < npes; p++) last[p] = -1;
    for (int i = 0; i < ITER; i++)
        for (int p = 0; p < npes; p++) {
            int pe = (me + t + p) % npes;
            long old = (i % 2) ? shmem_ctx_long_atomic_fetch_inc(ctx, &counter[0], pe)
                               : shmem_ctx_long_atomic_fetch_add(ctx, &counter[0], 1, pe);
            if (old <= last[pe]) TFAIL(t, "ctx fetch_add on PE %d returned %ld after %ld", pe, old, last[pe]);
            last[pe] = old;
            if (i % 50 == 0) shmem_ctx_long_atomic_add(ctx, &counter[0], 1000000, pe);
        }

    /* 4. gets through the context. */
    const unsigned char *remote = expose + (size_t)t * PART;
    memset(got, 0, PART);
    shmem_ctx_getmem(ctx, got, remote, PART / 2, right);
    shmem_ctx_getmem_nbi(ctx, got + PART / 2, remote + PART / 2, PART / 2, right);
    shmem_ctx_quiet(ctx);
    for (size_t i = 0; i < PART; i++)
        if (got[i] != test_pattern(right, (size_t)t * PART + i, 99)) {
            TFAIL(t, "ctx getmem byte %zu: 0x%02x", i, got[i]);
            break;
        }
    for (size_t i = 0; i < PART; i += 8 * 61) {
        long v = shmem_ctx_long_g(ctx, (const long *)(remote + i), right), want;
        memcpy(&want, got + i, sizeof want);
        if (v != want) TFAIL(t, "ctx long_g at %zu: %ld, expected %ld", i, v, want);
    }

    /* 5. what the left neighbour's thread t sent. */
    shmem_long_wait_until(&flag[t * STRIDE], SHMEM_CMP_EQ, rflag);
    check_block(t, dst, BLOCK, left, salt, "put_nbi+fence+flag block");
    uint64_t s = shmem_signal_wait_until(&sig[t * STRIDE], SHMEM_CMP_EQ, (uint64_t)rflag);
    if (s != (uint64_t)rflag) TFAIL(t, "signal %llu", (unsigned long long)s);
    check_block(t, dst2, BLOCK, left, salt2, "put_signal block");

    shmem_ctx_quiet(ctx); /* src and src2 are freed below */
out:
    shmem_ctx_destroy(ctx);
    /* 6. churn: contexts made, used once and destroyed, by all threads at once. */
    for (int i = 0; i < CHURN; i++) {
        shmem_ctx_t c = SHMEM_CTX_INVALID;
        if (shmem_ctx_create(SHMEM_CTX_PRIVATE, &c) != 0 || c == SHMEM_CTX_INVALID) {
            TFAIL(t, "churn ctx_create %d failed", i);
            break;
        }
        shmem_ctx_long_atomic_add(c, &counter[1], 1, (me + i) % npes);
        shmem_ctx_destroy(c);
    }
    free(src);
    free(src2);
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
    if (provided != SHMEM_THREAD_MULTIPLE || npes > 16) {
        shmem_finalize();
        return TEST_SKIP;
    }
    blocks = shmem_malloc((size_t)NTHREADS * BLOCK);
    sigbuf = shmem_malloc((size_t)NTHREADS * BLOCK);
    flag = shmem_calloc(NTHREADS * STRIDE, sizeof *flag);
    sig = shmem_calloc(NTHREADS * STRIDE, sizeof *sig);
    expose = shmem_malloc((size_t)NTHREADS * PART);
    counter = shmem_calloc(2, sizeof *counter);
    CHECK(blocks && sigbuf && flag && sig && expose && counter);
    if (!(blocks && sigbuf && flag && sig && expose && counter)) return test_finish();
    fill_pattern(expose, (size_t)NTHREADS * PART, me, 0, 99);

    for (round_no = 0; round_no < ROUNDS; round_no++) {
        memset(blocks, GUARD_BYTE, (size_t)NTHREADS * BLOCK);
        memset(sigbuf, GUARD_BYTE, (size_t)NTHREADS * BLOCK);
        shmem_barrier_all();
        pthread_t th[NTHREADS];
        for (int t = 0; t < NTHREADS; t++)
            CHECK(pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t) == 0);
        for (int t = 0; t < NTHREADS; t++) pthread_join(th[t], NULL);
        shmem_barrier_all();
        for (int t = 0; t < NTHREADS; t++)
            CHECK_MSG(thread_fail[t] == 0, "round %d: thread %d had %d failure(s)", round_no, t, thread_fail[t]);
        const long per_thread = ITER + 1000000L * ((ITER + 49) / 50);
        long want = (long)(round_no + 1) * npes * NTHREADS * per_thread;
        CHECK_MSG(counter[0] == want, "round %d: counter %ld, expected %ld", round_no, counter[0], want);
        shmem_barrier_all();
    }
    /* Churn: the i-th context of each thread of PE p adds 1 on PE (p + i) % npes. */
    long churn_want = 0;
    for (int p = 0; p < npes; p++)
        for (int i = 0; i < CHURN; i++)
            if ((p + i) % npes == me) churn_want += (long)NTHREADS * ROUNDS;
    CHECK_MSG(counter[1] == churn_want, "churn counter %ld, expected %ld", counter[1], churn_want);
    shmem_free(counter);
    shmem_free(expose);
    shmem_free(sig);
    shmem_free(flag);
    shmem_free(sigbuf);
    shmem_free(blocks);
    shmem_finalize();
    return test_finish();
}
