/* job.c: oshrun's event loop. One poll() over a signalfd (SIGCHLD and the
 * forwarded signals), each PE's bootstrap socket and, with --tag-output,
 * its output pipes. The first failure decides the exit status and stops
 * the other PEs: SIGTERM to each process group, SIGKILL half a second
 * later. After the last PE is reaped its group is killed too, so
 * grandchildren do not outlive the job; should oshrun itself be killed,
 * the guardian (guard.c) does it. Across hosts, heartbeats run from the
 * timers here (nodes.c). */
#include "net.h"
#include "oshrun.h"
#include "where.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define KILL_GRACE_S 0.5
#define OUTPUT_DRAIN_S 1.0

static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

double oshrun_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGHUP: return "SIGHUP";
    case SIGINT: return "SIGINT";
    case SIGQUIT: return "SIGQUIT";
    case SIGILL: return "SIGILL";
    case SIGTRAP: return "SIGTRAP";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGKILL: return "SIGKILL";
    case SIGUSR1: return "SIGUSR1";
    case SIGSEGV: return "SIGSEGV";
    case SIGUSR2: return "SIGUSR2";
    case SIGPIPE: return "SIGPIPE";
    case SIGALRM: return "SIGALRM";
    case SIGTERM: return "SIGTERM";
    case SIGXCPU: return "SIGXCPU";
    case SIGXFSZ: return "SIGXFSZ";
    case SIGSYS: return "SIGSYS";
    }
    return "signal";
}

void oshrun_signal_all(struct oshrun_job *job, int sig)
{
    for (int r = 0; r < job->npes; r++) {
        pid_t pid = job->pes[r].pid;
        if (!job->pes[r].running) continue;
        /* A PE that left its group (setsid, job control) is signalled itself too. */
        if (kill(-pid, sig) != 0 || getpgid(pid) != pid) kill(pid, sig);
    }
}

/* Marks the job failed with status and prints "oshrun: <what>..." unless
 * quiet; the caller stops the PEs. */
static void record_failure(struct oshrun_job *job, int status, int culprit, const char *what, int quiet)
{
    int others = 0;
    job->failed = 1;
    job->status = status;
    for (int r = 0; r < job->npes; r++)
        if (job->pes[r].running && job->pes[r].rank != culprit) others++;
    if (quiet) return;
    if (job->net)
        fprintf(stderr, "oshrun: %s; stopping the job\n", what);
    else if (others == 0)
        fprintf(stderr, "oshrun: %s\n", what);
    else
        fprintf(stderr, "oshrun: %s; stopping %s%d PE%s\n", what, culprit >= 0 ? "the other " : "", others,
                others == 1 ? "" : "s");
    fflush(stderr);
}

void oshrun_fail(struct oshrun_job *job, int status, int culprit, const char *fmt, ...)
{
    char what[1024];
    va_list ap;
    if (job->failed) return;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    record_failure(job, status, culprit, what, 0);
    oshrun_signal_all(job, SIGTERM);
    job->kill_at = oshrun_now() + KILL_GRACE_S;
    if (job->net) oshrun_net_fault(job, status, what);
}

/* SIGINT, SIGTERM, SIGHUP or SIGQUIT from outside (Ctrl-C): the job was
 * stopped, no PE failed. The PEs get the signal itself (a program may
 * handle it); a second one is SIGKILL. oshrun then ends by the same
 * signal, as a tool interrupted should (SIGQUIT: by exit status, without
 * a core dump). */
static void stopped_by(struct oshrun_job *job, int sig)
{
    char what[128];
    if (job->failed) return;
    snprintf(what, sizeof what, "job stopped by %s", signal_name(sig));
    record_failure(job, 128 + sig, -1, what, 0);
    job->die_by = sig == SIGQUIT ? 0 : sig;
    if (job->net) oshrun_net_fault(job, 128 + sig, what);
}

/* The reader of our output went away (`oshrun ... | head`): stop the job
 * quietly and end by SIGPIPE, as other tools in a pipeline do. */
static void output_gone(struct oshrun_job *job, const struct oshrun_stream *s)
{
    if (job->failed || s->broken != OSHRUN_STREAM_EPIPE) return;
    record_failure(job, 128 + SIGPIPE, -1, "", 1);
    job->die_by = SIGPIPE;
    oshrun_signal_all(job, SIGTERM);
    job->kill_at = oshrun_now() + KILL_GRACE_S;
    if (job->net) {
        char what[128];
        snprintf(what, sizeof what, "the output of node %d was closed (SIGPIPE)", job->opt->node_rank);
        oshrun_net_fault(job, 128 + SIGPIPE, what);
    }
}

