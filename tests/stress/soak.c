/* soak.c: a randomized soak of the whole API, bounded in steps and time.
 *
 * Every PE runs the same sequence of steps, drawn from a generator seeded by
 * the job seed alone (the shared stream), so collectives and barriers line
 * up; inside a step each PE draws its own choices (target, size, offset,
 * operation) from a generator seeded by (seed, step, PE). Every PE can
 * recompute any other PE's choices, so a receiver knows exactly what its
 * senders did and checks every byte. Step kinds:
 *   rma     put/put_nbi/ctx put/p/iput to a neighbour at a shared distance,
 *           get/get_nbi/iget/g from another; receivers compare their whole
 *           inbox with a private shadow, so stray and missing bytes show
 *   signal  put_signal (ADD and SET, blocking and nbi) into a per-sender
 *           slot; the receiver waits on each sender's signal, then checks
 *   amo     add/fetch_add/inc/fetch_inc/cswap loops/xor/ctx adds on random
 *           PEs' counters; the contributions are sum- and xor-reduced
 *           (collectives checked by the counters) and every counter must
 *           match; fetched values never go below the last known value
 *   lock    set_lock/test_lock guarding a get-increment-put on a random
 *           home PE, with an atomic occupancy count; the total is exact
 *   coll    broadcast, collect, fcollect, alltoall, sum/max/xor reductions
 *           (in place too) and team sync on world, strided splits and both
 *           axes of a 2-D split, against a serial reference, guards checked
 * Every 8 steps a max-reduction of (failures, stop) lets all PEs stop
 * together: after SHOAL_SOAK_SECONDS (default 60), SHOAL_SOAK_STEPS
 * (default unbounded) or the first failure. PE 0 prints the seed;
 * SHOAL_SOAK_SEED=<seed> with the same PE count replays the same steps;
 * SHOAL_SOAK_ONLY=coll,amo (say) keeps to some kinds of step.
 * Exit 0 pass, 1 fail. */
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"

#define SLOT 4096        /* bytes per sender in the byte inboxes */
#define LSLOT 256        /* longs per sender in the strided inbox */
#define PUB 65536        /* bytes each PE publishes for gets */
#define NCTR 8           /* atomic counters per PE */
#define CMAX 64          /* elements per PE in a collective */
#define GUARD 16         /* guard longs after collective results */
#define NTEAMS 5

static int me, npes;
static uint64_t seed;
static long step;
static unsigned long long ops;
static int trace; /* SHOAL_SOAK_TRACE=1: one line per collective */

/* Symmetric objects. */
static unsigned char *inbox, *sinbox, *pub;
static long *linbox;
static uint64_t *sigs;
static long *ctr, *lockvar, *lockctr, *occupancy;
static unsigned long *xw;
static long *csrc, *cdst, *ctrl_src, *ctrl_dst, *red_src, *red_dst;
static unsigned long *xred_src, *xred_dst;

/* Private shadows and expectations. */
static unsigned char *inbox_shadow, *sinbox_shadow;
static long *linbox_shadow;
static uint64_t *sig_expect;
static long *ctr_all;           /* every PE's counters as last verified */
static unsigned long *xw_all;   /* every PE's xor words as last verified */
static unsigned pub_salt;
static shmem_ctx_t ctx;
static shmem_team_t teams[NTEAMS];
static const char *team_names[NTEAMS] = {"world", "evens", "odds", "2d-x", "2d-y"};

static uint64_t mix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

struct rng {
    uint64_t s;
};
static uint64_t next(struct rng *r) { return mix64(r->s++ * 0x2545F4914F6CDD1Dull); }
static unsigned below(struct rng *r, unsigned n) { return n ? (unsigned)(next(r) % n) : 0; }
/* The choices PE pe makes in this step (kind k separates several streams). */
static struct rng rng_of(int pe, unsigned k)
{
    return (struct rng){mix64(seed ^ mix64((uint64_t)step * 1000003u + (uint64_t)pe * 131u + k))};
}

static unsigned char byte_of(int pe, size_t i, unsigned salt)
{
    return (unsigned char)mix64(((uint64_t)pe << 48) ^ ((uint64_t)salt << 24) ^ i ^ seed);
}
static long val_of(int pe, size_t i, long s) { return (long)(mix64((uint64_t)pe * 7919u + i * 104729u + (uint64_t)s * 15485863u + seed) % 2000001) - 1000000; }

