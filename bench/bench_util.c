/* bench_util: option parsing, clock, medians and the result lines shared by
 * the benchmarks. See bench_util.h for the output format and the options. */
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void usage(const char *prog)
{
    fprintf(stderr,
            "usage: %s [--min-size B] [--max-size B] [--step K] [--iters N] [--runs R]\n"
            "          [--only FIGURE]... [--tiny]\n",
            prog);
}

static int parse_size(const char *s, size_t *out)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s) return -1;
    switch (*end) {
    case 'k': case 'K': v <<= 10; end++; break;
    case 'm': case 'M': v <<= 20; end++; break;
    case 'g': case 'G': v <<= 30; end++; break;
    default: break;
    }
    if (*end != '\0' || v == 0) return -1;
    *out = (size_t)v;
    return 0;
}

int bench_parse(int argc, char **argv, bench_opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (i == 1 && a[0] >= '0' && a[0] <= '9') {
            o->iters = atol(a);
        } else if (!strcmp(a, "--tiny")) {
            o->min_size = 8;
            o->max_size = 64;
            o->iters = 10;
            o->runs = 3;
        } else if (v && !strcmp(a, "--min-size")) {
            if (parse_size(v, &o->min_size)) goto bad;
            i++;
        } else if (v && !strcmp(a, "--max-size")) {
            if (parse_size(v, &o->max_size)) goto bad;
            i++;
        } else if (v && !strcmp(a, "--step")) {
            o->step = atoi(v);
            i++;
        } else if (v && !strcmp(a, "--iters")) {
            o->iters = atol(v);
            i++;
        } else if (v && !strcmp(a, "--runs")) {
            o->runs = atoi(v);
            i++;
        } else if (v && !strcmp(a, "--only")) {
            if (o->n_only == BENCH_MAX_ONLY) goto bad;
            o->only[o->n_only++] = v;
            i++;
        } else {
            goto bad;
        }
    }
    if (o->step < 2 || o->iters < 1 || o->runs < 1 || o->runs > BENCH_MAX_RUNS || o->min_size > o->max_size)
        goto bad;
    return 0;
bad:
    usage(argv[0]);
    return -1;
}

double bench_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

long bench_iters(const bench_opts *o, size_t size)
{
    long n = o->iters;
    if (size > o->scale_from) n = (long)((double)o->iters * (double)o->scale_from / (double)size);
    return n < 5 ? (o->iters < 5 ? o->iters : 5) : n;
}

size_t bench_next_size(const bench_opts *o, size_t size)
{
    if (size >= o->max_size) return 0;
    size_t next = size * (size_t)o->step;
    return next > o->max_size ? o->max_size : next;
}

int bench_want(const bench_opts *o, const char *figure)
{
    if (o->n_only == 0) return 1;
    for (int i = 0; i < o->n_only; i++)
        if (!strcmp(o->only[i], figure)) return 1;
    return 0;
}

void bench_header(int me, const char *program, const bench_opts *o, int npes, const char *library,
                  int major, int minor)
{
    if (me != 0) return;
    printf("# %s: library=%s spec=%d.%d pes=%d sizes=%zu..%zu step=%d iters=%ld runs=%d\n", program,
           library, major, minor, npes, o->min_size, o->max_size, o->step, o->iters, o->runs);
    printf("# figure,size,pes,value,unit (value: median over runs of the mean per operation)\n");
    fflush(stdout);
}

void bench_report(int me, const char *figure, size_t size, int npes, double value, const char *unit)
{
    if (me != 0) return;
    printf("%s,%zu,%d,%.4g,%s\n", figure, size, npes, value, unit);
    fflush(stdout);
}

void bench_touch(void *p)
{
    __asm__ __volatile__("" : : "r"(p) : "memory");
}
