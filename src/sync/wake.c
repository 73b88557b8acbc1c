/* wake.c: the futex side of sleeping waits (wake.h states the protocol). */
#include "sync/wake.h"

#include <limits.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/internal.h"

size_t shoal_wake_offset;
int shoal_wake_fence = 1;
struct shoal_wake_stats shoal_wake_stats;

static long futex(uint32_t *word, int op, uint32_t val, const struct timespec *timeout)
{
    return syscall(SYS_futex, word, op, val, timeout, NULL, 0);
}

void shoal_wake_setup(void)
{
    long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    shoal_wake_fence = !(cmds > 0 && (cmds & MEMBARRIER_CMD_GLOBAL_EXPEDITED) &&
                         syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0) == 0);
    if (!shoal_rt.internal) return;
    shoal_wake_offset = shoal_internal_offset_of(offsetof(struct shoal_internal_area, wake));
}

void shoal_wake_ring(struct shoal_wake_word *w)
{
    if (__atomic_exchange_n(&w->sleepers, 0, __ATOMIC_ACQ_REL) == 0) return; /* another writer rang */
    __atomic_fetch_add(&w->bell, 1, __ATOMIC_SEQ_CST);
    __atomic_fetch_add(&shoal_wake_stats.rings, 1, __ATOMIC_RELAXED);
    futex(&w->bell, FUTEX_WAKE, INT_MAX, NULL);
}

int shoal_wake_arm(uint32_t *bell)
{
    struct shoal_wake_word *w = shoal_wake_word_of(shoal_rt.my_pe);
    if (!w) return 0;
    /* The bell is read before the flag goes up: a writer that clears the
     * flag after that (ringing for another word) changes the bell, so the
     * sleep is refused and the wait raises the flag again. Read after, such
     * a ring would go unseen and the wait would sleep with its flag down,
     * deaf to the writer it waits for until its timer. */
    *bell = __atomic_load_n(&w->bell, __ATOMIC_ACQUIRE);
    __atomic_store_n(&w->sleepers, 1, __ATOMIC_SEQ_CST);
    if (shoal_wake_fence || syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0) != 0)
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return 1;
}

void shoal_wake_sleep(uint32_t bell, long timeout_ns)
{
    struct shoal_wake_word *w = shoal_wake_word_of(shoal_rt.my_pe);
    struct timespec ts = {timeout_ns / 1000000000l, timeout_ns % 1000000000l};
    __atomic_fetch_add(&shoal_wake_stats.sleeps, 1, __ATOMIC_RELAXED);
    futex(&w->bell, FUTEX_WAIT, bell, &ts);
}

void shoal_wake_end(uint32_t first_bell)
{
    struct shoal_wake_word *w = shoal_wake_word_of(shoal_rt.my_pe);
    if (!w) return;
    __atomic_store_n(&w->sleepers, 0, __ATOMIC_RELAXED);
    if (__atomic_load_n(&w->bell, __ATOMIC_ACQUIRE) != first_bell)
        __atomic_fetch_add(&shoal_wake_stats.rung_waits, 1, __ATOMIC_RELAXED);
}
