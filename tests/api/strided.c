/* strided.c: iput/iget with strides 1, 2, 3, 7 on both sides and
 * ibput/ibget with block sizes 1, 3, 4 and block strides larger than the
 * block, for element sizes 1, 2, 4, 8, 16, each through the typed name,
 * the sized name, the ctx sized name and the C11 generic macro (with and
 * without a context). The receiver rebuilds the whole expected image of
 * its target area, so both the touched elements and the untouched ones
 * between and around them are checked. Ring: PE i to PE i+1. */
#include <float.h>
#include <shmem.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"

#define NE 11     /* elements of an iput/iget */
#define NBLOCKS 5 /* blocks of an ibput/ibget */
#define NFORMS 5  /* typed, sized, ctx sized, generic, generic ctx */
#define HEAD 16   /* guard bytes before each target */
#define REGION 1280
#define NI 16 /* stride pairs of iput/iget */
#define NB 12 /* (bsize, dst, sst) of ibput/ibget */
#define NREGIONS (NFORMS * (NI + NB))

static int me, npes, right, left;
static const ptrdiff_t strides[] = {1, 2, 3, 7};
static const size_t esizes[] = {1, 2, 4, 8, 16};

struct shape {
    ptrdiff_t dst, sst;
    size_t bsize, count; /* count runs of bsize elements */
    int blocked;         /* ibput/ibget rather than iput/iget */
};

static struct shape shape_of(int s)
{
    struct shape sh;
    if (s < NI) {
        sh.dst = strides[s / 4];
        sh.sst = strides[s % 4];
        sh.bsize = 1;
        sh.count = NE;
        sh.blocked = 0;
    } else {
        static const size_t bs[] = {1, 3, 4};
        const int j = s - NI;
        const size_t b = bs[j / 4];
        sh.bsize = b;
        sh.dst = (ptrdiff_t)((j % 2) ? 2 * b + 3 : b + 1);
        sh.sst = (ptrdiff_t)((j / 2 % 2) ? 3 * b + 1 : b + 2);
        sh.count = NBLOCKS;
        sh.blocked = 1;
    }
    return sh;
}

/* Elements spanned by count runs of bsize, stride apart. */
static size_t span_elems(ptrdiff_t stride, size_t bsize, size_t count)
{
    return (count - 1) * (size_t)stride + bsize;
}

/* Source content of sender for (esize, form): bytes of the pattern, or
 * whole long double values for the typed 16-byte form. */
static void make_source(unsigned char *buf, size_t elems, size_t esize, int form, int sender, unsigned salt)
{
    if (esize == 16 && (form == 0 || form >= 3)) {
        /* The 10 value bytes of the x87 format; the 6 padding bytes zero. */
        for (size_t i = 0; i < elems; i++) {
            const long double v = test_longdouble(sender, i, salt);
            memcpy(buf + 16 * i, &v, 10);
            memset(buf + 16 * i + 10, 0, 6);
        }
    } else {
        fill_pattern(buf, elems * esize, sender, 0, salt);
    }
}

