/* bench_util: the small timing library every benchmark shares.
 *
 * The benchmarks use the standard OpenSHMEM API only (1.4 forms where a peer
 * lacks the 1.5 call), so the same sources build with Shoal and with any
 * other OpenSHMEM. This file uses no SHMEM call except the PE number in
 * bench_report, so it builds anywhere too.
 *
 * Output: PE 0 prints one machine-readable line per figure and size,
 *     figure,size,pes,value,unit
 * (size in bytes; value is the median over the runs of the mean per
 * operation). Lines starting with '#' are comments (library, settings).
 *
 * Options every program takes:
 *     --min-size B --max-size B   size sweep (default 8 B to the program's max)
 *     --step K                    multiply the size by K each step (default 2)
 *     --iters N                   iterations per run at small sizes (scaled
 *                                 down for large ones, never below 5)
 *     --runs R                    runs per figure; the median is reported
 *     --only FIGURE               measure this figure only (repeatable)
 *     --tiny                      smoke-test settings: 8 B to 64 B, 10
 *                                 iterations, 3 runs
 * A bare number as the first argument is taken as --iters (old usage). */
#ifndef SHOAL_BENCH_UTIL_H
#define SHOAL_BENCH_UTIL_H

#include <stddef.h>

#define BENCH_MAX_RUNS 64
#define BENCH_MAX_ONLY 16

typedef struct bench_opts {
    size_t min_size, max_size; /* inclusive; the sweep always ends at max_size */
    int step;                  /* size multiplier, at least 2 */
    long iters;                /* iterations per run at sizes up to bench_opts.scale_from */
    size_t scale_from;         /* above this size iterations shrink in proportion */
    int runs;                  /* runs per figure, at most BENCH_MAX_RUNS */
    int n_only;
    const char *only[BENCH_MAX_ONLY];
} bench_opts;

/* Parses argv into *o, starting from the program's defaults in *o. Prints
 * usage and returns -1 on a bad option (the caller exits 2), else 0. */
int bench_parse(int argc, char **argv, bench_opts *o);

/* Monotonic clock in microseconds. */
double bench_now_us(void);

/* Median of v[0..n) (sorts v). */
double bench_median(double *v, int n);

/* Iterations for one run at this size: o->iters up to o->scale_from bytes,
 * then o->iters * scale_from / size, at least 5. */
long bench_iters(const bench_opts *o, size_t size);

/* Next size of the sweep after size, or 0 when the sweep is done. The sweep
 * is min, min*step, ... and always includes max_size. */
size_t bench_next_size(const bench_opts *o, size_t size);

/* Whether figure is to be measured (no --only, or named by one). */
int bench_want(const bench_opts *o, const char *figure);

/* PE 0 prints the '#' header: program, library name and spec version,
 * PE count and the options. */
void bench_header(int me, const char *program, const bench_opts *o, int npes, const char *library,
                  int major, int minor);

/* PE 0 prints one result line. */
void bench_report(int me, const char *figure, size_t size, int npes, double value, const char *unit);

/* Defeats dead-store elimination of a buffer the compiler cannot see read. */
void bench_touch(void *p);

#endif
