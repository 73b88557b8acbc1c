/* histogram: a histogram of B bins spread over the PEs (bin b lives on PE
 * b % npes at index b / npes), filled by every PE at once with remote
 * atomic increments: no PE needs to know who else updates a bin, and no
 * update is lost. A second pass adds each PE's locally aggregated counts
 * with one atomic add per bin (fewer, larger updates); a non-fetching atomic
 * may complete later, so shmem_quiet (then the barrier) ends the pass.
 * Both are checked against a serial histogram of all values, and each PE
 * prints the bins it holds.
 *
 * Usage: oshrun -n 4 histogram [VALUES_PER_PE BINS]   (default 65536 1000) */
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Value i of PE p: the smaller of two hashes gives a skewed distribution,
 * so low bins are hot (many PEs hitting the same word at once). */
static int bin_of(int p, long i, int bins)
{
    uint64_t x = ((uint64_t)p << 40 | (uint64_t)i) * 0x9E3779B97F4A7C15ull;
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    const int a = (int)(x % (uint64_t)bins), b = (int)((x >> 32) % (uint64_t)bins);
    return a < b ? a : b;
}

int main(int argc, char **argv)
{
    shmem_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    const long n = argc > 1 ? atol(argv[1]) : 65536;
    const int bins = argc > 2 ? atoi(argv[2]) : 1000;
    if (n < 0 || bins <= 0) {
        if (me == 0) fprintf(stderr, "usage: histogram [VALUES_PER_PE BINS]\n");
        shmem_finalize();
        return 2;
    }
    const int per_pe = (bins + npes - 1) / npes;
    long *hist = shmem_calloc((size_t)per_pe, sizeof *hist);
    long *hist2 = shmem_calloc((size_t)per_pe, sizeof *hist2);

    /* Pass 1: one remote atomic increment per value. */
    for (long i = 0; i < n; i++) {
        const int b = bin_of(me, i, bins);
        shmem_long_atomic_inc(&hist[b / npes], b % npes);
    }
    /* Pass 2: count locally, then one atomic add per bin. */
    long *local = calloc((size_t)bins, sizeof *local);
    for (long i = 0; i < n; i++) local[bin_of(me, i, bins)]++;
    for (int k = 0; k < bins; k++) {
        const int b = (k + me * per_pe) % bins; /* PEs start on different bins */
        if (local[b]) shmem_long_atomic_add(&hist2[b / npes], local[b], b % npes);
    }
    shmem_quiet();
    shmem_barrier_all();

    /* Check the bins this PE holds against a serial histogram of all
     * values, and print them: this PE's share of the histogram. */
    long *want = calloc((size_t)bins, sizeof *want);
    for (int p = 0; p < npes; p++)
        for (long i = 0; i < n; i++) want[bin_of(p, i, bins)]++;
    long bad = 0, mine = 0;
    int held = 0, hottest = -1;
    char shown[128] = "";
    size_t len = 0;
    for (int b = me; b < bins; b += npes) {
        const long count = hist[b / npes];
        mine += count;
        if (hottest < 0 || count > hist[hottest / npes]) hottest = b;
        if (held++ < 6 && len < sizeof shown)
            len += (size_t)snprintf(shown + len, sizeof shown - len, " %d:%ld", b, count);
        if ((count != want[b] || hist2[b / npes] != want[b]) && bad++ < 5)
            fprintf(stderr, "PE %d: bin %d holds %ld (atomic_inc) and %ld (atomic_add), serial count %ld\n", me, b,
                    count, hist2[b / npes], want[b]);
    }
    if (held)
        printf("histogram: PE %d holds %d bins (bin %% %d == %d) with %ld of the %ld values; bin:count%s%s; "
               "its hottest is bin %d (%ld); %s\n",
               me, held, npes, me, mine, n * npes, shown, held > 6 ? " ..." : "", hottest, hist[hottest / npes],
               bad ? "MISMATCH" : "matches the serial count");
    else
        printf("histogram: PE %d holds no bins (%d bins, %d PEs)\n", me, bins, npes);

    shmem_barrier_all();
    free(want);
    free(local);
    shmem_free(hist2);
    shmem_free(hist);
    shmem_finalize();
    return bad ? 1 : 0;
}