void oshrun_pe_name(const struct oshrun_job *job, const struct oshrun_pe *pe, int with_pid, char *buf, size_t len)
{
    if (job->net)
        snprintf(buf, len, "PE %d on node %d", pe->rank, job->opt->node_rank);
    else if (with_pid)
        snprintf(buf, len, "PE %d (pid %d)", pe->rank, (int)pe->pid);
    else
        snprintf(buf, len, "PE %d", pe->rank);
}

static struct oshrun_pe *find_pe(struct oshrun_job *job, pid_t pid)
{
    for (int r = 0; r < job->npes; r++)
        if (job->pes[r].running && job->pes[r].pid == pid) return &job->pes[r];
    return NULL;
}

static void on_exit_status(struct oshrun_job *job, struct oshrun_pe *pe, int ws)
{
    /* Messages sent before the exit (ABORT, FINALIZE) are judged first. */
    oshrun_serve(job, pe);
    pe->running = 0;
    job->running--;
    kill(-pe->pid, SIGKILL); /* whatever the PE left behind in its group */
    oshrun_guard_tell(job->guard, pe->pid, 0); /* swept: the guardian must not kill a reused group id */
    if (job->failed) return;
    char who[64];
    oshrun_pe_name(job, pe, 1, who, sizeof who);
    if (WIFSIGNALED(ws)) {
        int sig = WTERMSIG(ws);
        oshrun_fail(job, 128 + sig, pe->rank, "%s killed by signal %s (%d)", who, signal_name(sig), sig);
    } else if (WEXITSTATUS(ws) != 0) {
        oshrun_fail(job, WEXITSTATUS(ws), pe->rank, "%s exited with status %d", who, WEXITSTATUS(ws));
    } else if (pe->hello && !pe->finalized) {
        oshrun_fail(job, 1, pe->rank, "%s exited without calling shmem_finalize", who);
    } else {
        oshrun_check_stuck(job);
    }
}

static void reap(struct oshrun_job *job)
{
    for (;;) {
        int ws;
        pid_t pid = waitpid(-1, &ws, WNOHANG);
        if (pid <= 0) return;
        struct oshrun_pe *pe = find_pe(job, pid);
        if (pe) on_exit_status(job, pe, ws);
    }
}

static void on_signals(struct oshrun_job *job)
{
    struct signalfd_siginfo si;
    while (read(job->sigfd, &si, sizeof si) == (ssize_t)sizeof si) {
        int sig = (int)si.ssi_signo;
        if (sig == SIGCHLD) {
            reap(job);
            continue;
        }
        if (sig == SIGUSR1 && job->where) {
            /* A hang report; PEs that cannot give one get the signal as before. */
            oshrun_where_request(job, 1, 0);
            for (int r = 0; r < job->npes; r++)
                if (job->pes[r].running && !job->where->ready[r]) kill(job->pes[r].pid, sig);
            continue;
        }
        if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT) {
            /* A second request to stop is not asked politely. */
            if (++job->term_signals > 1)
                sig = SIGKILL;
            else
                stopped_by(job, sig);
        }
        oshrun_signal_all(job, sig);
    }
    reap(job); /* SIGCHLD coalesces; never miss an exit */
}

static int output_open(const struct oshrun_job *job)
{
    for (int r = 0; r < job->npes; r++) {
        const struct oshrun_pe *pe = &job->pes[r];
        if (pe->out.fd >= 0 || pe->err.fd >= 0 || oshrun_stream_pending(&pe->out) || oshrun_stream_pending(&pe->err))
            return 1;
    }
    return 0;
}

/* Output waiting for room in target (STDOUT_FILENO or STDERR_FILENO). */
static int output_waits(const struct oshrun_job *job, int target)
{
    for (int r = 0; r < job->npes; r++) {
        const struct oshrun_pe *pe = &job->pes[r];
        if ((pe->out.target == target && oshrun_stream_pending(&pe->out)) ||
            (pe->err.target == target && oshrun_stream_pending(&pe->err)))
            return 1;
    }
    return 0;
}

/* target has room: every PE's queued output for it goes on (in turn; a
 * half-written line goes first), then the PE's pipe is read again. */
static void output_resume(struct oshrun_job *job, int target)
{
    for (int r = 0; r < job->npes; r++) {
        struct oshrun_pe *pe = &job->pes[r];
        struct oshrun_stream *ss[2] = {&pe->out, &pe->err};
        for (int k = 0; k < 2; k++) {
            if (ss[k]->target != target || !oshrun_stream_pending(ss[k])) continue;
            oshrun_stream_flush(ss[k], 0);
            if (!oshrun_stream_pending(ss[k]) && ss[k]->fd >= 0) oshrun_stream_read(ss[k], pe->rank);
            output_gone(job, ss[k]);
        }
    }
}

