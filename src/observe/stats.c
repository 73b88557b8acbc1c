/* stats.c: this PE's part of SHMEM_STATS, summed over its tracks.
 *
 * Under oshrun (SHOAL_OBSERVE_DIR set) the part is a few text lines that
 * oshrun merges into the job's table (or JSON):
 *
 *     shoal-stats 1 pe P npes N
 *     family NAME CALLS BYTES BLOCKED_NS      (families with calls only)
 *     matrix B_0 B_1 ... B_{N-1}              (bytes P moved to/from each PE)
 *
 * Without oshrun each PE prints its own rows to stderr (or, for json:PATH,
 * writes its own JSON to PATH.P), since nothing gathers them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/runtime.h"
#include "observe/track.h"
#include "util/log.h"

struct totals {
    /* blocked_ns holds stamps until shoal_obs_write_stats converts it */
    uint64_t calls[SHOAL_OBS_FAMILIES], bytes[SHOAL_OBS_FAMILIES], blocked_ns[SHOAL_OBS_FAMILIES];
    uint64_t *peer_bytes;
};

static void sum_tracks(struct totals *s)
{
    for (const struct shoal_obs_track *t = shoal_obs.tracks; t; t = t->next) {
        for (int f = 0; f < SHOAL_OBS_FAMILIES; f++) {
            s->calls[f] += t->calls[f];
            s->bytes[f] += t->bytes[f];
            s->blocked_ns[f] += t->blocked[f];
        }
        for (int pe = 0; pe < shoal_rt.n_pes; pe++) s->peer_bytes[pe] += t->peer_bytes[pe];
    }
}

static void write_part(FILE *f, const struct totals *s)
{
    fprintf(f, "shoal-stats 1 pe %d npes %d\n", shoal_rt.my_pe, shoal_rt.n_pes);
    for (int fam = 0; fam < SHOAL_OBS_FAMILIES; fam++)
        if (s->calls[fam])
            fprintf(f, "family %s %llu %llu %llu\n", shoal_obs_family_name(fam), (unsigned long long)s->calls[fam],
                    (unsigned long long)s->bytes[fam], (unsigned long long)s->blocked_ns[fam]);
    fprintf(f, "matrix");
    for (int pe = 0; pe < shoal_rt.n_pes; pe++) fprintf(f, " %llu", (unsigned long long)s->peer_bytes[pe]);
    fprintf(f, "\n");
}

/* No launcher to merge, json:PATH: this PE alone, in the layout oshrun's
 * merged file has (one entry in "pes", one row in "matrix"). */
static void write_own_json(FILE *f, const struct totals *s)
{
    fprintf(f, "{\"n_pes\": %d, \"pes\": [{\"pe\": %d, \"families\": {", shoal_rt.n_pes, shoal_rt.my_pe);
    const char *sep = "";
    for (int fam = 0; fam < SHOAL_OBS_FAMILIES; fam++)
        if (s->calls[fam]) {
            fprintf(f, "%s\"%s\": {\"calls\": %llu, \"bytes\": %llu, \"blocked_ns\": %llu}", sep,
                    shoal_obs_family_name(fam), (unsigned long long)s->calls[fam], (unsigned long long)s->bytes[fam],
                    (unsigned long long)s->blocked_ns[fam]);
            sep = ", ";
        }
    fprintf(f, "}}], \"matrix\": [[");
    for (int pe = 0; pe < shoal_rt.n_pes; pe++) fprintf(f, "%s%llu", pe ? ", " : "", (unsigned long long)s->peer_bytes[pe]);
    fprintf(f, "]]}\n");
}

/* No launcher to merge: one line per family, on this PE's stderr. */
static void print_own(const struct totals *s)
{
    for (int fam = 0; fam < SHOAL_OBS_FAMILIES; fam++)
        if (s->calls[fam])
            fprintf(stderr, "shoal: PE %d stats: %-10s %10llu calls %14llu bytes %12.3f ms blocked\n",
                    shoal_rt.my_pe, shoal_obs_family_name(fam), (unsigned long long)s->calls[fam],
                    (unsigned long long)s->bytes[fam], (double)s->blocked_ns[fam] / 1e6);
}

void shoal_obs_write_stats(void)
{
    struct totals s = {.peer_bytes = calloc((size_t)shoal_rt.n_pes, sizeof(uint64_t))};
    if (!s.peer_bytes) return;
    sum_tracks(&s);
    for (int f = 0; f < SHOAL_OBS_FAMILIES; f++) s.blocked_ns[f] = shoal_obs_ticks_ns(s.blocked_ns[f]);
    char path[4096];
    if (shoal_obs.dir)
        snprintf(path, sizeof path, "%s/stats.%d.part", shoal_obs.dir, shoal_rt.my_pe);
    else if (shoal_obs.stats_json)
        snprintf(path, sizeof path, "%s.%d", shoal_obs.stats_json, shoal_rt.my_pe);
    else {
        print_own(&s);
        free(s.peer_bytes);
        return;
    }
    FILE *f = fopen(path, "w");
    if (!f) {
        shoal_log_write(SHOAL_LOG_WARN, NULL, "SHMEM_STATS: cannot write %s: %s", path, strerror(errno));
    } else {
        if (shoal_obs.dir)
            write_part(f, &s);
        else
            write_own_json(f, &s);
        if (fclose(f) != 0)
            shoal_log_write(SHOAL_LOG_WARN, NULL, "SHMEM_STATS: writing %s failed: %s", path, strerror(errno));
    }
    free(s.peer_bytes);
}
