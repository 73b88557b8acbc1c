/* exit_prog.c: PEs that leave main without shmem_finalize (exit_test.sh
 * judges the job from outside: status, stderr lines, time).
 *
 *   exit_prog all        every PE returns from main after checking a put
 *                        from its left neighbour: finalized at exit, status 0
 *   exit_prog late       PEs other than 0 return at once; PE 0 computes for
 *                        3 s, then reads each peer's value (the exited PEs
 *                        still serve it) and calls shmem_finalize: status 0
 *   exit_prog mixed      odd PEs return, even PEs call shmem_finalize
 *   exit_prog exit_mid   the last PE calls exit(0) while the others wait in
 *                        shmem_barrier_all: the job must end, naming it
 *   exit_prog coll_mid   the last PE returns while the others keep calling
 *                        a sum reduction: the job must end, naming it
 *   exit_prog fail3      the last PE returns 3 (the others wait in a
 *                        barrier): the status stands, the job ends with it
 *   exit_prog put_exit   the last PE returns 3 while the others stream
 *                        small puts to it, ignoring SIGTERM (so they live
 *                        on until oshrun's SIGKILL): a PE that dies of a
 *                        fault meanwhile prints FAIL (over ofi, libfabric's
 *                        rxm once crashed on the broken connection)
 *   exit_prog thread_first  a thread runs before shmem_init (as when MPI
 *                        starts first), so static data stays private: one
 *                        warning for the job; heap data still flows
 *
 * Data checks print "FAIL" lines, which the script looks for. */
#include <pthread.h>
#include <signal.h>
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long value[1];
static long sum_src[1], sum_dst[1];

static void *idle(void *arg)
{
    (void)arg;
    sleep(30);
    return NULL;
}

/* put_exit: a fault in any thread is the failure looked for. */
static void on_fault(int sig)
{
    static const char line[] = "FAIL: a PE died of a fault while its peer exited\n";
    ssize_t n = write(STDOUT_FILENO, line, sizeof line - 1);
    (void)n;
    _exit(128 + sig);
}

/* A ring of puts through the heap: what still works without symmetric
 * static data. */
static void heap_ring(int me, int n)
{
    long *cell = shmem_malloc(sizeof *cell);
    *cell = -1;
    shmem_barrier_all();
    shmem_long_p(cell, 2000 + me, (me + 1) % n);
    shmem_barrier_all();
    if (*cell != 2000 + (me + n - 1) % n) printf("FAIL PE %d: heap cell %ld\n", me, *cell);
    shmem_free(cell);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "thread_first")) {
        pthread_t t;
        pthread_create(&t, NULL, idle, NULL);
        pthread_detach(t);
        shmem_init();
        heap_ring(shmem_my_pe(), shmem_n_pes());
        printf("PE %d done\n", shmem_my_pe());
        shmem_finalize();
        return 0;
    }
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes();
    value[0] = -1;
    shmem_barrier_all();
    shmem_long_p(value, 1000 + me, (me + 1) % n);
    shmem_barrier_all();
    const long want = 1000 + (me + n - 1) % n;
    if (value[0] != want) printf("FAIL PE %d: value %ld, expected %ld\n", me, value[0], want);
    fflush(stdout);

    if (!strcmp(mode, "all")) return 0;
    if (!strcmp(mode, "late")) {
        if (me != 0) return 0;
        sleep(3); /* a long computation: the exited PEs must wait, not end the job */
        for (int pe = 0; pe < n; pe++) {
            long v = shmem_long_g(value, pe);
            if (v != 1000 + (pe + n - 1) % n) printf("FAIL PE 0: PE %d holds %ld after it exited\n", pe, v);
        }
        printf("PE 0 read every PE after the computation\n");
        fflush(stdout);
        shmem_finalize();
        return 0;
    }
    if (!strcmp(mode, "mixed")) {
        if (me % 2) return 0;
        shmem_finalize();
        return 0;
    }
    if (!strcmp(mode, "exit_mid")) {
        if (me == n - 1) exit(0);
        shmem_barrier_all(); /* never completes: PE n-1 is gone */
        printf("FAIL PE %d: left a barrier PE %d never reached\n", me, n - 1);
        shmem_finalize();
        return 0;
    }
    if (!strcmp(mode, "coll_mid")) {
        if (me == n - 1) return 0;
        for (int i = 0; i < 1000; i++) {
            sum_src[0] = me;
            shmem_long_sum_reduce(SHMEM_TEAM_WORLD, sum_dst, sum_src, 1);
        }
        printf("FAIL PE %d: 1000 reductions completed without PE %d\n", me, n - 1);
        shmem_finalize();
        return 0;
    }
    if (!strcmp(mode, "put_exit")) {
        if (me == n - 1) {
            shmem_barrier_all();
            usleep(20000); /* the others' puts are in flight, some queued */
            return 3;
        }
        signal(SIGTERM, SIG_IGN);
        signal(SIGSEGV, on_fault);
        signal(SIGBUS, on_fault);
        shmem_barrier_all();
        for (long i = 0;; i++) shmem_long_p(value, i, n - 1);
    }
    if (!strcmp(mode, "fail3")) {
        if (me == n - 1) return 3;
        shmem_barrier_all();
        printf("FAIL PE %d: left a barrier PE %d never reached\n", me, n - 1);
        shmem_finalize();
        return 0;
    }
    fprintf(stderr, "usage: exit_prog all|late|mixed|exit_mid|coll_mid|fail3|put_exit|thread_first\n");
    shmem_finalize();
    return 2;
}
