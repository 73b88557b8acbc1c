/* put_get.c: contiguous puts and gets. putmem/getmem and their ctx, nbi
 * and typed (uchar/char) forms move sizes 0 to 1 MiB+3 between unaligned
 * offsets 0..7 on both sides, into the heap and into a static array, in a
 * ring (PE i to i+1) and all-to-one (every PE to PE 0). Every byte moved is
 * checked against test_pattern, and the bytes around each target range
 * (guard bytes) must be untouched. */
#include <shmem.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"

#define GLOBAL_CAP ((size_t)12 << 20)
#define HEAP_CAP ((size_t)72 << 20)
#define NMETHODS 5

static unsigned char global_buf[GLOBAL_CAP]; /* static (bss) symmetric target */

static const size_t sizes[] = {0, 1, 3, 7, 8, 63, 64, 65, 4095, 4096, 65537, ((size_t)1 << 20) + 3};
#define NSIZES (sizeof sizes / sizeof sizes[0])

static int me, npes;
static unsigned char *src;  /* private source of puts */
static unsigned char *land; /* private destination of gets */

/* Offsets of combination k: every (dest, source) pair for small sizes, a
 * diagonal covering 0..7 on both sides for large ones. */
static int combo_count(size_t size) { return size <= 4096 ? 64 : 8; }
static int combo_dest(size_t size, int k) { return size <= 4096 ? k / 8 : k; }
static int combo_source(size_t size, int k) { return size <= 4096 ? k % 8 : (5 * k + 3) % 8; }
static size_t slot_stride(size_t size) { return (size + 16 + 63) & ~(size_t)63; }

static void do_put(int method, unsigned char *dest, const unsigned char *source, size_t size, int pe)
{
    switch (method) {
    case 0: shmem_putmem(dest, source, size, pe); break;
    case 1: shmem_ctx_putmem(SHMEM_CTX_DEFAULT, dest, source, size, pe); break;
    case 2: shmem_putmem_nbi(dest, source, size, pe); shmem_quiet(); break;
    case 3: shmem_ctx_putmem_nbi(SHMEM_CTX_DEFAULT, dest, source, size, pe); shmem_ctx_quiet(SHMEM_CTX_DEFAULT); break;
    default: shmem_uchar_put(dest, source, size, pe); break;
    }
}

static void do_get(int method, unsigned char *dest, const unsigned char *source, size_t size, int pe)
{
    switch (method) {
    case 0: shmem_getmem(dest, source, size, pe); break;
    case 1: shmem_ctx_getmem(SHMEM_CTX_DEFAULT, dest, source, size, pe); break;
    case 2: shmem_getmem_nbi(dest, source, size, pe); shmem_quiet(); break;
    case 3: shmem_ctx_getmem_nbi(SHMEM_CTX_DEFAULT, dest, source, size, pe); shmem_ctx_quiet(SHMEM_CTX_DEFAULT); break;
    default: shmem_char_get((char *)dest, (const char *)source, size, pe); break;
    }
}

/* Puts of one size into buf (cap bytes): ring or all-to-one. */
static void put_phase(unsigned char *buf, size_t cap, size_t size, int all_to_one, unsigned salt, const char *where)
{
    const int nsend = all_to_one ? npes : 1;
    const size_t stride = slot_stride(size);
    int nc = combo_count(size);
    if ((size_t)nc * stride * (size_t)nsend > cap) nc = (int)(cap / (stride * (size_t)nsend));
    const size_t region = (size_t)nc * stride;
    const int receiver = !all_to_one || me == 0;
    char what[256];

    if (receiver) memset(buf, GUARD_BYTE, region * (size_t)nsend);
    shmem_barrier_all();
    const int target = all_to_one ? 0 : (me + 1) % npes;
    unsigned char *base = buf + (all_to_one ? region * (size_t)me : 0);
    for (int k = 0; k < nc; k++) {
        const int d = combo_dest(size, k), s = combo_source(size, k);
        fill_pattern(src + s, size, me, 0, salt + (unsigned)k);
        do_put(k % NMETHODS, base + (size_t)k * stride + (size_t)d, src + s, size, target);
    }
    shmem_barrier_all();
    if (!receiver) return;
    for (int i = 0; i < nsend; i++) {
        const int sender = all_to_one ? i : (me - 1 + npes) % npes;
        const unsigned char *rbase = buf + (all_to_one ? region * (size_t)sender : 0);
        for (int k = 0; k < nc; k++) {
            const int d = combo_dest(size, k);
            const unsigned char *slot = rbase + (size_t)k * stride;
            snprintf(what, sizeof what, "%s put %s size %zu from PE %d, dest offset %d, source offset %d, method %d",
                     where, all_to_one ? "all-to-one" : "ring", size, sender, d, combo_source(size, k), k % NMETHODS);
            check_fill(slot, (size_t)d, GUARD_BYTE, what);
            check_pattern(slot + d, size, sender, 0, salt + (unsigned)k, what);
            check_fill(slot + d + size, stride - (size_t)d - size, GUARD_BYTE, what);
        }
    }
}

