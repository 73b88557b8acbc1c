/* ctx.c: communication contexts.
 * 1. ctx_create with 0, SERIALIZED, PRIVATE, NOSTORE and combinations:
 *    puts, gets and AMOs through each (a NOSTORE context only reads),
 *    ctx_quiet, data checked;
 *    ctx_get_team is SHMEM_TEAM_WORLD; SHMEM_CTX_DEFAULT's team is world;
 *    get_team of SHMEM_CTX_INVALID is nonzero with SHMEM_TEAM_INVALID.
 * 2. team_create_ctx on split teams (stride 2 from 1, stride 3 from 0):
 *    PE numbers of ctx RMA/AMO count in the team (a put to team PE k lands
 *    on world PE start + k*stride), non-members get nonzero and
 *    SHMEM_CTX_INVALID, world PEs outside the team are untouched.
 * 3. Two contexts whose quiets are independent: puts on both, ctx_quiet on
 *    one, a flag through it; the data of that context is visible, then the
 *    other's after its own quiet.
 * 4. ctx_destroy completes the context's puts.
 * 5. PRIVATE contexts made and used by the threads that own them.
 * 6. Many contexts created and destroyed. */
#include <pthread.h>
#include <shmem.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"

#define BIG (256 * 1024)
#define NTHREADS 4
#define TPART (32 * 1024)

static int me, npes, right, left;
static long *slots;     /* npes + 1 */
static long *counter;   /* 1 */
static unsigned char *bufa, *bufb; /* BIG each */
static long *flags;     /* 2 */
static unsigned char *tbuf; /* NTHREADS * TPART */
static int thread_fail[NTHREADS];

static void options_round(long options, const char *name)
{
    shmem_ctx_t ctx = SHMEM_CTX_INVALID;
    int rc = shmem_ctx_create(options, &ctx);
    CHECK_MSG(rc == 0 && ctx != SHMEM_CTX_INVALID, "ctx_create(%s) returned %d", name, rc);
    if (rc != 0 || ctx == SHMEM_CTX_INVALID) return;
    shmem_team_t team = SHMEM_TEAM_INVALID;
    CHECK_MSG(shmem_ctx_get_team(ctx, &team) == 0 && team == SHMEM_TEAM_WORLD, "%s: ctx_get_team", name);
    for (int i = 0; i <= npes; i++) slots[i] = -1;
    *counter = 0;
    memset(bufa, GUARD_BYTE, BIG);
    shmem_barrier_all();
    /* put_nbi of a block, p into a slot of every PE, fetch_add on PE 0. */
    /* A NOSTORE context is for reads only: its stores go by the default. */
    shmem_ctx_t wr = (options & SHMEM_CTX_NOSTORE) ? SHMEM_CTX_DEFAULT : ctx;
    unsigned char *src = malloc(BIG);
    fill_pattern(src, BIG, me, 0, (unsigned)options + 3);
    shmem_ctx_putmem_nbi(wr, bufa, src, BIG, right);
    for (int p = 0; p < npes; p++) shmem_ctx_long_p(wr, &slots[me], 100 + me, p);
    long old = shmem_ctx_long_atomic_fetch_add(wr, counter, 1, 0);
    CHECK_MSG(old >= 0 && old < npes, "%s: fetch_add returned %ld", name, old);
    shmem_ctx_quiet(wr);
    shmem_barrier_all();
    check_pattern(bufa, BIG, left, 0, (unsigned)options + 3, name);
    for (int p = 0; p < npes; p++) CHECK_MSG(slots[p] == 100 + p, "%s: slot %d = %ld", name, p, slots[p]);
    CHECK_MSG(slots[npes] == -1, "%s: guard slot written", name);
    if (me == 0) CHECK_MSG(*counter == npes, "%s: counter %ld", name, *counter);
    /* Gets through the context. */
    unsigned char *got = malloc(BIG);
    shmem_ctx_getmem(ctx, got, bufa, BIG, left); /* left's bufa holds left-of-left's pattern */
    check_pattern(got, BIG, (left - 1 + npes) % npes, 0, (unsigned)options + 3, name);
    CHECK_MSG(shmem_ctx_long_g(ctx, &slots[right], right) == 100 + right, "%s: ctx g", name);
    CHECK_MSG(shmem_ctx_long_atomic_fetch(ctx, counter, 0) == npes, "%s: ctx atomic_fetch", name);
    shmem_barrier_all();
    shmem_ctx_destroy(ctx);
    free(src);
    free(got);
}

static void default_ctx(void)
{
    shmem_team_t team = SHMEM_TEAM_INVALID;
    CHECK(shmem_ctx_get_team(SHMEM_CTX_DEFAULT, &team) == 0 && team == SHMEM_TEAM_WORLD);
    team = SHMEM_TEAM_WORLD;
    CHECK(shmem_ctx_get_team(SHMEM_CTX_INVALID, &team) != 0 && team == SHMEM_TEAM_INVALID);
    slots[0] = -1;
    shmem_barrier_all();
    shmem_ctx_long_p(SHMEM_CTX_DEFAULT, &slots[0], 7 + me, right);
    shmem_ctx_quiet(SHMEM_CTX_DEFAULT);
    shmem_barrier_all();
    CHECK_MSG(slots[0] == 7 + left, "default ctx put: %ld", slots[0]);
    shmem_barrier_all();
}

