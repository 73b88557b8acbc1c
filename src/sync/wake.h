/* wake.h: sleeping waits woken by the writer, between PEs of one host.
 *
 * Each PE has a wake word in its internal area (core/internal.h), mapped by
 * every PE of its host: `sleepers` is nonzero while some wait of that PE is
 * about to sleep or sleeps, `bell` is a 32-bit futex word. A writer, after
 * its store into a direct peer's memory (p, put, atomics, signals, the
 * collectives' flags), loads the peer's `sleepers`; only when it is set does
 * it clear it, ring the bell (add one) and FUTEX_WAKE every sleeper on it.
 * So the writer's fast path is its store plus one load. The futex is not
 * FUTEX_PRIVATE_FLAG: the word sits in a mapping shared between processes.
 *
 * The lost wake-up (a writer stores, a waiter sleeps anyway) is a Dekker
 * race between the writer's "store value, load sleepers" and the waiter's
 * "store sleepers, load value"; each side needs its store ordered before
 * its load. The waiter pays for both sides: after raising `sleepers` it
 * issues membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED), a full barrier on
 * every CPU running a PE (each registers at start-up), so either the
 * writer's load comes after the barrier and sees `sleepers`, or its store
 * was drained by the barrier and the waiter's recheck sees the value.
 * Where the kernel lacks membarrier, writers fence (shoal_wake_fence) and
 * the waiter fences. The waiter reads `bell` before it raises the flag,
 * rechecks its condition after (the caller's loop does), and only then
 * FUTEX_WAITs on `bell` expecting what it read: any ring after the read,
 * including one for another word that cleared the flag just raised,
 * changes `bell`, so the kernel refuses to sleep (EAGAIN) and the wait
 * raises its flag again. A timeout bounds every sleep as a
 * safety net for writers that do not ring: plain stores through shmem_ptr,
 * words a PE writes into its own memory for others to read, a second thread
 * of the same PE clearing `sleepers` as its own wait ends (shoal_wake_end). */
#ifndef SHOAL_SYNC_WAKE_H
#define SHOAL_SYNC_WAKE_H

#include <stdint.h>

#include "core/internal.h"

/* Offset of the wake word in every PE's heap; 0 until set up. */
extern size_t shoal_wake_offset;
/* Nonzero where membarrier is missing: writers fence before their load. */
extern int shoal_wake_fence;
/* Debug counters (relaxed): bells rung (FUTEX_WAKE calls) by this PE;
 * futex sleeps of this PE; and its sleeping waits during which a writer
 * rang its bell. Tests read them to check that writers wake sleepers and
 * that no wake is issued without a sleeper. */
struct shoal_wake_stats {
    uint64_t rings, sleeps, rung_waits;
};
extern struct shoal_wake_stats shoal_wake_stats;

void shoal_wake_ring(struct shoal_wake_word *w);

static inline struct shoal_wake_word *shoal_wake_word_of(int pe)
{
    const struct shoal_peer *peer = &shoal_rt.peers[pe];
    if (!peer->direct || !shoal_wake_offset) return NULL;
    return (struct shoal_wake_word *)(peer->base[SHOAL_SEG_HEAP] + shoal_wake_offset);
}

/* After a store into pe's memory: wake pe's sleeping waits, if any. */
static inline void shoal_wake(int pe)
{
    struct shoal_wake_word *w = shoal_wake_word_of(pe);
    if (!w) return;
    if (shoal_wake_fence)
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
    else
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (__builtin_expect(__atomic_load_n(&w->sleepers, __ATOMIC_RELAXED) != 0, 0)) shoal_wake_ring(w);
}

/* Whether pe is asleep in a wait (its sleepers flag is up): a waiter that
 * needs pe's next store gives up its core at once. */
static inline int shoal_wake_peer_asleep(int pe)
{
    const struct shoal_wake_word *w = shoal_wake_word_of(pe);
    return w && __atomic_load_n(&w->sleepers, __ATOMIC_RELAXED) != 0;
}

/* Registers this PE for membarrier and finds its wake word (after the
 * transport mapped the peers). */
void shoal_wake_setup(void);

/* The waiter's side, used by the back-off (sync/backoff.h): arm raises
 * this PE's flag, orders it (see above) and returns the bell to sleep on;
 * sleep waits on it for at most timeout_ns. arm returns 0 where this PE
 * has no wake word (no futex sleeps). */
int shoal_wake_arm(uint32_t *bell);
void shoal_wake_sleep(uint32_t bell, long timeout_ns);
/* A wait that armed ends: drops the flag, and counts the wait in
 * shoal_wake_stats.rung_waits if the bell rang since first_bell. */
void shoal_wake_end(uint32_t first_bell);

#endif
