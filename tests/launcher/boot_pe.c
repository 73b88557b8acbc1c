/* boot_pe.c: a PE that uses only the bootstrap (src/boot), driven by the
 * launcher test scripts. Usage: boot_pe MODE [ARGS...] TAG...; extra words
 * (a unique tag) are ignored so scripts can find the job's processes.
 *
 *   gather ROUNDS NFDS  allgather blobs and NFDS descriptors per PE, check
 *                       every byte and every descriptor's content, finalize
 *   kill RANK [noterm]  after a barrier PE RANK SIGKILLs itself; the others
 *                       (ignoring SIGTERM with "noterm", and each with a
 *                       grandchild) wait in a second barrier
 *   exit RANK CODE      after a barrier PE RANK exits with CODE
 *   nofinalize RANK     after a barrier PE RANK exits 0 without finalize
 *   abort RANK STATUS [REASON]  after a barrier PE RANK aborts the job
 *   sleep               barrier, then sleep (for --timeout and kill tests)
 *   usr1                barrier, wait for a forwarded SIGUSR1, finalize
 *   mismatch            PE 0 gathers 8 bytes, the others 16
 *   early               PE 0 finalizes and exits while the others gather
 *   hello               say hello, finalize, print rank and size
 *   fds NFDS            one descriptor exchange of NFDS per PE under the
 *                       open-file limit as it is (no raising, no skip)
 *   orphan              barrier, fork a grandchild that ignores SIGTERM,
 *                       SIGHUP and SIGINT, print "orphaned" (PE 0), sleep
 *   grandchild          (internal) sleep until killed */
#include "boot/boot.h"
#include "harness.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static shoal_boot_t *boot;

static void must(shoal_status_t st, const char *what)
{
    if (st != SHOAL_OK) {
        fprintf(stderr, "PE %d: %s failed: %s\n", test_pe, what, shoal_status_str(st));
        exit(TEST_FAIL);
    }
}

static void sleep_forever(void)
{
    for (;;) pause();
}

static int make_fd(int pe, int i)
{
    char text[64];
    int fd = memfd_create("boot_pe", MFD_CLOEXEC);
    if (fd < 0) {
        perror("memfd_create");
        exit(TEST_FAIL);
    }
    int n = snprintf(text, sizeof text, "PE %d fd %d", pe, i);
    if (write(fd, text, (size_t)n) != n) exit(TEST_FAIL);
    return fd;
}

static void check_fd(int fd, int pe, int i)
{
    char want[64], got[64] = {0};
    int n = snprintf(want, sizeof want, "PE %d fd %d", pe, i);
    ssize_t r = pread(fd, got, sizeof got - 1, 0);
    CHECK_MSG(r == n && memcmp(got, want, (size_t)n) == 0, "descriptor %d of PE %d holds '%s', want '%s'", i, pe,
              got, want);
}

