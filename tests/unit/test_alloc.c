/* test_alloc.c: the symmetric heap allocator. Determinism, alignment,
 * exhaustion, bad frees, coalescing, resize, and a 100,000-operation
 * randomized run against a shadow model of granule ownership. */
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "heap/alloc.h"
#include "util/log.h"

#define GR ((size_t)SHOAL_ALLOC_GRANULE)
#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)
#define GiB ((size_t)1 << 30)

static uint64_t rng_state;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static shoal_alloc_t *make(size_t size)
{
    shoal_alloc_t *a = NULL;
    shoal_status_t st = shoal_alloc_create(size, &a);
    CHECK(st == SHOAL_OK && a != NULL);
    if (!a) exit(TEST_FAIL);
    return a;
}

/* A snapshot of the observable state, to prove failed calls change nothing. */
struct snap {
    size_t free_bytes, largest, live;
    unsigned long long fp;
};
static struct snap take(const shoal_alloc_t *a)
{
    struct snap s = {shoal_alloc_free_bytes(a), shoal_alloc_largest_free(a), shoal_alloc_live_blocks(a),
                     shoal_alloc_fingerprint(a)};
    return s;
}
static int same(struct snap x, struct snap y)
{
    return x.free_bytes == y.free_bytes && x.largest == y.largest && x.live == y.live && x.fp == y.fp;
}

static void test_basic(void)
{
    shoal_alloc_t *a = make(1 * MiB + 10); /* rounded down to the granule */
    size_t o1, o2, o3;
    CHECK(shoal_alloc_free_bytes(a) == 1 * MiB);
    CHECK(shoal_alloc_alloc(a, 100, 0, &o1) == SHOAL_OK && o1 == 0);
    CHECK(shoal_alloc_block_size(a, o1) == 128);
    CHECK(shoal_alloc_alloc(a, 1, 0, &o2) == SHOAL_OK && o2 == 128);
    CHECK(shoal_alloc_alloc(a, 64, 0, &o3) == SHOAL_OK && o3 == 192);
    CHECK(shoal_alloc_live_blocks(a) == 3);
    CHECK(shoal_alloc_free_bytes(a) == 1 * MiB - 256);
    CHECK(shoal_alloc_largest_free(a) == 1 * MiB - 256);
    CHECK(shoal_alloc_alloc(a, 0, 0, &o1) == SHOAL_ERR_INVAL);
    CHECK(shoal_alloc_alloc(a, 64, 3 * GR, &o1) == SHOAL_ERR_INVAL);
    /* a hole is reused first-fit */
    CHECK(shoal_alloc_free(a, 128) == SHOAL_OK);
    CHECK(shoal_alloc_alloc(a, 10, 0, &o2) == SHOAL_OK && o2 == 128);
    CHECK(shoal_alloc_check(a) == SHOAL_OK);
    shoal_alloc_t *b = NULL;
    CHECK(shoal_alloc_create(GR - 1, &b) == SHOAL_ERR_INVAL && b == NULL);
    shoal_alloc_destroy(a);
}

