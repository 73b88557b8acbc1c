/* observe.c: SHMEM_TRACE and SHMEM_STATS for the whole job.
 *
 * Before the PEs start, oshrun makes a private directory for their parts
 * (SHOAL_OBSERVE_DIR) and gives them one time origin
 * (SHOAL_OBSERVE_EPOCH_NS, its own start) so their clocks line up. Each PE
 * writes its part at finalize (src/observe). When the PEs are gone, oshrun
 * joins the trace parts into one Chrome/Perfetto trace-event file at the
 * SHMEM_TRACE path and merges the statistics into one table on stdout (or
 * JSON at the json:PATH of SHMEM_STATS), then removes the directory.
 *
 * Across hosts each host's oshrun merges the parts of its own PEs: node 0
 * writes PATH, node R writes PATH.node<R>. */
#include "oshrun.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_FAMILIES 32

/* The value a PE will see: the last -x VAR=VALUE, else oshrun's own. */
static const char *pe_value(const struct oshrun_job *job, const char *name)
{
    size_t len = strlen(name);
    for (int i = job->opt->nexports - 1; i >= 0; i--) {
        const char *e = job->opt->exports[i];
        if (!strncmp(e, name, len) && e[len] == '=') return e + len + 1;
        if (!strcmp(e, name)) break;
    }
    return getenv(name);
}

static char observe_dir[64];
static char *trace_path, *stats_value;

int oshrun_observe_prepare(struct oshrun_job *job)
{
    const char *trace = pe_value(job, "SHMEM_TRACE"), *stats = pe_value(job, "SHMEM_STATS");
    int want_trace = trace && trace[0], want_stats = stats && stats[0] && strcmp(stats, "0") != 0;
    if (!want_trace && !want_stats) return 0;
    const char *tmp = getenv("TMPDIR");
    snprintf(observe_dir, sizeof observe_dir, "%s/shoal-observe-XXXXXX", tmp && tmp[0] && strlen(tmp) < 32 ? tmp : "/tmp");
    if (!mkdtemp(observe_dir)) {
        fprintf(stderr, "oshrun: cannot make a directory for the PEs' trace and statistics parts (%s): %s\n",
                observe_dir, strerror(errno));
        observe_dir[0] = 0;
        return 1;
    }
    trace_path = want_trace ? strdup(trace) : NULL;
    stats_value = want_stats ? strdup(stats) : NULL;
    setenv("SHOAL_OBSERVE_DIR", observe_dir, 1);
    if (job->opt->nnodes <= 1) {
        /* One host, one clock: the trace starts near 0 at oshrun's start. */
        struct timespec ts;
        char num[32];
        clock_gettime(CLOCK_REALTIME, &ts);
        snprintf(num, sizeof num, "%llu", (unsigned long long)ts.tv_sec * 1000000000ull);
        setenv("SHOAL_OBSERVE_EPOCH_NS", num, 1);
    }
    return 0;
}

static void part_path(char *buf, size_t len, const char *kind, int rank)
{
    snprintf(buf, len, "%s/%s.%d.part", observe_dir, kind, rank);
}

static void output_path(const struct oshrun_job *job, const char *path, char *buf, size_t len)
{
    if (job->opt->nnodes > 1 && job->opt->node_rank > 0)
        snprintf(buf, len, "%s.node%d", path, job->opt->node_rank);
    else
        snprintf(buf, len, "%s", path);
}

static void merge_trace(const struct oshrun_job *job)
{
    char out_path[4096], part[128], buf[65536];
    output_path(job, trace_path, out_path, sizeof out_path);
    FILE *out = fopen(out_path, "w");
    if (!out) {
        fprintf(stderr, "oshrun: SHMEM_TRACE: cannot write %s: %s\n", out_path, strerror(errno));
        return;
    }
    fprintf(out, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
    int missing = 0, first_missing = -1;
    for (int r = 0; r < job->npes; r++) {
        const int rank = job->pes[r].rank;
        part_path(part, sizeof part, "trace", rank);
        FILE *in = fopen(part, "r");
        if (!in) {
            if (!missing++) first_missing = rank;
            continue;
        }
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, in)) > 0) fwrite(buf, 1, n, out);
        fclose(in);
    }
    fprintf(out, "{\"name\":\"shoal_job\",\"ph\":\"M\",\"pid\":0,\"args\":{\"pes\":%d,\"missing_parts\":%d}}]}\n",
            job->size, missing);
    if (fclose(out) != 0) fprintf(stderr, "oshrun: SHMEM_TRACE: writing %s failed: %s\n", out_path, strerror(errno));
    if (missing)
        fprintf(stderr, "oshrun: SHMEM_TRACE: %d PE%s (PE %d%s) wrote no trace (it did not reach shmem_finalize)\n",
                missing, missing > 1 ? "s" : "", first_missing, missing > 1 ? " and others" : "");
}

