/* backoff.c: the waiting policy (backoff.h).
 *
 * Policy, SHMEM_WAIT_POLICY=auto: a wait spins for a budget of polls, then
 * yields a few times, then sleeps on its futex until a writer rings it. The
 * budget follows what the PE last measured, at most every SENSE_NS and only
 * from waits already past their spin (a wait that ends while spinning costs
 * nothing extra):
 * - more PEs of this machine are awake (not asleep in a wait: their
 *   sleepers flag, sync/wake.h, is down; across namespace hosts on one
 *   machine, their slot on core/machine.h's board) than it has cores: a
 *   waiter spinning holds the core its writer needs, so it yields at once,
 *   which hands the core to another PE (measured faster than a futex round
 *   trip at 4 and 16 PEs on 2 cores, docs/bench/shared_cores.md), for about
 *   a millisecond (by the measured cost of a yield), then sleeps: a PE idle
 *   for longer would only take turns from the PEs that work. Where a yield
 *   comes back after a whole time slice (another program runs there) it
 *   yields 8 times and sleeps. Waits recount the awake PEs as they yield
 *   and every 256 polls of a spin, so the choice follows PEs falling asleep
 *   and waking;
 * - where PEs outnumber cores but no more than the cores are awake (two PEs
 *   exchange while the others sleep in a barrier), it spins as below, then
 *   yields as above (a sleeper may wake at any time), then sleeps; when
 *   writers come through a transport and the count may miss PEs of other
 *   hosts on these cores (no board), the spin stops after 64 polls;
 * - otherwise a wait spins up to SHMEM_WAIT_SPIN polls while most recent
 *   waits ended within their spin ("spin paid off"), else 2048 polls (some
 *   hundred microseconds); then it yields 256 times and sleeps, or, when
 *   the CPUs are contended (a yield came back late, i.e. another task ran;
 *   or tasks waited for a CPU a tenth of the last interval, from the
 *   kernel's "some" total in /proc/pressure/cpu), yields 32 times, none if
 *   a yield costs a whole time slice, and sleeps.
 * In that last case a wait that sees peers' operations applied in this PE
 * (backoff.h, shoal_backoff_incoming) spins again from the start: it is
 * serving them.
 * spin, yield and sleep fix the phases instead: spin only (never give the
 * core up), yield only, sleep at once. */
#include "sync/backoff.h"

#include "core/machine.h"
#include "sync/spread.h"
#include "util/clock.h"
#include "util/own_wait.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

unsigned long shoal_backoff_spin = 65536;
int shoal_backoff_oversubscribed;
int shoal_backoff_cpu_aware;
void (*shoal_backoff_progress)(void);
void (*shoal_backoff_rest)(void);
int shoal_backoff_progress_optional;
uint64_t *shoal_backoff_naps;
long shoal_backoff_futex_fixed_ns;
long long (*shoal_backoff_incoming)(void);
int shoal_backoff_spin_serves;
int (*shoal_backoff_threads_busy)(void);
_Thread_local unsigned long shoal_backoff_started;
int shoal_backoff_crowded;

#define SENSE_NS 10000000l           /* 10 ms between measures */
#define YIELD_LATE_NS 3000l          /* a yield slower than this let another task run */
#define YIELD_SLICE_NS 500000l       /* ... and this slow, a whole time slice of it */
#define YIELD_PHASE_NS 1000000l      /* oversubscribed: yield about this long, then sleep */
#define PRESSURE_CONTENDED_PERMILLE 100
#define FUTEX_MAX_SLEEP_NS 2000000l  /* safety net of a futex sleep (wake.h) */
#define FABRIC_MAX_SLEEP_NS 100000l  /* sleeps that must come back to drive the fabric */

static struct {
    enum shoal_wait_policy policy;
    unsigned long configured_spin;
    unsigned yields;
    int contended;
    long yield_ns;
    int pressure_permille;
    int paid_percent;
    long next_sense;
    int psi_fd;
    unsigned long long psi_total_us;
    long psi_at;
    int sensing;
    int yielded; /* a yield was timed since the last measure */
    long cores;  /* this PE's usable cores */
    int local_pes; /* PEs sharing this host's cores */
    int awake;   /* PEs of this host not asleep in a wait, last counted */
    int *local;  /* world numbers of the PEs sharing this host's memory */
    int n_local; /* -1 until listed */
    /* Some peer's writes arrive through a transport, whose threads apply
     * them (they ring no bell) and need this host's cores too. */
    int transport_writers;
    int machine_counted; /* awake counts every PE of the machine (its board) */
    int yields_serve;    /* yielding waits drive the transport themselves */
} pol = {.n_local = -1, .yields = 256, .pressure_permille = -1, .paid_percent = 100, .psi_fd = -1};