static void test_determinism(void)
{
    shoal_alloc_t *a = make(256 * MiB), *b = make(256 * MiB), *c = make(256 * MiB);
    size_t live[512];
    size_t n = 0;
    int mismatches = 0;
    rng_state = 0x1234567ull;
    CHECK(shoal_alloc_fingerprint(a) == shoal_alloc_fingerprint(b));
    for (int i = 0; i < 20000; i++) {
        uint64_t r = rnd();
        if (n < 512 && (n == 0 || r % 3 != 0)) {
            size_t sz = 1 + rnd() % (r % 7 == 0 ? 1 * MiB : 8 * KiB);
            size_t al = r % 11 == 0 ? (size_t)1 << (6 + rnd() % 16) : 0;
            size_t oa = 1, ob = 2;
            shoal_status_t sa = shoal_alloc_alloc(a, sz, al, &oa);
            shoal_status_t sb = shoal_alloc_alloc(b, sz, al, &ob);
            mismatches += sa != sb || (sa == SHOAL_OK && oa != ob);
            if (sa == SHOAL_OK) live[n++] = oa;
        } else if (r % 5 == 0) {
            size_t k = rnd() % n, ns = 1 + rnd() % (64 * KiB);
            mismatches += shoal_alloc_resize(a, live[k], ns) != shoal_alloc_resize(b, live[k], ns);
        } else {
            size_t k = rnd() % n;
            mismatches += shoal_alloc_free(a, live[k]) != SHOAL_OK;
            mismatches += shoal_alloc_free(b, live[k]) != SHOAL_OK;
            live[k] = live[--n];
        }
        if (i % 97 == 0) mismatches += shoal_alloc_fingerprint(a) != shoal_alloc_fingerprint(b);
    }
    CHECK_MSG(mismatches == 0, "%d mismatches between identical call sequences", mismatches);
    CHECK(shoal_alloc_fingerprint(a) == shoal_alloc_fingerprint(b));
    CHECK(shoal_alloc_free_bytes(a) == shoal_alloc_free_bytes(b));
    /* a different history gives a different fingerprint */
    size_t o;
    CHECK(shoal_alloc_alloc(c, 64, 0, &o) == SHOAL_OK);
    CHECK(shoal_alloc_fingerprint(a) != shoal_alloc_fingerprint(c));
    size_t o1, o2;
    CHECK(shoal_alloc_alloc(a, 64, 0, &o1) == SHOAL_OK && shoal_alloc_alloc(b, 128, 0, &o2) == SHOAL_OK);
    CHECK(shoal_alloc_fingerprint(a) != shoal_alloc_fingerprint(b));
    CHECK(shoal_alloc_check(a) == SHOAL_OK && shoal_alloc_check(b) == SHOAL_OK);
    shoal_alloc_destroy(a);
    shoal_alloc_destroy(b);
    shoal_alloc_destroy(c);
}

static void test_alignment(void)
{
    /* Bookkeeping is private, so a large managed range costs nothing. */
    shoal_alloc_t *a = make(8 * GiB);
    size_t o, pad;
    for (size_t al = 1; al <= 2 * GiB; al <<= 1) {
        CHECK(shoal_alloc_alloc(a, 64, 0, &pad) == SHOAL_OK); /* misalign the next start */
        CHECK(shoal_alloc_alloc(a, 100, al, &o) == SHOAL_OK);
        CHECK_MSG(o % al == 0 && o % GR == 0, "alignment %zu gave offset %zu", al, o);
        CHECK(shoal_alloc_block_size(a, o) == 128);
    }
    CHECK(shoal_alloc_check(a) == SHOAL_OK);
    /* the padding in front of aligned blocks stays usable, first-fit */
    CHECK(shoal_alloc_alloc(a, 1 * MiB, 0, &o) == SHOAL_OK && o < 1 * GiB);
    /* an alignment nothing can satisfy */
    struct snap s = take(a);
    CHECK(shoal_alloc_alloc(a, 64, (size_t)1 << 40, &o) == SHOAL_ERR_NOMEM);
    CHECK(same(s, take(a)));
    shoal_alloc_destroy(a);

    /* alignment at offset 0 of a fresh heap costs no padding */
    a = make(2 * GiB);
    CHECK(shoal_alloc_alloc(a, 10, 1 * GiB, &o) == SHOAL_OK && o == 0);
    CHECK(shoal_alloc_alloc(a, 10, 1 * GiB, &o) == SHOAL_OK && o == 1 * GiB);
    CHECK(shoal_alloc_alloc(a, 10, 1 * GiB, &o) == SHOAL_ERR_NOMEM);
    CHECK(shoal_alloc_free_bytes(a) == 2 * GiB - 128);
    CHECK(shoal_alloc_check(a) == SHOAL_OK);
    shoal_alloc_destroy(a);
}

