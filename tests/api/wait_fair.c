/* wait_fair.c: the any and some forms of wait_until/test are fair: with
 * several entries satisfied, a series of calls returns every one of them
 * (OpenSHMEM 1.5, 9.10: "a series of calls ... must eventually return i").
 *
 * Every PE's array of K flags is written by the PEs (flag i by PE i % npes,
 * with shmem_int_p / shmem_long_p), so the satisfied entries are the
 * flags set to 1: those with i % 3 != 1. Then, on every PE:
 *   - test_any, wait_until_any and their _vector forms, 2*K calls each:
 *     every satisfied index comes back, no other, and never an excluded one;
 *   - test_some and wait_until_some (+vector): each call lists exactly the
 *     satisfied indices that are not excluded;
 *   - two arrays in alternation, and 12 arrays in rotation (more arrays
 *     than a thread remembers): each array's satisfied indices all return;
 *   - 4 threads calling test_any on one array: each thread sees them all;
 *   - after a flag changes, the next calls follow the new set. */
#include <pthread.h>
#include <shmem.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"

#define ROTATED 12 /* arrays in the rotation test: more than are remembered per thread */
#define THREADS 4

static int me, npes;
static size_t K;

static int satisfied(size_t i) { return i % 3 != 1; }

/* Flags of every PE: flag i of PE p is set by PE i % npes. */
static void set_flags(int *ints, long *longs)
{
    for (int pe = 0; pe < npes; pe++)
        for (size_t i = (size_t)me; i < K; i += (size_t)npes) {
            shmem_int_p(&ints[i], satisfied(i) ? 1 : 0, pe);
            shmem_long_p(&longs[i], satisfied(i) ? 1 : 0, pe);
        }
    shmem_barrier_all();
}

/* Judges the indices returned by `calls` calls: each must be satisfied and
 * not excluded, and every such index must have come back. */
static void judge_any(const size_t *got, size_t calls, const int *status, const char *what)
{
    unsigned char *seen = calloc(K, 1);
    for (size_t c = 0; c < calls; c++) {
        const size_t i = got[c];
        CHECK_MSG(i < K, "%s: call %zu returned %zu (K %zu)", what, c, i, K);
        if (i >= K) continue;
        CHECK_MSG(satisfied(i), "%s: call %zu returned unsatisfied index %zu", what, c, i);
        CHECK_MSG(!status || !status[i], "%s: call %zu returned excluded index %zu", what, c, i);
        seen[i] = 1;
    }
    for (size_t i = 0; i < K; i++)
        if (satisfied(i) && !(status && status[i]))
            CHECK_MSG(seen[i], "%s: satisfied index %zu never returned in %zu calls", what, i, calls);
    free(seen);
}

static void check_some(const size_t *idx, size_t n, const int *status, const char *what)
{
    unsigned char *seen = calloc(K, 1);
    size_t want = 0;
    for (size_t i = 0; i < K; i++) want += satisfied(i) && !(status && status[i]);
    CHECK_MSG(n == want, "%s: %zu indices, expected %zu", what, n, want);
    for (size_t j = 0; j < n && j < K; j++) {
        const size_t i = idx[j];
        CHECK_MSG(i < K && satisfied(i) && !(status && status[i]) && !seen[i], "%s: index %zu listed", what, i);
        if (i < K) seen[i] = 1;
    }
    free(seen);
}

static void any_forms(int *ints, long *longs, const int *status, const char *label)
{
    const size_t calls = 2 * K;
    size_t *got = calloc(calls, sizeof *got);
    int *ones = malloc(K * sizeof *ones);
    long *lones = malloc(K * sizeof *lones);
    for (size_t i = 0; i < K; i++) ones[i] = 1, lones[i] = 1;
    char what[96];

    for (size_t c = 0; c < calls; c++) got[c] = shmem_int_test_any(ints, K, status, SHMEM_CMP_EQ, 1);
    snprintf(what, sizeof what, "%s int_test_any", label);
    judge_any(got, calls, status, what);

    for (size_t c = 0; c < calls; c++) got[c] = shmem_long_wait_until_any(longs, K, status, SHMEM_CMP_EQ, 1);
    snprintf(what, sizeof what, "%s long_wait_until_any", label);
    judge_any(got, calls, status, what);

    for (size_t c = 0; c < calls; c++) got[c] = shmem_int_test_any_vector(ints, K, status, SHMEM_CMP_EQ, ones);
    snprintf(what, sizeof what, "%s int_test_any_vector", label);
    judge_any(got, calls, status, what);

    for (size_t c = 0; c < calls; c++)
        got[c] = shmem_long_wait_until_any_vector(longs, K, status, SHMEM_CMP_GE, lones);
    snprintf(what, sizeof what, "%s long_wait_until_any_vector", label);
    judge_any(got, calls, status, what);

    /* C11 generic form, the same array as above: the series goes on. */
    for (size_t c = 0; c < calls; c++) got[c] = shmem_test_any(ints, K, status, SHMEM_CMP_NE, 0);
    snprintf(what, sizeof what, "%s generic test_any", label);
    judge_any(got, calls, status, what);

    size_t *idx = malloc(K * sizeof *idx);
    for (int r = 0; r < 3; r++) {
        snprintf(what, sizeof what, "%s int_test_some round %d", label, r);
        check_some(idx, shmem_int_test_some(ints, K, idx, status, SHMEM_CMP_EQ, 1), status, what);
        snprintf(what, sizeof what, "%s long_wait_until_some round %d", label, r);
        check_some(idx, shmem_long_wait_until_some(longs, K, idx, status, SHMEM_CMP_EQ, 1), status, what);
        snprintf(what, sizeof what, "%s int_test_some_vector round %d", label, r);
        check_some(idx, shmem_int_test_some_vector(ints, K, idx, status, SHMEM_CMP_EQ, ones), status, what);
        snprintf(what, sizeof what, "%s long_wait_until_some_vector round %d", label, r);
        check_some(idx, shmem_long_wait_until_some_vector(longs, K, idx, status, SHMEM_CMP_EQ, lones), status, what);
    }
    free(idx);
    free(lones);
    free(ones);
    free(got);
}

