/* nbi_quiet.c: nothing is lost or late after quiet, whatever the load.
 *
 * Every round each PE publishes a fresh pattern, then THREADS threads post
 * many non-blocking gets (getmem_nbi) and puts (putmem_nbi) of varied sizes
 * (1 byte to 96 KiB: injected, eager, rendezvous, split) to random PEs, on:
 *   - thread 0: the default context (shmem_quiet),
 *   - thread 1: one context shared by threads 1 and 2 (each quiets it
 *     whenever it likes, so one thread's quiet covers the other's gets),
 *   - thread 3: a private context created and destroyed every round.
 * Destinations are in the symmetric heap (registered) and in malloc'd
 * memory (not). After its quiet a thread checks every byte it fetched; a
 * blocking get and a fetch_add between the nbi ops check the waits that mix
 * with them. Puts go to a per-(source PE, thread) inbox on the target; after
 * the quiets and a barrier each target checks every inbox byte.
 * Rounds: SHOAL_STRESS_ROUNDS (default 40) or SHOAL_STRESS_SECONDS, first
 * hit. Exit 0 pass, 1 fail. */
#include <pthread.h>
#include <shmem.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"

#define THREADS 4
#define PUB (256 * 1024) /* bytes each PE publishes for gets */
#define LAND (512 * 1024) /* bytes per thread a round's gets land in */
#define INBOX (128 * 1024) /* bytes per (source PE, thread) for puts */
#define OPS 48           /* nbi ops per thread per round */
#define MAXPES 16

static int me, npes, round_no;
static unsigned char *pub;     /* [PUB], this round's pattern */
static unsigned char *land;    /* [THREADS][LAND] symmetric landing area */
static unsigned char *inbox;   /* [MAXPES][THREADS][INBOX] */
static long *counter;          /* fetch_add target */
static shmem_ctx_t shared_ctx;
static pthread_mutex_t fail_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t tbar;