static void test_exhaustion(void)
{
    shoal_alloc_t *a = make(64 * KiB);
    size_t o, offs[1024];
    size_t n = 0;
    struct snap s = take(a);
    CHECK(shoal_alloc_alloc(a, 64 * KiB + 1, 0, &o) == SHOAL_ERR_NOMEM);
    CHECK(shoal_alloc_alloc(a, SIZE_MAX, 0, &o) == SHOAL_ERR_NOMEM);
    CHECK(same(s, take(a)));
    while (shoal_alloc_alloc(a, 1000, 0, &o) == SHOAL_OK) offs[n++] = o;
    CHECK(n == 64); /* 1000 rounds to 1024 */
    CHECK(shoal_alloc_free_bytes(a) == 0 && shoal_alloc_largest_free(a) == 0);
    s = take(a);
    CHECK(shoal_alloc_alloc(a, 1, 0, &o) == SHOAL_ERR_NOMEM);
    CHECK(same(s, take(a)));
    /* fragmented: plenty free in total, no block large enough */
    for (size_t i = 0; i < n; i += 2) CHECK(shoal_alloc_free(a, offs[i]) == SHOAL_OK);
    CHECK(shoal_alloc_free_bytes(a) == 32 * KiB && shoal_alloc_largest_free(a) == 1 * KiB);
    s = take(a);
    CHECK(shoal_alloc_alloc(a, 1025, 0, &o) == SHOAL_ERR_NOMEM);
    CHECK(shoal_alloc_resize(a, offs[1], 2049) == SHOAL_ERR_NOMEM); /* next hole is 1 KiB */
    CHECK(same(s, take(a)));
    CHECK(shoal_alloc_check(a) == SHOAL_OK);
    shoal_alloc_destroy(a);
}

static void test_bad_free(void)
{
    shoal_alloc_t *a = make(1 * MiB);
    size_t o1, o2;
    CHECK(shoal_alloc_alloc(a, 256, 0, &o1) == SHOAL_OK);
    CHECK(shoal_alloc_alloc(a, 256, 0, &o2) == SHOAL_OK);
    struct snap s = take(a);
    CHECK(shoal_alloc_free(a, o1 + 64) == SHOAL_ERR_INVAL);  /* inside a block */
    CHECK(shoal_alloc_free(a, o1 + 1) == SHOAL_ERR_INVAL);   /* unaligned */
    CHECK(shoal_alloc_free(a, 512 * KiB) == SHOAL_ERR_INVAL); /* free space */
    CHECK(shoal_alloc_free(a, 4 * MiB) == SHOAL_ERR_INVAL);   /* outside */
    CHECK(shoal_alloc_free(a, SIZE_MAX) == SHOAL_ERR_INVAL);
    CHECK(shoal_alloc_resize(a, o1 + 64, 64) == SHOAL_ERR_INVAL);
    CHECK(shoal_alloc_block_size(a, o1 + 64) == 0);
    CHECK(same(s, take(a)));
    CHECK(shoal_alloc_free(a, o1) == SHOAL_OK);
    s = take(a);
    CHECK(shoal_alloc_free(a, o1) == SHOAL_ERR_INVAL); /* double free */
    CHECK(same(s, take(a)));
    CHECK(shoal_alloc_block_size(a, o1) == 0);
    CHECK(shoal_alloc_check(a) == SHOAL_OK);
    shoal_alloc_destroy(a);
}

static void test_coalescing(void)
{
    shoal_alloc_t *a = make(4 * MiB), *fresh = make(4 * MiB);
    size_t offs[2000], n = 0, o;
    rng_state = 0xC0A1E5CEull;
    while (n < 2000 && shoal_alloc_alloc(a, 1 + rnd() % 1500, 0, &o) == SHOAL_OK) offs[n++] = o;
    CHECK(n == 2000);
    for (size_t i = n; i > 1; i--) { /* shuffle the free order */
        size_t j = rnd() % i, t = offs[i - 1];
        offs[i - 1] = offs[j];
        offs[j] = t;
    }
    for (size_t i = 0; i < n; i++) {
        CHECK(shoal_alloc_free(a, offs[i]) == SHOAL_OK);
        if (i % 100 == 0) CHECK(shoal_alloc_check(a) == SHOAL_OK);
    }
    CHECK(shoal_alloc_live_blocks(a) == 0);
    CHECK(shoal_alloc_free_bytes(a) == 4 * MiB && shoal_alloc_largest_free(a) == 4 * MiB);
    CHECK(shoal_alloc_fingerprint(a) == shoal_alloc_fingerprint(fresh));
    CHECK(shoal_alloc_check(a) == SHOAL_OK);
    shoal_alloc_destroy(a);
    shoal_alloc_destroy(fresh);
}