static _Thread_local unsigned long started_seen, missed;

/* Share of the time since the last read that some task waited for a CPU,
 * in permille, or -1 where the kernel does not tell. */
static int read_pressure(long now)
{
    char buf[256];
    if (pol.psi_fd < 0) return -1;
    ssize_t n = pread(pol.psi_fd, buf, sizeof buf - 1, 0);
    if (n <= 0) return -1;
    buf[n] = '\0';
    const char *t = strstr(buf, "total=");
    if (!t) return -1;
    unsigned long long total = strtoull(t + 6, NULL, 10);
    int permille = -1;
    if (pol.psi_at && now > pol.psi_at)
        permille = (int)((total - pol.psi_total_us) * 1000000ull / (unsigned long long)(now - pol.psi_at));
    pol.psi_total_us = total;
    pol.psi_at = now;
    return permille > 1000 ? 1000 : permille;
}

/* Lists this host's PEs once their wake words are mapped; 0 before. */
static int list_local(void)
{
    if (__atomic_load_n(&pol.n_local, __ATOMIC_ACQUIRE) >= 0) return 1;
    if (!shoal_wake_offset || !shoal_rt.peers) return 0;
    int *local = malloc(sizeof *local * (size_t)shoal_rt.n_pes), n = 0;
    if (!local) return 0;
    for (int pe = 0; pe < shoal_rt.n_pes; pe++)
        if (shoal_wake_word_of(pe)) local[n++] = pe;
    pol.local = local;
    __atomic_store_n(&pol.n_local, n, __ATOMIC_RELEASE);
    return 1;
}

/* PEs of this machine not asleep in a wait (computing, spinning or
 * yielding), this PE included. Where hosts share the machine's cores, from
 * their board (core/machine.h) once every PE joined it; else this host's
 * PEs whose sleepers flag is down, all of them until the list exists. */
static int count_awake(void)
{
    const int machine = shoal_machine_running();
    __atomic_store_n(&pol.machine_counted, machine >= 0, __ATOMIC_RELAXED);
    if (machine >= 0) return machine;
    if (!list_local()) return INT_MAX;
    int awake = 0;
    for (int i = 0; i < pol.n_local; i++) awake += !shoal_wake_peer_asleep(pol.local[i]);
    return awake;
}

