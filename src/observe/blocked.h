/* blocked.h: what each thread of this PE is blocked in, for hang reports.
 *
 * Every blocking entry point (waits, barriers, collectives, lock
 * acquisition, quiet, finalize) fills its thread's record on entry and
 * clears it on exit. The record is a slot of a static table claimed by the
 * thread on its first blocking call; on the fast path filling it is plain
 * stores and a coarse clock read (vDSO, no system call), no lock; leaving
 * is one store. Tests (polled) skip the clock. A signal
 * from oshrun (where_wire.h) makes the PE copy every slot into one message
 * and send it to oshrun's socket (blocked.c). The reader takes a slot as it
 * finds it: `active` is stored last on entry (release) and read first, so
 * a half-filled record is seen as "changing", never as a wrong one. */
#ifndef SHOAL_OBSERVE_BLOCKED_H
#define SHOAL_OBSERVE_BLOCKED_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "observe/where_wire.h"

struct shoal_team;

struct shoal_blocked {
    uint32_t active;   /* enum shoal_where_kind; 0 when not blocked */
    uint32_t last;     /* the kind of the last call, blocking or polled */
    const char *call;  /* a string literal; kept after exit as the last call */
    const void *addr;
    uint64_t expected, bytes, nelems;
    uint64_t seq;
    int32_t size, is_signed, cmp, peer, root;
    int32_t team, team_slot, team_start, team_stride, team_size;
    uint64_t since_ns; /* CLOCK_MONOTONIC_COARSE at entry (a wait: at its first failed poll); 0 for a test */
    int32_t tid;
    int32_t used;      /* slot claimed by a live thread */
};

/* initial-exec: a plain TLS load, not a call to __tls_get_addr. */
extern _Thread_local struct shoal_blocked *shoal_blocked_mine __attribute__((tls_model("initial-exec")));
/* Claims a slot for this thread (a spare when all are taken). */
struct shoal_blocked *shoal_blocked_claim(void);

static inline uint64_t shoal_blocked_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The record of this thread, marked inactive while it is rewritten. */
static inline struct shoal_blocked *shoal_blocked_reopen(const char *call)
{
    struct shoal_blocked *b = shoal_blocked_mine;
    if (__builtin_expect(!b, 0)) b = shoal_blocked_claim();
    __atomic_store_n(&b->active, 0, __ATOMIC_RELAXED);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    b->call = call;
    return b;
}

/* The same, stamped with the time of entry (the one clock read). */
static inline struct shoal_blocked *shoal_blocked_open(const char *call)
{
    struct shoal_blocked *b = shoal_blocked_reopen(call);
    b->since_ns = shoal_blocked_clock();
    return b;
}

static inline void shoal_blocked_publish(struct shoal_blocked *b, uint32_t kind)
{
    b->last = kind;
    __atomic_store_n(&b->active, kind, __ATOMIC_RELEASE);
}

/* Entering a wait on the scalar at addr (size bytes) until `addr cmp
 * expected`; nelems > 0 for the set forms (addr is the array). */
static inline void shoal_blocked_fill_wait(struct shoal_blocked *b, const void *addr, unsigned size, int is_signed,
                                           int cmp, uint64_t expected, size_t nelems)
{
    b->addr = addr;
    b->size = (int32_t)size;
    b->is_signed = is_signed;
    b->cmp = cmp;
    b->expected = expected;
    b->nelems = nelems;
}

/* Waits read no clock on entry: one whose condition holds at once costs
 * none. Their first failed poll stamps the record (shoal_blocked_stamp,
 * from the back-off), so a report still says how long they have blocked. */
static inline void shoal_blocked_wait(const char *call, const void *addr, unsigned size, int is_signed, int cmp,
                                      uint64_t expected, size_t nelems)
{
    struct shoal_blocked *b = shoal_blocked_reopen(call);
    __atomic_store_n(&b->since_ns, 0, __ATOMIC_RELAXED);
    shoal_blocked_fill_wait(b, addr, size, is_signed, cmp, expected, nelems);
    shoal_blocked_publish(b, SHOAL_WHERE_WAIT);
}

/* A blocking call's first failed poll: stamps the time it started to block,
 * where its entry did not. */
static inline void shoal_blocked_stamp(void)
{
    struct shoal_blocked *b = shoal_blocked_mine;
    if (b && __atomic_load_n(&b->active, __ATOMIC_RELAXED) && !__atomic_load_n(&b->since_ns, __ATOMIC_RELAXED))
        __atomic_store_n(&b->since_ns, shoal_blocked_clock(), __ATOMIC_RELAXED);
}

/* A test (non-blocking) of the same: recorded as the last call only. */
static inline void shoal_blocked_polled(const char *call, const void *addr, unsigned size, int is_signed, int cmp,
                                        uint64_t expected, size_t nelems)
{
    /* Tests are polled in tight loops: no clock read (the report shows no age). */
    struct shoal_blocked *b = shoal_blocked_reopen(call);
    b->since_ns = 0;
    shoal_blocked_fill_wait(b, addr, size, is_signed, cmp, expected, nelems);
    b->last = SHOAL_WHERE_WAIT;
}

/* Entering a lock acquisition, a quiet or finalize: addr may be NULL, peer -1. */
static inline void shoal_blocked_call(const char *call, uint32_t kind, const void *addr, int peer)
{
    struct shoal_blocked *b = shoal_blocked_open(call);
    b->addr = addr;
    b->peer = peer;
    shoal_blocked_publish(b, kind);
}

/* Entering a collective on team (NULL: the active set start/stride/size);
 * counts it among the team's collectives. root -1 when there is none. */
void shoal_blocked_coll(const char *call, const struct shoal_team *team, int start, int stride, int size,
                        size_t bytes, int root);

/* Leaving the blocking call (the record stays, as the last call). */
static inline void shoal_blocked_end(void)
{
    struct shoal_blocked *b = shoal_blocked_mine;
    if (b) __atomic_store_n(&b->active, 0, __ATOMIC_RELAXED);
}

/* The number of the last collective this PE entered on team (from 1). */
uint64_t shoal_blocked_coll_seq(const struct shoal_team *team);
/* A new team took slot: its collectives count from 1. */
void shoal_blocked_team_new(int slot);

/* Locks this PE holds (shown in reports; a lock held by a PE blocked
 * elsewhere is a verdict). */
void shoal_blocked_lock_held(const void *lock, int held);

/* With SHOAL_WHERE_SOCKET set (by oshrun): answers SHOAL_WHERE_SIGNAL
 * from now on and tells oshrun so. Called first thing in shmem_init. */
void shoal_blocked_install(void);

#endif
