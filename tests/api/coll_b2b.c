/* coll_b2b.c: collectives back to back with no barrier between them, many
 * rounds, each round checked as soon as its call returns.
 * 1. Team forms on the world team and on the stride-2 teams (both at once):
 *    broadcast (rotating root), fcollect, collect, alltoall, sum_reduce,
 *    sum_inscan, team_sync, 200 rounds. Each round has its own dest and
 *    source region, so no call writes where an earlier call's data is
 *    still being read, whatever the algorithm.
 * 2. Active-set forms alternating two pSync arrays (the standard's reuse
 *    rule for consecutive calls on one active set): broadcast64, fcollect64,
 *    collect32, alltoall64, long_sum_to_all, shmem_sync, on every PE and on
 *    the odd PEs (logPE_stride 1, PE_start 1), 100 rounds each; pSync back
 *    at SHMEM_SYNC_VALUE at the end.
 * 3. Large broadcasts on the world team, back to back into one dest, the
 *    root rotating: one chunk of the tree (tree.c), several, and more than
 *    its chunk words hold (the chunks grow), every byte checked. A member
 *    forwards from its dest, so a call that wrote a dest still being read
 *    or sent shows as wrong bytes. */
#include <shmem.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"

#define ROUNDS 200
#define SROUNDS 100
#define N 13 /* elements per PE per round */

static int me, npes;
static long *src, *dst; /* per round: N * npes longs each */
static long psync[2][SHMEM_REDUCE_SYNC_SIZE];
static long pwrk[2][N / 2 + 1 + SHMEM_REDUCE_MIN_WRKDATA_SIZE];

static long val(int pe, int round, int i) { return (long)pe * 1000003L + (long)round * 101L + i; }

static long *rsrc(int round) { return src + (size_t)round * N * npes; }
static long *rdst(int round) { return dst + (size_t)round * N * npes; }

/* One team (start, stride, size as world PEs), this PE's rank r. */
static void team_rounds(shmem_team_t t, int start, int stride, int size, int r, const char *name)
{
    int bad = 0;
    for (int round = 0; round < ROUNDS; round++) {
        long *s = rsrc(round), *d = rdst(round);
        const int op = round % 7;
        for (int i = 0; i < N * size; i++) s[i] = val(me, round, i);
        int rc = 0;
        switch (op) {
        case 0: rc = shmem_long_broadcast(t, d, s, N, round % size); break;
        case 1: rc = shmem_long_fcollect(t, d, s, N); break;
        case 2: rc = shmem_long_collect(t, d, s, (size_t)(r % 3)); break;
        case 3: rc = shmem_long_alltoall(t, d, s, N); break;
        case 4: rc = shmem_long_sum_reduce(t, d, s, N); break;
        case 5: rc = shmem_long_sum_inscan(t, d, s, N); break;
        default: rc = shmem_team_sync(t); break;
        }
        if (rc != 0) bad++;
        for (int q = 0, off = 0; q < size && op != 6; q++) {
            const int w = start + q * stride;
            for (int i = 0; i < N; i++) {
                long want, got;
                switch (op) {
                case 0:
                    if (q) continue;
                    want = val(start + (round % size) * stride, round, i), got = d[i];
                    break;
                case 1: want = val(w, round, i), got = d[q * N + i]; break;
                case 2:
                    if (i >= q % 3) continue;
                    want = val(w, round, i), got = d[off + i];
                    break;
                case 3: want = val(w, round, r * N + i), got = d[q * N + i]; break;
                case 4:
                case 5:
                    if (q) continue;
                    want = 0;
                    for (int k = 0; k < (op == 4 ? size : r + 1); k++) want += val(start + k * stride, round, i);
                    got = d[i];
                    break;
                default: want = got = 0;
                }
                if (got != want) {
                    if (bad++ < 3)
                        CHECK_MSG(0, "%s round %d op %d: from rank %d elem %d: %ld, expected %ld", name, round, op, q, i,
                                  got, want);
                }
            }
            if (op == 2) off += q % 3;
        }
    }
    CHECK_MSG(bad == 0, "%s: %d wrong values or nonzero returns", name, bad);
}