#define FAILS(cond, fmt, ...) CHECK_MSG(cond, "seed %llu step %ld: " fmt, (unsigned long long)seed, step, __VA_ARGS__)

static void compare(const unsigned char *got, const unsigned char *want, size_t n, const char *what, int from)
{
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i]) {
            size_t bad = 0;
            for (size_t j = i; j < n; j++) bad += got[j] != want[j];
            FAILS(0, "%s from PE %d: %zu of %zu bytes differ, first at %zu: 0x%02x, expected 0x%02x", what, from, bad, n,
                  i, got[i], want[i]);
            return;
        }
}

/* ---- rma ---------------------------------------------------------------- */

struct put_plan {
    unsigned mode, off, len; /* modes 0-3 bytes into inbox, 4 longs into linbox */
    unsigned stride;
};
static struct put_plan put_plan_of(int pe)
{
    struct rng r = rng_of(pe, 1);
    struct put_plan p = {below(&r, 5), 0, 0, 1};
    if (p.mode < 4) {
        p.len = 1 + below(&r, below(&r, 2) ? 64 : SLOT);
        p.off = below(&r, SLOT - p.len + 1);
    } else {
        p.stride = 1 + below(&r, 4);
        p.len = 1 + below(&r, LSLOT / p.stride);
        p.off = below(&r, LSLOT - (p.len - 1) * p.stride);
    }
    return p;
}

static void step_rma(struct rng *shared)
{
    const int d = npes > 1 ? 1 + (int)below(shared, (unsigned)npes - 1) : 0;
    const int to = (me + d) % npes, from = (me - d + npes) % npes;
    const unsigned salt = (unsigned)step;
    struct put_plan p = put_plan_of(me);
    unsigned char src[SLOT];
    long lsrc[LSLOT];
    if (p.mode < 4) {
        for (unsigned i = 0; i < p.len; i++) src[i] = byte_of(me, p.off + i, salt);
        unsigned char *dst = inbox + (size_t)me * SLOT + p.off;
        switch (p.mode) {
        case 0: shmem_putmem(dst, src, p.len, to); break;
        case 1: shmem_putmem_nbi(dst, src, p.len, to); break;
        case 2: shmem_ctx_putmem(ctx, dst, src, p.len, to); shmem_ctx_quiet(ctx); break;
        default:
            for (unsigned i = 0; i < p.len; i++) shmem_char_p((char *)dst + i, (char)src[i], to);
            break;
        }
        ops += p.mode == 3 ? p.len : 1;
    } else {
        for (unsigned i = 0; i < p.len; i++) lsrc[i] = val_of(me, p.off + i * p.stride, salt);
        shmem_long_iput(linbox + (size_t)me * LSLOT + p.off, lsrc, p.stride, 1, p.len, to);
        ops++;
    }

    /* Gets from another distance, checked at once against the published pattern. */
    struct rng r = rng_of(me, 2);
    const int gfrom = (me + 1 + (int)below(&r, (unsigned)npes)) % npes;
    const unsigned glen = 1 + below(&r, below(&r, 2) ? 128 : PUB / 4), goff = below(&r, PUB - glen + 1);
    unsigned char got[PUB / 4], want[PUB / 4];
    for (unsigned i = 0; i < glen; i++) want[i] = byte_of(gfrom, goff + i, pub_salt);
    switch (below(&r, 4)) {
    case 0: shmem_getmem(got, pub + goff, glen, gfrom); break;
    case 1: shmem_getmem_nbi(got, pub + goff, glen, gfrom); shmem_quiet(); break;
    case 2: shmem_ctx_getmem(ctx, got, pub + goff, glen, gfrom); break;
    default:
        if (glen > 256)
            shmem_getmem(got, pub + goff, glen, gfrom);
        else
            for (unsigned i = 0; i < glen; i++) got[i] = (unsigned char)shmem_char_g((char *)pub + goff + i, gfrom);
        break;
    }
    ops++;
    compare(got, want, glen, "get of the published bytes", gfrom);
    /* A strided get of longs read back from the published bytes as longs. */
    const unsigned gs = 1 + below(&r, 3), gn = 1 + below(&r, 32);
    long lgot[32], lwant[32];
    const long *lpub = (const long *)pub;
    shmem_long_iget(lgot, lpub, 1, gs, gn, gfrom);
    ops++;
    for (unsigned i = 0; i < gn; i++) {
        unsigned char b[sizeof(long)];
        for (unsigned k = 0; k < sizeof(long); k++) b[k] = byte_of(gfrom, (size_t)i * gs * sizeof(long) + k, pub_salt);
        memcpy(&lwant[i], b, sizeof b);
    }
    compare((unsigned char *)lgot, (unsigned char *)lwant, gn * sizeof(long), "iget of the published longs", gfrom);

    shmem_barrier_all(); /* completes the puts */
    struct put_plan q = put_plan_of(from);
    if (q.mode < 4) {
        unsigned char *sh = inbox_shadow + (size_t)from * SLOT;
        for (unsigned i = 0; i < q.len; i++) sh[q.off + i] = byte_of(from, q.off + i, salt);
    } else {
        long *sh = linbox_shadow + (size_t)from * LSLOT;
        for (unsigned i = 0; i < q.len; i++) sh[q.off + i * q.stride] = val_of(from, q.off + i * q.stride, salt);
    }
    compare(inbox, inbox_shadow, (size_t)npes * SLOT, "byte inbox after puts", from);
    compare((unsigned char *)linbox, (unsigned char *)linbox_shadow, (size_t)npes * LSLOT * sizeof(long),
            "strided inbox after iputs", from);
    /* Now and then every PE republishes its bytes under a new salt. */
    if (below(shared, 8) == 0) {
        shmem_barrier_all(); /* nobody still reads the old ones */
        pub_salt = (unsigned)step + 0x5000;
        for (size_t i = 0; i < PUB; i++) pub[i] = byte_of(me, i, pub_salt);
    }
    shmem_barrier_all(); /* the next step's puts wait until every PE checked */
}