/* Gets of one size from buf on the ring neighbour or on PE 0. */
static void get_phase(unsigned char *buf, size_t cap, size_t size, int all_to_one, unsigned salt, const char *where)
{
    const size_t exposed = size + 8 + 3 * 64;
    const int nc = combo_count(size);
    char what[256];
    if (exposed > cap) {
        CHECK(!"buffer too small");
        return;
    }
    fill_pattern(buf, exposed, me, 0, salt);
    shmem_barrier_all();
    const int source_pe = all_to_one ? 0 : (me + 1) % npes;
    for (int k = 0; k < nc; k++) {
        const int d = combo_dest(size, k), s = combo_source(size, k);
        const size_t soff = (size_t)s + 64 * (size_t)(k % 4);
        const size_t span = size + 16;
        memset(land, GUARD_BYTE, span);
        do_get(k % NMETHODS, land + d, buf + soff, size, source_pe);
        snprintf(what, sizeof what, "%s get %s size %zu from PE %d, dest offset %d, source offset %zu, method %d",
                 where, all_to_one ? "all-to-one" : "ring", size, source_pe, d, soff, k % NMETHODS);
        check_fill(land, (size_t)d, GUARD_BYTE, what);
        check_pattern(land + d, size, source_pe, soff, salt, what);
        check_fill(land + d + size, span - (size_t)d - size, GUARD_BYTE, what);
    }
    /* Nobody refills a buffer a peer may still be reading. */
    shmem_barrier_all();
}

int main(void)
{
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    test_pe = me;

    const size_t max_size = sizes[NSIZES - 1];
    src = malloc(max_size + 64);
    land = malloc(max_size + 64);
    unsigned char *heap_buf = shmem_malloc(HEAP_CAP);
    CHECK(src && land && heap_buf);
    if (!src || !land || !heap_buf) return test_finish();

    unsigned salt = 1;
    for (size_t i = 0; i < NSIZES; i++) {
        const size_t size = sizes[i];
        for (int all_to_one = 0; all_to_one <= 1; all_to_one++) {
            put_phase(heap_buf, HEAP_CAP, size, all_to_one, salt, "heap");
            salt += 100;
            put_phase(global_buf, GLOBAL_CAP, size, all_to_one, salt, "static");
            salt += 100;
            get_phase(heap_buf, HEAP_CAP, size, all_to_one, salt, "heap");
            salt += 100;
            get_phase(global_buf, GLOBAL_CAP, size, all_to_one, salt, "static");
            salt += 100;
        }
    }

    /* Typed puts and gets of whole elements between aligned symmetric and
     * private arrays, ring. */
    long *lsym = shmem_malloc(1000 * sizeof(long));
    double *dsym = shmem_malloc(1000 * sizeof(double));
    long lsrc[1000], lget[1000];
    double dsrc[1000], dget[1000];
    for (int i = 0; i < 1000; i++) {
        lsym[i] = -1;
        dsym[i] = -1.0;
        lsrc[i] = (long)test_mix(me, (size_t)i, 7);
        dsrc[i] = test_double(me, (size_t)i, 8);
    }
    shmem_barrier_all();
    const int right = (me + 1) % npes, left = (me - 1 + npes) % npes;
    shmem_long_put(lsym + 1, lsrc + 1, 998, right);
    shmem_double_put(dsym + 1, dsrc + 1, 998, right);
    shmem_barrier_all();
    for (int i = 0; i < 1000; i++) {
        long le = (i == 0 || i == 999) ? -1 : (long)test_mix(left, (size_t)i, 7);
        double de = (i == 0 || i == 999) ? -1.0 : test_double(left, (size_t)i, 8);
        CHECK_MSG(lsym[i] == le, "long element %d", i);
        CHECK_MSG(dsym[i] == de, "double element %d", i);
    }
    for (int i = 0; i < 1000; i++) lget[i] = 5, dget[i] = 5.0;
    shmem_long_get(lget + 2, lsym + 1, 997, right);
    shmem_double_get(dget + 2, dsym + 1, 997, right);
    for (int i = 0; i < 1000; i++) {
        long le = (i < 2 || i == 999) ? 5 : (long)test_mix(me, (size_t)i - 1, 7);
        double de = (i < 2 || i == 999) ? 5.0 : test_double(me, (size_t)i - 1, 8);
        CHECK_MSG(lget[i] == le, "long get element %d", i);
        CHECK_MSG(dget[i] == de, "double get element %d", i);
    }
    shmem_barrier_all();
    shmem_free(dsym);
    shmem_free(lsym);
    shmem_free(heap_buf);
    free(src);
    free(land);
    shmem_finalize();
    return test_finish();
}
