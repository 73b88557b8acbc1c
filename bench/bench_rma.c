/* bench_rma: PE 0 against PE 1's symmetric heap, 8 B to 4 MiB.
 *   put_lat      shmem_putmem + shmem_quiet per operation (us)
 *   put_nbi_lat  shmem_putmem_nbi + shmem_quiet per operation (us)
 *   get_lat      shmem_getmem per operation (us)
 *   get_nbi_lat  shmem_getmem_nbi + shmem_quiet per operation (us)
 *   put_bw       windows of 64 shmem_putmem_nbi, then shmem_quiet (GB/s, 1e9 B/s)
 *   get_bw       windows of 64 shmem_getmem_nbi, then shmem_quiet (GB/s)
 *   put_rate     windows of 64 blocking shmem_putmem, then shmem_quiet,
 *                sizes up to 64 KiB (million messages per second)
 *   memcpy_bw    this host's memcpy between private buffers, the physical
 *                reference for put_bw (GB/s); when put_bw is measured too,
 *                their runs alternate so that both see the same load
 * Standard OpenSHMEM 1.4 calls only. PE 0 works against PE npes/2 (PE 1 at 2
 * PEs; with PEs placed in blocks per host, the first PE of the other host
 * at 2 hosts x 2 PEs); the others wait idle.
 * Usage: oshrun -n 2 bench_rma [options]   (see bench_util.h) */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

#define WINDOW 64
#define RATE_MAX (64 * 1024)

enum kind { PUT_LAT, PUT_NBI_LAT, GET_LAT, GET_NBI_LAT, PUT_BW, GET_BW, PUT_RATE, MEMCPY_BW, KINDS };
static const char *const names[KINDS] = {"put_lat", "put_nbi_lat", "get_lat",  "get_nbi_lat",
                                         "put_bw",  "get_bw",      "put_rate", "memcpy_bw"};
static const char *const units[KINDS] = {"us", "us", "us", "us", "GB/s", "GB/s", "Mmsg/s", "GB/s"};

/* One run: n operations of kind at size; returns the figure in its unit. */
static double run_once(enum kind k, size_t size, long n, char *sym, char *local, char *local2, int peer)
{
    double t = bench_now_us();
    switch (k) {
    case PUT_LAT:
        for (long i = 0; i < n; i++) {
            shmem_putmem(sym, local, size, peer);
            shmem_quiet();
        }
        break;
    case PUT_NBI_LAT:
        for (long i = 0; i < n; i++) {
            shmem_putmem_nbi(sym, local, size, peer);
            shmem_quiet();
        }
        break;
    case GET_LAT:
        for (long i = 0; i < n; i++) {
            shmem_getmem(local, sym, size, peer);
            bench_touch(local);
        }
        break;
    case GET_NBI_LAT:
        for (long i = 0; i < n; i++) {
            shmem_getmem_nbi(local, sym, size, peer);
            shmem_quiet();
            bench_touch(local);
        }
        break;
    case PUT_BW:
        for (long i = 0; i < n; i++) {
            shmem_putmem_nbi(sym, local, size, peer);
            if ((i + 1) % WINDOW == 0) shmem_quiet();
        }
        shmem_quiet();
        break;
    case GET_BW:
        for (long i = 0; i < n; i++) {
            shmem_getmem_nbi(local, sym, size, peer);
            if ((i + 1) % WINDOW == 0) shmem_quiet();
        }
        shmem_quiet();
        bench_touch(local);
        break;
    case PUT_RATE:
        for (long i = 0; i < n; i++) {
            shmem_putmem(sym, local, size, peer);
            if ((i + 1) % WINDOW == 0) shmem_quiet();
        }
        shmem_quiet();
        break;
    case MEMCPY_BW:
        for (long i = 0; i < n; i++) {
            memcpy(local2, local, size);
            bench_touch(local2);
        }
        break;
    default: break;
    }
    double us = bench_now_us() - t;
    if (k == PUT_BW || k == GET_BW || k == MEMCPY_BW) return (double)size * (double)n / us * 1e-3; /* B/us -> GB/s */
    if (k == PUT_RATE) return (double)n / us;                                           /* per us = M/s */
    return us / (double)n;
}

int main(int argc, char **argv)
{
    bench_opts o = {.min_size = 8, .max_size = 4 << 20, .step = 2, .iters = 1000, .scale_from = 65536, .runs = 7};
    if (bench_parse(argc, argv, &o)) return 2;
    shmem_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes(), peer = npes / 2;
    char name[SHMEM_MAX_NAME_LEN];
    shmem_info_get_name(name);
    bench_header(me, "bench_rma", &o, npes, name, SHMEM_MAJOR_VERSION, SHMEM_MINOR_VERSION);
    char *sym = shmem_malloc(o.max_size);
    char *local = malloc(o.max_size), *local2 = malloc(o.max_size);
    if (!sym || !local || !local2) {
        fprintf(stderr, "bench_rma: PE %d: cannot allocate %zu bytes\n", me, o.max_size);
        shmem_global_exit(1);
    }
    memset(sym, 1, o.max_size);
    memset(local, 2, o.max_size);
    memset(local2, 3, o.max_size);
    shmem_barrier_all();
    for (int k = 0; k < KINDS; k++) {
        if (!bench_want(&o, names[k])) continue;
        if (k == MEMCPY_BW && bench_want(&o, names[PUT_BW])) continue; /* measured with put_bw */
        for (size_t size = o.min_size; size; size = bench_next_size(&o, size)) {
            if (k == PUT_RATE && size > RATE_MAX) break;
            const long n = bench_iters(&o, size);
            /* put_bw with memcpy_bw: runs alternate, so both see the same
             * load and cache (1 MiB + 1 MiB is this host's whole L2). */
            const int pair = k == PUT_BW && bench_want(&o, names[MEMCPY_BW]);
            double v[BENCH_MAX_RUNS], mc[BENCH_MAX_RUNS];
            shmem_barrier_all();
            if (me == 0) {
                run_once(k, size, n / 4 + 1, sym, local, local2, peer); /* warm-up */
                if (pair) run_once(MEMCPY_BW, size, n / 4 + 1, sym, local, local2, peer);
                for (int r = 0; r < o.runs; r++) {
                    v[r] = run_once(k, size, n, sym, local, local2, peer);
                    if (pair) mc[r] = run_once(MEMCPY_BW, size, n, sym, local, local2, peer);
                }
                bench_report(me, names[k], size, npes, bench_median(v, o.runs), units[k]);
                if (pair) bench_report(me, names[MEMCPY_BW], size, npes, bench_median(mc, o.runs), units[MEMCPY_BW]);
            }
        }
    }
    shmem_barrier_all();
    /* The data must have arrived, or the figures mean nothing. */
    int bad = 0;
    if (me == peer && me != 0 && bench_want(&o, "put_lat"))
        for (size_t i = 0; i < o.max_size; i++) bad |= sym[i] != 2;
    if (bad) fprintf(stderr, "bench_rma: PE %d: put data wrong\n", me);
    free(local2);
    free(local);
    shmem_free(sym);
    shmem_finalize();
    return bad;
}
