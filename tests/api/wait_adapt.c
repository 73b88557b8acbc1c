/* wait_adapt: the adaptive wait policy (sync/backoff.c) under a CPU hog,
 * read through its debug query (linked with the internal layers). One PE,
 * pinned with a busy-loop child process to one CPU; a thread of the PE
 * stores the awaited word 40 ms into each wait (shmem_long_p to itself,
 * which also rings the PE's bell should the wait sleep), longer than the
 * whole spin budget (65536 polls, some ms), so spinning never pays.
 * 1. auto: after 12 such waits the policy reports the CPUs contended and a
 *    spin budget of at most 2048 polls (if the machine looked quiet before,
 *    that is a switch; on a loaded machine it was contended already);
 * 2. manual spin and yield (reconfigured in place) hold under the same hog:
 *    spin keeps an unbounded budget, yield none;
 * 3. auto with more PEs on this host than cores (reconfigured as if 2 PEs
 *    shared the one CPU) but only this PE awake: the waits still spin (a
 *    budget of at least 2048 polls, not "PEs outnumber cores"), since no
 *    awake PE needs the core;
 * 4. crowded (reconfigured as if 2 PEs shared the CPU, both awake): a
 *    collective's wait of a team of both whose missing members all run on
 *    other CPUs spins up to SHOAL_BACKOFF_CROWD_SPIN polls without
 *    yielding, then backs off; one whose missing member shares this CPU,
 *    one of a team without every PE of the host, one of more members than
 *    twice the cores (3 PEs configured), and any under
 *    SHMEM_WAIT_POLICY=yield back off at once; this PE publishes the CPU it
 *    runs on;
 * 5. as in 3 (waits spin), a wait for a store of a known PE (here this PE
 *    itself, whose published CPU the test sets) spins its whole budget
 *    while that PE last ran on another CPU, and stops within 64 polls once
 *    it last ran on this one: the spin would only keep it off its core
 *    (under SHMEM_WAIT_POLICY=spin it spins on), and one that serves
 *    peers' operations (the transport's incoming mark moves) goes back to
 *    spinning past its budget only while that PE runs elsewhere;
 * every wait checks the value it waited for. */
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <shmem.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "api_util.h"
#include "sync/backoff.h"

static long word;
static long round_no;

static void *writer(void *arg)
{
    (void)arg;
    struct timespec ts = {0, 40000000l};
    nanosleep(&ts, NULL);
    shmem_long_p(&word, round_no, 0);
    return NULL;
}

static int never_here(const void *arg, int cpu)
{
    (void)arg;
    (void)cpu;
    return 0;
}

/* Whether a member runs on cpu: *arg is that member's CPU. */
static int here_if_same(const void *arg, int cpu) { return *(const int *)arg == cpu; }

/* Polls of one collective's wait of a team of members, as local_pes PEs
 * crowd this PE's one CPU, all awake: how many it spun before its first
 * back-off poll (yield or sleep). */
static unsigned long spins_before_backoff(const char *policy, int local_pes, int members, shoal_backoff_missing_fn fn,
                                          const void *arg)
{
    shoal_backoff_configure(65536, policy, local_pes);
    struct shoal_backoff b = {0};
    while (b.polls == 0 && b.crowd_spun <= SHOAL_BACKOFF_CROWD_SPIN) shoal_backoff_wait_members(&b, members, fn, arg);
    shoal_backoff_end(&b);
    return b.polls ? b.crowd_spun : (unsigned long)-1;
}

