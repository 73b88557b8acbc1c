/* spread.c: PEs stacked on one CPU move themselves (spread.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* CPU_SET, sched_setaffinity */
#endif
#include "sync/spread.h"

#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/runtime.h"
#include "sync/backoff.h"
#include "sync/wake.h"
#include "util/clock.h"

static cpu_set_t allowed;
static int allowed_cpus; /* CPUs in allowed; 0 when unknown */
static long long next_look_ns, next_move_ns;
static int loadavg_fd = -1;

void shoal_spread_configure(void)
{
    allowed_cpus = sched_getaffinity(0, sizeof allowed, &allowed) == 0 ? CPU_COUNT(&allowed) : 0;
    __atomic_store_n(&next_look_ns, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&next_move_ns, 0, __ATOMIC_RELAXED);
    /* Only where PEs may move (shoal_backoff_cpu_aware). */
    if (loadavg_fd < 0 && shoal_backoff_cpu_aware) loadavg_fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
}

int shoal_spread_others_running(int awake_pes)
{
    char buf[128];
    const ssize_t n = loadavg_fd >= 0 ? pread(loadavg_fd, buf, sizeof buf - 1, 0) : -1;
    if (n <= 0) return 1;
    buf[n] = '\0';
    const char *p = buf;
    for (int field = 0; field < 3 && p; field++) {
        p = strchr(p, ' ');
        if (p) p++;
    }
    return !p || atoi(p) > awake_pes;
}

int shoal_spread_move_to(int cpu)
{
    /* The thread's mask now, not the one at start-up: a program may have
     * narrowed it since, and a thread it pinned to one CPU stays there. */
    cpu_set_t mask;
    if (cpu < 0 || cpu >= CPU_SETSIZE || sched_getaffinity(0, sizeof mask, &mask) != 0 || CPU_COUNT(&mask) < 2 ||
        !CPU_ISSET(cpu, &mask))
        return -1;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) return -1;
    /* Back to the whole mask: the thread stays where it now runs. */
    const int restored = sched_setaffinity(0, sizeof mask, &mask);
    shoal_backoff_note_cpu();
    return restored == 0 ? 0 : -1;
}

int shoal_spread_out(void)
{
    if (allowed_cpus < 2) return 0;
    /* Threads of a PE may wait in collectives at once: one looks. */
    const long long now = shoal_now_ns();
    long long due = __atomic_load_n(&next_look_ns, __ATOMIC_RELAXED);
    if (now < due || now < __atomic_load_n(&next_move_ns, __ATOMIC_RELAXED) ||
        !__atomic_compare_exchange_n(&next_look_ns, &due, now + SHOAL_SPREAD_LOOK_NS, 0, __ATOMIC_RELAXED,
                                     __ATOMIC_RELAXED))
        return 0;
    const int here = shoal_backoff_note_cpu();
    if (here < 0 || here >= CPU_SETSIZE || !CPU_ISSET(here, &allowed)) return 0;
    /* PEs of this host by the CPU each last published. */
    int count[CPU_SETSIZE] = {0};
    int highest_here = -1, awake = 0;
    for (int pe = 0; pe < shoal_rt.n_pes; pe++) {
        const int cpu = shoal_backoff_cpu_of(pe);
        if (cpu < 0 || cpu >= CPU_SETSIZE) continue;
        count[cpu]++;
        awake += !shoal_wake_peer_asleep(pe);
        if (cpu == here) highest_here = pe;
    }
    if (highest_here != shoal_rt.my_pe) return 0;
    int least = -1;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &allowed) && cpu != here && (least < 0 || count[cpu] < count[least])) least = cpu;
    if (least < 0 || count[here] < count[least] + 2 || shoal_spread_others_running(awake)) return 0;
    if (shoal_spread_move_to(least) != 0) return 0;
    __atomic_store_n(&next_move_ns, now + SHOAL_SPREAD_MOVE_NS, __ATOMIC_RELAXED);
    return 1;
}