/* ---- signal ------------------------------------------------------------- */

static void step_signal(struct rng *shared)
{
    const int d = npes > 1 ? 1 + (int)below(shared, (unsigned)npes - 1) : 0;
    const int to = (me + d) % npes, from = (me - d + npes) % npes;
    const unsigned salt = (unsigned)step + 0x9000;
    struct rng r = rng_of(me, 3);
    const unsigned len = 1 + below(&r, SLOT), mode = below(&r, 4);
    unsigned char src[SLOT];
    for (unsigned i = 0; i < len; i++) src[i] = byte_of(me, i, salt);
    uint64_t *sig = sigs + me;
    unsigned char *dst = sinbox + (size_t)me * SLOT;
    /* SET writes step + 1, ADD adds one: the receiver knows which to expect. */
    const uint64_t next_count = (uint64_t)step + 1;
    switch (mode) {
    case 0: shmem_putmem_signal(dst, src, len, sig, next_count, SHMEM_SIGNAL_SET, to); break;
    case 1: shmem_putmem_signal_nbi(dst, src, len, sig, next_count, SHMEM_SIGNAL_SET, to); break;
    case 2: shmem_putmem_signal(dst, src, len, sig, 1, SHMEM_SIGNAL_ADD, to); break;
    default: shmem_ctx_putmem_signal_nbi(ctx, dst, src, len, sig, 1, SHMEM_SIGNAL_ADD, to); break;
    }
    if (mode == 1) shmem_quiet();
    if (mode == 3) shmem_ctx_quiet(ctx);
    ops++;
    /* Wait for the sender's signal, without a barrier. */
    struct rng fr = rng_of(from, 3);
    const unsigned flen = 1 + below(&fr, SLOT), fmode = below(&fr, 4);
    const uint64_t want = fmode < 2 ? (uint64_t)step + 1 : sig_expect[from] + 1;
    uint64_t seen = shmem_signal_wait_until(sigs + from, SHMEM_CMP_EQ, want);
    FAILS(seen == want, "signal from PE %d: %llu, expected %llu", from, (unsigned long long)seen,
          (unsigned long long)want);
    FAILS(shmem_signal_fetch(sigs + from) == want, "signal_fetch from PE %d", from);
    sig_expect[from] = want;
    unsigned char *sh = sinbox_shadow + (size_t)from * SLOT;
    for (unsigned i = 0; i < flen; i++) sh[i] = byte_of(from, i, salt);
    compare(sinbox + (size_t)from * SLOT, sh, SLOT, "put_signal data", from);
    shmem_barrier_all(); /* the next step's puts wait until every PE checked */
}

/* ---- amo ---------------------------------------------------------------- */