static void apply(void)
{
    const unsigned long cfg = pol.configured_spin;
    unsigned long spin = cfg;
    unsigned yields = 256;
    int contended = 0, yields_serve = 0, spin_serves = 0;
    switch (pol.policy) {
    case SHOAL_WAIT_SPIN_ONLY: spin = ULONG_MAX; yields = 0; break;
    case SHOAL_WAIT_YIELD: spin = 0; yields = UINT_MAX; break;
    case SHOAL_WAIT_SLEEP: spin = 0; yields = 0; break;
    default: {
        /* PEs outnumber cores: yielding hands the core to another PE, which
         * moves the job on; only when a yield comes back after a whole
         * slice of some other task does sleeping serve better. */
        /* Waits update these outside the sensing guard: read each once. */
        const long yield_ns = __atomic_load_n(&pol.yield_ns, __ATOMIC_RELAXED);
        const int awake = __atomic_load_n(&pol.awake, __ATOMIC_RELAXED);
        const int pressure = __atomic_load_n(&pol.pressure_permille, __ATOMIC_RELAXED);
        const int paid = __atomic_load_n(&pol.paid_percent, __ATOMIC_RELAXED);
        const long per_yield = yield_ns > 1000 ? yield_ns : 1000;
        unsigned over_yields = yield_ns > YIELD_SLICE_NS ? 8 : (unsigned)(YIELD_PHASE_NS / per_yield);
        if (over_yields < 8) over_yields = 8;
        if (shoal_backoff_oversubscribed && awake > pol.cores) {
            contended = 2;
            spin = 0;
            yields = over_yields;
            yields_serve = 1;
        } else if (shoal_backoff_oversubscribed && pol.transport_writers &&
                   !__atomic_load_n(&pol.machine_counted, __ATOMIC_RELAXED)) {
            /* The awake count misses PEs of other hosts on these cores (no
             * board): a few polls, then hand the core to whoever applies
             * the peers' writes. With the machine's count, a wait spins
             * as below: the transport's threads, woken by data, preempt a
             * spinning PE (2 namespace hosts x 2 PEs on 2 cores, tls,
             * ping-pong: 31-41 us capped, 12-14 us counted). */
            contended = 2;
            spin = cfg < 64 ? cfg : 64;
            yields = over_yields;
        } else {
            contended = yield_ns > YIELD_LATE_NS || pressure > PRESSURE_CONTENDED_PERMILLE;
            /* Spinning pays while the writer runs at the same time; when
             * most waits outlast the spin, it only burns a core (another
             * task's, when the CPUs are contended). */
            const unsigned long cap = paid >= 50 ? cfg : 2048;
            spin = cfg < cap ? cfg : cap;
            /* A yield that costs a whole slice of another task (a hog)
             * only delays the wake-up: sleep until rung instead. */
            yields = !contended ? 256 : yield_ns > YIELD_SLICE_NS ? 0 : 32;
            /* Sleepers of this host wake at any time: yield to them. */
            if (shoal_backoff_oversubscribed) yields = over_yields;
            spin_serves = spin > 0;
        }
        break;
    }
    }
    __atomic_store_n(&pol.contended, contended, __ATOMIC_RELAXED);
    __atomic_store_n(&shoal_backoff_crowded, contended == 2 && spin == 0, __ATOMIC_RELAXED);
    __atomic_store_n(&pol.yields_serve, yields_serve, __ATOMIC_RELAXED);
    __atomic_store_n(&shoal_backoff_spin_serves, spin_serves, __ATOMIC_RELAXED);
    __atomic_store_n(&pol.yields, yields, __ATOMIC_RELAXED);
    __atomic_store_n(&shoal_backoff_spin, spin, __ATOMIC_RELAXED);
}

/* One thread at a time takes the measure; the others keep waiting. */
static void sense(long now, int force)
{
    if (!force && now < __atomic_load_n(&pol.next_sense, __ATOMIC_RELAXED)) return;
    if (__atomic_exchange_n(&pol.sensing, 1, __ATOMIC_ACQUIRE)) return;
    __atomic_store_n(&pol.next_sense, now + SENSE_NS, __ATOMIC_RELAXED);
    __atomic_store_n(&pol.pressure_permille, read_pressure(now), __ATOMIC_RELAXED);
    if (shoal_backoff_oversubscribed) __atomic_store_n(&pol.awake, count_awake(), __ATOMIC_RELAXED);
    /* Waits that sleep without yielding time no yield: let an old late one
     * fade, or the policy would never try yielding again. */
    if (!__atomic_exchange_n(&pol.yielded, 0, __ATOMIC_RELAXED))
        __atomic_store_n(&pol.yield_ns, __atomic_load_n(&pol.yield_ns, __ATOMIC_RELAXED) / 2, __ATOMIC_RELAXED);
    const unsigned long started = shoal_backoff_started - started_seen;
    if (started >= 8) {
        __atomic_store_n(&pol.paid_percent, started > missed ? (int)(100 * (started - missed) / started) : 0,
                         __ATOMIC_RELAXED);
        started_seen = shoal_backoff_started;
        missed = 0;
    }
    apply();
    __atomic_store_n(&pol.sensing, 0, __ATOMIC_RELEASE);
}

void shoal_backoff_sense_now(void) { sense(shoal_now_ns(), 1); }

void shoal_backoff_recount(void)
{
    if (pol.policy != SHOAL_WAIT_AUTO) return;
    const int awake = count_awake(), was = __atomic_load_n(&pol.awake, __ATOMIC_RELAXED);
    if ((awake > pol.cores) == (was > pol.cores)) return;
    __atomic_store_n(&pol.awake, awake, __ATOMIC_RELAXED);
    /* Crossing the core count switches spinning on or off for every wait;
     * apply under the sensing guard, or retry at the next recount. */
    if (__atomic_exchange_n(&pol.sensing, 1, __ATOMIC_ACQUIRE)) return;
    apply();
    __atomic_store_n(&pol.sensing, 0, __ATOMIC_RELEASE);
}

