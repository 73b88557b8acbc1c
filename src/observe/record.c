/* record.c: opening and closing spans, one track per thread (track.h).
 *
 * Clock: spans are stamped with the TSC where the kernel itself keeps time
 * by it (its clocksource is "tsc": constant and synchronised across
 * cores), else with CLOCK_REALTIME. Reading the TSC costs a few ns where a
 * clock_gettime may cost 170 ns (a virtual machine without a usable vDSO).
 * TSC stamps are turned into CLOCK_REALTIME ns at write time from two
 * anchors (init and finalize), so the PEs of a host (and hosts kept in step
 * by NTP) share one time line, in ns since an epoch every PE agrees on
 * (oshrun's start, else the last multiple of 10^5 s). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HAVE_TSC 1
#endif

#include "core/route.h"
#include "core/runtime.h"
#include "util/log.h"
#include "observe/track.h"

int shoal_obs_level;
struct shoal_obs_state shoal_obs;

static int pcontrol_level = 1; /* the program's last shmem_pcontrol */
static pthread_mutex_t tracks_lock = PTHREAD_MUTEX_INITIALIZER;
static int n_tracks;
static _Thread_local struct shoal_obs_track *my_track;
static _Thread_local int track_failed;
static _Thread_local struct shoal_obs_span *innermost;

static const char *const family_names[SHOAL_OBS_FAMILIES] = {
    "put", "get", "atomic", "signal", "wait", "barrier", "collective", "alloc", "lock", "order", "team",
};

const char *shoal_obs_family_name(int family)
{
    return family >= 0 && family < SHOAL_OBS_FAMILIES ? family_names[family] : "?";
}

int shoal_obs_family_blocks(int family)
{
    return family == SHOAL_OBS_WAIT || family == SHOAL_OBS_BARRIER || family == SHOAL_OBS_COLL ||
           family == SHOAL_OBS_LOCK;
}

static int use_tsc;
static uint64_t anchor_stamp[2], anchor_ns[2]; /* at init, at finalize */
static double ns_per_tick = 1.0;

static uint64_t realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec - shoal_obs.epoch_ns;
}

static inline uint64_t stamp(void)
{
#ifdef HAVE_TSC
    if (use_tsc) return __rdtsc();
#endif
    uint64_t t = realtime_ns();
    return t ? t : 1;
}

/* One anchor: a stamp and the CLOCK_REALTIME ns of the same moment (the
 * stamps either side of the clock read, averaged). */
static void take_anchor(int which)
{
    uint64_t a = stamp(), ns = realtime_ns(), b = stamp();
    anchor_stamp[which] = a + (b - a) / 2;
    anchor_ns[which] = ns;
}

static int kernel_clock_is_tsc(void)
{
    char name[32] = "";
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    if (!f) return 0;
    int ok = fgets(name, sizeof name, f) && !strncmp(name, "tsc", 3);
    fclose(f);
    return ok;
}

uint64_t shoal_obs_stamp_ns(uint64_t s)
{
    if (!use_tsc) return s;
    double d = ((double)s - (double)anchor_stamp[0]) * ns_per_tick + (double)anchor_ns[0];
    return d > 0 ? (uint64_t)d : 0;
}

uint64_t shoal_obs_ticks_ns(uint64_t ticks) { return use_tsc ? (uint64_t)((double)ticks * ns_per_tick) : ticks; }

static struct shoal_obs_track *new_track(void)
{
    struct shoal_obs_track *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    if (shoal_obs.trace) {
        t->cap = shoal_obs.ring_events;
        t->ring = malloc(t->cap * sizeof *t->ring);
    }
    if (shoal_obs.stats) t->peer_bytes = calloc((size_t)shoal_rt.n_pes, sizeof *t->peer_bytes);
    if ((shoal_obs.trace && !t->ring) || (shoal_obs.stats && !t->peer_bytes)) {
        free(t->ring);
        free(t->peer_bytes);
        free(t);
        return NULL;
    }
    t->tid = (pid_t)syscall(SYS_gettid);
    pthread_mutex_lock(&tracks_lock);
    t->index = n_tracks++;
    /* Appended, so the writers list tracks in the order they began. */
    struct shoal_obs_track **end = &shoal_obs.tracks;
    while (*end) end = &(*end)->next;
    *end = t;
    pthread_mutex_unlock(&tracks_lock);
    return t;
}