static void step_amo(struct rng *shared)
{
    (void)shared;
    struct rng r = rng_of(me, 4);
    const size_t nk = (size_t)npes * NCTR;
    long *add = calloc(nk, sizeof(long));
    unsigned long *xr = calloc(nk, sizeof(unsigned long));
    const unsigned m = 1 + below(&r, 64);
    for (unsigned i = 0; i < m; i++) {
        const int t = (int)below(&r, (unsigned)npes);
        const unsigned k = below(&r, NCTR);
        long *c = ctr + k;
        const long v = 1 + (long)below(&r, 1000);
        long old = -1;
        switch (below(&r, 8)) {
        case 0: shmem_long_atomic_add(c, v, t); add[t * NCTR + k] += v; break;
        case 1: old = shmem_long_atomic_fetch_add(c, v, t); add[t * NCTR + k] += v; break;
        case 2: shmem_long_atomic_inc(c, t); add[t * NCTR + k] += 1; break;
        case 3: old = shmem_long_atomic_fetch_inc(c, t); add[t * NCTR + k] += 1; break;
        case 4: { /* compare-and-swap loop */
            long cur = shmem_long_atomic_fetch(c, t), seen;
            while ((seen = shmem_long_atomic_compare_swap(c, cur, cur + v, t)) != cur) cur = seen;
            old = cur;
            add[t * NCTR + k] += v;
            break;
        }
        case 5: shmem_ctx_long_atomic_add(ctx, c, v, t); add[t * NCTR + k] += v; break;
        case 6: {
            const unsigned long mask = (unsigned long)next(&r);
            shmem_ulong_atomic_xor(xw + k, mask, t);
            xr[t * NCTR + k] ^= mask;
            break;
        }
        default: {
            const unsigned long mask = (unsigned long)next(&r);
            unsigned long o = shmem_ulong_atomic_fetch_xor(xw + k, mask, t);
            (void)o;
            xr[t * NCTR + k] ^= mask;
            break;
        }
        }
        ops++;
        if (old != -1)
            FAILS(old >= ctr_all[t * NCTR + k], "fetched counter %u of PE %d: %ld, below the known %ld", k, t, old,
                  ctr_all[t * NCTR + k]);
    }
    shmem_ctx_quiet(ctx);
    shmem_quiet();
    /* Reduce the contributions: a collective checked by the counters. */
    memcpy(red_src, add, nk * sizeof(long));
    memcpy(xred_src, xr, nk * sizeof(unsigned long));
    shmem_barrier_all();
    shmem_long_sum_reduce(SHMEM_TEAM_WORLD, red_dst, red_src, nk);
    shmem_ulong_xor_reduce(SHMEM_TEAM_WORLD, xred_dst, xred_src, nk);
    ops += 2;
    for (size_t j = 0; j < nk; j++) {
        ctr_all[j] += red_dst[j];
        xw_all[j] ^= xred_dst[j];
    }
    for (unsigned k = 0; k < NCTR; k++) {
        FAILS(ctr[k] == ctr_all[me * NCTR + k], "counter %u: %ld, expected %ld", k, ctr[k], ctr_all[me * NCTR + k]);
        FAILS(xw[k] == xw_all[me * NCTR + k], "xor word %u: %#lx, expected %#lx", k, xw[k], xw_all[me * NCTR + k]);
    }
    const int t = (int)below(&r, (unsigned)npes);
    const unsigned k = below(&r, NCTR);
    const long far = shmem_long_atomic_fetch(ctr + k, t);
    FAILS(far == ctr_all[t * NCTR + k], "atomic_fetch of counter %u on PE %d: %ld, expected %ld", k, t, far,
          ctr_all[t * NCTR + k]);
    free(add);
    free(xr);
    shmem_barrier_all(); /* the next step's reduce buffers */
}

/* ---- lock --------------------------------------------------------------- */

