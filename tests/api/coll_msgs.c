/* coll_msgs: what the collectives cost over a fabric in transport
 * operations, counted by a table that wraps the transport's on this PE,
 * and checked against what each algorithm promises: no read-back (no get,
 * no fetching atomic) in the barrier, the small reduction (recursive
 * doubling), fcollect small (Bruck through lines) and larger (Bruck into
 * the dests), the large reduction (ring), the broadcast on an active set
 * (no get); one fence per barrier, ceil(log2 n) signals, and so on.
 * Prints the counts per call (PE 0). Data are checked too. Needs a fabric
 * for every peer (SHMEM_TRANSPORT=ofi or tls), else skips. */
#include <shmem.h>
#include <stdio.h>
#include <string.h>

#include "core/runtime.h"
#include "harness.h"

struct counts {
    long put, get, amo, fetch, fence, quiet;
};
static struct counts c;
static const struct shoal_transport_ops *real;
static struct shoal_transport_ops counting;

static shoal_status_t put(shoal_tctx_t *x, int pe, enum shoal_segment_id s, size_t o, const void *src, size_t n)
{
    c.put++;
    return real->put(x, pe, s, o, src, n);
}
static shoal_status_t get(shoal_tctx_t *x, int pe, enum shoal_segment_id s, size_t o, void *dst, size_t n)
{
    c.get++;
    return real->get(x, pe, s, o, dst, n);
}
static shoal_status_t get_nbi(shoal_tctx_t *x, int pe, enum shoal_segment_id s, size_t o, void *dst, size_t n)
{
    c.get++;
    return real->get_nbi(x, pe, s, o, dst, n);
}
static shoal_status_t amo(shoal_tctx_t *x, int pe, enum shoal_segment_id s, size_t o, size_t e, enum shoal_amo_op op,
                          uint64_t v, uint64_t cond, uint64_t *fetched)
{
    if (fetched || op == SHOAL_AMO_FETCH || op == SHOAL_AMO_CSWAP)
        c.fetch++;
    else
        c.amo++;
    return real->amo(x, pe, s, o, e, op, v, cond, fetched);
}
/* A signal (transport.h): a non-fetching atomic no quiet waits for. */
static shoal_status_t signal_(int pe, enum shoal_segment_id s, size_t o, enum shoal_amo_op op, uint64_t v)
{
    c.amo++;
    return real->signal(pe, s, o, op, v);
}
static shoal_status_t put_signal(shoal_tctx_t *x, int counted, int pe, enum shoal_segment_id s, size_t o,
                                 const void *src, size_t n, enum shoal_segment_id ss, size_t so, enum shoal_amo_op op,
                                 uint64_t v)
{
    c.put++;
    c.amo++;
    return real->put_signal(x, counted, pe, s, o, src, n, ss, so, op, v);
}
/* A flag (transport.h): a signal, with its data as one put where it has any. */
static shoal_status_t flag(int pe, enum shoal_segment_id s, size_t o, const void *src, size_t n,
                           enum shoal_segment_id fs, size_t fo, uint64_t v)
{
    if (n) c.put++;
    c.amo++;
    return real->flag(pe, s, o, src, n, fs, fo, v);
}
static void fence(shoal_tctx_t *x)
{
    c.fence++;
    real->fence(x);
}
static void quiet(shoal_tctx_t *x)
{
    c.quiet++;
    real->quiet(x);
}

static int me, n, rounds;
#define CALLS 20

static void report(const char *what, struct counts t)
{
    if (me == 0)
        printf("%-28s n=%d per call: put %.1f get %.1f signal %.1f fetch %.1f fence %.1f quiet %.1f\n", what, n,
               (double)t.put / CALLS, (double)t.get / CALLS, (double)t.amo / CALLS, (double)t.fetch / CALLS,
               (double)t.fence / CALLS, (double)t.quiet / CALLS);
    fflush(stdout); /* before a failing check can end the job */
    CHECK_MSG(t.get == 0 && t.fetch == 0, "%s: %ld gets and %ld fetching atomics in %d calls (read-back)", what, t.get,
              t.fetch, CALLS);
}

