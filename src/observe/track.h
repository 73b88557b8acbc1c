/* track.h: what the recorder (record.c) keeps per thread, read by the
 * writers (trace_write.c, stats.c) once recording has stopped.
 *
 * Invariant: a track is written only by its own thread while recording,
 * and read by the finalizing thread only after shoal_obs_level is 0 and
 * the program has stopped calling Shoal from other threads (finalize
 * requires it), so neither side takes a lock. */
#ifndef SHOAL_OBSERVE_TRACK_H
#define SHOAL_OBSERVE_TRACK_H

#include <stdint.h>
#include <sys/types.h>

#include "observe/observe.h"

/* Times are recorded in stamps of the recording clock (record.c: the TSC
 * where the kernel keeps time by it, else CLOCK_REALTIME in ns) and turned
 * into ns only when written. */
uint64_t shoal_obs_stamp_ns(uint64_t stamp); /* ns since the trace epoch */
uint64_t shoal_obs_ticks_ns(uint64_t ticks); /* a duration */

struct shoal_obs_event {
    uint64_t t0, dur; /* stamps */
    const char *name, *algo;
    uint64_t bytes, flow_out, flow_in;
    int32_t peer, team;
    uint8_t family, depth;
};

struct shoal_obs_track {
    struct shoal_obs_track *next;
    int index;  /* 0, 1, ... in order of first call: the trace's tid */
    pid_t tid;  /* kernel thread id, for its name */
    /* Trace ring: event k (k counts from 0) sits at ring[k % cap]; the
     * last min(written, cap) events are kept, the older ones dropped. */
    struct shoal_obs_event *ring;
    size_t cap;
    uint64_t written;
    /* Statistics of the calls the program made (outermost spans). */
    uint64_t calls[SHOAL_OBS_FAMILIES], bytes[SHOAL_OBS_FAMILIES], blocked[SHOAL_OBS_FAMILIES]; /* stamps */
    uint64_t *peer_bytes; /* n_pes entries: bytes this thread moved to/from each PE */
};

struct shoal_obs_state {
    int trace, stats;       /* settings on */
    const char *trace_path; /* SHMEM_TRACE */
    const char *stats_json; /* SHMEM_STATS=json:PATH: PATH; NULL for the table */
    const char *dir;        /* SHOAL_OBSERVE_DIR from oshrun, or NULL */
    size_t ring_events;     /* SHMEM_TRACE_BUFFER */
    uint64_t epoch_ns;      /* CLOCK_REALTIME of ts 0 (the same on every PE) */
    struct shoal_obs_track *tracks;
};
extern struct shoal_obs_state shoal_obs;

/* Family names ("put", "collective", ...), shared with oshrun's merge. */
const char *shoal_obs_family_name(int family);
/* Whether a family's calls wait for peers (their time counts as blocked). */
int shoal_obs_family_blocks(int family);

void shoal_obs_write_trace(void);
void shoal_obs_write_stats(void);

#endif
