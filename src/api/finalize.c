/* finalize.c: shmem_finalize, called by the program or, for a PE that
 * returns from main (or calls exit) without it, by an exit handler.
 *
 * Every PE quiets, counts itself in on PE 0 (internal area, "finalize")
 * and waits for PE 0's release; then the bootstrap's barrier and the
 * teardown follow. The meeting uses words of its own, not a team barrier,
 * so a finalize can never be mistaken for a barrier_all a peer is still
 * in. Waits drive the fabric's progress, so a peer's last operations on
 * this PE are served meanwhile.
 *
 * A PE finalizing at exit may be what its peers wait for: they may sit in
 * a barrier or a wait that needs it, and then nobody would ever arrive. So
 * it watches the PEs that have not arrived: each publishes how many of its
 * waits went to sleep and how many sleeps it took (sync/backoff.h). When
 * every one of them stays inside one sleeping wait for a while (see
 * STUCK_SAMPLES), none can move again, and the job ends with one line
 * naming this PE and them. A peer that computes (its counts stand still) or goes from
 * wait to wait is making progress, and is waited for as long as it takes.
 *
 * A PE that exits with a failure status is not finalized: the launcher
 * reports it and ends the job, as for any failed PE.
 *
 * When the job finalizes, PE 0 knows how many PEs did it at exit and prints
 * the one warning line for the job. */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/finalize.h"
#ifdef SHOAL_HAVE_CUDA
#include "cuda/gpu_rma.h"
#endif
#include "core/internal.h"
#include "observe/observe.h"
#include "observe/blocked.h"
#include "sync/backoff.h"
#include "sync/word.h"
#include "util/clock.h"

#define AT_EXIT_UNIT (UINT64_C(1) << 32)
/* Samples of the peers, half a second apart, that must all find every
 * running peer in the same sleeping wait. Any spacing is sound (a peer
 * that computes or moves on never looks stuck); this one ends a stuck
 * job within about 1.5 s. */
#define STUCK_SAMPLES 3
#define SAMPLE_EVERY_S 0.5

enum { STATE_RUNNING, STATE_FINALIZE, STATE_AT_EXIT };

static size_t word_offset(size_t field)
{
    return shoal_internal_offset_of(offsetof(struct shoal_internal_area, finalize) + field);
}
#define WORD(f) word_offset(offsetof(struct shoal_finalize_words, f))

/* What the exiting PE knows of each peer at one sample. */
struct peer_sample {
    uint64_t state, sleeps, naps;
};

struct watch {
    struct peer_sample *last;
    int stuck_for; /* consecutive samples in which every running PE sat in one wait */
    double next_at;
};

static void sample(struct peer_sample *s, int pe)
{
    s->state = shoal_word_load(SHOAL_SEG_HEAP, WORD(state), pe);
    s->sleeps = shoal_word_load(SHOAL_SEG_HEAP, WORD(waits[0]), pe);
    s->naps = shoal_word_load(SHOAL_SEG_HEAP, WORD(waits[1]), pe);
}

/* "0-2, 5" into buf: the PEs still running. */
static void running_list(const struct peer_sample *s, int n, int me, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = 0;
    for (int pe = 0; pe < n; pe++) {
        if (pe == me || s[pe].state != STATE_RUNNING) continue;
        int last = pe;
        while (last + 1 < n && last + 1 != me && s[last + 1].state == STATE_RUNNING) last++;
        if (used + 32 >= len) {
            snprintf(buf + used, len - used, ", ...");
            return;
        }
        if (last > pe)
            used += (size_t)snprintf(buf + used, len - used, "%s%d-%d", used ? ", " : "", pe, last);
        else
            used += (size_t)snprintf(buf + used, len - used, "%s%d", used ? ", " : "", pe);
        pe = last;
    }
}

static __attribute__((noreturn)) void report_stuck(const struct peer_sample *s)
{
    const int n = shoal_rt.n_pes, me = shoal_rt.my_pe;
    char pes[256], reason[512];
    /* One report for the job: other exiting PEs that see the same leave it
     * to the first. */
    if (shoal_word_add(SHOAL_SEG_HEAP, WORD(report_claim), 0, 1) != 0) shoal_runtime_await_end();
    running_list(s, n, me, pes, sizeof pes);
    snprintf(reason, sizeof reason,
             "returned from main (or called exit) without calling shmem_finalize while PE%s %s had not reached "
             "it and wait%s in Shoal calls that need this PE (a barrier, a collective, a wait); ending the job",
             strchr(pes, ',') || strchr(pes, '-') ? "s" : "", pes, strchr(pes, ',') || strchr(pes, '-') ? "" : "s");
    shoal_runtime_abort(1, reason);
}

/* Called while an exiting PE waits: every SAMPLE_EVERY_S, whether every PE
 * that has not arrived sits in the same sleeping wait as at the last sample. */