int main(void)
{
    shmem_init();
    me = shmem_my_pe(), n = shmem_n_pes();
    test_pe = me;
    if (!shoal_rt.fabric || shoal_rt.mapped_shm) {
        if (me == 0) printf("coll_msgs: needs SHMEM_TRANSPORT=ofi or tls; skipped\n");
        shmem_finalize();
        return TEST_SKIP;
    }
    for (int d = 1; d < n; d <<= 1) rounds++;
    enum { BIG = 4096 };
    long *src = shmem_malloc(BIG * (size_t)n), *dst = shmem_malloc(BIG * (size_t)n);
    shmem_barrier_all();
    real = shoal_rt.transport;
    counting = *real;
    counting.put = put, counting.get = get, counting.get_nbi = get_nbi, counting.amo = amo;
    counting.fence = fence, counting.quiet = quiet;
    if (real->signal) counting.signal = signal_;
    if (real->put_signal) counting.put_signal = put_signal;
    if (real->flag) counting.flag = flag;
    shoal_rt.transport = &counting;

    /* barrier_all: its quiet, one fence before the first signal, one signal
     * per round. */
    memset(&c, 0, sizeof c);
    for (int i = 0; i < CALLS; i++) shmem_barrier_all();
    struct counts t = c;
    report("barrier_all", t);
    CHECK_MSG(t.amo == (long)rounds * CALLS, "barrier_all: %ld signals in %d calls, want %d each", t.amo, CALLS,
              rounds);
    CHECK_MSG(t.fence <= (n > 1 ? CALLS : 0), "barrier_all: %ld fences in %d calls, want at most one each", t.fence,
              CALLS);

    /* sum_reduce of one long: recursive doubling, a put and a flag per
     * round (two more steps past a power of two), no barrier. */
    memset(&c, 0, sizeof c);
    for (int i = 0; i < CALLS; i++) {
        src[0] = me + i;
        CHECK(shmem_long_sum_reduce(SHMEM_TEAM_WORLD, dst, src, 1) == 0);
        CHECK_MSG(dst[0] == (long)n * (n - 1) / 2 + (long)n * i, "sum_reduce call %d: %ld", i, dst[0]);
    }
    t = c;
    report("sum_reduce 8 B", t);
    CHECK_MSG(t.put <= (long)(rounds + 1) * CALLS, "sum_reduce: %ld puts in %d calls", t.put, CALLS);

    /* fcollect of one long: Bruck through the lines, a put and a flag per
     * round, no barrier. */
    memset(&c, 0, sizeof c);
    for (int i = 0; i < CALLS; i++) {
        src[0] = me * 1000 + i;
        CHECK(shmem_long_fcollect(SHMEM_TEAM_WORLD, dst, src, 1) == 0);
        for (int p = 0; p < n; p++) CHECK_MSG(dst[p] == p * 1000 + i, "fcollect 8 B call %d block %d", i, p);
    }
    t = c;
    report("fcollect 8 B", t);
    CHECK_MSG(t.put == (long)rounds * CALLS && t.amo == (long)rounds * CALLS,
              "fcollect 8 B: %ld puts and %ld signals in %d calls, want %d each", t.put, t.amo, CALLS, rounds);

    /* fcollect of 4 KiB: Bruck into the dests after one barrier, at most two
     * puts (one wrap) and a flag per round. */
    const size_t elems = BIG / sizeof(long);
    memset(&c, 0, sizeof c);
    for (int i = 0; i < CALLS; i++) {
        for (size_t k = 0; k < elems; k++) src[k] = (long)(me * 100000 + i * 1000) + (long)k;
        CHECK(shmem_long_fcollect(SHMEM_TEAM_WORLD, dst, src, elems) == 0);
        for (int p = 0; p < n; p++)
            for (size_t k = 0; k < elems; k += 97)
                CHECK_MSG(dst[(size_t)p * elems + k] == (long)(p * 100000 + i * 1000) + (long)k,
                          "fcollect 4 KiB call %d block %d elem %zu", i, p, k);
    }
    t = c;
    report("fcollect 4 KiB", t);
    CHECK_MSG(t.put <= 2L * rounds * CALLS, "fcollect 4 KiB: %ld puts in %d calls", t.put, CALLS);

    /* sum_reduce of 256 KiB: the ring at 2 PEs (2 puts and flags after one
     * barrier), the tree past that; no read-back only for the ring. */
    enum { LARGE = 32768 };
    long *lsrc = shmem_malloc(LARGE * sizeof(long)), *ldst = shmem_malloc(LARGE * sizeof(long));
    memset(&c, 0, sizeof c);
    for (int i = 0; i < CALLS; i++) {
        for (int k = 0; k < LARGE; k++) lsrc[k] = me + i + k;
        CHECK(shmem_long_sum_reduce(SHMEM_TEAM_WORLD, ldst, lsrc, LARGE) == 0);
        for (int k = 0; k < LARGE; k += 31)
            CHECK_MSG(ldst[k] == (long)n * (n - 1) / 2 + (long)n * (i + k), "sum_reduce 256 KiB call %d elem %d: %ld",
                      i, k, ldst[k]);
    }
    t = c;
    if (n == 2) {
        report("sum_reduce 256 KiB", t);
        CHECK_MSG(t.put == 2L * CALLS, "sum_reduce 256 KiB: %ld puts in %d calls, want 2 each", t.put, CALLS);
    }
    shmem_free(ldst);
    shmem_free(lsrc);

    /* broadcast on an active set that is not the whole job (the even PEs):
     * its root pushes after one barrier, one put per member, and nobody
     * gets. Where the fabric applies atomics (ofi) the barrier takes its
     * pSync counts back with fetching ones; elsewhere none may fetch. */
    static long psync[2][SHMEM_BCAST_SYNC_SIZE];
    for (int k = 0; k < SHMEM_BCAST_SYNC_SIZE; k++) psync[0][k] = psync[1][k] = SHMEM_SYNC_VALUE;
    const int set = (n + 1) / 2;
    shmem_barrier_all();
    memset(&c, 0, sizeof c);
    for (int i = 0; i < CALLS && me % 2 == 0; i++) {
        for (size_t k = 0; me == 0 && k < elems; k++) src[k] = (long)i * 1000 + (long)k;
        shmem_broadcast64(dst, src, elems, 0, 0, 1, set, psync[i & 1]);
        for (size_t k = 0; me != 0 && k < elems; k += 97)
            CHECK_MSG(dst[k] == (long)i * 1000 + (long)k, "broadcast on the even PEs call %d elem %zu: %ld", i, k,
                      dst[k]);
    }
    t = c;
    if (me == 0)
        printf("%-28s n=%d per call: put %.1f get %.1f fetch %.1f (root)\n", "broadcast 4 KiB, even PEs", n,
               (double)t.put / CALLS, (double)t.get / CALLS, (double)t.fetch / CALLS);
    fflush(stdout);
    CHECK_MSG(t.get == 0 && (shoal_rt.amo_fabric || t.fetch == 0),
              "broadcast on the even PEs: %ld gets and %ld fetching atomics in %d calls (read-back)", t.get, t.fetch,
              CALLS);
    if (me == 0)
        CHECK_MSG(t.put == (long)(set - 1) * CALLS,
                  "broadcast on the even PEs: %ld puts at the root in %d calls, want %d each", t.put, CALLS, set - 1);

    shoal_rt.transport = real;
    shmem_barrier_all();
    shmem_free(dst);
    shmem_free(src);
    shmem_finalize();
    return test_finish();
}
