/* zero_len.c: calls of length 0 just work, with null pointers too (the
 * standard's annex on undefined behaviour: "len is 0, pointer is null:
 * supported"), and what a program does after shmem_malloc(0) returned
 * NULL. Each part checks data:
 * 1. RMA to every PE with 0 elements: mem, typed, sized, C11 generic, nbi,
 *    ctx, iput/iget, ibput/ibget (0 blocks and blocks of 0), with null
 *    pointers and with pointers into a guard buffer that must not change.
 * 2. put_signal of 0 bytes (blocking and nbi, SET and ADD): the signal
 *    still arrives, with its value.
 * 3. Collectives of 0 elements with null buffers, team and active-set
 *    forms: guards stay, and they stay collective: real collectives run
 *    between them on the same team and active set give right results.
 * 4. collect where some members contribute 0 elements from a null source:
 *    dest holds the others' blocks in rank order. */
#include <shmem.h>
#include <stdint.h>
#include <string.h>

#include "api_util.h"

#define GUARD_LEN 64

static int me, npes;
static unsigned char guard[GUARD_LEN];
static long psync[SHMEM_REDUCE_SYNC_SIZE];
static long pwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
static uint64_t sig;

static void rma(void)
{
    memset(guard, GUARD_BYTE, sizeof guard);
    unsigned char local[GUARD_LEN];
    memset(local, 0x3C, sizeof local);
    shmem_barrier_all();
    shmem_ctx_t ctx = SHMEM_CTX_INVALID;
    CHECK(shmem_ctx_create(0, &ctx) == 0);
    for (int pe = 0; pe < npes; pe++) {
        /* null pointers */
        shmem_putmem(NULL, NULL, 0, pe);
        shmem_getmem(NULL, NULL, 0, pe);
        shmem_int_put(NULL, NULL, 0, pe);
        shmem_long_get(NULL, NULL, 0, pe);
        shmem_put8(NULL, NULL, 0, pe);
        shmem_get32(NULL, NULL, 0, pe);
        shmem_put64(NULL, NULL, 0, pe);
        shmem_get128(NULL, NULL, 0, pe);
        shmem_put((int *)NULL, (const int *)NULL, 0, pe);
        shmem_get((double *)NULL, (const double *)NULL, 0, pe);
        shmem_putmem_nbi(NULL, NULL, 0, pe);
        shmem_getmem_nbi(NULL, NULL, 0, pe);
        shmem_int_put_nbi(NULL, NULL, 0, pe);
        shmem_long_get_nbi(NULL, NULL, 0, pe);
        shmem_ctx_putmem(ctx, NULL, NULL, 0, pe);
        shmem_ctx_int_get(ctx, NULL, NULL, 0, pe);
        shmem_ctx_putmem_nbi(ctx, NULL, NULL, 0, pe);
        shmem_int_iput(NULL, NULL, 1, 1, 0, pe);
        shmem_long_iget(NULL, NULL, 2, 3, 0, pe);
        shmem_iput64(NULL, NULL, 1, 1, 0, pe);
        shmem_iget32(NULL, NULL, 1, 1, 0, pe);
        shmem_int_ibput(NULL, NULL, 4, 4, 2, 0, pe);
        shmem_int_ibget(NULL, NULL, 4, 4, 0, 3, pe);
        shmem_ibput64(NULL, NULL, 1, 1, 0, 5, pe);
        /* real pointers: nothing may be written */
        shmem_putmem(guard, local, 0, pe);
        shmem_int_put_nbi((int *)guard, (const int *)local, 0, pe);
        shmem_put64(guard, local, 0, pe);
        shmem_ctx_putmem(ctx, guard + 8, local, 0, pe);
        shmem_int_iput((int *)guard, (const int *)local, 2, 2, 0, pe);
        shmem_int_ibput((int *)guard, (const int *)local, 4, 4, 0, 3, pe);
        shmem_getmem(local, guard, 0, pe);
        shmem_long_iget((long *)local, (const long *)guard, 1, 1, 0, pe);
    }
    /* What a program does with the NULL of shmem_malloc(0). */
    int *none = shmem_malloc(0);
    CHECK(none == NULL);
    shmem_int_put(none, none, 0, (me + 1) % npes);
    shmem_int_get(none, none, 0, (me + 1) % npes);
    shmem_free(none);
    shmem_ctx_quiet(ctx);
    shmem_ctx_destroy(ctx);
    shmem_quiet();
    shmem_barrier_all();
    check_fill(guard, sizeof guard, GUARD_BYTE, "guard after zero-length puts");
    check_fill(local, sizeof local, 0x3C, "local after zero-length gets");
}