/* Calls on several arrays interleave; each array's series must be fair. */
static void interleaved(int **arrays, int n_arrays, size_t rounds, const char *label)
{
    size_t *got = calloc((size_t)n_arrays * rounds, sizeof *got);
    for (size_t r = 0; r < rounds; r++)
        for (int a = 0; a < n_arrays; a++) got[(size_t)a * rounds + r] = shmem_int_test_any(arrays[a], K, NULL, SHMEM_CMP_EQ, 1);
    for (int a = 0; a < n_arrays; a++) {
        char what[96];
        snprintf(what, sizeof what, "%s, array %d of %d", label, a, n_arrays);
        judge_any(got + (size_t)a * rounds, rounds, NULL, what);
    }
    free(got);
}

struct thread_arg {
    int *ints;
    size_t *got;
};

static void *thread_calls(void *p)
{
    struct thread_arg *a = p;
    for (size_t c = 0; c < 2 * K; c++) a->got[c] = shmem_int_test_any(a->ints, K, NULL, SHMEM_CMP_EQ, 1);
    return NULL;
}

static void threads(int *ints)
{
    pthread_t tid[THREADS];
    struct thread_arg arg[THREADS];
    for (int t = 0; t < THREADS; t++) {
        arg[t] = (struct thread_arg){ints, calloc(2 * K, sizeof(size_t))};
        CHECK(pthread_create(&tid[t], NULL, thread_calls, &arg[t]) == 0);
    }
    for (int t = 0; t < THREADS; t++) {
        pthread_join(tid[t], NULL);
        char what[64];
        snprintf(what, sizeof what, "thread %d of %d, test_any", t, THREADS);
        judge_any(arg[t].got, 2 * K, NULL, what);
        free(arg[t].got);
    }
}

/* Flag 0 goes down and flag 1 up, written by the left neighbour: the next
 * calls must follow the new set. */
static void changed_set(int *ints)
{
    shmem_barrier_all();
    shmem_int_p(&ints[0], 0, (me + 1) % npes);
    shmem_int_p(&ints[1], 1, (me + 1) % npes);
    shmem_barrier_all();
    unsigned char *seen = calloc(K, 1);
    for (size_t c = 0; c < 2 * K; c++) {
        const size_t i = shmem_int_test_any(ints, K, NULL, SHMEM_CMP_EQ, 1);
        CHECK_MSG(i < K && i != 0 && (satisfied(i) || i == 1), "after the change: index %zu returned", i);
        if (i < K) seen[i] = 1;
    }
    CHECK_MSG(seen[1], "after the change: the newly set index 1 never returned");
    for (size_t i = 2; i < K; i++) CHECK_MSG(!satisfied(i) || seen[i], "after the change: index %zu never returned", i);
    free(seen);
}

int main(void)
{
    int provided;
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    test_pe = me;
    K = 4 * (size_t)npes + 3;
    int *ints = shmem_calloc(K, sizeof(int));
    long *longs = shmem_calloc(K, sizeof(long));
    set_flags(ints, longs);

    any_forms(ints, longs, NULL, "no status");
    int *status = calloc(K, sizeof(int));
    for (size_t i = 0; i < K; i += 4) status[i] = 1; /* excludes satisfied and unsatisfied entries */
    any_forms(ints, longs, status, "status");
    for (size_t i = 0; i < K; i++) status[i] = 1;
    CHECK(shmem_int_test_any(ints, K, status, SHMEM_CMP_EQ, 1) == SIZE_MAX);
    CHECK(shmem_int_test_some(ints, K, (size_t[1]){0}, status, SHMEM_CMP_EQ, 1) == 0);

    /* Second array: the same flags, copied with a get from the right neighbour. */
    int *other = shmem_calloc(K, sizeof(int));
    shmem_int_get(other, ints, K, (me + 1) % npes);
    shmem_barrier_all();
    int *pair[2] = {ints, other};
    interleaved(pair, 2, 2 * K, "alternating");

    /* An array a thread does not remember starts at a random index: an
     * index returned only from a start of its own is missed by 1000 calls
     * with probability (1 - 1/35)^1000 < 1e-12 (K is at most 35 here). */
    int *rotated[ROTATED];
    for (int a = 0; a < ROTATED; a++) {
        rotated[a] = shmem_malloc(K * sizeof(int));
        shmem_int_get(rotated[a], ints, K, (me + a) % npes);
    }
    shmem_barrier_all();
    interleaved(rotated, ROTATED, 1000, "rotated");

    threads(ints);
    changed_set(ints);

    shmem_barrier_all();
    for (int a = 0; a < ROTATED; a++) shmem_free(rotated[a]);
    shmem_free(other);
    shmem_free(longs);
    shmem_free(ints);
    free(status);
    int rc = test_finish();
    shmem_finalize();
    return rc;
}
