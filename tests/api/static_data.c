/* static_data.c: global and static variables are symmetric. Initialised
 * globals (data), zeroed arrays (bss) and static locals serve as targets
 * and sources of put, get, p, g and as wait_until flags between PEs. */
#include <shmem.h>
#include <string.h>

#include "api_util.h"

#define NDATA 64
#define NBSS 5000

long data_arr[NDATA] = {
    1,  -2,  3,  -4,  5,  -6,  7,  -8,  9,  -10, 11, -12, 13, -14, 15, -16, 17, -18, 19, -20, 21, -22,
    23, -24, 25, -26, 27, -28, 29, -30, 31, -32, 33, -34, 35, -36, 37, -38, 39, -40, 41, -42, 43, -44,
    45, -46, 47, -48, 49, -50, 51, -52, 53, -54, 55, -56, 57, -58, 59, -60, 61, -62, 63, -64};
double data_scalar = 2.5;
unsigned char bss_arr[NBSS];
static int static_bss_ints[300];
static short static_data_shorts[10] = {10, 20, 30, 40, 50, 60, 70, 80, 90, 100};

static int me, npes, right, left;

/* Static locals: the flag a peer sets and the word it writes. */
static void static_local_round(int round)
{
    static long word;
    static int flag;
    static char tail[3] = {'a', 'b', 'c'};
    shmem_long_p(&word, 1000L * me + round, right);
    shmem_fence();
    shmem_int_p(&flag, round, right);
    shmem_int_wait_until(&flag, SHMEM_CMP_EQ, round);
    CHECK_MSG(word == 1000L * left + round, "static local word %ld, round %d", word, round);
    char got[3];
    shmem_char_get(got, tail, 3, right);
    CHECK(got[0] == 'a' && got[1] == 'b' && got[2] == 'c');
    shmem_barrier_all();
    /* Every PE has seen this round's flag; some may be in the next one. */
    CHECK(shmem_int_g(&flag, left) >= round);
}

int main(void)
{
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    test_pe = me;
    right = (me + 1) % npes;
    left = (me - 1 + npes) % npes;

    /* Initial values of a peer's data section are readable. */
    long got[NDATA];
    shmem_long_get(got, data_arr, NDATA, right);
    for (int i = 0; i < NDATA; i++) CHECK_MSG(got[i] == ((i % 2) ? -(i + 1) : (i + 1)), "data_arr[%d] = %ld", i, got[i]);
    CHECK(shmem_double_g(&data_scalar, right) == 2.5);
    CHECK(shmem_short_g(&static_data_shorts[9], right) == 100);
    for (int i = 0; i < NBSS; i++) CHECK(shmem_uchar_g(&bss_arr[i], right) == 0);
    shmem_barrier_all();

    /* put into data and bss, checked with guards. */
    unsigned char src[NBSS];
    fill_pattern(src, NBSS - 10, me, 0, 5);
    shmem_putmem(bss_arr + 5, src, NBSS - 10, right);
    long lsrc[NDATA - 2];
    for (int i = 0; i < NDATA - 2; i++) lsrc[i] = (long)test_mix(me, (size_t)i, 6);
    shmem_long_put(data_arr + 1, lsrc, NDATA - 2, right);
    shmem_double_p(&data_scalar, -0.125 * (me + 1), right);
    int isrc[300];
    for (int i = 0; i < 300; i++) isrc[i] = me * 1000 + i;
    shmem_int_iput(static_bss_ints, isrc, 3, 1, 100, right);
    shmem_short_p(&static_data_shorts[4], (short)(-me - 1), right);
    shmem_barrier_all();

    check_fill(bss_arr, 5, 0, "bss head");
    check_pattern(bss_arr + 5, NBSS - 10, left, 0, 5, "bss put");
    check_fill(bss_arr + NBSS - 5, 5, 0, "bss tail");
    CHECK(data_arr[0] == 1 && data_arr[NDATA - 1] == -64);
    for (int i = 1; i < NDATA - 1; i++) CHECK_MSG(data_arr[i] == (long)test_mix(left, (size_t)i - 1, 6), "data_arr[%d]", i);
    CHECK(data_scalar == -0.125 * (left + 1));
    for (int i = 0; i < 300; i++)
        CHECK_MSG(static_bss_ints[i] == ((i % 3) ? 0 : left * 1000 + i / 3), "static_bss_ints[%d] = %d", i,
                  static_bss_ints[i]);
    for (int i = 0; i < 10; i++)
        CHECK_MSG(static_data_shorts[i] == (i == 4 ? -left - 1 : 10 * (i + 1)), "static_data_shorts[%d]", i);

    /* get of what the neighbour received. */
    unsigned char gbuf[NBSS];
    memset(gbuf, GUARD_BYTE, sizeof gbuf);
    shmem_getmem(gbuf + 1, bss_arr + 5, NBSS - 10, right);
    CHECK(gbuf[0] == GUARD_BYTE);
    check_pattern(gbuf + 1, NBSS - 10, me, 0, 5, "bss get");
    check_fill(gbuf + NBSS - 9, 9, GUARD_BYTE, "bss get tail");
    shmem_barrier_all();

    /* Static locals as wait targets. */
    for (int round = 1; round <= 20; round++) static_local_round(round);

    shmem_finalize();
    return test_finish();
}