static void team_ctx(int start, int stride)
{
    if (start >= npes) return;
    const int size = (npes - 1 - start) / stride + 1;
    shmem_team_t t;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, start, stride, size, NULL, 0, &t);
    const int member = me >= start && (me - start) % stride == 0;
    const int rank = member ? (me - start) / stride : -1;
    for (int i = 0; i <= npes; i++) slots[i] = -1;
    *counter = 0;
    shmem_barrier_all();
    shmem_ctx_t ctx = SHMEM_CTX_DEFAULT;
    int rc = shmem_team_create_ctx(t, SHMEM_CTX_PRIVATE, &ctx);
    if (!member) {
        CHECK_MSG(rc != 0 && ctx == SHMEM_CTX_INVALID, "team_create_ctx on a non-member: rc %d", rc);
    } else {
        CHECK_MSG(rc == 0 && ctx != SHMEM_CTX_INVALID, "team_create_ctx(%d/%d) rc %d", start, stride, rc);
        shmem_team_t owner;
        CHECK(shmem_ctx_get_team(ctx, &owner) == 0 && owner == t);
        /* To every team PE k, by team number: slot[rank] = value. */
        for (int k = 0; k < size; k++) shmem_ctx_long_p(ctx, &slots[rank], 500 + rank, k);
        long old = shmem_ctx_long_atomic_fetch_add(ctx, counter, 1, 0); /* team PE 0 = world start */
        CHECK(old >= 0 && old < size);
        if (size > 1) shmem_ctx_long_atomic_add(ctx, counter, 1000, 1); /* team PE 1 = world start+stride */
        shmem_ctx_quiet(ctx);
    }
    shmem_barrier_all();
    for (int r = 0; r <= npes; r++) {
        long want = member && r < size ? 500 + r : -1;
        CHECK_MSG(slots[r] == want, "team ctx %d/%d: slot %d = %ld, expected %ld", start, stride, r, slots[r], want);
    }
    long want = me == start ? size : (size > 1 && me == start + stride) ? 1000L * size : 0;
    CHECK_MSG(*counter == want, "team ctx %d/%d: counter %ld, expected %ld", start, stride, *counter, want);
    if (member) {
        /* Gets by team number. */
        for (int k = 0; k < size; k++) {
            long v = shmem_ctx_long_g(ctx, &slots[0], k);
            CHECK_MSG(v == 500, "team ctx g from team PE %d: %ld", k, v);
        }
        long w = -1;
        shmem_ctx_long_get(ctx, &w, counter, 1, 0);
        CHECK_MSG(w == size, "team ctx get of team PE 0's counter: %ld", w);
        shmem_ctx_destroy(ctx);
    }
    shmem_barrier_all();
    shmem_team_destroy(t);
}

static void independent_quiets(void)
{
    shmem_ctx_t a, b;
    CHECK(shmem_ctx_create(0, &a) == 0);
    CHECK(shmem_ctx_create(SHMEM_CTX_SERIALIZED, &b) == 0);
    memset(bufa, GUARD_BYTE, BIG);
    memset(bufb, GUARD_BYTE, BIG);
    flags[0] = flags[1] = 0;
    unsigned char *sa = malloc(BIG), *sb = malloc(BIG);
    fill_pattern(sa, BIG, me, 0, 41);
    fill_pattern(sb, BIG, me, 0, 42);
    shmem_barrier_all();
    for (int round = 1; round <= 3; round++) {
        shmem_ctx_putmem_nbi(a, bufa, sa, BIG, right);
        shmem_ctx_putmem_nbi(b, bufb, sb, BIG, right);
        shmem_ctx_quiet(a);
        shmem_ctx_long_atomic_set(a, &flags[0], round, right);
        shmem_long_wait_until(&flags[0], SHMEM_CMP_EQ, round);
        check_pattern(bufa, BIG, left, 0, 41, "context a's data after its quiet");
        shmem_ctx_quiet(b);
        shmem_ctx_long_atomic_set(b, &flags[1], round, right);
        shmem_long_wait_until(&flags[1], SHMEM_CMP_EQ, round);
        check_pattern(bufb, BIG, left, 0, 42, "context b's data after its quiet");
        shmem_barrier_all();
        memset(bufa, GUARD_BYTE, BIG);
        memset(bufb, GUARD_BYTE, BIG);
        shmem_barrier_all();
    }
    /* ctx_destroy completes the context's operations. */
    shmem_ctx_putmem_nbi(b, bufb, sb, BIG, right);
    shmem_ctx_destroy(b);
    shmem_ctx_putmem_nbi(a, bufa, sa, BIG, right);
    shmem_ctx_destroy(a);
    shmem_barrier_all();
    check_pattern(bufa, BIG, left, 0, 41, "data of a destroyed context");
    check_pattern(bufb, BIG, left, 0, 42, "data of a destroyed SERIALIZED context");
    shmem_barrier_all();
    free(sa);
    free(sb);
}

