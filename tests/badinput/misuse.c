/* misuse.c: one mistake per mode, for every family of calls (cases.sh
 * names the mode and the line it expects). In "PE 0" modes PE 0 makes the
 * bad call and the others wait in shmem_barrier_all until the launcher
 * stops them; in "every PE" modes all PEs take part (collectives, heap
 * calls whose PEs disagree). No mode may get past its bad call. */
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int sym_int[16];
static long sym_long[16];
static uint64_t sym_sig[4];
static long psync[SHMEM_REDUCE_SYNC_SIZE];
static int pwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE];

#define MODE(name) else if (strcmp(mode, name) == 0)

static int pe0_mode(const char *mode, int n)
{
    int local[16] = {0};
    long local_long = 0;
    uint64_t local_sig = 0;
    char *heap = shmem_malloc(4096);
    shmem_barrier_all();
    if (shmem_my_pe() != 0) return 0;
    if (0) {}
    /* RMA */
    MODE("put_null_source") shmem_int_put(sym_int, NULL, 4, 1);
    MODE("get_null_dest") shmem_long_get(NULL, sym_long, 2, 1);
    MODE("iput_null_source") shmem_int_iput(sym_int, NULL, 2, 1, 3, 1);
    MODE("put_null_dest") shmem_int_put(NULL, local, 4, 1);
    MODE("put_malloc_dest") {
        int *priv = malloc(16 * sizeof(int));
        shmem_int_put(priv, local, 4, 1);
    }
    MODE("get_stack_source") shmem_int_get(local, local + 4, 4, 1);
    MODE("put_overflow") shmem_int_put(sym_int, local, (size_t)1 << 62, 1);
    MODE("put_negative") shmem_putmem(sym_int, local, (size_t)-8, 1);
    /* Zero-length calls may pass null pointers (issue 14), but a bad PE or
     * a stray non-null pointer is still reported. */
    MODE("put_zero_pe") shmem_putmem(NULL, NULL, 0, n);
    MODE("iget_zero_pe") shmem_int_iget(NULL, NULL, 1, 1, 0, -1);
    MODE("put_zero_stack") shmem_putmem(local, local, 0, 1);
    MODE("put_pe_world") shmem_int_p(sym_int, 1, n);
    /* contexts */
    MODE("ctx_garbage") shmem_ctx_int_p((shmem_ctx_t)(uintptr_t)0x10, sym_int, 1, 1);
    MODE("ctx_garbage_readable") shmem_ctx_quiet((shmem_ctx_t)(void *)local);
    MODE("ctx_destroyed") {
        shmem_ctx_t ctx;
        if (shmem_ctx_create(0, &ctx) != 0) return 2;
        shmem_ctx_destroy(ctx);
        shmem_ctx_putmem(ctx, sym_int, local, 4, 1);
    }
    MODE("ctx_invalid") shmem_ctx_putmem(SHMEM_CTX_INVALID, sym_int, local, 4, 1);
    MODE("ctx_create_null") shmem_ctx_create(0, NULL);
    /* atomics */
    MODE("amo_misaligned") shmem_int_atomic_add((int *)(heap + 2), 1, 1);
    MODE("amo_null") (void)shmem_long_atomic_fetch(NULL, 1);
    MODE("amo_stack") shmem_int_atomic_inc(local, 1);
    /* signals */
    MODE("signal_null") (void)shmem_signal_fetch(NULL);
    MODE("signal_misaligned") (void)shmem_signal_wait_until((uint64_t *)(heap + 4), SHMEM_CMP_EQ, 0);
    MODE("put_signal_stack_sig") shmem_putmem_signal(sym_int, local, 8, &local_sig, 1, SHMEM_SIGNAL_SET, 1);
    MODE("put_signal_null_source") shmem_putmem_signal(sym_int, NULL, 8, sym_sig, 1, SHMEM_SIGNAL_SET, 1);
    /* point-to-point synchronisation */
    MODE("wait_null") shmem_int_wait_until(NULL, SHMEM_CMP_EQ, 0);
    MODE("test_all_null") (void)shmem_long_test_all(NULL, 4, NULL, SHMEM_CMP_EQ, 0);
    MODE("wait_vector_null") shmem_int_wait_until_all_vector(sym_int, 2, NULL, SHMEM_CMP_EQ, NULL);
    MODE("wait_misaligned") shmem_int_wait_until((int *)(heap + 1), SHMEM_CMP_EQ, 0);
    MODE("wait_some_null_indices") (void)shmem_int_wait_until_some(sym_int, 2, NULL, NULL, SHMEM_CMP_EQ, 0);
    MODE("wait_stack") shmem_long_wait_until(&local_long, SHMEM_CMP_EQ, 0);
    /* locks */
    MODE("lock_null") shmem_set_lock(NULL);
    MODE("lock_stack") shmem_set_lock(&local_long);
    MODE("lock_misaligned") shmem_set_lock((long *)(heap + 4));
    MODE("lock_clear_unheld") shmem_clear_lock(&sym_long[0]);
    MODE("lock_set_twice") { shmem_set_lock(&sym_long[0]); shmem_set_lock(&sym_long[0]); }
    /* teams */
    MODE("team_garbage") (void)shmem_team_my_pe((shmem_team_t)(uintptr_t)0x10);
    MODE("team_garbage_readable") (void)shmem_team_sync((shmem_team_t)(void *)local);
    MODE("team_create_ctx_null") (void)shmem_team_create_ctx(SHMEM_TEAM_WORLD, 0, NULL);
    MODE("pe_quiet_null") shmem_pe_quiet(NULL, 2);
    /* heap, local mistakes */
    MODE("realloc_private") (void)shmem_realloc(malloc(64), 128);
    else {
        fprintf(stderr, "misuse: unknown mode %s\n", mode);
        return 2;
    }
    return 0;
}