static void timed_yield(void)
{
    const long t0 = shoal_now_ns();
    sched_yield();
    const long t1 = shoal_now_ns();
    const long avg = __atomic_load_n(&pol.yield_ns, __ATOMIC_RELAXED);
    __atomic_store_n(&pol.yield_ns, avg + ((t1 - t0) - avg) / 8, __ATOMIC_RELAXED);
    __atomic_store_n(&pol.yielded, 1, __ATOMIC_RELAXED);
    sense(t1, 0);
}

static void count_nap(const struct shoal_backoff *b)
{
    uint64_t *naps = __atomic_load_n(&shoal_backoff_naps, __ATOMIC_RELAXED);
    if (!naps) return;
    if (b->sleeps == 0) __atomic_fetch_add(&naps[0], 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&naps[1], 1, __ATOMIC_RELAXED);
}

void shoal_backoff_slow(struct shoal_backoff *b)
{
    const unsigned long spin = __atomic_load_n(&shoal_backoff_spin, __ATOMIC_RELAXED);
    /* Peers' operations came meanwhile (applied by this wait's rest, or
     * by the transport's threads): back to spinning, which serves them. A
     * wait that raised its sleepers flag sleeps on it instead (a writer of
     * this host rings it), as spinning with it up would make writers ring
     * for nothing and peers count this PE asleep. Nor does one whose
     * awaited PE shares its CPU: those operations are often that PE's,
     * which it issues only while it runs (2 namespace hosts x 2 PEs: a
     * leader serving gets kept its getter off their CPU for 0.8 ms). */
    if (!b->flagged && !shoal_backoff_awaited_here(b) && shoal_backoff_serving(b)) {
        b->polls = 1;
        return;
    }
    const unsigned long past = b->polls - 1 - (b->polls - 1 < spin ? b->polls - 1 : spin);
    if (past == 0) missed++;
    /* Every PE whose store ends the wait reaches this PE's memory (a host
     * member awaiting its leader's release, a leader its members'
     * arrivals): the fabric brings nothing the wait needs. */
    const int direct = b->writers_direct || (b->waits_on && shoal_rt.peers[b->waits_on - 1].direct);
    /* ... and the fabric's threads serve peers' operations meanwhile. */
    const int fabric_idle = direct && shoal_backoff_progress_optional;
    if (shoal_backoff_oversubscribed) {
        shoal_backoff_recount();
        /* Fewer PEs awake than cores now: back to spinning. */
        if (b->polls < __atomic_load_n(&shoal_backoff_spin, __ATOMIC_RELAXED)) return;
    }
    if (past < __atomic_load_n(&pol.yields, __ATOMIC_RELAXED)) {
        /* More PEs awake than cores: waits yield from their first poll,
         * so they never held the transport's lease and its threads served
         * every incoming operation, each a wake-up and two context switches
         * on the crowded cores. Driving the transport between yields keeps
         * them parked (2x2 namespace hosts on 2 cores, 3 alternating runs:
         * ofi fcollect 716-946 -> 445-531 us, sum 668-1120 -> 486-760; tls
         * barrier 89-102 -> 68-77). Elsewhere a yielding wait hands them
         * its operations (ping-pong, where that was measured no better).
         * A wait the fabric cannot end drives it every 4th yield only: its
         * lease holds (peers' operations wait a few yields at most) at a
         * quarter of the system calls (two or three each over ofi_rxm),
         * which the PEs it yields to had to wait out (2x2 as above, tls
         * and ofi alternating, 10 runs each, medians: ofi barrier 44.2 ->
         * 37.1 us, fcollect 50.5 -> 37.4, sum 45.4 -> 35.5; tls barrier
         * 35.3 -> 31.1, fcollect 40.5 -> 30.0, sum 29.2 -> 28.2). Ending
         * the lease instead cost more than it saved: the leader's next
         * wait, through the fabric, took it back and woke the threads. */
        const long long mark = shoal_backoff_incoming ? shoal_backoff_incoming() : 0;
        if (__atomic_load_n(&pol.yields_serve, __ATOMIC_RELAXED) && shoal_backoff_progress) {
            if (!fabric_idle || (past & 3) == 3) shoal_backoff_progress();
        } else if (shoal_backoff_rest)
            shoal_backoff_rest();
        /* What that applied may end the wait: the caller looks before the
         * yield, which would cost a turn of every PE on this core (the
         * leaders of 2 namespace hosts x 2 PEs on 2 cores yielded 1.3-2.7
         * times per exchange, docs/design.md). Once in a row: a stream of
         * peers' operations still lets the others run. */
        if (shoal_backoff_incoming && !b->looked && shoal_backoff_incoming() != mark) {
            b->looked = 1;
            return;
        }
        b->looked = 0;
        timed_yield();
        return;
    }
    if (shoal_backoff_rest) shoal_backoff_rest();
    if (past == 0 || (past & 63) == 0) sense(shoal_now_ns(), 0);
    /* With a fabric the wait must come back to drive it (unless the
     * fabric's threads serve it), a PE without a mapped wake word has no
     * bell, and writes from peers reached through a transport (its threads
     * apply them) ring no bell: all keep the timer schedule. A wait for a
     * word that PEs of this host write (a host member waiting for its
     * leader's release, a leader for its members' arrivals) sleeps until
     * one rings it. */
    const int rung = direct && (!shoal_backoff_progress || shoal_backoff_progress_optional);
    if (!shoal_wake_word_of(shoal_rt.my_pe) ||
        (!rung && (shoal_backoff_progress || pol.transport_writers))) {
        count_nap(b);
        long ns = 1000l << (b->sleeps < 7 ? b->sleeps : 7);
        if (ns > FABRIC_MAX_SLEEP_NS) ns = FABRIC_MAX_SLEEP_NS;
        b->sleeps++;
        struct timespec ts = {0, ns};
        shoal_machine_sleep_begin();
        nanosleep(&ts, NULL);
        shoal_machine_sleep_end();
        return;
    }
    if (!b->armed) {
        /* Raise the flag, then let the caller check its condition once
         * more before sleeping (wake.h: the lost wake-up). */
        b->armed = shoal_wake_arm(&b->bell);
        b->flagged |= b->armed;
        if (b->armed && !b->sleeps) b->first_bell = b->bell;
        return;
    }
    count_nap(b);
    long ns = 50000l << (b->sleeps < 6 ? b->sleeps : 6);
    if (ns > FUTEX_MAX_SLEEP_NS) ns = FUTEX_MAX_SLEEP_NS;
    const long fixed_ns = __atomic_load_n(&shoal_backoff_futex_fixed_ns, __ATOMIC_RELAXED);
    if (fixed_ns) ns = fixed_ns;
    b->sleeps++;
    shoal_machine_sleep_begin();
    shoal_wake_sleep(b->bell, ns);
    shoal_machine_sleep_end();
    b->armed = 0;
}