uint64_t shoal_obs_begin(struct shoal_obs_span *s, int family, const char *name, int peer, uint64_t bytes)
{
    /* Level 1 records only the calls the program made. */
    if (innermost && __atomic_load_n(&shoal_obs_level, __ATOMIC_RELAXED) < 2) return 0;
    if (!my_track) {
        if (track_failed || !(my_track = new_track())) {
            track_failed = 1; /* out of memory: this thread goes unrecorded */
            return 0;
        }
    }
    s->name = name;
    s->family = family;
    s->peer = peer;
    s->bytes = bytes;
    s->team = -1;
    s->algo = NULL;
    s->flow_out = s->flow_in = 0;
    s->outer = innermost;
    innermost = s;
    return s->t0 = stamp();
}

_Thread_local int shoal_obs_wrapping;
static _Thread_local struct shoal_obs_span wrap_span;

int shoal_obs_wrap_begin(int family, const char *name, int peer, uint64_t bytes)
{
    shoal_obs_wrapping = 1;
    return shoal_obs_begin(&wrap_span, family, name, peer, bytes) != 0;
}

void shoal_obs_wrap_end(int opened)
{
    shoal_obs_wrapping = 0;
    if (opened) shoal_obs_end(&wrap_span);
}

static void count(struct shoal_obs_track *t, const struct shoal_obs_span *s, uint64_t dur)
{
    t->calls[s->family]++;
    t->bytes[s->family] += s->bytes;
    if (shoal_obs_family_blocks(s->family)) t->blocked[s->family] += dur;
    /* The byte matrix holds one-sided traffic: what a collective moves is
     * the collective layer's business, not the caller's. */
    if (s->peer >= 0 && s->peer < shoal_rt.n_pes && s->family <= SHOAL_OBS_SIGNAL) t->peer_bytes[s->peer] += s->bytes;
}

void shoal_obs_end(struct shoal_obs_span *s)
{
    uint64_t end = stamp();
    uint64_t dur = end > s->t0 ? end - s->t0 : 0;
    struct shoal_obs_track *t = my_track;
    innermost = s->outer;
    if (!t || (!shoal_obs.trace && !shoal_obs.stats)) return; /* closed after finalize wrote the tracks */
    if (shoal_obs.stats && !s->outer) count(t, s, dur);
    if (!shoal_obs.trace) return;
    uint8_t depth = 0;
    for (const struct shoal_obs_span *o = s->outer; o && depth < 255; o = o->outer) depth++;
    t->ring[t->written % t->cap] = (struct shoal_obs_event){
        .t0 = s->t0, .dur = dur, .name = s->name, .algo = s->algo, .bytes = s->bytes, .flow_out = s->flow_out,
        .flow_in = s->flow_in, .peer = s->peer, .team = s->team, .family = (uint8_t)s->family, .depth = depth};
    t->written++;
}

void shoal_obs_algo(const char *algo)
{
    for (struct shoal_obs_span *s = innermost; s; s = s->outer)
        if (s->family == SHOAL_OBS_COLL || s->family == SHOAL_OBS_BARRIER) {
            if (!s->algo) s->algo = algo;
            return;
        }
}

static uint64_t flow_id(int pe, int seg, size_t off, uint64_t value)
{
    /* splitmix64 over the four; 53 bits, so a JSON reader keeps it exact. */
    uint64_t h = (uint64_t)pe * 0x9E3779B97F4A7C15ull ^ (uint64_t)seg << 56 ^ (uint64_t)off;
    h ^= value * 0xBF58476D1CE4E5B9ull;
    h = (h ^ h >> 30) * 0xBF58476D1CE4E5B9ull;
    h = (h ^ h >> 27) * 0x94D049BB133111EBull;
    h ^= h >> 31;
    h &= (UINT64_C(1) << 53) - 1;
    return h ? h : 1;
}

void shoal_obs_signal_sent(int pe, int seg, size_t off, uint64_t value)
{
    if (innermost) innermost->flow_out = flow_id(pe, seg, off, value);
}