static void do_strided(int is_put, int form, size_t esize, struct shape sh, void *dest, const void *source, int pe)
{
    shmem_ctx_t c = SHMEM_CTX_DEFAULT;
    const int blocked = sh.blocked;
    const size_t n = sh.count, b = sh.bsize;
    /* key: put/get, blocked, form, element size */
    const int key = is_put * 100000 + blocked * 10000 + form * 1000 + (int)esize;
    switch (key) {
    /* iput */
    case 100001: shmem_schar_iput(dest, source, sh.dst, sh.sst, n, pe); break;
    case 100002: shmem_ushort_iput(dest, source, sh.dst, sh.sst, n, pe); break;
    case 100004: shmem_int_iput(dest, source, sh.dst, sh.sst, n, pe); break;
    case 100008: shmem_longlong_iput(dest, source, sh.dst, sh.sst, n, pe); break;
    case 100016: shmem_longdouble_iput(dest, source, sh.dst, sh.sst, n, pe); break;
    case 101001: shmem_iput8(dest, source, sh.dst, sh.sst, n, pe); break;
    case 101002: shmem_iput16(dest, source, sh.dst, sh.sst, n, pe); break;
    case 101004: shmem_iput32(dest, source, sh.dst, sh.sst, n, pe); break;
    case 101008: shmem_iput64(dest, source, sh.dst, sh.sst, n, pe); break;
    case 101016: shmem_iput128(dest, source, sh.dst, sh.sst, n, pe); break;
    case 102001: shmem_ctx_iput8(c, dest, source, sh.dst, sh.sst, n, pe); break;
    case 102002: shmem_ctx_iput16(c, dest, source, sh.dst, sh.sst, n, pe); break;
    case 102004: shmem_ctx_iput32(c, dest, source, sh.dst, sh.sst, n, pe); break;
    case 102008: shmem_ctx_iput64(c, dest, source, sh.dst, sh.sst, n, pe); break;
    case 102016: shmem_ctx_iput128(c, dest, source, sh.dst, sh.sst, n, pe); break;
    case 103001: shmem_iput((unsigned char *)dest, source, sh.dst, sh.sst, n, pe); break;
    case 103002: shmem_iput((short *)dest, source, sh.dst, sh.sst, n, pe); break;
    case 103004: shmem_iput((unsigned int *)dest, source, sh.dst, sh.sst, n, pe); break;
    case 103008: shmem_iput((unsigned long *)dest, source, sh.dst, sh.sst, n, pe); break;
    case 103016: shmem_iput((long double *)dest, source, sh.dst, sh.sst, n, pe); break;
    case 104001: shmem_iput(c, (char *)dest, source, sh.dst, sh.sst, n, pe); break;
    case 104002: shmem_iput(c, (unsigned short *)dest, source, sh.dst, sh.sst, n, pe); break;
    case 104004: shmem_iput(c, (float *)dest, source, sh.dst, sh.sst, n, pe); break;
    case 104008: shmem_iput(c, (double *)dest, source, sh.dst, sh.sst, n, pe); break;
    case 104016: shmem_iput(c, (long double *)dest, source, sh.dst, sh.sst, n, pe); break;
    /* iget */
    case 1: shmem_schar_iget(dest, source, sh.dst, sh.sst, n, pe); break;
    case 2: shmem_ushort_iget(dest, source, sh.dst, sh.sst, n, pe); break;
    case 4: shmem_int_iget(dest, source, sh.dst, sh.sst, n, pe); break;
    case 8: shmem_longlong_iget(dest, source, sh.dst, sh.sst, n, pe); break;
    case 16: shmem_longdouble_iget(dest, source, sh.dst, sh.sst, n, pe); break;
    case 1001: shmem_iget8(dest, source, sh.dst, sh.sst, n, pe); break;
    case 1002: shmem_iget16(dest, source, sh.dst, sh.sst, n, pe); break;
    case 1004: shmem_iget32(dest, source, sh.dst, sh.sst, n, pe); break;
    case 1008: shmem_iget64(dest, source, sh.dst, sh.sst, n, pe); break;
    case 1016: shmem_iget128(dest, source, sh.dst, sh.sst, n, pe); break;
    case 2001: shmem_ctx_iget8(c, dest, source, sh.dst, sh.sst, n, pe); break;
    case 2002: shmem_ctx_iget16(c, dest, source, sh.dst, sh.sst, n, pe); break;
    case 2004: shmem_ctx_iget32(c, dest, source, sh.dst, sh.sst, n, pe); break;
    case 2008: shmem_ctx_iget64(c, dest, source, sh.dst, sh.sst, n, pe); break;
    case 2016: shmem_ctx_iget128(c, dest, source, sh.dst, sh.sst, n, pe); break;
    case 3001: shmem_iget((unsigned char *)dest, source, sh.dst, sh.sst, n, pe); break;
    case 3002: shmem_iget((short *)dest, source, sh.dst, sh.sst, n, pe); break;
    case 3004: shmem_iget((unsigned int *)dest, source, sh.dst, sh.sst, n, pe); break;
    case 3008: shmem_iget((unsigned long *)dest, source, sh.dst, sh.sst, n, pe); break;
    case 3016: shmem_iget((long double *)dest, source, sh.dst, sh.sst, n, pe); break;
    case 4001: shmem_iget(c, (char *)dest, source, sh.dst, sh.sst, n, pe); break;
    case 4002: shmem_iget(c, (unsigned short *)dest, source, sh.dst, sh.sst, n, pe); break;
    case 4004: shmem_iget(c, (float *)dest, source, sh.dst, sh.sst, n, pe); break;
    case 4008: shmem_iget(c, (double *)dest, source, sh.dst, sh.sst, n, pe); break;
    case 4016: shmem_iget(c, (long double *)dest, source, sh.dst, sh.sst, n, pe); break;
    /* ibput */
    case 110001: shmem_uchar_ibput(dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 110002: shmem_int16_ibput(dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 110004: shmem_uint32_ibput(dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 110008: shmem_long_ibput(dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 110016: shmem_longdouble_ibput(dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 111001: shmem_ibput8(dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 111002: shmem_ibput16(dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 111004: shmem_ibput32(dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 111008: shmem_ibput64(dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 111016: shmem_ibput128(dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 112001: shmem_ctx_ibput8(c, dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 112002: shmem_ctx_ibput16(c, dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 112004: shmem_ctx_ibput32(c, dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 112008: shmem_ctx_ibput64(c, dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 112016: shmem_ctx_ibput128(c, dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 113001: shmem_ibput((signed char *)dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 113002: shmem_ibput((unsigned short *)dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 113004: shmem_ibput((int *)dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 113008: shmem_ibput((long long *)dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 113016: shmem_ibput((long double *)dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 114001: shmem_ibput(c, (unsigned char *)dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 114002: shmem_ibput(c, (short *)dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 114004: shmem_ibput(c, (unsigned int *)dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 114008: shmem_ibput(c, (unsigned long long *)dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 114016: shmem_ibput(c, (long double *)dest, source, sh.dst, sh.sst, b, n, pe); break;
    /* ibget */
    case 10001: shmem_uchar_ibget(dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 10002: shmem_int16_ibget(dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 10004: shmem_uint32_ibget(dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 10008: shmem_long_ibget(dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 10016: shmem_longdouble_ibget(dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 11001: shmem_ibget8(dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 11002: shmem_ibget16(dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 11004: shmem_ibget32(dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 11008: shmem_ibget64(dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 11016: shmem_ibget128(dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 12001: shmem_ctx_ibget8(c, dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 12002: shmem_ctx_ibget16(c, dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 12004: shmem_ctx_ibget32(c, dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 12008: shmem_ctx_ibget64(c, dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 12016: shmem_ctx_ibget128(c, dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 13001: shmem_ibget((signed char *)dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 13002: shmem_ibget((unsigned short *)dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 13004: shmem_ibget((int *)dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 13008: shmem_ibget((long long *)dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 13016: shmem_ibget((long double *)dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 14001: shmem_ibget(c, (unsigned char *)dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 14002: shmem_ibget(c, (short *)dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 14004: shmem_ibget(c, (unsigned int *)dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 14008: shmem_ibget(c, (unsigned long long *)dest, source, sh.dst, sh.sst, b, n, pe); break;
    case 14016: shmem_ibget(c, (long double *)dest, source, sh.dst, sh.sst, b, n, pe); break;
    default: CHECK_MSG(0, "no call for key %d", key);
    }
}

/* Expected target image: guard everywhere except the runs copied from src. */
static void expected_image(unsigned char *img, const unsigned char *src, size_t esize, struct shape sh)
{
    memset(img, GUARD_BYTE, REGION);
    for (size_t k = 0; k < sh.count; k++)
        memcpy(img + HEAD + k * (size_t)sh.dst * esize, src + k * (size_t)sh.sst * esize, sh.bsize * esize);
}

static void compare(const unsigned char *got, const unsigned char *img, const char *what, int form, size_t esize,
                    struct shape sh, int peer)
{
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < REGION; i++)
        if (got[i] != img[i]) {
            if (!bad) first = i;
            bad++;
        }
    if (bad) {
        const long at = (long)first - HEAD;
        CHECK_MSG(0,
                  "%s form %d, %zu-byte elements, dst stride %td, sst stride %td, block %zu x %zu, PE %d: %zu bytes "
                  "differ, first at target byte %ld (element %ld): 0x%02x, expected 0x%02x",
                  what, form, esize, sh.dst, sh.sst, sh.bsize, sh.count, peer, bad, at, at / (long)esize, got[first],
                  img[first]);
    }
}

int main(void)
{
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    test_pe = me;
    right = (me + 1) % npes;
    left = (me - 1 + npes) % npes;
    if (sizeof(long double) != 16 || LDBL_MANT_DIG != 64 || sizeof(long) != 8) {
        fprintf(stderr, "this test assumes the x87 16-byte long double and an 8-byte long\n");
        shmem_finalize();
        return TEST_SKIP;
    }
    /* regions[NREGIONS] receive puts; exposed[NFORMS] are read by gets. */
    unsigned char *regions = shmem_malloc((size_t)NREGIONS * REGION);
    unsigned char *exposed = shmem_malloc((size_t)NFORMS * REGION);
    unsigned char *src = malloc(REGION), *img = malloc(REGION), *got = malloc(REGION);
    CHECK(regions && exposed && src && img && got);
    if (!regions || !exposed || !src || !img || !got) return test_finish();

    for (size_t e = 0; e < sizeof esizes / sizeof esizes[0]; e++) {
        const size_t es = esizes[e];
        const size_t src_elems = (REGION - HEAD) / es;
        const unsigned salt = 1000u * (unsigned)e;
        memset(regions, GUARD_BYTE, (size_t)NREGIONS * REGION);
        for (int f = 0; f < NFORMS; f++)
            make_source(exposed + (size_t)f * REGION, src_elems, es, f, me, salt + 900 + (unsigned)f);
        shmem_barrier_all();
        for (int f = 0; f < NFORMS; f++)
            for (int s = 0; s < NI + NB; s++) {
                const struct shape sh = shape_of(s);
                const int r = f * (NI + NB) + s;
                /* put */
                make_source(src, span_elems(sh.sst, sh.bsize, sh.count), es, f, me, salt + (unsigned)r);
                do_strided(1, f, es, sh, regions + (size_t)r * REGION + HEAD, src, right);
                /* get */
                memset(got, GUARD_BYTE, REGION);
                do_strided(0, f, es, sh, got + HEAD, exposed + (size_t)f * REGION, right);
                make_source(src, src_elems, es, f, right, salt + 900 + (unsigned)f);
                expected_image(img, src, es, sh);
                compare(got, img, sh.blocked ? "ibget" : "iget", f, es, sh, right);
            }
        shmem_barrier_all();
        for (int f = 0; f < NFORMS; f++)
            for (int s = 0; s < NI + NB; s++) {
                const struct shape sh = shape_of(s);
                const int r = f * (NI + NB) + s;
                make_source(src, span_elems(sh.sst, sh.bsize, sh.count), es, f, left, salt + (unsigned)r);
                expected_image(img, src, es, sh);
                compare(regions + (size_t)r * REGION, img, sh.blocked ? "ibput" : "iput", f, es, sh, left);
            }
        shmem_barrier_all();
    }

    free(src);
    free(img);
    free(got);
    shmem_free(exposed);
    shmem_free(regions);
    shmem_finalize();
    return test_finish();
}