int shoal_backoff_note_cpu(void)
{
    if (!shoal_backoff_cpu_aware) return -1;
    struct shoal_wake_word *w = shoal_wake_word_of(shoal_rt.my_pe);
    const int cpu = sched_getcpu();
    if (!w || cpu < 0) return -1;
    if (__atomic_load_n(&w->cpu, __ATOMIC_RELAXED) != (uint32_t)cpu + 1)
        __atomic_store_n(&w->cpu, (uint32_t)cpu + 1, __ATOMIC_RELAXED);
    return cpu;
}

int shoal_backoff_cpu_of(int pe)
{
    const struct shoal_wake_word *w = shoal_wake_word_of(pe);
    return w ? (int)__atomic_load_n(&w->cpu, __ATOMIC_RELAXED) - 1 : -1;
}

int shoal_backoff_crowd_team(int members)
{
    return shoal_backoff_oversubscribed && pol.policy == SHOAL_WAIT_AUTO && members <= 2 * pol.cores &&
           members >= pol.local_pes && !__atomic_load_n(&pol.machine_counted, __ATOMIC_RELAXED);
}

void shoal_backoff_wait_members(struct shoal_backoff *b, int members, shoal_backoff_missing_fn missing_here,
                                const void *arg)
{
    if (__atomic_load_n(&shoal_backoff_crowded, __ATOMIC_RELAXED) && b->crowd_spun < SHOAL_BACKOFF_CROWD_SPIN &&
        shoal_backoff_crowd_team(members)) {
        /* Looked at every 32 polls while spinning; before every yield
         * otherwise (a scan of the members is nothing beside a yield). */
        if (b->crowd_spun % 32 == 0 || b->crowd_here) {
            int cpu = shoal_backoff_note_cpu();
            b->crowd_here = cpu < 0 || missing_here(arg, cpu);
            /* About to yield to PEs stacked here: perhaps move (spread.h). */
            if (b->crowd_here && shoal_spread_out()) {
                cpu = sched_getcpu();
                b->crowd_here = cpu < 0 || missing_here(arg, cpu);
            }
        }
        if (!b->crowd_here) {
            b->crowd_spun++;
            shoal_cpu_relax();
            return;
        }
    }
    shoal_backoff_wait(b);
}