/* One PE's statistics part (src/observe/stats.c). */
struct pe_stats {
    int present;
    unsigned long long calls[MAX_FAMILIES], bytes[MAX_FAMILIES], blocked_ns[MAX_FAMILIES];
    unsigned long long *matrix; /* job->size entries */
};

struct stats_table {
    char names[MAX_FAMILIES][24];
    int nfam;
    struct pe_stats *pe; /* local PEs, in order */
};

static int family_index(struct stats_table *t, const char *name)
{
    for (int i = 0; i < t->nfam; i++)
        if (!strcmp(t->names[i], name)) return i;
    if (t->nfam == MAX_FAMILIES) return -1;
    snprintf(t->names[t->nfam], sizeof t->names[0], "%s", name);
    return t->nfam++;
}

static void read_stats_part(const struct oshrun_job *job, struct stats_table *t, int local)
{
    char part[128], word[32], name[24];
    part_path(part, sizeof part, "stats", job->pes[local].rank);
    FILE *in = fopen(part, "r");
    struct pe_stats *p = &t->pe[local];
    if (!in) return;
    int pe, npes;
    if (fscanf(in, "shoal-stats 1 pe %d npes %d", &pe, &npes) == 2 && npes == job->size) {
        p->present = 1;
        while (fscanf(in, "%31s", word) == 1) {
            unsigned long long c, b, ns;
            if (!strcmp(word, "family") && fscanf(in, "%23s %llu %llu %llu", name, &c, &b, &ns) == 4) {
                int f = family_index(t, name);
                if (f >= 0) {
                    p->calls[f] = c;
                    p->bytes[f] = b;
                    p->blocked_ns[f] = ns;
                }
            } else if (!strcmp(word, "matrix")) {
                for (int j = 0; j < job->size; j++)
                    if (fscanf(in, "%llu", &p->matrix[j]) != 1) p->present = 0;
            }
        }
    }
    fclose(in);
}

static int blocks(const struct stats_table *t, int f)
{
    const char *n = t->names[f];
    return !strcmp(n, "wait") || !strcmp(n, "barrier") || !strcmp(n, "collective") || !strcmp(n, "lock");
}

static void print_table(const struct oshrun_job *job, const struct stats_table *t)
{
    unsigned long long all_calls[MAX_FAMILIES] = {0}, all_bytes[MAX_FAMILIES] = {0}, all_ns[MAX_FAMILIES] = {0};
    printf("Shoal statistics (SHMEM_STATS): %d PE%s\n", job->size, job->size > 1 ? "s" : "");
    printf("%4s  %-11s %12s %16s %12s\n", "PE", "family", "calls", "bytes", "blocked ms");
    for (int r = 0; r < job->npes; r++) {
        const struct pe_stats *p = &t->pe[r];
        if (!p->present) {
            printf("%4d  (no statistics: the PE did not reach shmem_finalize)\n", job->pes[r].rank);
            continue;
        }
        for (int f = 0; f < t->nfam; f++) {
            if (!p->calls[f]) continue;
            all_calls[f] += p->calls[f];
            all_bytes[f] += p->bytes[f];
            all_ns[f] += p->blocked_ns[f];
            if (blocks(t, f))
                printf("%4d  %-11s %12llu %16llu %12.3f\n", job->pes[r].rank, t->names[f], p->calls[f], p->bytes[f],
                       (double)p->blocked_ns[f] / 1e6);
            else
                printf("%4d  %-11s %12llu %16llu %12s\n", job->pes[r].rank, t->names[f], p->calls[f], p->bytes[f], "-");
        }
    }
    for (int f = 0; f < t->nfam; f++) {
        if (!all_calls[f]) continue;
        if (blocks(t, f))
            printf("%4s  %-11s %12llu %16llu %12.3f\n", "all", t->names[f], all_calls[f], all_bytes[f],
                   (double)all_ns[f] / 1e6);
        else
            printf("%4s  %-11s %12llu %16llu %12s\n", "all", t->names[f], all_calls[f], all_bytes[f], "-");
    }
    printf("Bytes of puts, gets, atomics and signals, from the calling PE (row) to the target PE (column):\n");
    printf("%4s", "PE");
    for (int j = 0; j < job->size; j++) printf(" %12d", j);
    printf("\n");
    for (int r = 0; r < job->npes; r++) {
        if (!t->pe[r].present) continue;
        printf("%4d", job->pes[r].rank);
        for (int j = 0; j < job->size; j++) printf(" %12llu", t->pe[r].matrix[j]);
        printf("\n");
    }
    fflush(stdout);
}

