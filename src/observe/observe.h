/* observe.h: timeline traces (SHMEM_TRACE) and statistics (SHMEM_STATS).
 *
 * A call is observed by opening a span at the top of its byte-based core
 * entry point:
 *
 *     SHOAL_OBS_SPAN(sp, SHOAL_OBS_PUT, call, pe, bytes);
 *
 * The span closes when `sp` goes out of scope (a cleanup attribute), so
 * every return path is covered. With neither setting on, or after
 * shmem_pcontrol(0), shoal_obs_level is 0 and a span costs one predictable
 * branch on that global when it opens and one on a stack word when it
 * closes: no function is called.
 *
 * Levels (shmem_pcontrol): 0 records nothing, 1 records the calls the
 * program made, 2 also records the operations nested inside them (the put
 * inside a put_signal, the barrier inside shmem_malloc, ...). Statistics
 * count only the calls the program made, at either level.
 *
 * Each thread records into its own track (no lock on the recording path);
 * tracks are written out at finalize (observe_write.c), merged by oshrun. */
#ifndef SHOAL_OBSERVE_OBSERVE_H
#define SHOAL_OBSERVE_OBSERVE_H

#include <stddef.h>
#include <stdint.h>

/* Operation families: the colours of the timeline, the rows of the table. */
enum shoal_obs_family {
    SHOAL_OBS_PUT, SHOAL_OBS_GET, SHOAL_OBS_AMO, SHOAL_OBS_SIGNAL, SHOAL_OBS_WAIT, SHOAL_OBS_BARRIER,
    SHOAL_OBS_COLL, SHOAL_OBS_ALLOC, SHOAL_OBS_LOCK, SHOAL_OBS_ORDER, SHOAL_OBS_TEAM, SHOAL_OBS_FAMILIES
};

struct shoal_obs_span {
    uint64_t t0; /* start stamp (track.h); set only while recorded */
    const char *name;
    struct shoal_obs_span *outer; /* the span this one is nested in, this thread */
    uint64_t bytes;
    uint64_t flow_out, flow_in; /* put_signal -> wait arrows; 0: none */
    const char *algo;           /* collective algorithm chosen */
    int peer;                   /* world PE, -1: none */
    int team;                   /* team slot (0 world, 1 shared), -1: none */
    int family;
};

/* Recording level in force: 0 when neither SHMEM_TRACE nor SHMEM_STATS is
 * set, or after shmem_pcontrol(0). */
extern int shoal_obs_level;

/* Returns the start stamp, or 0 when this span is not recorded. */
uint64_t shoal_obs_begin(struct shoal_obs_span *s, int family, const char *name, int peer, uint64_t bytes);
void shoal_obs_end(struct shoal_obs_span *s);

/* What closes a span. Apart from the span itself so that, when nothing is
 * recorded, it lives in a register: the span's fields are never written and
 * its closing test reads no memory. */
struct shoal_obs_guard {
    uint64_t t0; /* 0: not recorded */
    struct shoal_obs_span *span;
};

static inline void shoal_obs_close(struct shoal_obs_guard *g)
{
    if (__builtin_expect(g->t0 != 0, 0)) shoal_obs_end(g->span);
}

/* A relaxed load (a plain mov): shmem_pcontrol may change the level while
 * other threads record. */
#ifdef SHOAL_OBSERVE_HOOKS_OFF /* -DSHOAL_OBSERVE_HOOKS=OFF: the baseline of their cost */
#define SHOAL_OBS_ON() 0
#else
#define SHOAL_OBS_ON() __builtin_expect(__atomic_load_n(&shoal_obs_level, __ATOMIC_RELAXED) != 0, 0)
#endif

#define SHOAL_OBS_SPAN(sp, family, name, peer, bytes)                                                             \
    struct shoal_obs_span sp;                                                                                     \
    struct shoal_obs_guard sp##_guard __attribute__((cleanup(shoal_obs_close))) = {                               \
        SHOAL_OBS_ON() ? shoal_obs_begin(&sp, (family), (name), (peer), (bytes)) : 0, &sp}