void shoal_backoff_end(struct shoal_backoff *b)
{
    if (b->armed || b->sleeps) shoal_wake_end(b->first_bell);
}

void shoal_backoff_configure(long configured_spin, const char *policy, int local_pes)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) == 0 && CPU_COUNT(&allowed) > 0 &&
        CPU_COUNT(&allowed) < cores)
        cores = CPU_COUNT(&allowed);
    /* oshrun binds each PE to a core of its own, so this PE's affinity
     * holds one; the cores its PEs share are the ones it bound them to. */
    const char *host_cores = getenv("SHOAL_HOST_CORES");
    if (host_cores && atol(host_cores) > 0) cores = atol(host_cores);
    if (configured_spin < 0) configured_spin = 0;
    /* With more PEs than cores the peer we wait for may need our core:
     * spinning only delays it. */
    shoal_backoff_oversubscribed = cores > 0 && local_pes > cores;
    pol.cores = cores;
    pol.local_pes = local_pes;
    pol.awake = local_pes;
    pol.transport_writers = 0;
    for (int pe = 0; shoal_rt.peers && pe < shoal_rt.n_pes; pe++) pol.transport_writers |= !shoal_rt.peers[pe].direct;
    pol.configured_spin = (unsigned long)configured_spin;
    pol.policy = !policy || !strcmp(policy, "auto") ? SHOAL_WAIT_AUTO
                 : !strcmp(policy, "spin")          ? SHOAL_WAIT_SPIN_ONLY
                 : !strcmp(policy, "yield")         ? SHOAL_WAIT_YIELD
                                                    : SHOAL_WAIT_SLEEP;
    shoal_backoff_cpu_aware = shoal_backoff_oversubscribed && pol.policy == SHOAL_WAIT_AUTO;
    /* Elsewhere a transport's wait for its own operation calls nothing. */
    shoal_own_wait_hook = shoal_backoff_cpu_aware ? shoal_backoff_note_cpu : NULL;
    shoal_spread_configure();
    if (pol.psi_fd < 0) pol.psi_fd = open("/proc/pressure/cpu", O_RDONLY | O_CLOEXEC);
    read_pressure(shoal_now_ns());
    apply();
    /* The default 50 us timer slack would stretch the shortest back-off
     * sleeps (1 us) fifty-fold; waits need them short. */
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
}

void shoal_backoff_query(struct shoal_backoff_state *out)
{
    out->policy = pol.policy;
    out->contended = __atomic_load_n(&pol.contended, __ATOMIC_RELAXED);
    out->spin = __atomic_load_n(&shoal_backoff_spin, __ATOMIC_RELAXED);
    out->yields = __atomic_load_n(&pol.yields, __ATOMIC_RELAXED);
    out->yield_ns = __atomic_load_n(&pol.yield_ns, __ATOMIC_RELAXED);
    out->pressure_permille = __atomic_load_n(&pol.pressure_permille, __ATOMIC_RELAXED);
    out->spin_paid_percent = __atomic_load_n(&pol.paid_percent, __ATOMIC_RELAXED);
    out->awake = __atomic_load_n(&pol.awake, __ATOMIC_RELAXED);
    out->crowded = __atomic_load_n(&shoal_backoff_crowded, __ATOMIC_RELAXED);
}