static void *private_worker(void *arg)
{
    const int t = (int)(intptr_t)arg;
    shmem_ctx_t ctx;
    if (shmem_ctx_create(SHMEM_CTX_PRIVATE | (t % 2 ? SHMEM_CTX_SERIALIZED : 0), &ctx) != 0) {
        thread_fail[t]++;
        return NULL;
    }
    unsigned char *src = malloc(TPART);
    fill_pattern(src, TPART, me, (size_t)t * TPART, 61);
    for (int k = 0; k < TPART / 1024; k++) {
        if (k % 2)
            shmem_ctx_putmem(ctx, tbuf + (size_t)t * TPART + k * 1024, src + k * 1024, 1024, right);
        else
            shmem_ctx_putmem_nbi(ctx, tbuf + (size_t)t * TPART + k * 1024, src + k * 1024, 1024, right);
    }
    shmem_ctx_quiet(ctx);
    shmem_team_t team;
    if (shmem_ctx_get_team(ctx, &team) != 0 || team != SHMEM_TEAM_WORLD) thread_fail[t]++;
    shmem_ctx_destroy(ctx);
    free(src);
    return NULL;
}

static void private_threads(int provided)
{
    if (provided < SHMEM_THREAD_MULTIPLE) return;
    memset(tbuf, GUARD_BYTE, (size_t)NTHREADS * TPART);
    shmem_barrier_all();
    pthread_t th[NTHREADS];
    for (int t = 0; t < NTHREADS; t++) pthread_create(&th[t], NULL, private_worker, (void *)(intptr_t)t);
    for (int t = 0; t < NTHREADS; t++) pthread_join(th[t], NULL);
    for (int t = 0; t < NTHREADS; t++) CHECK_MSG(thread_fail[t] == 0, "thread %d failed", t);
    shmem_barrier_all();
    check_pattern(tbuf, (size_t)NTHREADS * TPART, left, 0, 61, "PRIVATE contexts of threads");
    shmem_barrier_all();
}

static void many(void)
{
    shmem_ctx_t c[64];
    for (int round = 0; round < 20; round++) {
        for (int i = 0; i < 64; i++) {
            int rc = shmem_ctx_create(i % 4 == 0 ? 0 : SHMEM_CTX_PRIVATE, &c[i]);
            CHECK_MSG(rc == 0 && c[i] != SHMEM_CTX_INVALID, "round %d ctx %d rc %d", round, i, rc);
        }
        for (int i = 0; i < 64; i++)
            for (int j = 0; j < i; j += 7) CHECK(c[i] != c[j]);
        slots[0] = -1;
        shmem_barrier_all();
        shmem_ctx_long_p(c[round], &slots[0], round + me, right);
        shmem_ctx_quiet(c[round]);
        shmem_barrier_all();
        CHECK_MSG(slots[0] == round + left, "many round %d: %ld", round, slots[0]);
        for (int i = 63; i >= 0; i -= 2) shmem_ctx_destroy(c[i]);
        for (int i = 0; i < 64; i += 2) shmem_ctx_destroy(c[i]);
        shmem_barrier_all();
    }
    shmem_ctx_destroy(SHMEM_CTX_INVALID); /* no-op */
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
    slots = shmem_malloc(sizeof(long) * (size_t)(npes + 1));
    counter = shmem_malloc(sizeof(long));
    flags = shmem_malloc(sizeof(long) * 2);
    bufa = shmem_malloc(BIG);
    bufb = shmem_malloc(BIG);
    tbuf = shmem_malloc((size_t)NTHREADS * TPART);
    CHECK(slots && counter && flags && bufa && bufb && tbuf);
    if (!(slots && counter && flags && bufa && bufb && tbuf)) return test_finish();

    options_round(0, "options 0");
    options_round(SHMEM_CTX_SERIALIZED, "SHMEM_CTX_SERIALIZED");
    options_round(SHMEM_CTX_PRIVATE, "SHMEM_CTX_PRIVATE");
    options_round(SHMEM_CTX_NOSTORE, "SHMEM_CTX_NOSTORE");
    options_round(SHMEM_CTX_SERIALIZED | SHMEM_CTX_PRIVATE | SHMEM_CTX_NOSTORE, "all three options");
    default_ctx();
    team_ctx(1, 2);
    team_ctx(0, 3);
    team_ctx(2, 1);
    team_ctx(0, 1);
    independent_quiets();
    private_threads(provided);
    many();

    shmem_barrier_all();
    shmem_finalize();
    return test_finish();
}
