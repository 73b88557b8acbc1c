/* backoff.h: how a PE waits. It spins (cheapest and fastest while every
 * PE has a core of its own), then yields, then sleeps on a futex that the
 * writer rings (sync/wake.h), so a waiter needs no core until its word
 * changes. How long each phase lasts follows the machine as it is now
 * (backoff.c, "policy"): spinning shrinks when the CPUs are contended (a
 * yield that comes back late, CPU pressure from /proc/pressure/cpu) and
 * when recent spins did not pay off, and stops while more PEs of this host
 * are awake than it has cores. SHMEM_WAIT_POLICY=spin|yield|sleep and SHMEM_WAIT_SPIN override
 * the choice. */
#ifndef SHOAL_SYNC_BACKOFF_H
#define SHOAL_SYNC_BACKOFF_H

#include <sched.h>
#include <stdint.h>
#include <time.h>

#include "observe/blocked.h"
#include "sync/wake.h"

struct shoal_backoff {
    unsigned long polls;
    /* Every spinning poll, never started over: its periodic checks fire
     * even while serving keeps restarting polls (below). */
    unsigned long ticks;
    /* World PE + 1 whose store ends the wait, or 0 (unknown): while that PE
     * sleeps itself, or shares this PE's core, spinning cannot pay off. */
    int waits_on;
    /* Nonzero when every PE whose store ends the wait reaches this PE's
     * memory directly, so rings its bell (a leader awaiting its host's
     * members): the wait may sleep until rung, as with waits_on. */
    int writers_direct;
    int armed;     /* this wait raised the sleepers flag (sync/wake.h) */
    int flagged;   /* ... at least once: it stays off the serving spin */
    uint32_t bell; /* the bell read when arming */
    uint32_t first_bell; /* ... the first time (valid once sleeps or armed) */
    unsigned sleeps;
    int looked; /* the last yield was skipped to look at what progress applied */
    /* shoal_backoff_wait_members: polls spun while crowded, and whether a
     * missing member last ran on this PE's CPU, as last looked. */
    unsigned long crowd_spun;
    int crowd_here;
    long long incoming; /* the transport's incoming mark as this wait last saw it */
};

/* Polls spent spinning before yielding, as the policy chose it last. */
extern unsigned long shoal_backoff_spin;
/* Nonzero when this host runs more PEs than it has cores; set at start-up. */
extern int shoal_backoff_oversubscribed;
/* ... and the policy is auto: waits then publish their PE's CPU and stop
 * spinning when the PE they wait for last ran on theirs (the manual
 * policies keep their fixed phases). */
extern int shoal_backoff_cpu_aware;
/* The fabric's progress, which waits drive while they poll (a provider with
 * manual progress serves incoming operations only when asked); NULL when no
 * fabric is in use. */
extern void (*shoal_backoff_progress)(void);
/* The same for a wait past its spin, which yields or sleeps between calls:
 * the transport's rest where it has one (its threads then serve peers
 * meanwhile), else its progress. Waits that yield because more PEs are
 * awake than cores call the progress instead (backoff.c says why). */
extern void (*shoal_backoff_rest)(void);
/* Nonzero when the fabric's own threads serve incoming operations, so a
 * wait need not come back to drive it. */
extern int shoal_backoff_progress_optional;
/* The transport's mark of peers' operations applied in this PE (NULL:
 * none, or it cannot tell). A wait whose progress applies peers'
 * operations is doing the PE's work, not idling: while the policy lets
 * waits spin (shoal_backoff_spin_serves), each operation it sees applied
 * starts its spin over, and one past its spin that sees them applied by
 * the transport's threads goes back to spinning. The transport's threads
 * then stay parked instead of waking for each operation (2 namespace
 * hosts x 1 PE, tls, the target idle in a barrier: get 8 B 32-46 us with
 * the waiter asleep, 24 us spinning). */
extern long long (*shoal_backoff_incoming)(void);
extern int shoal_backoff_spin_serves;
/* The transport's report that its own threads are applying or answering
 * peers' operations now (NULL: none, or it cannot tell). A spinning wait
 * then yields between its progress calls: such a thread on the waiter's
 * core would otherwise get only what the spin leaves it (tls, one host,
 * 2 PEs, the target idle in a barrier: its stream's thread at 60% of a
 * core beside the spinning waiter while it opened 1 MiB puts). */