static void on_timers(struct oshrun_job *job, double now)
{
    if (job->deadline && now >= job->deadline && !job->failed) {
        job->deadline = 0;
        /* Where each PE is stuck first; the report ends the job (where.c). */
        if (job->where)
            oshrun_where_request(job, 1, 1);
        else
            oshrun_fail(job, 124, -1, "job timed out after %ld second%s", job->opt->timeout_s,
                        job->opt->timeout_s == 1 ? "" : "s");
    }
    oshrun_where_tick(job, now);
    if (job->kill_at && now >= job->kill_at) {
        job->kill_at = 0;
        oshrun_signal_all(job, SIGKILL);
    }
    if (job->net) oshrun_net_tick(job, now);
}

static int poll_timeout_ms(const struct oshrun_job *job, double now, double drain_until)
{
    double next = -1;
    if (job->deadline) next = job->deadline;
    if (job->kill_at && (next < 0 || job->kill_at < next)) next = job->kill_at;
    if (job->running == 0 && drain_until > 0 && (next < 0 || drain_until < next)) next = drain_until;
    double beat = job->net ? oshrun_net_next_timer(job) : -1;
    if (beat >= 0 && (next < 0 || beat < next)) next = beat;
    double report = job->where && job->where->pending ? job->where->deadline : -1;
    if (report >= 0 && (next < 0 || report < next)) next = report;
    if (next < 0) return -1;
    double ms = (next - now) * 1000.0 + 1.0;
    return ms < 0 ? 0 : ms > 1e6 ? 1000000 : (int)ms;
}

static void loop(struct oshrun_job *job, struct pollfd *pfd)
{
    double drain_until = 0;
    for (;;) {
        double now = oshrun_now();
        on_timers(job, now);
        int drained = 0;
        if (job->running == 0) {
            if (drain_until == 0) drain_until = now + OUTPUT_DRAIN_S;
            drained = !output_open(job) || now >= drain_until;
            /* Across hosts, wait for the other nodes (or their failure) too. */
            if (drained && (!job->net || oshrun_net_finished(job))) return;
        }
        int n = 0;
        pfd[n++] = (struct pollfd){.fd = job->sigfd, .events = POLLIN};
        /* Our stdout and stderr, while output waits for room in them. */
        pfd[n++] = (struct pollfd){.fd = output_waits(job, STDOUT_FILENO) ? STDOUT_FILENO : -1, .events = POLLOUT};
        pfd[n++] = (struct pollfd){.fd = output_waits(job, STDERR_FILENO) ? STDERR_FILENO : -1, .events = POLLOUT};
        for (int r = 0; r < job->npes; r++) {
            struct oshrun_pe *pe = &job->pes[r];
            pfd[n++] = (struct pollfd){.fd = pe->sock, .events = POLLIN};
            /* A PE whose output waits is not read: its pipe fills and it waits too. */
            pfd[n++] = (struct pollfd){.fd = oshrun_stream_pending(&pe->out) ? -1 : pe->out.fd, .events = POLLIN};
            pfd[n++] = (struct pollfd){.fd = oshrun_stream_pending(&pe->err) ? -1 : pe->err.fd, .events = POLLIN};
        }
        int where_at = n;
        n += oshrun_where_pollfds(job, pfd + n);
        int net_at = n;
        if (job->net) n += oshrun_net_pollfds(job, pfd + n);
        /* Frames already read off a socket (with a JOIN, or while sending)
         * would not wake poll: serve them at once. */
        int buffered = job->net && oshrun_net_buffered(job);
        int ready = poll(pfd, (nfds_t)n, buffered ? 0 : poll_timeout_ms(job, now, drained ? 0 : drain_until));
        if (ready < 0 && errno != EINTR) {
            oshrun_fail(job, 1, -1, "poll: %s", strerror(errno));
            oshrun_signal_all(job, SIGKILL);
            return;
        }
        if (ready <= 0 && !buffered) continue;
        if (pfd[1].revents) output_resume(job, STDOUT_FILENO);
        if (pfd[2].revents) output_resume(job, STDERR_FILENO);
        for (int r = 0; r < job->npes; r++) {
            struct oshrun_pe *pe = &job->pes[r];
            struct pollfd *p = &pfd[3 + 3 * r];
            if (p[0].revents && pe->sock >= 0) oshrun_serve(job, pe);
            if (p[1].revents && pe->out.fd >= 0) oshrun_stream_read(&pe->out, pe->rank);
            if (p[2].revents && pe->err.fd >= 0) oshrun_stream_read(&pe->err, pe->rank);
            output_gone(job, &pe->out);
            output_gone(job, &pe->err);
        }
        if (job->net) oshrun_net_serve(job, pfd + net_at);
        if (where_at < net_at) oshrun_where_serve(job, pfd + where_at);
        if (pfd[0].revents) on_signals(job);
    }
}