static void test_resize(void)
{
    shoal_alloc_t *a = make(1 * MiB);
    size_t x, y, z, o;
    CHECK(shoal_alloc_alloc(a, 1024, 0, &x) == SHOAL_OK && x == 0);
    CHECK(shoal_alloc_alloc(a, 1024, 0, &y) == SHOAL_OK && y == 1024);
    CHECK(shoal_alloc_resize(a, x, 1024) == SHOAL_OK && shoal_alloc_block_size(a, x) == 1024);
    CHECK(shoal_alloc_resize(a, x, 2048) == SHOAL_ERR_NOMEM); /* y follows */
    CHECK(shoal_alloc_resize(a, x, 0) == SHOAL_ERR_INVAL);
    /* shrink leaves a free hole that a small allocation takes */
    CHECK(shoal_alloc_resize(a, x, 100) == SHOAL_OK && shoal_alloc_block_size(a, x) == 128);
    CHECK(shoal_alloc_free_bytes(a) == 1 * MiB - 128 - 1024);
    CHECK(shoal_alloc_check(a) == SHOAL_OK);
    /* grow back into that hole exactly */
    CHECK(shoal_alloc_resize(a, x, 1024) == SHOAL_OK && shoal_alloc_block_size(a, x) == 1024);
    CHECK(shoal_alloc_check(a) == SHOAL_OK);
    /* shrink merges with the following free block */
    CHECK(shoal_alloc_resize(a, y, 64) == SHOAL_OK);
    CHECK(shoal_alloc_largest_free(a) == 1 * MiB - 1024 - 64);
    CHECK(shoal_alloc_check(a) == SHOAL_OK);
    /* grow partly into the following free block */
    CHECK(shoal_alloc_resize(a, y, 4096) == SHOAL_OK && shoal_alloc_block_size(a, y) == 4096);
    CHECK(shoal_alloc_alloc(a, 64, 0, &z) == SHOAL_OK && z == 1024 + 4096);
    CHECK(shoal_alloc_resize(a, y, 4097) == SHOAL_ERR_NOMEM);
    /* grow the last block up to the end, exactly, then one granule too far */
    size_t left = shoal_alloc_free_bytes(a);
    CHECK(shoal_alloc_resize(a, z, 64 + left) == SHOAL_OK);
    CHECK(shoal_alloc_free_bytes(a) == 0 && shoal_alloc_largest_free(a) == 0);
    struct snap s = take(a);
    CHECK(shoal_alloc_resize(a, z, 64 + left + 64) == SHOAL_ERR_NOMEM);
    CHECK(shoal_alloc_alloc(a, 64, 0, &o) == SHOAL_ERR_NOMEM);
    CHECK(same(s, take(a)));
    CHECK(shoal_alloc_check(a) == SHOAL_OK);
    /* everything back: one block */
    CHECK(shoal_alloc_free(a, y) == SHOAL_OK && shoal_alloc_free(a, z) == SHOAL_OK &&
          shoal_alloc_free(a, x) == SHOAL_OK);
    CHECK(shoal_alloc_largest_free(a) == 1 * MiB && shoal_alloc_check(a) == SHOAL_OK);
    shoal_alloc_destroy(a);
}

/* The random workload, shared by the checked and the timed run. */
#define OPS 100000
#define HEAP (64 * MiB)
#define MAXLIVE 4096

struct model {
    uint32_t *owner; /* per granule: live block id + 1, 0 if free; NULL when timing */
    size_t off[MAXLIVE], size[MAXLIVE];
    uint32_t id[MAXLIVE];
    size_t n;
    uint32_t next_id;
    size_t ok_allocs, nomem, frees, resizes;
};

static int mark(struct model *m, size_t off, size_t size, uint32_t expect, uint32_t set)
{
    int bad = 0;
    for (size_t g = off / GR; g < (off + size) / GR; g++) {
        bad += m->owner[g] != expect;
        m->owner[g] = set;
    }
    return bad;
}

