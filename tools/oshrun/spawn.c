/* spawn.c: starts the PEs. Each child gets its own process group, dies
 * with the launcher (PR_SET_PDEATHSIG), and inherits exactly one bootstrap
 * socket: every other launcher descriptor is close-on-exec. An exec
 * failure travels back on a close-on-exec pipe so the launcher can report
 * it before anything else happens. */
#include "oshrun.h"
#include "where.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static const int reset_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCHLD, SIGPIPE};

struct child_fds {
    int sock;     /* the PE's end of the socketpair */
    int out, err; /* write ends of the output pipes */
    int report;   /* exec-failure pipe */
};

static void __attribute__((noreturn)) child_fail(int report, int err)
{
    ssize_t w = write(report, &err, sizeof err);
    (void)w;
    _exit(127);
}

/* Runs in the child after fork; the launcher is single-threaded, so libc is safe. */
static void __attribute__((noreturn)) child_exec(const struct oshrun_job *job, int rank, const struct child_fds *c)
{
    char num[32];
    sigset_t none;
    setpgid(0, 0);
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != job->self) _exit(127); /* launcher already gone */
    /* Listed with the guardian before the program runs: whatever it forks stays in this group. */
    oshrun_guard_tell(job->guard, getpid(), 1);
    for (size_t i = 0; i < sizeof reset_signals / sizeof reset_signals[0]; i++) signal(reset_signals[i], SIG_DFL);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (dup2(c->out, STDOUT_FILENO) < 0 || dup2(c->err, STDERR_FILENO) < 0) child_fail(c->report, errno);
    int bind_err = oshrun_bind_pe(job, rank - job->rank_base);
    if (bind_err) child_fail(c->report, -bind_err); /* negative: not an exec failure */
    if (rank > 0) { /* only PE 0 reads the launcher's stdin */
        int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (null < 0 || dup2(null, STDIN_FILENO) < 0) child_fail(c->report, errno);
    }
    if (fcntl(c->sock, F_SETFD, 0) < 0) child_fail(c->report, errno);
    snprintf(num, sizeof num, "%d", c->sock);
    setenv("SHOAL_BOOT_FD", num, 1);
    snprintf(num, sizeof num, "%d", rank);
    setenv("SHOAL_RANK", num, 1);
    snprintf(num, sizeof num, "%d", job->size);
    setenv("SHOAL_SIZE", num, 1);
    /* This host's PEs, on one host as across hosts (the PE exchanges
     * descriptors with these only). */
    snprintf(num, sizeof num, "%d", rank - job->rank_base);
    setenv("SHOAL_LOCAL_RANK", num, 1);
    snprintf(num, sizeof num, "%d", job->npes);
    setenv("SHOAL_LOCAL_SIZE", num, 1);
    /* Bound PEs see one core each in their affinity; the wait policy
     * needs the cores the host's PEs share (sync/backoff.c). */
    if (job->cores) {
        snprintf(num, sizeof num, "%d", job->ncores);
        setenv("SHOAL_HOST_CORES", num, 1);
    }
    if (job->net) {
        snprintf(num, sizeof num, "%d", job->opt->node_rank);
        setenv("SHOAL_NODE_RANK", num, 1);
        /* Data endpoints listen on the interface of the route to it (boot/bind_addr.h). */
        setenv("SHOAL_RENDEZVOUS", job->opt->rendezvous, 1);
    }
    oshrun_where_child(job);
    /* -x VAR=VALUE; a bare -x VAR is inherited as it is. */
    for (int i = 0; i < job->opt->nexports; i++) {
        const char *x = job->opt->exports[i], *eq = strchr(x, '=');
        char name[256];
        if (!eq || (size_t)(eq - x) >= sizeof name) continue;
        snprintf(name, sizeof name, "%.*s", (int)(eq - x), x);
        if (setenv(name, eq + 1, 1) != 0) child_fail(c->report, errno);
    }
    execvp(job->argv[0], job->argv);
    child_fail(c->report, errno);
}

static void close_if(int *fd)
{
    if (*fd >= 0) close(*fd);
    *fd = -1;
}

static int set_nonblock(int fd) { return fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

/* Starts PE `rank`. Returns 0, or the exit status after printing why. */
static int spawn_one(struct oshrun_job *job, struct oshrun_pe *pe)
{
    int sv[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1}, rep[2] = {-1, -1};
    int child_errno = 0;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0 || pipe2(rep, O_CLOEXEC) < 0 ||
        pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0) {
        fprintf(stderr, "oshrun: cannot set up PE %d: %s\n", pe->rank, strerror(errno));
        goto fail;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "oshrun: cannot start PE %d: fork: %s\n", pe->rank, strerror(errno));
        goto fail;
    }
    if (pid == 0) {
        struct child_fds c = {.sock = sv[1], .out = out[1], .err = err[1], .report = rep[1]};
        child_exec(job, pe->rank, &c);
    }
    setpgid(pid, pid); /* also in the child: whichever runs first wins the race with kill(-pid) */
    pe->pid = pid;
    pe->running = 1;
    job->running++;
    close_if(&sv[1]);
    close_if(&out[1]);
    close_if(&err[1]);
    close_if(&rep[1]);
    ssize_t n;
    do n = read(rep[0], &child_errno, sizeof child_errno);
    while (n < 0 && errno == EINTR);
    close_if(&rep[0]);
    if (n > 0 && child_errno < 0) {
        fprintf(stderr, "oshrun: cannot bind PE %d to its core (--bind-to): %s\n", pe->rank, strerror(-child_errno));
        close_if(&sv[0]);
        close_if(&out[0]);
        close_if(&err[0]);
        return 1;
    }
    if (n > 0) {
        fprintf(stderr, "oshrun: cannot execute '%s': %s\n", job->argv[0], strerror(child_errno));
        close_if(&sv[0]);
        close_if(&out[0]);
        close_if(&err[0]);
        return child_errno == ENOENT ? 127 : 126;
    }
    pe->sock = sv[0];
    set_nonblock(pe->sock);
    set_nonblock(out[0]);
    set_nonblock(err[0]);
    oshrun_stream_init(&pe->out, out[0], STDOUT_FILENO, job->opt->tag_output);
    oshrun_stream_init(&pe->err, err[0], STDERR_FILENO, job->opt->tag_output);
    return 0;
fail:
    close_if(&sv[0]);
    close_if(&sv[1]);
    close_if(&out[0]);
    close_if(&out[1]);
    close_if(&err[0]);
    close_if(&err[1]);
    close_if(&rep[0]);
    close_if(&rep[1]);
    return 1;
}

int oshrun_spawn(struct oshrun_job *job)
{
    for (int r = 0; r < job->npes; r++) {
        int st = spawn_one(job, &job->pes[r]);
        if (st != 0) {
            /* Message already printed; stop whatever started, silently. */
            job->failed = 1;
            job->status = st;
            oshrun_signal_all(job, SIGKILL);
            if (job->net) { /* the other nodes must stop too, and know why */
                char what[128];
                snprintf(what, sizeof what, "node %d could not start its PEs (status %d)", job->opt->node_rank, st);
                oshrun_net_fault(job, st, what);
            }
            return st;
        }
    }
    return 0;
}