static void crowded_waits(void)
{
    const int cpu = sched_getcpu(), other = cpu + 1;
    shoal_backoff_configure(65536, "auto", 2);
    struct shoal_backoff_state s;
    shoal_backoff_query(&s);
    CHECK_MSG(s.crowded && s.contended == 2 && s.spin == 0, "2 PEs awake on 1 CPU: crowded %d contended %d spin %lu",
              s.crowded, s.contended, s.spin);
    CHECK_MSG(shoal_backoff_note_cpu() == cpu && shoal_backoff_cpu_of(test_pe) == cpu,
              "published CPU %d, read back %d, running on %d", shoal_backoff_note_cpu(), shoal_backoff_cpu_of(test_pe),
              cpu);
    unsigned long n = spins_before_backoff("auto", 2, 2, never_here, NULL);
    CHECK_MSG(n == SHOAL_BACKOFF_CROWD_SPIN, "missing members elsewhere: %lu spins before backing off, expected %lu", n,
              SHOAL_BACKOFF_CROWD_SPIN);
    n = spins_before_backoff("auto", 2, 2, here_if_same, &other);
    CHECK_MSG(n == SHOAL_BACKOFF_CROWD_SPIN, "a member on CPU %d, this PE on %d: %lu spins", other, cpu, n);
    n = spins_before_backoff("auto", 2, 2, here_if_same, &cpu);
    CHECK_MSG(n == 0, "a missing member on this CPU: %lu spins before yielding, expected 0", n);
    n = spins_before_backoff("auto", 2, 1, never_here, NULL);
    CHECK_MSG(n == 0, "a team of 1 of the host's 2 PEs: %lu spins before yielding, expected 0", n);
    n = spins_before_backoff("auto", 3, 3, never_here, NULL);
    CHECK_MSG(n == 0, "3 members on 1 core: %lu spins before yielding, expected 0", n);
    n = spins_before_backoff("yield", 2, 2, never_here, NULL);
    CHECK_MSG(n == 0, "SHMEM_WAIT_POLICY=yield: %lu spins before yielding, expected 0", n);
}

/* A wait for a store of this PE (waits_on), with this PE's published CPU
 * set to cpu after the wait began (which publishes the real one): up to
 * calls more polls, stopping once its poll count passes stop_past. */
static struct shoal_backoff awaiting(int cpu, unsigned long calls, unsigned long stop_past)
{
    struct shoal_backoff b = {.waits_on = test_pe + 1};
    shoal_backoff_wait(&b);
    __atomic_store_n(&shoal_wake_word_of(test_pe)->cpu, (uint32_t)cpu + 1, __ATOMIC_RELAXED);
    for (unsigned long i = 0; i < calls && b.polls <= stop_past; i++) shoal_backoff_wait(&b);
    shoal_backoff_end(&b);
    return b;
}

static long long fake_mark;
static long long moving_mark(void) { return ++fake_mark; }

/* The same wait as it serves peers' operations at every look: its polls
 * after up to 3 budgets of calls, stopping once past the budget. */
static unsigned long serving_polls(int cpu, unsigned long budget)
{
    long long (*incoming)(void) = shoal_backoff_incoming;
    shoal_backoff_incoming = moving_mark;
    const struct shoal_backoff b = awaiting(cpu, 3 * budget, budget);
    shoal_backoff_incoming = incoming;
    return b.polls;
}

static void awaited_on_this_core(void)
{
    const int cpu = sched_getcpu();
    shoal_backoff_configure(65536, "auto", 2);
    shoal_backoff_recount(); /* configured with both awake: only this one is */
    struct shoal_backoff_state s;
    shoal_backoff_query(&s);
    CHECK_MSG(s.awake == 1 && s.spin >= 2048, "2 PEs for 1 core, 1 awake: awake %d spin %lu", s.awake, s.spin);
    /* Polls spun until the budget runs out or the wait stops spinning. */
    unsigned long n = awaiting(cpu + 1, 3 * s.spin, s.spin - 1).ticks;
    CHECK_MSG(n >= s.spin - 1, "the awaited PE on CPU %d, this one on %d: %lu polls spun of %lu", cpu + 1, cpu, n,
              s.spin);
    n = awaiting(cpu, 3 * s.spin, s.spin - 1).ticks;
    CHECK_MSG(n <= 64, "the awaited PE last ran on this CPU (%d): %lu polls spun, expected at most 64", cpu, n);
    n = serving_polls(cpu + 1, s.spin);
    CHECK_MSG(n <= s.spin, "a serving wait, its awaited PE elsewhere: %lu polls, past the budget of %lu", n, s.spin);
    n = serving_polls(cpu, s.spin);
    CHECK_MSG(n > s.spin, "a serving wait, its awaited PE on this CPU: %lu polls, back to spinning (budget %lu)", n,
              s.spin);
    /* SHMEM_WAIT_POLICY=spin keeps spinning all the same. */
    shoal_backoff_configure(65536, "spin", 2);
    const struct shoal_backoff b = awaiting(cpu, 4096, ULONG_MAX);
    CHECK_MSG(b.polls == 4097 && b.ticks == 4097,
              "SHMEM_WAIT_POLICY=spin, the awaited PE on this CPU: %lu polls, %lu ticks", b.polls, b.ticks);
}

