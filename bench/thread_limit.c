/* thread_limit.c: how many threads one process can start here, with the
 * attributes the tls transport gives a served stream's thread (the
 * defaults), and the kernel limits that bound it (docs/scaling.md, "Where
 * the first wall is"). Starts idle threads until pthread_create fails or
 * CAP (argument, default 1,000,000) are running, then prints the count,
 * the error, the process's mappings and the limits.
 *   thread_limit [CAP] */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static int hold[2]; /* the threads block reading it until the process ends */

static void *idle(void *arg)
{
    (void)arg;
    char c;
    while (read(hold[0], &c, 1) < 0 && errno == EINTR) continue;
    return NULL;
}

static long read_number(const char *path)
{
    FILE *f = fopen(path, "r");
    long v = -1;
    if (f) {
        if (fscanf(f, "%ld", &v) != 1) v = -1;
        fclose(f);
    }
    return v;
}

static int count_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    int n = 0, c;
    if (!f) return -1;
    while ((c = fgetc(f)) != EOF) n += c == '\n';
    fclose(f);
    return n;
}

int main(int argc, char **argv)
{
    const long cap = argc > 1 ? atol(argv[1]) : 1000000;
    if (cap < 1 || pipe(hold) != 0) {
        fprintf(stderr, "usage: thread_limit [CAP >= 1]\n");
        return 2;
    }
    long started = 0;
    int rc = 0;
    pthread_t t;
    while (started < cap && (rc = pthread_create(&t, NULL, idle, NULL)) == 0) started++;
    struct rlimit nproc;
    getrlimit(RLIMIT_NPROC, &nproc);
    printf("threads started: %ld (%s)\n", started, rc ? strerror(rc) : "the cap");
    printf("mappings of the process: %d\n", count_lines("/proc/self/maps"));
    char nproc_text[32] = "unlimited";
    if (nproc.rlim_cur != RLIM_INFINITY)
        snprintf(nproc_text, sizeof nproc_text, "%llu", (unsigned long long)nproc.rlim_cur);
    printf("kernel.pid_max %ld, kernel.threads-max %ld, vm.max_map_count %ld, ulimit -u %s\n",
           read_number("/proc/sys/kernel/pid_max"), read_number("/proc/sys/kernel/threads-max"),
           read_number("/proc/sys/vm/max_map_count"), nproc_text);
    fflush(stdout);
    _exit(started == cap || rc == EAGAIN ? 0 : 1);
}