extern int (*shoal_backoff_threads_busy)(void);
/* Two counters in this PE's symmetric internal area, or NULL: waits that
 * went to sleep, and sleeps. A PE finalizing at exit reads them to tell a
 * peer blocked in one wait (perhaps on it) from one that computes. Only
 * the sleeping branch touches them, where a system call follows anyway. */
extern uint64_t *shoal_backoff_naps;
/* Nonzero: every futex sleep lasts this long instead of 50 us doubling to
 * 2 ms, the safety net for writers that ring no bell (wake.h). A test sets
 * it to seconds to tell the writer's wake from the timer's. */
extern long shoal_backoff_futex_fixed_ns;

static inline void shoal_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#endif
}

/* Counts the PEs of this host that are awake (not asleep in a wait) and,
 * when that crosses the core count, switches spinning on or off. */
void shoal_backoff_recount(void);
/* Yields, sense-taking and sleeps: past the spin budget. */
void shoal_backoff_slow(struct shoal_backoff *b);
/* Waits of this thread that did not hold at their first check. */
extern _Thread_local unsigned long shoal_backoff_started;

/* Publishes the CPU this PE runs on while shoal_backoff_cpu_aware (one
 * load, and a store only when the CPU changed); returns it, or -1. Each
 * wait does as it begins, so does a transport's wait for the PE's own
 * operation (util/own_wait.h), and a collective of a crowded team as its
 * member arrives (shoal_backoff_wait_members). */
int shoal_backoff_note_cpu(void);
/* The CPU pe last published (-1: unknown). */
int shoal_backoff_cpu_of(int pe);

/* Whether the PE whose store ends the wait last ran on this CPU, while
 * shoal_backoff_cpu_aware: spinning would keep it off its core. */
static inline int shoal_backoff_awaited_here(const struct shoal_backoff *b)
{
    return shoal_backoff_cpu_aware && b->waits_on && shoal_backoff_cpu_of(b->waits_on - 1) == sched_getcpu();
}

/* Whether peers' operations were applied since the wait last looked, while
 * the policy lets serving waits spin; notes the new mark. */
static inline int shoal_backoff_serving(struct shoal_backoff *b)
{
    if (!shoal_backoff_incoming || !__atomic_load_n(&shoal_backoff_spin_serves, __ATOMIC_RELAXED)) return 0;
    const long long mark = shoal_backoff_incoming();
    if (mark == b->incoming) return 0;
    b->incoming = mark;
    return 1;
}

static inline void shoal_backoff_wait(struct shoal_backoff *b)
{
    unsigned long n = b->polls++;
    /* The policy may change it from another thread at any time. */
    const unsigned long spin = __atomic_load_n(&shoal_backoff_spin, __ATOMIC_RELAXED);
    if (n == 0) {
        if (shoal_backoff_cpu_aware) shoal_backoff_note_cpu();
        shoal_backoff_started++;
        shoal_blocked_stamp();
        if (shoal_backoff_incoming) b->incoming = shoal_backoff_incoming();
    }
    if (n < spin) {
        if (shoal_backoff_progress && (n & 15) == 0) {
            shoal_backoff_progress();
            if (shoal_backoff_serving(b)) b->polls = 1;
            if (shoal_backoff_threads_busy && shoal_backoff_threads_busy()) sched_yield();
        }
        const unsigned long t = b->ticks++;
        /* The awaited PE sleeps: it stores nothing until woken, so stop.
         * Where PEs outnumber cores, also when it last ran on this very
         * core: this spin keeps it from running, and the scheduler moves
         * one of the two to an idle core only milliseconds later (a
         * host member spun 1.8 ms on its leader's core while the other
         * core idled, the leader's get waiting for it). */
        if (b->waits_on && (t & 63) == 63 &&
            (shoal_wake_peer_asleep(b->waits_on - 1) || shoal_backoff_awaited_here(b)))
            b->polls = spin;
        /* PEs woke: past the cores, this spin would hold one a writer needs. */
        if (shoal_backoff_oversubscribed && (t & 255) == 255) shoal_backoff_recount();
        shoal_cpu_relax();
        return;
    }
    shoal_backoff_slow(b);
}