static void workload(shoal_alloc_t *a, struct model *m, uint64_t seed)
{
    rng_state = seed;
    for (int i = 1; i <= OPS; i++) {
        uint64_t r = rnd();
        int want_alloc = m->n < MAXLIVE && (m->n < 64 || r % 100 < 52);
        if (want_alloc) {
            size_t sz = r % 50 == 0 ? 1 + rnd() % (1 * MiB) : 1 + rnd() % (4 * KiB);
            size_t al = r % 23 == 0 ? (size_t)1 << (6 + rnd() % 14) : 0;
            size_t o;
            shoal_status_t st = shoal_alloc_alloc(a, sz, al, &o);
            if (st == SHOAL_OK) {
                size_t bs = shoal_alloc_block_size(a, o);
                if (m->owner) {
                    CHECK(bs >= sz && bs < sz + GR && o % (al ? al : GR) == 0 && o + bs <= HEAP);
                    CHECK_MSG(mark(m, o, bs, 0, m->next_id + 1) == 0, "block %zu+%zu overlaps", o, bs);
                }
                m->off[m->n] = o;
                m->size[m->n] = bs;
                m->id[m->n++] = m->next_id++;
                m->ok_allocs++;
            } else {
                CHECK(st == SHOAL_ERR_NOMEM);
                m->nomem++;
            }
        } else if (r % 100 < 60) {
            size_t k = rnd() % m->n;
            size_t ns = 1 + rnd() % (8 * KiB);
            size_t old = m->size[k];
            shoal_status_t st = shoal_alloc_resize(a, m->off[k], ns);
            CHECK(st == SHOAL_OK || (st == SHOAL_ERR_NOMEM && ns > old));
            if (st == SHOAL_OK) {
                size_t bs = shoal_alloc_block_size(a, m->off[k]);
                if (m->owner) {
                    CHECK(bs >= ns && bs < ns + GR);
                    CHECK(mark(m, m->off[k], old, m->id[k] + 1, 0) == 0);
                    CHECK_MSG(mark(m, m->off[k], bs, 0, m->id[k] + 1) == 0, "resize overlaps");
                }
                m->size[k] = bs;
                m->resizes++;
            }
        } else {
            size_t k = rnd() % m->n;
            CHECK(shoal_alloc_free(a, m->off[k]) == SHOAL_OK);
            if (m->owner) CHECK(mark(m, m->off[k], m->size[k], m->id[k] + 1, 0) == 0);
            m->n--;
            m->off[k] = m->off[m->n];
            m->size[k] = m->size[m->n];
            m->id[k] = m->id[m->n];
            m->frees++;
        }
        if (m->owner && i % 1000 == 0) {
            size_t used = 0;
            for (size_t k = 0; k < m->n; k++) used += m->size[k];
            CHECK(shoal_alloc_check(a) == SHOAL_OK);
            CHECK(shoal_alloc_live_blocks(a) == m->n);
            CHECK(shoal_alloc_free_bytes(a) == HEAP - used);
        }
    }
}

static void test_random(void)
{
    struct model *m = calloc(1, sizeof *m);
    shoal_alloc_t *a = make(HEAP);
    m->owner = calloc(HEAP / GR, sizeof *m->owner);
    if (!m || !m->owner) exit(TEST_FAIL);
    workload(a, m, 0xFEEDFACEull);
    printf("random run: %zu allocs (%zu out of memory), %zu frees, %zu resizes, %zu live at end\n",
           m->ok_allocs, m->nomem, m->frees, m->resizes, m->n);
    CHECK(m->ok_allocs > 30000 && m->frees > 20000 && m->resizes > 1000);
    unsigned long long fp = shoal_alloc_fingerprint(a);
    free(m->owner);
    shoal_alloc_destroy(a);

    /* the same workload, timed, without the shadow model */
    memset(m, 0, sizeof *m);
    a = make(HEAP);
    double t0 = now();
    workload(a, m, 0xFEEDFACEull);
    double dt = now() - t0;
    printf("100000 mixed alloc/resize/free operations in %.1f ms (%.0f ops/s); free %zu bytes, largest free block %zu\n",
           dt * 1e3, OPS / dt, shoal_alloc_free_bytes(a), shoal_alloc_largest_free(a));
    CHECK(fp == shoal_alloc_fingerprint(a));
    CHECK_MSG(dt < 1.0, "100000 operations took %.3f s", dt);
    shoal_alloc_destroy(a);
    free(m);
}

int main(void)
{
    test_basic();
    test_determinism();
    test_alignment();
    test_exhaustion();
    test_bad_free();
    test_coalescing();
    test_resize();
    test_random();
    return test_finish();
}