static uint64_t rng(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* What PE src's thread t puts to dst in round r: (offset, len) pairs. */
static size_t put_plan(int src, int t, int r, int dst, size_t *off, size_t *len, int max)
{
    uint64_t s = 0x9E3779B97F4A7C15ull ^ ((uint64_t)src << 40) ^ ((uint64_t)t << 32) ^ ((uint64_t)r << 8) ^
                 (uint64_t)dst;
    for (int i = 0; i < 4; i++) rng(&s);
    int n = 1 + (int)(rng(&s) % (uint64_t)max);
    size_t at = 0;
    int k = 0;
    for (; k < n; k++) {
        size_t l = (rng(&s) % 4 == 0) ? 1 + rng(&s) % 16384 : 1 + rng(&s) % 256;
        if (at + l > INBOX) break;
        off[k] = at;
        len[k] = l;
        at += l + rng(&s) % 64;
    }
    return (size_t)k;
}

static void fail(int t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(int t, const char *fmt, ...)
{
    char m[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&fail_lock);
    if (++test_failures <= 20) fprintf(stderr, "FAIL PE %d thread %d round %d: %s\n", me, t, round_no, m);
    pthread_mutex_unlock(&fail_lock);
}

struct get_rec {
    unsigned char *dst;
    size_t off, len;
    int pe;
};

static void quiet_on(shmem_ctx_t ctx) { shmem_ctx_quiet(ctx); }

static int in_priv(const unsigned char *p, const unsigned char *priv) { return p >= priv && p < priv + LAND; }

static void *worker(void *arg)
{
    const int t = (int)(intptr_t)arg;
    uint64_t s = ((uint64_t)me << 32) ^ (uint64_t)(t + 1) * 0x2545F4914F6CDD1Dull ^ (uint64_t)round_no * 7919u;
    for (int i = 0; i < 4; i++) rng(&s);
    shmem_ctx_t ctx = SHMEM_CTX_DEFAULT;
    if (t == 1 || t == 2) ctx = shared_ctx;
    if (t == 3 && shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) != 0) {
        fail(t, "shmem_ctx_create failed");
        return NULL;
    }
    unsigned char *heap_land = land + (size_t)t * LAND;
    unsigned char *priv = malloc(LAND);
    struct get_rec recs[OPS];
    size_t off[OPS], len[OPS];
    if (!priv) {
        fail(t, "malloc");
        return NULL;
    }
    memset(heap_land, 0, LAND);
    memset(priv, 0, LAND);
    size_t used_heap = 0, used_priv = 0;
    int nrec = 0;
    /* Puts: to every PE, as put_plan says, interleaved with gets. */
    for (int pe = 0; pe < npes; pe++) {
        size_t n = put_plan(me, t, round_no, pe, off, len, OPS / 4);
        unsigned char *box = inbox + ((size_t)me * THREADS + (size_t)t) * INBOX;
        for (size_t k = 0; k < n; k++)
            shmem_ctx_putmem_nbi(ctx, box + off[k], pub + (off[k] % (PUB - INBOX)), len[k], pe);
    }
    for (int i = 0; i < OPS; i++) {
        uint64_t kind = rng(&s) % 8;
        size_t l = kind < 4 ? 1 + rng(&s) % 64 : kind < 7 ? 1 + rng(&s) % 8192 : 1 + rng(&s) % (96 * 1024);
        int pe = (int)(rng(&s) % (uint64_t)npes);
        size_t o = rng(&s) % (PUB - l + 1);
        int in_heap = (int)(rng(&s) & 1);
        size_t *used = in_heap ? &used_heap : &used_priv;
        if (*used + l > LAND) continue;
        unsigned char *dst = (in_heap ? heap_land : priv) + *used;
        *used += l;
        shmem_ctx_getmem_nbi(ctx, dst, pub + o, l, pe);
        recs[nrec++] = (struct get_rec){dst, o, l, pe};
        if (i % 16 == 7) { /* a blocking op among the nbi ones */
            long before = shmem_ctx_long_atomic_fetch_add(ctx, counter, 1, pe);
            if (before < 0) fail(t, "fetch_add on PE %d returned %ld", pe, before);
            unsigned char one[24];
            size_t bo = rng(&s) % (PUB - sizeof one);
            shmem_ctx_getmem(ctx, one, pub + bo, sizeof one, pe);
            for (size_t b = 0; b < sizeof one; b++)
                if (one[b] != test_pattern(pe, bo + b, (unsigned)round_no)) {
                    fail(t, "blocking get byte %zu at offset %zu from PE %d wrong", b, bo, pe);
                    break;
                }
        }
    }
    /* Threads 1 and 2 share a context: either's quiet completes both's ops,
     * so one quiets while the other may still post. */
    quiet_on(ctx);
    if (t == 1 || t == 2) pthread_barrier_wait(&tbar);
    if (t == 1 || t == 2) quiet_on(ctx);
    for (int k = 0; k < nrec; k++)
        for (size_t b = 0; b < recs[k].len; b++)
            if (recs[k].dst[b] != test_pattern(recs[k].pe, recs[k].off + b, (unsigned)round_no)) {
                fail(t, "get_nbi of %zu bytes at offset %zu from PE %d (%s): byte %zu wrong after quiet",
                     recs[k].len, recs[k].off, recs[k].pe, in_priv(recs[k].dst, priv) ? "malloc" : "heap", b);
                break;
            }
    if (t == 3) shmem_ctx_destroy(ctx);
    free(priv);
    return NULL;
}

static void check_inboxes(void)
{
    size_t off[OPS], len[OPS];
    for (int src = 0; src < npes; src++)
        for (int t = 0; t < THREADS; t++) {
            const unsigned char *box = inbox + ((size_t)src * THREADS + (size_t)t) * INBOX;
            size_t n = put_plan(src, t, round_no, me, off, len, OPS / 4);
            for (size_t k = 0; k < n; k++) {
                size_t from = off[k] % (PUB - INBOX);
                for (size_t b = 0; b < len[k]; b++)
                    if (box[off[k] + b] != test_pattern(src, from + b, (unsigned)round_no)) {
                        fail(-1, "put_nbi of %zu bytes at inbox offset %zu from PE %d thread %d: wrong after quiet",
                             len[k], off[k], src, t);
                        break;
                    }
            }
        }
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(void)
{
    int provided = 0;
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    me = test_pe = shmem_my_pe();
    npes = shmem_n_pes();
    if (provided != SHMEM_THREAD_MULTIPLE || npes > MAXPES) {
        if (me == 0) fprintf(stderr, "nbi_quiet: needs SHMEM_THREAD_MULTIPLE and at most %d PEs\n", MAXPES);
        shmem_finalize();
        return TEST_SKIP;
    }
    const char *e = getenv("SHOAL_STRESS_ROUNDS");
    int rounds = e ? atoi(e) : 40;
    e = getenv("SHOAL_STRESS_SECONDS");
    double secs = e ? atof(e) : 0;
    pub = shmem_malloc(PUB);
    land = shmem_malloc((size_t)THREADS * LAND);
    inbox = shmem_calloc((size_t)MAXPES * THREADS * INBOX, 1);
    counter = shmem_calloc(1, sizeof *counter);
    static int stop;
    static int go_on;
    if (!pub || !land || !inbox || !counter || shmem_ctx_create(0, &shared_ctx) != 0) {
        fprintf(stderr, "FAIL PE %d: allocation or context creation\n", me);
        shmem_global_exit(1);
    }
    pthread_barrier_init(&tbar, NULL, 2);
    double t0 = now_s();
    int r;
    for (r = 0;; r++) {
        round_no = r;
        for (size_t i = 0; i < PUB; i++) pub[i] = test_pattern(me, i, (unsigned)r);
        shmem_barrier_all();
        pthread_t th[THREADS];
        for (int t = 0; t < THREADS; t++) pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
        for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
        shmem_barrier_all(); /* every PE's quiets are done: inboxes are final */
        check_inboxes();
        stop = test_failures > 0 || (secs > 0 ? now_s() - t0 >= secs : r + 1 >= rounds);
        shmem_int_max_reduce(SHMEM_TEAM_WORLD, &go_on, &stop, 1);
        if (go_on) break;
    }
    if (me == 0) printf("nbi_quiet: %d PEs, %d rounds in %.1f s\n", npes, r + 1, now_s() - t0);
    shmem_ctx_destroy(shared_ctx);
    shmem_barrier_all();
    shmem_free(pub);
    shmem_free(land);
    shmem_free(inbox);
    shmem_free(counter);
    shmem_finalize();
    return test_finish();
}