/* Crowded cores: more PEs of this machine awake than it has cores, so
 * that waits under the auto policy yield from their first poll. A yield
 * hands the core to another PE on this CPU; in a collective where every
 * member still missing last ran on another CPU, that PE has arrived
 * already and only yields it back, two context switches for nothing (4 PEs
 * on 2 cores, barrier: 2.6-3.3 switches per barrier instead of the 2 that
 * moving every member on takes, docs/design.md). Such a wait spins
 * instead, up to SHOAL_BACKOFF_CROWD_SPIN polls (a member that moved to
 * this CPU meanwhile costs that at most), then backs off as any other.
 * missing_here(arg, cpu) says whether a member the wait still needs last
 * ran on cpu, or may have (its CPU unknown). Only where members are at most
 * twice the cores: with more on each CPU one of the missing nearly always
 * shares this one, and looking costs a load per member before every yield
 * (16 PEs on 2 cores, fcollect: 26.1-26.7 us without looking, 29.5-30.0
 * with). And only where the members are every PE on these cores (a team of
 * all this host's PEs, no other namespace host on the machine): a PE
 * outside the team may need this CPU to compute, and the spin would keep
 * it waiting. */
#define SHOAL_BACKOFF_CROWD_SPIN 8192ul
extern int shoal_backoff_crowded; /* set by the policy (backoff.c) */
/* Whether a team of members may spin so here (the auto policy, PEs
 * outnumbering cores, the team as above): only then do its members publish
 * their arrivals and CPUs for these waits. */
int shoal_backoff_crowd_team(int members);
typedef int (*shoal_backoff_missing_fn)(const void *arg, int cpu);
void shoal_backoff_wait_members(struct shoal_backoff *b, int members, shoal_backoff_missing_fn missing_here,
                                const void *arg);
/* Whether pe last ran on cpu, or may have (its CPU unknown): what a
 * missing_here callback asks of each member still missing. */
static inline int shoal_backoff_may_run_on(int pe, int cpu)
{
    const int ran = shoal_backoff_cpu_of(pe);
    return ran < 0 || ran == cpu;
}

/* After the wait's loop: drops this PE's sleepers flag if the wait raised
 * it and no writer cleared it (else the next writer rings for nothing). */
void shoal_backoff_end(struct shoal_backoff *b);

/* A whole wait: backs off while cond holds, then drops the flag. Waits use
 * it so none can forget the end (a flag left up costs the next writer a
 * futex wake and makes peers count this PE asleep). */
#define SHOAL_BACKOFF_WHILE(b, cond)                   \
    do {                                               \
        while (cond) shoal_backoff_wait(b);            \
        shoal_backoff_end(b);                          \
    } while (0)

/* The same for a collective's wait whose missing members are known. */
#define SHOAL_BACKOFF_WHILE_MEMBERS(b, cond, members, missing_here, arg)      \
    do {                                                                      \
        while (cond) shoal_backoff_wait_members(b, members, missing_here, arg); \
        shoal_backoff_end(b);                                                 \
    } while (0)

/* A non-blocking poll that failed (shmem_test_lock) is usually called again
 * at once by a loop in the program. With more PEs than cores, such a loop
 * would keep the core from the PE it waits for (a lock holder preempted
 * inside its critical section) for a whole time slice; give the core up. */
static inline void shoal_backoff_poll_failed(void)
{
    if (shoal_backoff_progress) shoal_backoff_progress();
    if (shoal_backoff_oversubscribed) sched_yield();
}

/* SHMEM_WAIT_POLICY values. */
enum shoal_wait_policy { SHOAL_WAIT_AUTO, SHOAL_WAIT_SPIN_ONLY, SHOAL_WAIT_YIELD, SHOAL_WAIT_SLEEP };

/* Chooses the spin budget from the settings and the number of PEs sharing
 * this host's cores. policy is a SHMEM_WAIT_POLICY word. */
void shoal_backoff_configure(long configured_spin, const char *policy, int local_pes);

/* What the adaptive policy sees and chose, for SHMEM_INFO and tests. */
struct shoal_backoff_state {
    enum shoal_wait_policy policy;
    int contended;          /* 0 quiet, 1 CPUs contended, 2 awake PEs outnumber cores */
    int awake;              /* PEs of this host awake, last counted (where they outnumber cores) */
    unsigned long spin;     /* polls before yielding */
    unsigned yields;        /* yields before sleeping */
    long yield_ns;          /* how long a yield took to come back (moving average) */
    int pressure_permille;  /* share of time tasks waited for a CPU, last interval; -1 unknown */
    int spin_paid_percent;  /* of recent waits, those that ended while spinning */
    int crowded;            /* shoal_backoff_crowded */
};
void shoal_backoff_query(struct shoal_backoff_state *out);
/* Takes the machine's measure now (tests; waits do it every few ms). */
void shoal_backoff_sense_now(void);

#endif