static struct shoal_backoff_state wait_once(long r)
{
    pthread_t t;
    round_no = r;
    CHECK(pthread_create(&t, NULL, writer, NULL) == 0);
    shmem_long_wait_until(&word, SHMEM_CMP_EQ, r);
    CHECK_MSG(word == r, "woke with %ld, expected %ld", word, r);
    pthread_join(t, NULL);
    struct shoal_backoff_state s;
    shoal_backoff_query(&s);
    return s;
}

int main(void)
{
    int provided;
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    test_pe = shmem_my_pe();
    if (provided != SHMEM_THREAD_MULTIPLE || shmem_n_pes() != 1) {
        shmem_finalize();
        return TEST_SKIP;
    }
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu(), &one);
    CHECK(sched_setaffinity(0, sizeof one, &one) == 0);
    struct shoal_backoff_state before;
    shoal_backoff_sense_now();
    shoal_backoff_query(&before);
    pid_t hog = fork();
    if (hog == 0) {
        for (;;) __asm__ __volatile__("" ::: "memory");
    }
    CHECK(hog > 0);

    struct shoal_backoff_state s;
    for (long r = 1; r <= 12; r++) s = wait_once(r);
    CHECK_MSG(s.policy == SHOAL_WAIT_AUTO, "policy %d", (int)s.policy);
    CHECK_MSG(s.contended >= 1, "under a hog the policy says quiet (yield %ld ns, pressure %d permille)",
              s.yield_ns, s.pressure_permille);
    CHECK_MSG(s.spin <= 2048, "under a hog, with spins that never paid, the budget stays %lu polls", s.spin);
    printf("before: contended %d spin %lu yield %ld ns pressure %d; under the hog: contended %d spin %lu yields %u "
           "yield %ld ns pressure %d permille, spins paid %d%%\n",
           before.contended, before.spin, before.yield_ns, before.pressure_permille, s.contended, s.spin, s.yields,
           s.yield_ns, s.pressure_permille, s.spin_paid_percent);

    shoal_backoff_configure(65536, "spin", 1);
    s = wait_once(13);
    CHECK_MSG(s.policy == SHOAL_WAIT_SPIN_ONLY && s.spin == (unsigned long)-1 && s.contended == 0,
              "manual spin did not hold: policy %d spin %lu contended %d", (int)s.policy, s.spin, s.contended);
    shoal_backoff_configure(65536, "yield", 1);
    s = wait_once(14);
    CHECK_MSG(s.policy == SHOAL_WAIT_YIELD && s.spin == 0 && s.yields == (unsigned)-1,
              "manual yield did not hold: policy %d spin %lu yields %u", (int)s.policy, s.spin, s.yields);
    shoal_backoff_configure(65536, "auto", 2);
    s = wait_once(15);
    CHECK_MSG(s.awake == 1 && s.contended < 2 && s.spin >= 2048,
              "2 PEs for 1 core, 1 awake: awake %d contended %d spin %lu", s.awake, s.contended, s.spin);
    crowded_waits();
    awaited_on_this_core();
    shoal_backoff_configure(65536, "auto", 1);

    kill(hog, SIGKILL);
    waitpid(hog, NULL, 0);
    shmem_finalize();
    return test_finish();
}
