/* backoff.h: how a PE waits. It spins (cheap, lowest latency when every PE
 * has a core), then yields, then sleeps with growing pauses so that more PEs
 * than cores (8 PEs on 2 cores) still make progress. The spin budget comes
 * from SHMEM_WAIT_SPIN and shrinks when the host is oversubscribed. */
#ifndef SHOAL_SYNC_BACKOFF_H
#define SHOAL_SYNC_BACKOFF_H

#include <sched.h>
#include <stdint.h>
#include <time.h>

struct shoal_backoff {
    unsigned long polls;
};

/* Polls spent spinning before yielding; set at start-up. */
extern unsigned long shoal_backoff_spin;
/* Nonzero when this host runs more PEs than it has cores; set at start-up. */
extern int shoal_backoff_oversubscribed;
/* The fabric's progress, which waits drive while they poll (a provider with
 * manual progress serves incoming operations only when asked); NULL when no
 * fabric is in use. */
extern void (*shoal_backoff_progress)(void);
/* Two counters in this PE's symmetric internal area, or NULL: waits that
 * went to sleep, and sleeps. A PE finalizing at exit reads them to tell a
 * peer blocked in one wait (perhaps on it) from one that computes. Only
 * the sleeping branch touches them, where a system call follows anyway. */
extern uint64_t *shoal_backoff_naps;

static inline void shoal_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#endif
}

#define SHOAL_BACKOFF_YIELDS 256ul
#define SHOAL_BACKOFF_MAX_SLEEP_NS 100000l

static inline void shoal_backoff_wait(struct shoal_backoff *b)
{
    unsigned long n = b->polls++;
    if (shoal_backoff_progress && (n >= shoal_backoff_spin || (n & 15) == 0)) shoal_backoff_progress();
    if (n < shoal_backoff_spin) {
        shoal_cpu_relax();
    } else if (n < shoal_backoff_spin + SHOAL_BACKOFF_YIELDS) {
        sched_yield();
    } else {
        unsigned long k = n - shoal_backoff_spin - SHOAL_BACKOFF_YIELDS;
        uint64_t *naps = __atomic_load_n(&shoal_backoff_naps, __ATOMIC_RELAXED);
        if (naps) {
            if (k == 0) __atomic_fetch_add(&naps[0], 1, __ATOMIC_RELAXED);
            __atomic_fetch_add(&naps[1], 1, __ATOMIC_RELAXED);
        }
        long ns = 1000l << (k < 7 ? k : 7);
        if (ns > SHOAL_BACKOFF_MAX_SLEEP_NS) ns = SHOAL_BACKOFF_MAX_SLEEP_NS;
        struct timespec ts = {0, ns};
        nanosleep(&ts, NULL);
    }
}

/* A non-blocking poll that failed (shmem_test_lock) is usually called again
 * at once by a loop in the program. With more PEs than cores, such a loop
 * would keep the core from the PE it waits for (a lock holder preempted
 * inside its critical section) for a whole time slice; give the core up. */
static inline void shoal_backoff_poll_failed(void)
{
    if (shoal_backoff_progress) shoal_backoff_progress();
    if (shoal_backoff_oversubscribed) sched_yield();
}

/* Chooses the spin budget from the setting and the number of PEs sharing
 * this host's cores. */
void shoal_backoff_configure(long configured_spin, int local_pes);

#endif