static void set_rounds(int start, int logs, int size)
{
    const int stride = 1 << logs;
    const int r = (me >= start && (me - start) % stride == 0 && (me - start) / stride < size) ? (me - start) / stride : -1;
    if (r < 0) return;
    int bad = 0;
    for (int round = 0; round < SROUNDS; round++) {
        long *s = rsrc(round), *d = rdst(round), *ps = psync[round % 2];
        const int op = round % 6;
        for (int i = 0; i < N * size; i++) s[i] = val(me, round, i);
        const int root = round % size;
        switch (op) {
        case 0: shmem_broadcast64(d, s, N, root, start, logs, size, ps); break;
        case 1: shmem_fcollect64(d, s, N, start, logs, size, ps); break;
        case 2: shmem_collect32(d, s, (size_t)(2 * (r % 2)), start, logs, size, ps); break; /* 32-bit halves */
        case 3: shmem_alltoall64(d, s, N, start, logs, size, ps); break;
        case 4: shmem_long_sum_to_all(d, s, N, start, logs, size, pwrk[round % 2], ps); break;
        default: shmem_sync(start, logs, size, ps); break;
        }
        for (int q = 0, off = 0; q < size && op != 5; q++) {
            const int w = start + q * stride;
            for (int i = 0; i < N; i++) {
                long want, got;
                switch (op) {
                case 0:
                    if (q || r == root) continue; /* the root's dest is not updated */
                    want = val(start + root * stride, round, i), got = d[i];
                    break;
                case 1: want = val(w, round, i), got = d[q * N + i]; break;
                case 2:
                    if (i >= q % 2) continue;
                    want = val(w, round, i), got = d[off + i];
                    break;
                case 3: want = val(w, round, r * N + i), got = d[q * N + i]; break;
                case 4:
                    if (q) continue;
                    want = 0;
                    for (int k = 0; k < size; k++) want += val(start + k * stride, round, i);
                    got = d[i];
                    break;
                default: want = got = 0;
                }
                if (got != want && bad++ < 3)
                    CHECK_MSG(0, "active set %d/%d/%d round %d op %d: from %d elem %d: %ld, expected %ld", start, logs,
                              size, round, op, q, i, got, want);
            }
            if (op == 2) off += q % 2;
        }
    }
    CHECK_MSG(bad == 0, "active set %d/%d/%d: %d wrong values", start, logs, size, bad);
}

#define BIG_ROUNDS 9
static unsigned char big_byte(int round, size_t i) { return (unsigned char)(i * 7 + (i >> 12) + (size_t)round * 13); }

static void big_broadcasts(void)
{
    static const size_t sizes[] = {200 * 1024 + 8, 1024 * 1024 - 8, 4 * 1024 * 1024 + 24};
    const size_t most = sizes[2];
    unsigned char *s = shmem_malloc(most), *d = shmem_malloc(most);
    CHECK(s && d);
    if (!s || !d) return;
    int bad = 0;
    for (int round = 0; round < BIG_ROUNDS; round++) {
        const size_t n = sizes[round % 3];
        const int root = round % npes;
        for (size_t i = 0; i < n; i++) s[i] = big_byte(round, i);
        CHECK(shmem_broadcastmem(SHMEM_TEAM_WORLD, d, s, n, root) == 0);
        for (size_t i = 0; i < n; i++)
            if (d[i] != big_byte(round, i) && bad++ < 3)
                CHECK_MSG(0, "big broadcast round %d (%zu bytes from PE %d): byte %zu is %u, expected %u", round, n,
                          root, i, d[i], big_byte(round, i));
    }
    CHECK_MSG(bad == 0, "big broadcasts: %d wrong bytes", bad);
    shmem_barrier_all();
    shmem_free(d);
    shmem_free(s);
}

int main(void)
{
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    test_pe = me;
    const size_t per = (size_t)ROUNDS * N * (size_t)npes * sizeof(long);
    src = shmem_malloc(per);
    dst = shmem_malloc(per);
    CHECK(src && dst);
    if (!src || !dst) return test_finish();
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++) psync[k][i] = SHMEM_SYNC_VALUE;
    shmem_barrier_all();

    team_rounds(SHMEM_TEAM_WORLD, 0, 1, npes, me, "world");
    shmem_barrier_all();
    /* Both stride-2 teams at once (disjoint), back to back. */
    shmem_team_t even, odd = SHMEM_TEAM_INVALID;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2, NULL, 0, &even);
    if (npes > 1) shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 2, npes / 2, NULL, 0, &odd);
    if (me % 2 == 0) team_rounds(even, 0, 2, (npes + 1) / 2, me / 2, "even team");
    else team_rounds(odd, 1, 2, npes / 2, me / 2, "odd team");
    shmem_barrier_all();
    shmem_team_destroy(even);
    shmem_team_destroy(odd);

    set_rounds(0, 0, npes);
    shmem_barrier_all();
    if (npes > 1) set_rounds(1, 1, npes / 2);
    shmem_barrier_all();
    big_broadcasts();
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++)
            CHECK_MSG(psync[k][i] == SHMEM_SYNC_VALUE, "pSync %d[%d] = %ld at the end", k, i, psync[k][i]);
    shmem_finalize();
    return test_finish();
}