static int gather(int rounds, int nfds)
{
    int size = boot->size, me = boot->rank;
    struct rlimit rl;
    /* Each PE receives nfds * size descriptors and keeps its own nfds. */
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    if ((rlim_t)nfds * (rlim_t)(size + 1) + 64 > rl.rlim_cur) {
        fprintf(stderr, "PE %d: descriptor limit %llu too low\n", me, (unsigned long long)rl.rlim_cur);
        return TEST_SKIP;
    }
    for (int round = 0; round < rounds; round++) {
        size_t len = 1 + (size_t)round * 37;
        unsigned char *send = malloc(len), *recv = malloc(len * (size_t)size);
        for (size_t i = 0; i < len; i++) send[i] = test_pattern(me, i, (unsigned)round);
        memset(recv, 0xee, len * (size_t)size);
        must(boot->ops->allgather(boot, send, len, recv), "allgather");
        for (int p = 0; p < size; p++)
            for (size_t i = 0; i < len; i++)
                CHECK_MSG(recv[(size_t)p * len + i] == test_pattern(p, i, (unsigned)round),
                          "round %d: byte %zu from PE %d", round, i, p);
        free(send);
        free(recv);
        must(boot->ops->barrier(boot), "barrier");
    }
    /* oshrun sends small results through the socket, large ones (64 KiB or
     * more) as one memory file for its host's PEs (tools/oshrun/serve.c). */
    const int by_launcher = strcmp(boot->ops->name, "launcher") == 0;
    CHECK_MSG(shoal_boot_shared_results == 0, "%lu small allgather results came as a shared file",
              shoal_boot_shared_results);
    /* Larger than a socket buffer: partial reads and writes on both sides,
     * or read from the shared file. */
    size_t big = 300000;
    unsigned char *send = malloc(big), *recv = malloc(big * (size_t)size);
    for (size_t i = 0; i < big; i++) send[i] = test_pattern(me, i, 99);
    must(boot->ops->allgather(boot, send, big, recv), "allgather (large)");
    for (int p = 0; p < size; p++) {
        size_t bad = 0;
        for (size_t i = 0; i < big; i++) bad += recv[(size_t)p * big + i] != test_pattern(p, i, 99);
        CHECK_MSG(bad == 0, "large allgather: %zu wrong bytes from PE %d", bad, p);
    }
    CHECK_MSG(!by_launcher || shoal_boot_shared_results == 1, "the large allgather result came %s",
              shoal_boot_shared_results ? "as more than one shared file" : "through the socket, not as a shared file");
    /* Read in place (shoal_boot_allgather_view): the host's PEs map the
     * one file, none copies it. */
    for (size_t i = 0; i < big; i++) send[i] = test_pattern(me, i, 98);
    struct shoal_boot_view view;
    must(shoal_boot_allgather_view(boot, send, big, &view), "allgather (large, viewed)");
    const unsigned char *seen = view.data;
    for (int p = 0; p < size; p++) {
        size_t bad = 0;
        for (size_t i = 0; i < big; i++) bad += seen[(size_t)p * big + i] != test_pattern(p, i, 98);
        CHECK_MSG(bad == 0, "large viewed allgather: %zu wrong bytes from PE %d", bad, p);
    }
    CHECK_MSG(!by_launcher || (shoal_boot_mapped_results == 1 && view.map == view.data),
              "the large viewed allgather result was %s", view.map ? "mapped twice" : "copied, not mapped");
    shoal_boot_view_release(&view);
    free(send);
    free(recv);

    /* Descriptors are exchanged among the PEs of this host only (oshrun
     * across hosts says which: SHOAL_LOCAL_RANK/SIZE); on one host, all. */
    int local_size = getenv("SHOAL_LOCAL_SIZE") ? atoi(getenv("SHOAL_LOCAL_SIZE")) : size;
    int base = me - (getenv("SHOAL_LOCAL_RANK") ? atoi(getenv("SHOAL_LOCAL_RANK")) : me);
    int *mine = malloc(sizeof(int) * (size_t)(nfds ? nfds : 1));
    int *all = malloc(sizeof(int) * (size_t)(nfds ? nfds : 1) * (size_t)local_size);
    for (int i = 0; i < nfds; i++) mine[i] = make_fd(me, i);
    must(boot->ops->allgather_fds(boot, mine, nfds, all), "allgather_fds");
    for (int p = base; p < base + local_size; p++)
        for (int i = 0; i < nfds; i++) {
            int fd = all[(p - base) * nfds + i];
            check_fd(fd, p, i);
            if (p == me) CHECK_MSG(fd != mine[i], "own descriptor %d came back as itself, not a duplicate", i);
            close(fd);
        }
    for (int i = 0; i < nfds; i++) close(mine[i]);
    free(mine);
    free(all);
    must(boot->ops->finalize(boot), "finalize");
    return test_finish();
}

/* A grandchild in the PE's process group, carrying the job's tag. */
static void start_grandchild(const char *argv0, const char *tag)
{
    if (fork() == 0) {
        execl("/proc/self/exe", argv0, "grandchild", tag, (char *)NULL);
        _exit(1);
    }
}

static void on_usr1(int sig) { (void)sig; }

/* A descriptor exchange as the library's shm transport makes it, under the
 * limit the PE was given. */
static int exchange_fds(int nfds)
{
    int local = getenv("SHOAL_LOCAL_SIZE") ? atoi(getenv("SHOAL_LOCAL_SIZE")) : boot->size;
    int *mine = calloc((size_t)nfds, sizeof *mine), *all = calloc((size_t)nfds * (size_t)local, sizeof *all);
    for (int i = 0; i < nfds; i++) mine[i] = make_fd(boot->rank, i);
    must(boot->ops->allgather_fds(boot, mine, nfds, all), "allgather_fds");
    must(boot->ops->finalize(boot), "finalize");
    return 0;
}

