/* scale_job.c: start-up time, memory per PE, and a check that the
 * bootstrap's gathers reached everyone, for tests/netns/scale_*.sh.
 *
 * Each PE notes the wall-clock time (CLOCK_REALTIME, shared by every
 * namespace "host") when shmem_init returns, its shmem_init time (wall
 * and CPU: on one loaded machine the PEs of all "hosts" share the cores, so
 * the CPU time is what a PE with a core of its own would wait) and its
 * memory right after it (VmRSS, Pss), then proves it holds every PE's
 * addresses and keys: it puts a word made of (its rank, the target's) into
 * its slot at every PE, gets a word from every PE, and takes part in an
 * fcollect; every value is checked. Its memory is read again once it has
 * talked to every PE (the transports open per-peer state lazily), and it
 * reads its oshrun's peak memory (VmHWM of its parent). PE 0 gathers all of
 * it with gets and prints one line of key=value pairs; a PE that saw a
 * wrong value prints which and the job exits 1.
 *
 *   scale_job [HOLD_MS]   HOLD_MS: stay that long after the checks (so a
 *                         test can look at the job's connections) */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define MAX_PES 4096

enum { ST_INIT_END_NS, ST_INIT_NS, ST_CPU_INIT_NS, ST_RSS_INIT, ST_PSS_INIT, ST_RSS_PEERS, ST_BAD, ST_LAUNCHER_HWM, NSTAT };

static long slots[MAX_PES];
static long mine, fc_src, fc_dst[MAX_PES];
static long long stats[NSTAT];
static long long all[NSTAT * MAX_PES];

static long long ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The kB value of "field:" in a /proc file, or -1. */
static long long proc_kb(const char *file, const char *field)
{
    FILE *f = fopen(file, "r");
    char line[256];
    long long v = -1;
    const size_t n = strlen(field);
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, field, n) && line[n] == ':') {
            sscanf(line + n + 1, "%lld", &v);
            break;
        }
    fclose(f);
    return v;
}

/* What PE `from` writes at PE `to`: unique to the pair. */
static long word(int from, int to) { return ((long)from << 32) ^ ((long)to * 0x9E3779B1L) ^ 0x5CA1EL; }

int main(int argc, char **argv)
{
    const long hold_ms = argc > 1 ? atol(argv[1]) : 0;
    const long long t0 = ns(CLOCK_MONOTONIC);
    shmem_init();
    stats[ST_INIT_END_NS] = ns(CLOCK_REALTIME);
    stats[ST_INIT_NS] = ns(CLOCK_MONOTONIC) - t0;
    /* CPU time of the whole process so far (its threads included): what
     * shmem_init costs a PE with a core of its own. */
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    stats[ST_CPU_INIT_NS] = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
                            (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL;
    stats[ST_RSS_INIT] = proc_kb("/proc/self/status", "VmRSS");
    stats[ST_PSS_INIT] = proc_kb("/proc/self/smaps_rollup", "Pss");
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    if (npes > MAX_PES) {
        if (me == 0) fprintf(stderr, "scale_job: at most %d PEs, not %d\n", MAX_PES, npes);
        shmem_global_exit(1);
    }
    mine = word(me, me);
    fc_src = word(me, -1);
    shmem_barrier_all();
    /* Everyone's slot at every PE, starting at a different PE each. */
    for (int k = 0; k < npes; k++) {
        const int p = (me + k) % npes;
        shmem_long_p(&slots[me], word(me, p), p);
    }
    shmem_barrier_all();
    long long bad = 0;
    for (int p = 0; p < npes; p++)
        if (slots[p] != word(p, me) && bad++ == 0)
            fprintf(stderr, "scale_job: PE %d: slot of PE %d holds %#lx, want %#lx\n", me, p, slots[p], word(p, me));
    for (int k = 0; k < npes; k++) {
        const int p = (me + k) % npes;
        const long v = shmem_long_g(&mine, p);
        if (v != word(p, p) && bad++ == 0)
            fprintf(stderr, "scale_job: PE %d: get from PE %d gave %#lx, want %#lx\n", me, p, v, word(p, p));
    }
    shmem_long_fcollect(SHMEM_TEAM_WORLD, fc_dst, &fc_src, 1);
    for (int p = 0; p < npes; p++)
        if (fc_dst[p] != word(p, -1) && bad++ == 0)
            fprintf(stderr, "scale_job: PE %d: fcollect gave %#lx for PE %d, want %#lx\n", me, fc_dst[p], p,
                    word(p, -1));
    stats[ST_BAD] = bad;
    stats[ST_RSS_PEERS] = proc_kb("/proc/self/status", "VmRSS");
    char parent[64];
    snprintf(parent, sizeof parent, "/proc/%d/status", (int)getppid());
    stats[ST_LAUNCHER_HWM] = proc_kb(parent, "VmHWM");
    shmem_barrier_all();
    if (me == 0) {
        long long sum[NSTAT] = {0}, max[NSTAT], min[NSTAT];
        for (int p = 0; p < npes; p++) shmem_getmem(all + (size_t)p * NSTAT, stats, sizeof stats, p);
        for (int s = 0; s < NSTAT; s++) max[s] = min[s] = all[s];
        for (int p = 0; p < npes; p++)
            for (int s = 0; s < NSTAT; s++) {
                const long long v = all[(size_t)p * NSTAT + s];
                sum[s] += v;
                if (v > max[s]) max[s] = v;
                if (v < min[s]) min[s] = v;
            }
        printf("scale_job: pes=%d bad=%lld init_end_min_ns=%lld init_end_max_ns=%lld init_ms_mean=%.1f "
               "init_ms_max=%.1f cpu_init_ms_mean=%.1f rss_init_kb_mean=%lld rss_init_kb_max=%lld pss_init_kb_mean=%lld "
               "rss_peers_kb_mean=%lld rss_peers_kb_max=%lld launcher0_hwm_kb=%lld launcher_hwm_kb_max=%lld\n",
               npes, sum[ST_BAD], min[ST_INIT_END_NS], max[ST_INIT_END_NS], (double)sum[ST_INIT_NS] / npes / 1e6,
               (double)max[ST_INIT_NS] / 1e6, (double)sum[ST_CPU_INIT_NS] / npes / 1e6, sum[ST_RSS_INIT] / npes, max[ST_RSS_INIT], sum[ST_PSS_INIT] / npes,
               sum[ST_RSS_PEERS] / npes, max[ST_RSS_PEERS], all[ST_LAUNCHER_HWM], max[ST_LAUNCHER_HWM]);
        fflush(stdout);
    }
    if (hold_ms > 0) {
        struct timespec ts = {hold_ms / 1000, (hold_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    shmem_barrier_all();
    shmem_finalize();
    return bad ? 1 : 0;
}