/* Each PE sends its right neighbour zero bytes with a signal; the signal
 * must arrive, carrying its value. */
static void put_signal(void)
{
    const int right = (me + 1) % npes, left = (me + npes - 1) % npes;
    sig = 0;
    shmem_barrier_all();
    shmem_putmem_signal(NULL, NULL, 0, &sig, 100 + (uint64_t)me, SHMEM_SIGNAL_SET, right);
    CHECK(shmem_signal_wait_until(&sig, SHMEM_CMP_EQ, 100 + (uint64_t)left) == 100 + (uint64_t)left);
    shmem_barrier_all();
    shmem_int_put_signal(NULL, NULL, 0, &sig, 5, SHMEM_SIGNAL_ADD, right);
    shmem_putmem_signal_nbi(NULL, NULL, 0, &sig, 7, SHMEM_SIGNAL_ADD, right);
    shmem_put64_signal_nbi(guard, guard, 0, &sig, 11, SHMEM_SIGNAL_ADD, right);
    shmem_quiet();
    uint64_t want = 100 + (uint64_t)left + 5 + 7 + 11;
    CHECK_MSG(shmem_signal_wait_until(&sig, SHMEM_CMP_EQ, want) == want, "signal %llu, expected %llu",
              (unsigned long long)shmem_signal_fetch(&sig), (unsigned long long)want);
    shmem_barrier_all();
    check_fill(guard, sizeof guard, GUARD_BYTE, "guard after zero-length put_signal");
}

/* A real sum reduction and broadcast on team, checked: proves the members
 * still agree on the team's synchronisation after the empty calls. */
static void real_team_coll(shmem_team_t team, long *src, long *dst)
{
    const int n = shmem_team_n_pes(team), r = shmem_team_my_pe(team);
    src[0] = r + 1;
    src[1] = 1000 + r;
    CHECK(shmem_long_sum_reduce(team, dst, src, 2) == 0);
    CHECK_MSG(dst[0] == (long)n * (n + 1) / 2 && dst[1] == 1000L * n + (long)n * (n - 1) / 2, "sum %ld %ld",
              dst[0], dst[1]);
    CHECK(shmem_long_broadcast(team, dst, src, 2, n - 1) == 0);
    CHECK_MSG(dst[0] == n && dst[1] == 1000 + n - 1, "broadcast %ld %ld", dst[0], dst[1]);
}