void shoal_obs_wait_seen(struct shoal_obs_span *s, const void *addr, uint64_t value)
{
    size_t off;
    int seg = shoal_route_segment(addr, sizeof value, &off);
    if (seg >= 0) s->flow_in = flow_id(shoal_rt.my_pe, seg, off, value);
}

static void apply_level(void)
{
    int on = shoal_obs.trace || shoal_obs.stats, level = on ? pcontrol_level : 0;
    __atomic_store_n(&shoal_obs_level, level, __ATOMIC_RELAXED);
    __atomic_store_n(&shoal_rt.plain_calls, shoal_rt.initialized && !level, __ATOMIC_RELAXED);
}

void shoal_obs_pcontrol(int level)
{
    pcontrol_level = level <= 0 ? 0 : level >= 2 ? 2 : 1;
    if (shoal_rt.initialized) apply_level();
}

void shoal_obs_init(void)
{
    const struct shoal_config *c = &shoal_rt.config;
    shoal_obs.trace = c->trace && c->trace[0];
    shoal_obs.trace_path = c->trace;
    shoal_obs.stats = c->stats && c->stats[0] && strcmp(c->stats, "0") != 0;
    shoal_obs.stats_json = shoal_obs.stats && !strncmp(c->stats, "json:", 5) ? c->stats + 5 : NULL;
    shoal_obs.ring_events = (size_t)c->trace_buffer;
#ifdef SHOAL_OBSERVE_HOOKS_OFF
    if (shoal_obs.trace || shoal_obs.stats)
        shoal_warn("observe", "this build has the tracing and statistics hooks compiled out "
                   "(-DSHOAL_OBSERVE_HOOKS=OFF): SHMEM_TRACE and SHMEM_STATS record nothing");
    shoal_obs.trace = shoal_obs.stats = 0;
#endif
    const char *dir = getenv("SHOAL_OBSERVE_DIR");
    shoal_obs.dir = dir && dir[0] ? dir : NULL;
    const char *epoch = getenv("SHOAL_OBSERVE_EPOCH_NS");
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    shoal_obs.epoch_ns = epoch && epoch[0] ? strtoull(epoch, NULL, 10)
                                           : (uint64_t)(ts.tv_sec - ts.tv_sec % 100000) * 1000000000u;
#ifdef HAVE_TSC
    use_tsc = (shoal_obs.trace || shoal_obs.stats) && kernel_clock_is_tsc();
#endif
    if (use_tsc) take_anchor(0);
    apply_level();
}

void shoal_obs_finish(void)
{
    if (!shoal_obs.trace && !shoal_obs.stats) return;
    __atomic_store_n(&shoal_obs_level, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&shoal_rt.plain_calls, shoal_rt.initialized, __ATOMIC_RELAXED);
    if (use_tsc) {
        /* The TSC's rate against CLOCK_REALTIME over the run, measured over
         * at least a few ms so the clock reads' own cost does not matter. */
        const struct timespec ms = {0, 1000000};
        take_anchor(1);
        for (int i = 0; i < 50 && (anchor_ns[1] < anchor_ns[0] + 5000000 || anchor_stamp[1] <= anchor_stamp[0]); i++) {
            nanosleep(&ms, NULL);
            take_anchor(1);
        }
        if (anchor_ns[1] > anchor_ns[0] && anchor_stamp[1] > anchor_stamp[0]) /* else the clock stepped back */
            ns_per_tick = (double)(anchor_ns[1] - anchor_ns[0]) / (double)(anchor_stamp[1] - anchor_stamp[0]);
    }
    if (shoal_obs.trace) shoal_obs_write_trace();
    if (shoal_obs.stats) shoal_obs_write_stats();
    pthread_mutex_lock(&tracks_lock);
    for (struct shoal_obs_track *t = shoal_obs.tracks, *next; t; t = next) {
        next = t->next;
        free(t->ring);
        free(t->peer_bytes);
        free(t);
    }
    shoal_obs.tracks = NULL;
    my_track = NULL;
    pthread_mutex_unlock(&tracks_lock);
    shoal_obs.trace = shoal_obs.stats = 0;
}