#define SHOAL_OBS_RECORDING(sp) __builtin_expect((sp##_guard).t0 != 0, 0)

/* The hottest entry points (put, get, p, g, atomics, fence, quiet) are
 * observed by calling themselves again inside a span instead, so that when
 * nothing is recorded their code is what it was without tracing, down to
 * the tail call of memcpy. They reach this only from the one test they
 * make on entry anyway (api/check.h, SHOAL_HOT_ENTER), so with nothing
 * recorded the hooks add no instruction to their path:
 *
 *     SHOAL_OBS_WRAP(SHOAL_OBS_PUT, call, world_pe, bytes, shoal_api_put(ctx, dest, ...));
 *
 * world_pe and bytes are evaluated only when the call is recorded; they
 * may run the call's own checks, which then fail as the call itself would. */
/* A WRAP never nests in another (the flag), so each thread needs one span
 * for them, kept in record.c: no stack frame for it when nothing records. */
extern _Thread_local int shoal_obs_wrapping;
int shoal_obs_wrap_begin(int family, const char *name, int peer, uint64_t bytes);
void shoal_obs_wrap_end(int opened);
#define SHOAL_OBS_WRAP(family, name, peer, bytes, self_call)                                                      \
    do {                                                                                                          \
        if (SHOAL_OBS_ON() && !shoal_obs_wrapping) {                                                              \
            int wrap_opened_ = shoal_obs_wrap_begin((family), (name), (peer), (bytes));                           \
            self_call;                                                                                            \
            shoal_obs_wrap_end(wrap_opened_);                                                                     \
            return;                                                                                               \
        }                                                                                                         \
    } while (0)

/* The team a collective span runs on. */
#define SHOAL_OBS_TEAM(sp, slot)                                                                                  \
    do {                                                                                                          \
        if (SHOAL_OBS_RECORDING(sp)) (sp).team = (slot);                                                          \
    } while (0)

/* The algorithm the collective layer chose: kept by the innermost open
 * span of this thread that has none yet. */
void shoal_obs_algo(const char *algo);
#define SHOAL_OBS_ALGO(algo)                                                                                      \
    do {                                                                                                          \
        if (SHOAL_OBS_ON()) shoal_obs_algo(algo);                                                                 \
    } while (0)

/* A signal word at (seg, off) on PE pe now holds value: the sender's end of
 * a flow arrow (on the innermost open span of this thread) ... */
void shoal_obs_signal_sent(int pe, int seg, size_t off, uint64_t value);
#define SHOAL_OBS_SIGNAL_SENT(pe, seg, off, value)                                                                \
    do {                                                                                                          \
        if (SHOAL_OBS_ON()) shoal_obs_signal_sent((pe), (seg), (off), (value));                                   \
    } while (0)
/* ... and the waiter's end: its wait on the word at addr (this PE's)
 * returned having seen value. */
void shoal_obs_wait_seen(struct shoal_obs_span *s, const void *addr, uint64_t value);
#define SHOAL_OBS_WAIT_SEEN(sp, addr, value)                                                                      \
    do {                                                                                                          \
        if (SHOAL_OBS_RECORDING(sp)) shoal_obs_wait_seen(&(sp), (addr), (value));                                 \
    } while (0)

/* shmem_pcontrol: 0, 1 or 2 (larger values count as 2, negative as 0). */
void shoal_obs_pcontrol(int level);

/* shmem_init, once the runtime is up: reads SHMEM_TRACE, SHMEM_STATS and
 * SHMEM_TRACE_BUFFER (already checked by the configuration table). */
void shoal_obs_init(void);
/* shmem_finalize (or the exit handler): stops recording and writes this
 * PE's trace and statistics parts. */
void shoal_obs_finish(void);

#endif