/* A grandchild that only SIGKILL ends, with the job's tag in its arguments. */
static void orphan(const char *argv0, const char *tag)
{
    if (fork() == 0) {
        signal(SIGTERM, SIG_IGN);
        signal(SIGHUP, SIG_IGN);
        signal(SIGINT, SIG_IGN);
        execl("/proc/self/exe", argv0, "grandchild", tag, (char *)NULL);
        _exit(1);
    }
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "grandchild") == 0) sleep_forever();
    if (shoal_boot_open(&boot) != SHOAL_OK) return TEST_FAIL;
    test_pe = boot->rank;
    int arg1 = argc > 2 ? atoi(argv[2]) : 0;
    int arg2 = argc > 3 ? atoi(argv[3]) : 0;

    if (strcmp(mode, "gather") == 0) return gather(arg1, arg2);
    if (strcmp(mode, "fds") == 0) return exchange_fds(arg1);
    if (strcmp(mode, "hello") == 0) {
        must(boot->ops->finalize(boot), "finalize");
        if (getenv("SHOAL_NODE_RANK"))
            printf("rank %d size %d boot %s node %s local %s/%s\n", boot->rank, boot->size, boot->ops->name,
                   getenv("SHOAL_NODE_RANK"), getenv("SHOAL_LOCAL_RANK"), getenv("SHOAL_LOCAL_SIZE"));
        else
            printf("rank %d size %d boot %s\n", boot->rank, boot->size, boot->ops->name);
        boot->ops->close(boot);
        return 0;
    }
    if (strcmp(mode, "mismatch") == 0) {
        char send[16] = {0}, recv[16 * 64];
        boot->ops->allgather(boot, send, boot->rank == 0 ? 8 : 16, recv);
        sleep_forever();
    }
    if (strcmp(mode, "early") == 0) {
        if (boot->rank == 0) {
            must(boot->ops->finalize(boot), "finalize");
            return 0;
        }
        boot->ops->barrier(boot);
        sleep_forever();
    }
    if (strcmp(mode, "usr1") == 0) {
        sigset_t set, old;
        sigemptyset(&set);
        sigaddset(&set, SIGUSR1);
        sigprocmask(SIG_BLOCK, &set, &old);
        signal(SIGUSR1, on_usr1);
        must(boot->ops->barrier(boot), "barrier");
        if (boot->rank == 0) {
            printf("ready\n");
            fflush(stdout);
        }
        sigsuspend(&old);
        must(boot->ops->barrier(boot), "barrier");
        must(boot->ops->finalize(boot), "finalize");
        return 0;
    }

    must(boot->ops->barrier(boot), "barrier");
    if (strcmp(mode, "kill") == 0) {
        if (boot->rank == arg1) raise(SIGKILL);
        if (argc > 3 && strcmp(argv[3], "noterm") == 0) signal(SIGTERM, SIG_IGN);
        start_grandchild(argv[0], argv[argc - 1]);
    } else if (strcmp(mode, "exit") == 0) {
        if (boot->rank == arg1) exit(arg2);
    } else if (strcmp(mode, "nofinalize") == 0) {
        if (boot->rank == arg1) return 0;
    } else if (strcmp(mode, "abort") == 0) {
        if (boot->rank == arg1) boot->ops->abort(boot, arg2, argc > 4 ? argv[4] : NULL);
    } else if (strcmp(mode, "sleep") == 0) {
        sleep_forever();
    } else if (strcmp(mode, "orphan") == 0) {
        orphan(argv[0], argv[argc - 1]);
        must(boot->ops->barrier(boot), "barrier");
        if (boot->rank == 0) {
            printf("orphaned\n");
            fflush(stdout);
        }
        sleep_forever();
    } else {
        fprintf(stderr, "boot_pe: unknown mode '%s'\n", mode);
        return TEST_FAIL;
    }
    /* The others wait for a barrier that never completes: the launcher must end the job. */
    shoal_status_t st = boot->ops->barrier(boot);
    fprintf(stderr, "PE %d: barrier returned %s\n", boot->rank, shoal_status_str(st));
    return TEST_FAIL;
}