/* Makes sure 0, 1 and 2 are open so no socket or pipe lands on them. */
static void hold_std_fds(void)
{
    for (int fd = 0; fd < 3; fd++)
        if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY) < 0) return;
}

int oshrun_run(const struct oshrun_options *opt, char *const argv[], int *die_by)
{
    struct oshrun_job job = {.opt = opt, .argv = argv, .npes = opt->npes, .size = opt->npes, .self = getpid(),
                             .sigfd = -1, .guard = -1};
    struct pollfd *pfd = NULL;
    sigset_t mask, old;

    hold_std_fds();
    signal(SIGPIPE, SIG_IGN);
    if (oshrun_check_fd_limit(opt->npes, opt->nnodes) != 0) return 1;
    oshrun_fd_reserve();
    /* First, before any socket exists, so that it holds none of them. */
    if ((job.guard = oshrun_guard_start()) < 0) return 1;
    /* Before the signal mask: Ctrl-C while waiting for the other nodes just ends oshrun. */
    if (opt->nnodes > 0) {
        int st = oshrun_net_open(&job);
        if (st != 0) {
            close(job.guard);
            return st;
        }
    }
    job.pes = calloc((size_t)job.npes, sizeof *job.pes);
    pfd = calloc(3 + 3 * (size_t)job.npes + 2 + (size_t)opt->nnodes + 2 + OSHRUN_MAX_FANOUT, sizeof *pfd);
    if (!job.pes || !pfd) {
        fprintf(stderr, "oshrun: out of memory for %d PEs\n", job.npes);
        free(job.pes);
        free(pfd);
        oshrun_net_close(&job);
        close(job.guard);
        return 1;
    }
    for (int r = 0; r < job.npes; r++) {
        struct oshrun_pe *pe = &job.pes[r];
        pe->rank = job.rank_base + r;
        pe->sock = -1;
        shoal_wire_reader_init(&pe->reader);
        oshrun_stream_init(&pe->out, -1, STDOUT_FILENO, opt->tag_output);
        oshrun_stream_init(&pe->err, -1, STDERR_FILENO, opt->tag_output);
    }
    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++) sigaddset(&mask, forwarded[i]);
    sigprocmask(SIG_BLOCK, &mask, &old);
    job.sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
    if (job.sigfd < 0) {
        fprintf(stderr, "oshrun: signalfd: %s\n", strerror(errno));
        job.status = 1;
        goto out;
    }
    if (oshrun_bind_plan(&job) != 0) {
        job.status = 1;
        goto out;
    }
    if (opt->timeout_s) job.deadline = oshrun_now() + (double)opt->timeout_s;
    if (oshrun_observe_prepare(&job) != 0 || oshrun_where_open(&job) != 0) {
        job.status = 1;
        goto out;
    }
    oshrun_spawn(&job); /* on failure, job.failed is set and started PEs are being killed */
    loop(&job, pfd);
out:;
    /* A job that ended well delivers all its output; a stopped one gives
     * a reader that does not read a little time, not forever. */
    double until = job.failed ? oshrun_now() + OUTPUT_DRAIN_S : 0;
    for (int r = 0; r < job.npes; r++) {
        struct oshrun_pe *pe = &job.pes[r];
        oshrun_stream_close(&pe->out, pe->rank, until);
        oshrun_stream_close(&pe->err, pe->rank, until);
        if (pe->sock >= 0) close(pe->sock);
        shoal_wire_reader_reset(&pe->reader);
    }
    oshrun_observe_finish(&job); /* SHMEM_TRACE, SHMEM_STATS: after the PEs' own output */
    oshrun_gather_release(&job);
    oshrun_where_close(&job);
    oshrun_net_close(&job);
    if (job.sigfd >= 0) close(job.sigfd);
    close(job.guard); /* the guardian sweeps whatever is left and exits */
    sigprocmask(SIG_SETMASK, &old, NULL);
    free(job.pes);
    free(pfd);
    free(job.cores);
    *die_by = job.die_by;
    return job.status;
}