static void colls(long *src, long *dst)
{
    shmem_team_t odd = SHMEM_TEAM_INVALID;
    if (npes > 1) shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 2, npes / 2, NULL, 0, &odd);
    shmem_team_t teams[2] = {SHMEM_TEAM_WORLD, odd};
    for (int k = 0; k < 2; k++) {
        shmem_team_t t = teams[k];
        if (t == SHMEM_TEAM_INVALID) continue;
        for (int round = 0; round < 3; round++) {
            CHECK(shmem_broadcastmem(t, NULL, NULL, 0, 0) == 0);
            CHECK(shmem_int_broadcast(t, NULL, NULL, 0, shmem_team_n_pes(t) - 1) == 0);
            CHECK(shmem_fcollectmem(t, NULL, NULL, 0) == 0);
            CHECK(shmem_long_fcollect(t, NULL, NULL, 0) == 0);
            CHECK(shmem_collectmem(t, NULL, NULL, 0) == 0);
            CHECK(shmem_int_collect(t, NULL, NULL, 0) == 0);
            CHECK(shmem_alltoallmem(t, NULL, NULL, 0) == 0);
            CHECK(shmem_int_alltoall(t, NULL, NULL, 0) == 0);
            CHECK(shmem_int_alltoalls(t, NULL, NULL, 1, 1, 0) == 0);
            CHECK(shmem_int_sum_reduce(t, NULL, NULL, 0) == 0);
            CHECK(shmem_long_max_reduce(t, NULL, NULL, 0) == 0);
            CHECK(shmem_double_prod_reduce(t, NULL, NULL, 0) == 0);
            CHECK(shmem_int_and_reduce(t, NULL, NULL, 0) == 0);
            CHECK(shmem_int_sum_inscan(t, NULL, NULL, 0) == 0);
            CHECK(shmem_long_sum_exscan(t, NULL, NULL, 0) == 0);
            /* A real buffer of 0 elements is left alone. */
            CHECK(shmem_long_sum_reduce(t, (long *)guard, (const long *)guard, 0) == 0);
            CHECK(shmem_broadcastmem(t, guard, guard + 8, 0, 0) == 0);
            real_team_coll(t, src, dst);
        }
    }
    if (odd != SHMEM_TEAM_INVALID) shmem_team_destroy(odd);

    /* Deprecated active-set forms: the whole world and, with 4 PEs or
     * more, the even PEs (logPE_stride 1), over one pSync. */
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++) psync[i] = SHMEM_SYNC_VALUE;
    shmem_barrier_all();
    const int sets = npes >= 4 ? 2 : 1;
    for (int set = 0; set < sets; set++) {
        const int log = set, size = set ? (npes + 1) / 2 : npes;
        if (set && me % 2) continue;
        for (int round = 0; round < 2; round++) {
            shmem_broadcast64(NULL, NULL, 0, 0, 0, log, size, psync);
            shmem_broadcast32(NULL, NULL, 0, size - 1, 0, log, size, psync);
            shmem_fcollect64(NULL, NULL, 0, 0, log, size, psync);
            shmem_collect32(NULL, NULL, 0, 0, log, size, psync);
            shmem_alltoall64(NULL, NULL, 0, 0, log, size, psync);
            shmem_alltoalls32(NULL, NULL, 1, 1, 0, 0, log, size, psync);
            shmem_int_sum_to_all(NULL, NULL, 0, 0, log, size, (int *)(void *)pwrk, psync);
            shmem_long_max_to_all(NULL, NULL, 0, 0, log, size, pwrk, psync);
            /* A real one between them, checked. */
            src[0] = me;
            shmem_long_sum_to_all(dst, src, 1, 0, log, size, pwrk, psync);
            long want = 0;
            for (int i = 0; i < size; i++) want += (long)i << log;
            CHECK_MSG(dst[0] == want, "active set %d: sum %ld, expected %ld", set, dst[0], want);
        }
    }
    shmem_barrier_all();
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++)
        CHECK_MSG(psync[i] == SHMEM_SYNC_VALUE, "pSync[%d] is %ld after the calls", i, psync[i]);
    check_fill(guard, sizeof guard, GUARD_BYTE, "guard after zero-length collectives");
}

/* collect: odd PEs contribute nothing, from a null source; even PE p
 * contributes p+1 elements of value 100*p + i. */
static void mixed_collect(long *dst)
{
    long *src = shmem_malloc(sizeof(long) * (size_t)npes);
    CHECK(src != NULL);
    if (!src) return;
    size_t mine = me % 2 ? 0 : (size_t)me + 1, total = 0;
    for (size_t i = 0; i < mine; i++) src[i] = 100L * me + (long)i;
    for (int p = 0; p < npes; p += 2) total += (size_t)p + 1;
    for (size_t i = 0; i < total + 1; i++) dst[i] = -1;
    shmem_barrier_all();
    CHECK(shmem_long_collect(SHMEM_TEAM_WORLD, dst, mine ? src : NULL, mine) == 0);
    size_t at = 0;
    for (int p = 0; p < npes; p += 2)
        for (long i = 0; i <= p; i++, at++)
            CHECK_MSG(dst[at] == 100L * p + i, "collect element %zu is %ld, expected %ld", at, dst[at], 100L * p + i);
    CHECK_MSG(dst[total] == -1, "collect wrote past its %zu elements", total);
    shmem_barrier_all();
    shmem_free(src);
}

int main(void)
{
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    test_pe = me;
    long *src = shmem_malloc(16 * sizeof(long));
    long *dst = shmem_malloc((size_t)(npes * npes + 16) * sizeof(long));
    CHECK(src && dst);
    if (!src || !dst) return test_finish();
    rma();
    put_signal();
    colls(src, dst);
    mixed_collect(dst);
    shmem_barrier_all();
    shmem_free(dst);
    shmem_free(src);
    shmem_finalize();
    return test_finish();
}
