/* guard.c: the guardian, a small process oshrun forks first thing, so that
 * nothing a PE started outlives the job, even when oshrun itself is
 * SIGKILLed. PR_SET_PDEATHSIG takes each PE down with oshrun, but not the
 * processes a PE forked; those stay in the PE's process group (every PE
 * leads its own group). So each PE, before it execs the program, writes its
 * pid (= its group) into a pipe whose read end the guardian holds; oshrun
 * writes -pid once it has swept a group itself. When the pipe reaches end
 * of file (oshrun exited or died: the kernel closes its end), the guardian
 * SIGKILLs every group still listed and exits.
 *
 * The guardian is its own session (setsid), so signals sent to oshrun's
 * group or terminal do not take it down first; it ignores the polite
 * ones, holds no descriptor but the pipe (none of oshrun's sockets, so a
 * dead oshrun's peers still see their connections close), and its
 * stdin/stdout/stderr are /dev/null, so it never holds a caller's pipe. A
 * process that leaves its PE's group (setsid) escapes it; that is the
 * documented limit. */
#include "oshrun.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#define GUARD_FD 3

/* Everything but 0-2 and the pipe (moved to GUARD_FD) is closed. */
static void close_others(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d) {
        for (int fd = GUARD_FD + 1; fd < 4096; fd++) close(fd);
        return;
    }
    int self = dirfd(d);
    struct dirent *e;
    int fds[1024], n = 0;
    while ((e = readdir(d)) && n < 1024) {
        int fd = atoi(e->d_name);
        if (e->d_name[0] >= '0' && e->d_name[0] <= '9' && fd > GUARD_FD && fd != self) fds[n++] = fd;
    }
    closedir(d);
    for (int i = 0; i < n; i++) close(fds[i]);
}

static void __attribute__((noreturn)) guard_main(int rfd)
{
    static const int polite[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGPIPE, SIGTSTP, SIGTTIN,
                                 SIGTTOU};
    pid_t *groups = NULL;
    size_t n = 0, cap = 0;
    int null;
    setsid();
    for (size_t i = 0; i < sizeof polite / sizeof polite[0]; i++) signal(polite[i], SIG_IGN);
    prctl(PR_SET_NAME, "oshrun-guard");
    if (rfd != GUARD_FD) {
        dup2(rfd, GUARD_FD);
        close(rfd);
    }
    null = open("/dev/null", O_RDWR);
    if (null >= 0) {
        dup2(null, 0);
        dup2(null, 1);
        dup2(null, 2);
        if (null > 2 && null != GUARD_FD) close(null);
    }
    close_others();
    for (;;) {
        int32_t v;
        ssize_t r = read(GUARD_FD, &v, sizeof v);
        if (r < 0 && errno == EINTR) continue;
        if (r != (ssize_t)sizeof v) break; /* end of file: oshrun is gone */
        if (v > 0) {
            if (n == cap) {
                size_t c = cap ? 2 * cap : 64;
                pid_t *g = realloc(groups, c * sizeof *g);
                if (!g) continue; /* cannot list it; PDEATHSIG still takes the PE */
                groups = g;
                cap = c;
            }
            groups[n++] = (pid_t)v;
        } else {
            for (size_t i = 0; i < n; i++)
                if (groups[i] == (pid_t)-v) groups[i] = groups[--n];
        }
    }
    for (size_t i = 0; i < n; i++) kill(-groups[i], SIGKILL);
    _exit(0);
}

int oshrun_guard_start(void)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
        fprintf(stderr, "oshrun: cannot start the guardian: pipe: %s\n", strerror(errno));
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "oshrun: cannot start the guardian: fork: %s\n", strerror(errno));
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
        close(p[1]);
        guard_main(p[0]);
    }
    close(p[0]);
    return p[1];
}

void oshrun_guard_tell(int fd, pid_t pgid, int add)
{
    int32_t v = add ? (int32_t)pgid : -(int32_t)pgid;
    ssize_t w;
    if (fd < 0) return;
    do w = write(fd, &v, sizeof v); /* 4 bytes into a pipe: atomic */
    while (w < 0 && errno == EINTR);
}