static int all_mode(const char *mode, int me, int n)
{
    int local[16] = {0};
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++) psync[i] = SHMEM_SYNC_VALUE;
    shmem_barrier_all();
    if (0) {}
    /* collectives */
    MODE("to_all_negative") shmem_int_sum_to_all(sym_int, sym_int + 8, -1, 0, 0, n, pwrk, psync);
    MODE("bcast_root") (void)shmem_int_broadcast(SHMEM_TEAM_WORLD, sym_int, sym_int + 8, 4, n);
    MODE("reduce_stack_source") (void)shmem_int_sum_reduce(SHMEM_TEAM_WORLD, sym_int, local, 4);
    MODE("reduce_null_dest") (void)shmem_long_max_reduce(SHMEM_TEAM_WORLD, NULL, sym_long, 4);
    MODE("reduce_overflow") (void)shmem_long_sum_reduce(SHMEM_TEAM_WORLD, sym_long, sym_long + 8, SIZE_MAX / 4);
    MODE("team_destroyed") {
        shmem_team_t team;
        if (shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, n, NULL, 0, &team) != 0) return 2;
        shmem_team_destroy(team);
        (void)shmem_int_sum_reduce(team, sym_int, sym_int + 8, 4);
    }
    MODE("team_split_null") (void)shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, n, NULL, 0, NULL);
    MODE("ctx_team_pe") {
        /* A team of PE 0 alone: PE 1 is out of range for its context. */
        shmem_team_t team;
        shmem_ctx_t ctx;
        shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, 1, NULL, 0, &team);
        if (me == 0) {
            if (shmem_team_create_ctx(team, 0, &ctx) != 0) return 2;
            shmem_ctx_int_p(ctx, sym_int, 1, 1);
        }
    }
    /* PE 0 gives a null dest of 0 elements to a collect the others add to. */
    MODE("collect_null_dest") (void)shmem_int_collect(SHMEM_TEAM_WORLD, me ? sym_int : NULL, sym_int + 8, me ? 4 : 0);
    MODE("coll_nelems") (void)shmem_int_sum_reduce(SHMEM_TEAM_WORLD, sym_int, sym_int + 8, me == 1 ? 8 : 4);
    MODE("coll_root") (void)shmem_int_broadcast(SHMEM_TEAM_WORLD, sym_int, sym_int + 8, 4, me == 1 ? 1 : 0);
    MODE("coll_op") {
        if (me == 1) (void)shmem_int_max_reduce(SHMEM_TEAM_WORLD, sym_int, sym_int + 8, 4);
        else (void)shmem_int_sum_reduce(SHMEM_TEAM_WORLD, sym_int, sym_int + 8, 4);
    }
    /* heap calls every PE makes, but not alike */
    MODE("calloc_overflow") (void)shmem_calloc(SIZE_MAX / 2, 4);
    MODE("malloc_unbalanced") (void)shmem_malloc(me == n - 1 ? 4096 : 8192);
    MODE("malloc_extra") {
        (void)shmem_malloc(4096);
        if (me == 1) (void)shmem_malloc(4096);
    }
    MODE("free_mismatch") {
        char *a = shmem_malloc(64), *b = shmem_malloc(64);
        shmem_free(me == 1 ? b : a);
    }
    MODE("align_mismatch") (void)shmem_align(me == 1 ? 128 : 64, 256);
    else {
        fprintf(stderr, "misuse: unknown mode %s\n", mode);
        return 2;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: misuse MODE pe0|all\n");
        return 2;
    }
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes();
    int st = strcmp(argv[2], "all") == 0 ? all_mode(argv[1], me, n) : pe0_mode(argv[1], n);
    if (st) return st;
    shmem_barrier_all();
    fprintf(stderr, "misuse: PE %d got past mode %s\n", me, argv[1]);
    shmem_finalize();
    return 0;
}
