/* trace_write.c: this PE's part of the SHMEM_TRACE file, in Chrome's
 * trace-event JSON (which ui.perfetto.dev and chrome://tracing open).
 *
 * Under oshrun (SHOAL_OBSERVE_DIR set) the part is a run of events, each
 * line ending in ",\n", which oshrun concatenates with the other PEs' into
 * one {"traceEvents": [...]} at the SHMEM_TRACE path. Without oshrun each
 * PE writes a whole trace of its own, to PATH.N.json.
 *
 * pid is the PE, tid the track (thread) in the order threads first called
 * Shoal; ts and dur are in microseconds. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/runtime.h"
#include "observe/track.h"
#include "util/log.h"

static double us(uint64_t ns) { return (double)ns / 1000.0; }

static void team_name(int slot, char *buf, size_t len)
{
    if (slot == 0) snprintf(buf, len, "world");
    else if (slot == 1) snprintf(buf, len, "shared");
    else snprintf(buf, len, "team slot %d", slot);
}

static void write_event(FILE *f, int pe, int tid, const struct shoal_obs_event *e)
{
    char team[32];
    fprintf(f, "{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":%d,\"tid\":%d,\"args\":{",
            e->name, shoal_obs_family_name(e->family), us(shoal_obs_stamp_ns(e->t0)), us(shoal_obs_ticks_ns(e->dur)),
            pe, tid);
    const char *sep = "";
    if (e->peer >= 0) {
        fprintf(f, "\"peer\":%d", e->peer);
        sep = ",";
    }
    fprintf(f, "%s\"bytes\":%llu", sep, (unsigned long long)e->bytes);
    if (e->team >= 0) {
        team_name(e->team, team, sizeof team);
        fprintf(f, ",\"team\":\"%s\"", team);
    }
    if (e->algo) fprintf(f, ",\"algorithm\":\"%s\"", e->algo);
    if (shoal_obs_family_blocks(e->family)) fprintf(f, ",\"blocked_us\":%.3f", us(shoal_obs_ticks_ns(e->dur)));
    if (e->depth) fprintf(f, ",\"depth\":%u", (unsigned)e->depth);
    fprintf(f, "}},\n");
    /* Flow ends sit inside their slice, which is what they bind to: 1 ns
     * before it ends (the signal went out, the wait saw it, at the end). */
    uint64_t start = shoal_obs_stamp_ns(e->t0), dur = shoal_obs_ticks_ns(e->dur);
    double mid = us(dur > 2 ? start + dur - 1 : start + dur / 2);
    if (e->flow_out)
        fprintf(f, "{\"name\":\"signal\",\"cat\":\"signal\",\"ph\":\"s\",\"id\":%llu,\"ts\":%.3f,\"pid\":%d,\"tid\":%d},\n",
                (unsigned long long)e->flow_out, mid, pe, tid);
    if (e->flow_in)
        fprintf(f,
                "{\"name\":\"signal\",\"cat\":\"signal\",\"ph\":\"f\",\"bp\":\"e\",\"id\":%llu,\"ts\":%.3f,\"pid\":%d,"
                "\"tid\":%d},\n",
                (unsigned long long)e->flow_in, mid, pe, tid);
}

static void write_track(FILE *f, int pe, const struct shoal_obs_track *t)
{
    uint64_t first = t->written > t->cap ? t->written - t->cap : 0;
    fprintf(f, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":\"%s %d (tid %d)\"}},\n",
            pe, t->index, t->tid == getpid() ? "main" : "thread", t->index, (int)t->tid);
    if (first) {
        /* The ring kept the newest events; say where the record starts. */
        fprintf(f,
                "{\"name\":\"trace ring buffer overflow\",\"cat\":\"shoal\",\"ph\":\"i\",\"s\":\"t\",\"ts\":%.3f,"
                "\"pid\":%d,\"tid\":%d,\"args\":{\"dropped\":%llu,\"kept\":%zu}},\n",
                us(shoal_obs_stamp_ns(t->ring[first % t->cap].t0)), pe, t->index, (unsigned long long)first, t->cap);
        shoal_log_write(SHOAL_LOG_WARN, NULL,
                        "SHMEM_TRACE: thread %d recorded %llu events; the ring buffer holds %zu, so the %llu "
                        "oldest were dropped (raise SHMEM_TRACE_BUFFER)",
                        t->index, (unsigned long long)t->written, t->cap, (unsigned long long)first);
    }
    for (uint64_t k = first; k < t->written; k++) write_event(f, pe, t->index, &t->ring[k % t->cap]);
}

void shoal_obs_write_trace(void)
{
    const int pe = shoal_rt.my_pe;
    char path[4096];
    int whole = shoal_obs.dir == NULL;
    if (whole)
        snprintf(path, sizeof path, "%s.%d.json", shoal_obs.trace_path, pe);
    else
        snprintf(path, sizeof path, "%s/trace.%d.part", shoal_obs.dir, pe);
    FILE *f = fopen(path, "w");
    if (!f) {
        shoal_log_write(SHOAL_LOG_WARN, NULL, "SHMEM_TRACE: cannot write %s: %s; this PE's trace is lost", path,
                        strerror(errno));
        return;
    }
    if (whole) fprintf(f, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
    fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"args\":{\"name\":\"PE %d\"}},\n", pe, pe);
    fprintf(f, "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%d,\"args\":{\"sort_index\":%d}},\n", pe, pe);
    for (const struct shoal_obs_track *t = shoal_obs.tracks; t; t = t->next) write_track(f, pe, t);
    if (whole) fprintf(f, "{\"name\":\"process_labels\",\"ph\":\"M\",\"pid\":%d,\"args\":{\"labels\":\"Shoal\"}}]}\n", pe);
    if (fclose(f) != 0)
        shoal_log_write(SHOAL_LOG_WARN, NULL, "SHMEM_TRACE: writing %s failed: %s; this PE's trace is incomplete",
                        path, strerror(errno));
}