static void write_json(const struct oshrun_job *job, const struct stats_table *t, const char *path)
{
    char out_path[4096];
    output_path(job, path, out_path, sizeof out_path);
    FILE *f = fopen(out_path, "w");
    if (!f) {
        fprintf(stderr, "oshrun: SHMEM_STATS: cannot write %s: %s\n", out_path, strerror(errno));
        return;
    }
    fprintf(f, "{\"n_pes\": %d, \"pes\": [", job->size);
    for (int r = 0, n = 0; r < job->npes; r++) {
        const struct pe_stats *p = &t->pe[r];
        if (!p->present) continue;
        fprintf(f, "%s\n  {\"pe\": %d, \"families\": {", n++ ? "," : "", job->pes[r].rank);
        for (int fam = 0, k = 0; fam < t->nfam; fam++)
            if (p->calls[fam])
                fprintf(f, "%s\"%s\": {\"calls\": %llu, \"bytes\": %llu, \"blocked_ns\": %llu}", k++ ? ", " : "",
                        t->names[fam], p->calls[fam], p->bytes[fam], p->blocked_ns[fam]);
        fprintf(f, "}}");
    }
    fprintf(f, "],\n \"matrix\": [");
    for (int r = 0, n = 0; r < job->npes; r++) {
        if (!t->pe[r].present) continue;
        fprintf(f, "%s\n  [", n++ ? "," : "");
        for (int j = 0; j < job->size; j++) fprintf(f, "%s%llu", j ? ", " : "", t->pe[r].matrix[j]);
        fprintf(f, "]");
    }
    fprintf(f, "]}\n");
    if (fclose(f) != 0) fprintf(stderr, "oshrun: SHMEM_STATS: writing %s failed: %s\n", out_path, strerror(errno));
}

static void merge_stats(const struct oshrun_job *job)
{
    struct stats_table t = {.nfam = 0, .pe = calloc((size_t)job->npes, sizeof(struct pe_stats))};
    if (!t.pe) return;
    for (int r = 0; r < job->npes; r++) {
        t.pe[r].matrix = calloc((size_t)job->size, sizeof(unsigned long long));
        if (t.pe[r].matrix) read_stats_part(job, &t, r);
    }
    if (!strncmp(stats_value, "json:", 5))
        write_json(job, &t, stats_value + 5);
    else
        print_table(job, &t);
    for (int r = 0; r < job->npes; r++) free(t.pe[r].matrix);
    free(t.pe);
}

static void remove_dir(void)
{
    DIR *d = opendir(observe_dir);
    if (d) {
        struct dirent *e;
        char path[512];
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.') continue;
            snprintf(path, sizeof path, "%s/%s", observe_dir, e->d_name);
            unlink(path);
        }
        closedir(d);
    }
    rmdir(observe_dir);
}

void oshrun_observe_finish(struct oshrun_job *job)
{
    if (!observe_dir[0]) return;
    int started = 0; /* PEs that reached shmem_init: none, nothing to say */
    for (int r = 0; r < job->npes; r++) started += job->pes[r].hello;
    if (started && trace_path) merge_trace(job);
    if (started && stats_value) merge_stats(job);
    remove_dir();
    free(trace_path);
    free(stats_value);
    observe_dir[0] = 0;
}