static void step_lock(struct rng *shared)
{
    const int home = (int)below(shared, (unsigned)npes);
    struct rng r = rng_of(me, 5);
    const unsigned rounds = below(&r, 9);
    const long before = shmem_long_g(lockctr, home);
    shmem_barrier_all(); /* everyone read before anyone increments */
    for (unsigned i = 0; i < rounds; i++) {
        if (below(&r, 3) == 0)
            while (shmem_test_lock(lockvar) != 0) {
            }
        else
            shmem_set_lock(lockvar);
        const int inside = shmem_int_atomic_fetch_inc((int *)occupancy, home);
        FAILS(inside == 0, "%d other PE(s) inside the lock", inside);
        const long v = shmem_long_g(lockctr, home);
        shmem_long_p(lockctr, v + 1, home);
        shmem_int_atomic_add((int *)occupancy, -1, home);
        shmem_clear_lock(lockvar);
        ops += 5;
    }
    shmem_barrier_all();
    long total = 0;
    for (int p = 0; p < npes; p++) {
        struct rng pr = rng_of(p, 5);
        total += below(&pr, 9);
    }
    const long after = shmem_long_g(lockctr, home);
    FAILS(after == before + total, "locked counter on PE %d: %ld, expected %ld + %ld", home, after, before, total);
    shmem_barrier_all();
}

/* ---- coll --------------------------------------------------------------- */

static int world_of(shmem_team_t t, int j) { return shmem_team_translate_pe(t, j, SHMEM_TEAM_WORLD); }

static void step_coll(struct rng *shared)
{
    const int ti = (int)below(shared, NTEAMS);
    const unsigned op = below(shared, 9);
    const size_t n = 1 + below(shared, CMAX);
    const unsigned inplace = below(shared, 2);
    const uint64_t root_draw = next(shared); /* drawn by members and non-members alike */
    const shmem_team_t t = teams[ti];
    const long s = step;
    if (t == SHMEM_TEAM_INVALID) {
        shmem_barrier_all();
        return;
    }
    const int tn = shmem_team_n_pes(t), tme = shmem_team_my_pe(t);
    const int root = (int)(root_draw % (unsigned)tn);
    if (trace) fprintf(stderr, "soak: PE %d step %ld: op %u on team %s begins\n", me, step, op, team_names[ti]);
    long *exp = malloc(sizeof(long) * ((size_t)CMAX * (size_t)tn + GUARD));
    for (size_t i = 0; i < (size_t)CMAX * (size_t)tn + GUARD; i++) cdst[i] = -7;
    const char *name = "?";
    size_t nres = 0;
    int rc = 0;
    long *dst = cdst;
    switch (op) {
    case 0:
        name = "broadcast";
        for (size_t i = 0; i < n; i++) csrc[i] = val_of(me, i, s);
        shmem_team_sync(t);
        rc = shmem_long_broadcast(t, cdst, csrc, n, root);
        for (size_t i = 0; i < n; i++) exp[i] = val_of(world_of(t, root), i, s);
        nres = n;
        break;
    case 1:
    case 2: {
        const int fixed = op == 1;
        name = fixed ? "fcollect" : "collect";
        const size_t mine = fixed ? n : (size_t)((unsigned long)(me * 7 + s) % (n + 1));
        for (size_t i = 0; i < mine; i++) csrc[i] = val_of(me, i, s);
        shmem_team_sync(t);
        rc = fixed ? shmem_long_fcollect(t, cdst, csrc, n) : shmem_long_collect(t, cdst, csrc, mine);
        for (int j = 0; j < tn; j++) {
            const int w = world_of(t, j);
            const size_t cnt = fixed ? n : (size_t)((unsigned long)(w * 7 + s) % (n + 1));
            for (size_t i = 0; i < cnt; i++) exp[nres++] = val_of(w, i, s);
        }
        break;
    }
    case 3:
        name = "alltoall";
        for (size_t i = 0; i < n * (size_t)tn; i++) csrc[i] = val_of(me, i, s);
        shmem_team_sync(t);
        rc = shmem_long_alltoall(t, cdst, csrc, n);
        for (int j = 0; j < tn; j++)
            for (size_t i = 0; i < n; i++) exp[nres++] = val_of(world_of(t, j), (size_t)tme * n + i, s);
        break;
    case 4:
    case 5:
    case 6: {
        name = op == 4 ? "sum_reduce" : op == 5 ? "max_reduce" : "xor_reduce";
        for (size_t i = 0; i < n; i++) csrc[i] = val_of(me, i, s);
        if (inplace) {
            for (size_t i = 0; i < n; i++) cdst[i] = csrc[i];
            dst = cdst;
        }
        shmem_team_sync(t);
        const long *in = inplace ? cdst : csrc;
        rc = op == 4   ? shmem_long_sum_reduce(t, cdst, in, n)
             : op == 5 ? shmem_long_max_reduce(t, cdst, in, n)
                       : shmem_long_xor_reduce(t, cdst, in, n);
        for (size_t i = 0; i < n; i++) {
            long a = val_of(world_of(t, 0), i, s);
            for (int j = 1; j < tn; j++) {
                const long b = val_of(world_of(t, j), i, s);
                a = op == 4 ? a + b : op == 5 ? (b > a ? b : a) : a ^ b;
            }
            exp[i] = a;
        }
        nres = n;
        break;
    }
    case 7: {
        name = "double sum_reduce";
        double *ds = (double *)csrc, *dd = (double *)cdst;
        for (size_t i = 0; i < n; i++) ds[i] = (double)val_of(me, i, s) / 4.0;
        shmem_team_sync(t);
        rc = shmem_double_sum_reduce(t, dd, ds, n);
        for (size_t i = 0; i < n; i++) {
            double a = 0;
            for (int j = 0; j < tn; j++) a += (double)val_of(world_of(t, j), i, s) / 4.0;
            memcpy(&exp[i], &a, sizeof a);
        }
        nres = n;
        break;
    }
    default:
        name = "team_sync";
        rc = shmem_team_sync(t);
        break;
    }
    ops++;
    if (trace)
        fprintf(stderr, "soak: PE %d step %ld: %s on team %s (%d PEs, n=%zu, root %d%s)\n", me, step, name,
                team_names[ti], tn, n, root, inplace ? ", in place" : "");
    FAILS(rc == 0, "%s on team %s returned %d", name, team_names[ti], rc);
    for (size_t i = 0; i < GUARD; i++) exp[nres + i] = -7;
    for (size_t i = 0; i < nres + GUARD; i++)
        if (dst[i] != exp[i]) {
            FAILS(0, "%s on team %s (%d PEs, n=%zu, root %d%s): element %zu is %ld, expected %ld%s", name,
                  team_names[ti], tn, n, root, inplace ? ", in place" : "", i, dst[i], exp[i],
                  i >= nres ? " (guard)" : "");
            break;
        }
    free(exp);
    shmem_barrier_all(); /* non-members wait here; next step may reuse csrc/cdst */
}