static void watch_peers(struct watch *w)
{
    const int n = shoal_rt.n_pes, me = shoal_rt.my_pe;
    double t = shoal_now_s();
    if (t < w->next_at) return;
    w->next_at = t + SAMPLE_EVERY_S;
    struct peer_sample *cur = calloc((size_t)n, sizeof *cur);
    if (!cur) return;
    int running = 0, stuck = 0;
    for (int pe = 0; pe < n; pe++) {
        if (pe == me) continue;
        sample(&cur[pe], pe);
        if (cur[pe].state != STATE_RUNNING) continue;
        running++;
        if (w->last && w->last[pe].state == STATE_RUNNING && cur[pe].sleeps == w->last[pe].sleeps &&
            cur[pe].naps > w->last[pe].naps && cur[pe].sleeps > 0)
            stuck++;
    }
    w->stuck_for = running > 0 && stuck == running ? w->stuck_for + 1 : 0;
    free(w->last);
    w->last = cur;
    if (w->stuck_for >= STUCK_SAMPLES - 1) report_stuck(cur);
}

static void wait_for(const uint64_t *word, uint64_t mask, uint64_t target, struct watch *w)
{
    struct shoal_backoff b = {0};
    while ((__atomic_load_n(word, __ATOMIC_ACQUIRE) & mask) < target) {
        shoal_backoff_wait(&b);
        if (w) watch_peers(w);
    }
    shoal_backoff_end(&b);
}

/* PE 0, once everyone arrived: the one line for the job about PEs that
 * left main without shmem_finalize. */
static void warn_at_exit(uint64_t arrived)
{
    const unsigned at_exit = (unsigned)(arrived >> 32);
    if (!at_exit) return;
    int lowest = -1;
    for (int pe = 0; pe < shoal_rt.n_pes && lowest < 0; pe++)
        if (shoal_word_load(SHOAL_SEG_HEAP, WORD(state), pe) == STATE_AT_EXIT) lowest = pe;
    char others[64] = "";
    if (at_exit > 1) snprintf(others, sizeof others, " and %u other PE%s", at_exit - 1, at_exit > 2 ? "s" : "");
    fprintf(stderr,
            "shoal: warning: PE %d%s returned from main (or called exit) without calling shmem_finalize; "
            "Shoal finalized %s at exit\n",
            lowest, others, at_exit > 1 ? "them" : "it");
    fflush(stderr);
}

static void meet(int at_exit)
{
    struct shoal_finalize_words *mine = &shoal_internal_local()->finalize;
    const int n = shoal_rt.n_pes;
    struct watch w = {0};
    shoal_rt.transport->quiet(NULL);
    __atomic_store_n(&mine->state, at_exit ? STATE_AT_EXIT : STATE_FINALIZE, __ATOMIC_RELEASE);
    shoal_word_add(SHOAL_SEG_HEAP, WORD(arrived), 0, 1 + (at_exit ? AT_EXIT_UNIT : 0));
    if (shoal_rt.my_pe == 0) {
        wait_for(&mine->arrived, AT_EXIT_UNIT - 1, (uint64_t)n, at_exit ? &w : NULL);
        warn_at_exit(__atomic_load_n(&mine->arrived, __ATOMIC_ACQUIRE));
        for (int pe = 1; pe < n; pe++) shoal_word_store(SHOAL_SEG_HEAP, WORD(release), pe, 1);
    } else {
        wait_for(&mine->release, UINT64_MAX, 1, at_exit ? &w : NULL);
    }
    free(w.last);
}

void shoal_finalize_start(void)
{
    __atomic_store_n(&shoal_backoff_naps, shoal_internal_local()->finalize.waits, __ATOMIC_RELAXED);
}

void shoal_finalize_run(int at_exit)
{
    shoal_blocked_call("shmem_finalize", SHOAL_WHERE_FINALIZE, NULL, -1);
#ifdef SHOAL_HAVE_CUDA
    shoal_gpu_stop_proxy(); /* issue 18: this PE's kernels are done; its proxy serves nothing more */
#endif
    shoal_obs_finish(); /* this PE's trace and statistics parts, before the heap goes */
    meet(at_exit);
#ifdef SHOAL_HAVE_CUDA
    shoal_gpu_release(); /* every PE is done with this PE's GPU heap */
#endif
    /* The heap holding the counters goes away below. */
    __atomic_store_n(&shoal_backoff_naps, NULL, __ATOMIC_RELAXED);
    shoal_runtime_finalize();
}

/* A program that exits with a failure status keeps it: the launcher ends
 * the job as for any failed PE. Only a successful exit is finalized. */
static void finalize_at_exit(int status, void *unused)
{
    (void)unused;
    if (status == 0 && shoal_rt.initialized) shoal_finalize_run(1);
}

void shoal_finalize_arm_exit(void)
{
    static int armed;
    if (armed) return;
    armed = 1;
    /* Registered after the bootstrap's own exit check (boot_pmi.c), so it
     * runs first: handlers run in reverse order. on_exit (glibc) passes
     * the exit status, which atexit does not. */
    on_exit(finalize_at_exit, NULL);
}
