/* init_scale.c: start-up cost per PE as the job grows. Each PE times its
 * shmem_init and reads its memory (VmRSS from /proc/self/status; Pss and
 * Pss_Shmem from /proc/self/smaps_rollup) right after shmem_init and right
 * after the first shmem_barrier_all; PE 0 gathers them and prints one row:
 * the PE count, shmem_init time (mean and slowest PE), and per-PE memory in
 * MiB (mean and largest VmRSS, mean Pss) at both points. PSS divides shared
 * pages among the processes mapping them, so summed over the PEs it is the
 * job's real footprint; RSS counts a shared page in every PE.
 * Standard OpenSHMEM only (Linux /proc for the memory), so the same source
 * builds against any implementation. Run by tests/stress/init_scale.sh at
 * 1, 8 and 32 PEs; -H leaves out the header line. */
#include <shmem.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define NSTAT 6 /* init seconds, rss/pss after init, rss/pss after barrier, pss_shmem after barrier */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The kB value of "field:" in a /proc file, or -1. */
static double proc_kb(const char *file, const char *field)
{
    FILE *f = fopen(file, "r");
    char line[256];
    double v = -1;
    const size_t n = strlen(field);
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, field, n) && line[n] == ':') {
            sscanf(line + n + 1, "%lf", &v);
            break;
        }
    fclose(f);
    return v;
}

static double stats[NSTAT];
static double all[NSTAT * 4096];

int main(int argc, char **argv)
{
    const int header = !(argc > 1 && !strcmp(argv[1], "-H"));
    const double t0 = now();
    shmem_init();
    stats[0] = now() - t0;
    stats[1] = proc_kb("/proc/self/status", "VmRSS");
    stats[2] = proc_kb("/proc/self/smaps_rollup", "Pss");
    shmem_barrier_all();
    stats[3] = proc_kb("/proc/self/status", "VmRSS");
    stats[4] = proc_kb("/proc/self/smaps_rollup", "Pss");
    stats[5] = proc_kb("/proc/self/smaps_rollup", "Pss_Shmem");
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    if (npes > 4096) {
        if (me == 0) fprintf(stderr, "init_scale: at most 4096 PEs\n");
        shmem_finalize();
        return 1;
    }
    /* Gather to PE 0 with gets: no collective buffers to size. */
    shmem_barrier_all();
    if (me == 0) {
        for (int p = 0; p < npes; p++) shmem_getmem(all + (size_t)p * NSTAT, stats, sizeof stats, p);
        double sum[NSTAT] = {0}, max[NSTAT] = {0};
        for (int p = 0; p < npes; p++)
            for (int s = 0; s < NSTAT; s++) {
                const double v = all[(size_t)p * NSTAT + s];
                sum[s] += v;
                if (v > max[s]) max[s] = v;
            }
        const double mib = 1024.0;
        if (header)
            printf("%5s | %9s %9s | %8s %8s %8s | %8s %8s %8s %9s | %10s\n", "PEs", "init ms", "slowest", "RSS MiB",
                   "max", "PSS MiB", "RSS MiB", "max", "PSS MiB", "PSS shmem", "job PSS");
        if (header)
            printf("%5s | %19s | %26s | %36s | %10s\n", "", "shmem_init, per PE", "after init, per PE",
                   "after first barrier, per PE", "MiB, all");
        printf("%5d | %9.2f %9.2f | %8.2f %8.2f %8.2f | %8.2f %8.2f %8.2f %9.2f | %10.1f\n", npes,
               sum[0] / npes * 1e3, max[0] * 1e3, sum[1] / npes / mib, max[1] / mib, sum[2] / npes / mib,
               sum[3] / npes / mib, max[3] / mib, sum[4] / npes / mib, sum[5] / npes / mib, sum[4] / mib);
        fflush(stdout);
    }
    shmem_barrier_all();
    shmem_finalize();
    return 0;
}
