/* fault_pe.c: PE 1 fails while the other PEs are blocked in a call that
 * can only finish with PE 1's help. The launcher must end the job.
 *
 *   fault_pe TAG FAULT WHERE
 *
 * FAULT is how PE 1 fails: segv, abort, exit3, exit0 (exit without
 * shmem_finalize), or wait (it writes its pid to $SHOAL_TEST_PIDFILE and
 * sleeps until the test kills it, or the launcher). WHERE is where the
 * others are blocked: barrier (shmem_barrier_all), wait (shmem_wait_until
 * on a flag nobody sets), team (a sum reduction on a team split from
 * world), lock (shmem_set_lock on a lock PE 1 holds). Before a
 * self-inflicted fault PE 1 writes the CLOCK_REALTIME time to
 * $SHOAL_TEST_STAMP. TAG only marks the processes of the job. */
#include <shmem.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int flag;
static long lock;
static int src[4], dst[4];

static void write_file(const char *var, const char *text)
{
    const char *path = getenv(var);
    if (!path) return;
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) return;
    fputs(text, f);
    fclose(f);
    rename(tmp, path); /* the reader never sees half a line */
}

static void stamp(void)
{
    struct timespec ts;
    char text[64];
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(text, sizeof text, "%lld.%09ld\n", (long long)ts.tv_sec, ts.tv_nsec);
    write_file("SHOAL_TEST_STAMP", text);
}

/* The null store is the point: the sanitizers must not turn it into a
 * report, the signal must end the PE. */
__attribute__((no_sanitize("undefined"))) static void fail_now(const char *fault)
{
    /* Let the others block first. */
    struct timespec pause_ts = {0, 150 * 1000 * 1000};
    nanosleep(&pause_ts, NULL);
    if (strcmp(fault, "wait") == 0) {
        char text[32];
        snprintf(text, sizeof text, "%d\n", (int)getpid());
        write_file("SHOAL_TEST_PIDFILE", text);
        for (;;) pause();
    }
    stamp();
    if (strcmp(fault, "segv") == 0) {
        volatile int *volatile nowhere = NULL;
        *nowhere = 1;
    }
    if (strcmp(fault, "abort") == 0) abort();
    if (strcmp(fault, "exit3") == 0) exit(3);
    if (strcmp(fault, "exit0") == 0) exit(0);
    fprintf(stderr, "fault_pe: unknown fault %s\n", fault);
    exit(2);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: fault_pe TAG FAULT WHERE\n");
        return 2;
    }
    const char *fault = argv[2], *where = argv[3];
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes();
    void *heap = shmem_malloc(1 << 20); /* something to clean up */
    shmem_team_t team = SHMEM_TEAM_INVALID;
    if (strcmp(where, "team") == 0 &&
        shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, n, NULL, 0, &team) != 0) {
        fprintf(stderr, "fault_pe: team split failed\n");
        return 2;
    }
    if (strcmp(where, "lock") == 0 && me == 1) shmem_set_lock(&lock);
    shmem_barrier_all();
    if (me == 1) fail_now(fault);
    if (strcmp(where, "barrier") == 0) shmem_barrier_all();
    else if (strcmp(where, "wait") == 0) shmem_int_wait_until(&flag, SHMEM_CMP_EQ, 1);
    else if (strcmp(where, "team") == 0) shmem_int_sum_reduce(team, dst, src, 4);
    else if (strcmp(where, "lock") == 0) shmem_set_lock(&lock);
    fprintf(stderr, "fault_pe: PE %d got past the blocked call (%s)\n", me, where);
    shmem_free(heap);
    shmem_finalize();
    return 0;
}