/* ---- driver ------------------------------------------------------------- */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *sym(size_t n)
{
    void *p = shmem_calloc(1, n);
    if (!p) {
        fprintf(stderr, "soak: PE %d: shmem_calloc(%zu) failed\n", me, n);
        shmem_global_exit(1);
    }
    return p;
}

int main(void)
{
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    test_pe = me;
    const char *e_seed = getenv("SHOAL_SOAK_SEED"), *e_sec = getenv("SHOAL_SOAK_SECONDS"),
               *e_steps = getenv("SHOAL_SOAK_STEPS"), *only = getenv("SHOAL_SOAK_ONLY");
    trace = getenv("SHOAL_SOAK_TRACE") != NULL;
    const double seconds = e_sec ? atof(e_sec) : 60.0;
    const long max_steps = e_steps ? atol(e_steps) : -1;

    /* PE 0 picks the seed; everyone takes it. */
    uint64_t *seed_sym = sym(sizeof(uint64_t));
    if (me == 0) *seed_sym = e_seed ? strtoull(e_seed, NULL, 0) : mix64((uint64_t)time(NULL) ^ (uint64_t)now());
    shmem_barrier_all();
    shmem_getmem(&seed, seed_sym, sizeof seed, 0);
    if (me == 0) {
        printf("soak: %d PEs, seed %llu (replay: SHOAL_SOAK_SEED=%llu), %.0f s, step limit %ld\n", npes,
               (unsigned long long)seed, (unsigned long long)seed, seconds, max_steps);
        fflush(stdout);
    }

    inbox = sym((size_t)npes * SLOT);
    sinbox = sym((size_t)npes * SLOT);
    pub = sym(PUB);
    linbox = sym((size_t)npes * LSLOT * sizeof(long));
    sigs = sym((size_t)npes * sizeof(uint64_t));
    ctr = sym(NCTR * sizeof(long));
    xw = sym(NCTR * sizeof(unsigned long));
    lockvar = sym(sizeof(long));
    lockctr = sym(sizeof(long));
    occupancy = sym(sizeof(long));
    csrc = sym(sizeof(long) * ((size_t)CMAX * (size_t)npes + GUARD));
    cdst = sym(sizeof(long) * ((size_t)CMAX * (size_t)npes + GUARD));
    ctrl_src = sym(2 * sizeof(long));
    ctrl_dst = sym(2 * sizeof(long));
    red_src = sym((size_t)npes * NCTR * sizeof(long));
    red_dst = sym((size_t)npes * NCTR * sizeof(long));
    xred_src = sym((size_t)npes * NCTR * sizeof(long));
    xred_dst = sym((size_t)npes * NCTR * sizeof(long));
    inbox_shadow = calloc((size_t)npes, SLOT);
    sinbox_shadow = calloc((size_t)npes, SLOT);
    linbox_shadow = calloc((size_t)npes * LSLOT, sizeof(long));
    sig_expect = calloc((size_t)npes, sizeof(uint64_t));
    ctr_all = calloc((size_t)npes * NCTR, sizeof(long));
    xw_all = calloc((size_t)npes * NCTR, sizeof(unsigned long));
    pub_salt = 1;
    for (size_t i = 0; i < PUB; i++) pub[i] = byte_of(me, i, pub_salt);
    if (shmem_ctx_create(0, &ctx) != 0) ctx = SHMEM_CTX_DEFAULT;

    teams[0] = SHMEM_TEAM_WORLD;
    for (int i = 1; i < NTEAMS; i++) teams[i] = SHMEM_TEAM_INVALID;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2, NULL, 0, &teams[1]);
    if (npes > 1) shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 2, npes / 2, NULL, 0, &teams[2]);
    shmem_team_split_2d(SHMEM_TEAM_WORLD, npes > 2 ? 2 : 1, NULL, 0, &teams[3], NULL, 0, &teams[4]);
    shmem_barrier_all();

    struct rng shared = {mix64(seed)};
    unsigned long kinds[5] = {0};
    static const char *kind_names[5] = {"rma", "signal", "amo", "lock", "coll"};
    const double t0 = now();
    for (step = 0;; step++) {
        if (step % 8 == 0) {
            ctrl_src[0] = test_failures > 0;
            ctrl_src[1] = me == 0 && (now() - t0 >= seconds || (max_steps >= 0 && step >= max_steps));
            shmem_long_max_reduce(SHMEM_TEAM_WORLD, ctrl_dst, ctrl_src, 2);
            if (ctrl_dst[0] || ctrl_dst[1]) break;
        }
        int k;
        do {
            const unsigned kind = below(&shared, 100);
            k = kind < 30 ? 0 : kind < 45 ? 1 : kind < 65 ? 2 : kind < 75 ? 3 : 4;
        } while (only && !strstr(only, kind_names[k]));
        kinds[k]++;
        switch (k) {
        case 0: step_rma(&shared); break;
        case 1: step_signal(&shared); break;
        case 2: step_amo(&shared); break;
        case 3: step_lock(&shared); break;
        default: step_coll(&shared); break;
        }
    }
    const double dt = now() - t0;
    const int failed = ctrl_dst[0] != 0; /* the heap goes away at finalize */
    shmem_barrier_all();
    long *all_ops = sym(sizeof(long)), *sum_ops = sym(sizeof(long));
    *all_ops = (long)ops;
    shmem_long_sum_reduce(SHMEM_TEAM_WORLD, sum_ops, all_ops, 1);
    if (me == 0) {
        printf("soak: seed %llu: %ld steps (", (unsigned long long)seed, step);
        for (int k = 0; k < 5; k++) printf("%s%s %lu", k ? ", " : "", kind_names[k], kinds[k]);
        printf("), %ld operations on all PEs in %.1f s, %s\n", *sum_ops, dt, failed ? "FAILED" : "all checked");
        fflush(stdout);
    }
    if (failed && !test_failures)
        fprintf(stderr, "soak: PE %d saw no failure itself; another PE did (seed %llu)\n", me,
                (unsigned long long)seed);
    for (int i = 1; i < NTEAMS; i++)
        if (teams[i] != SHMEM_TEAM_INVALID) shmem_team_destroy(teams[i]);
    if (ctx != SHMEM_CTX_DEFAULT) shmem_ctx_destroy(ctx);
    free(inbox_shadow), free(sinbox_shadow), free(linbox_shadow);
    free(sig_expect), free(ctr_all), free(xw_all);
    shmem_finalize();
    return failed ? TEST_FAIL : test_finish();
}
