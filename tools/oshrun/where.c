/* where.c: asking the PEs for a hang report and collecting the answers
 * (where.h); the report itself is written by where_report.c. */
#include "where.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "net.h"
#include "oshrun.h"

#define ANSWER_WAIT_S 1.0
#define REMOTE_EXTRA_S 1.0 /* for the other nodes' answers to travel */
#define NAME_PREFIX "shoal-oshrun-"

/* "shoal-oshrun-PID" (--where clients) or "shoal-oshrun-PID.answers" (PEs),
 * abstract: nothing on disk to leave behind. */
static socklen_t socket_name(struct sockaddr_un *a, long pid, const char *suffix)
{
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    int n = snprintf(a->sun_path + 1, sizeof a->sun_path - 1, NAME_PREFIX "%ld%s", pid, suffix);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

int oshrun_where_open(struct oshrun_job *job)
{
    struct oshrun_where *w = calloc(1, sizeof *w);
    struct sockaddr_un a;
    socklen_t alen = socket_name(&a, (long)getpid(), ".answers");
    const int on = 1, room = 1 << 20;
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (!w || fd < 0 || bind(fd, (struct sockaddr *)&a, alen) < 0 ||
        setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof on) < 0) {
        fprintf(stderr, "oshrun: cannot set up hang reports: %s\n", strerror(errno));
        if (fd >= 0) close(fd);
        free(w);
        return -1;
    }
    /* Room for every PE's answer at once (best effort: else some say nothing). */
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &room, sizeof room);
    w->rd = fd;
    w->ready = calloc((size_t)job->npes, sizeof *w->ready);
    w->answered = calloc((size_t)job->npes, sizeof *w->answered);
    w->answers = calloc((size_t)job->npes, sizeof *w->answers);
    if (!w->ready || !w->answered || !w->answers) {
        fprintf(stderr, "oshrun: out of memory for hang reports of %d PEs\n", job->npes);
        job->where = w;
        oshrun_where_close(job);
        return -1;
    }
    /* The peer's credentials are checked on accept. Without this socket
     * only --where is lost. */
    alen = socket_name(&a, (long)getpid(), "");
    w->listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (w->listener >= 0 && (bind(w->listener, (struct sockaddr *)&a, alen) < 0 || listen(w->listener, 4) < 0)) {
        close(w->listener);
        w->listener = -1;
    }
    job->where = w;
    return 0;
}

void oshrun_where_close(struct oshrun_job *job)
{
    struct oshrun_where *w = job->where;
    if (!w) return;
    close(w->rd);
    if (w->listener >= 0) close(w->listener);
    for (int i = 0; i < w->nclients; i++) close(w->clients[i]);
    free(w->ready);
    free(w->remote_got);
    free(w->remote);
    free(w->answered);
    free(w->answers);
    free(w);
    job->where = NULL;
}

void oshrun_where_child(const struct oshrun_job *job)
{
    char name[64];
    if (!job->where) return;
    snprintf(name, sizeof name, NAME_PREFIX "%ld.answers", (long)job->self);
    setenv("SHOAL_WHERE_SOCKET", name, 1);
}

void oshrun_where_request(struct oshrun_job *job, int to_stderr, int then_timeout)
{
    struct oshrun_where *w = job->where;
    if (!w) return;
    w->for_stderr |= to_stderr;
    w->then_timeout |= then_timeout;
    if (w->pending) return; /* the answers on their way serve this request too */
    int asked = 0;
    for (int r = 0; r < job->npes; r++) {
        w->answered[r] = 0;
        /* Only a PE that said it answers: the signal would kill another. */
        if (job->pes[r].running && w->ready[r]) asked += kill(job->pes[r].pid, SHOAL_WHERE_SIGNAL) == 0;
    }
    /* Programs that do not use Shoal have nothing to say: the timeout
     * ends the job as it always did. */
    w->for_stderr &= asked > 0;
    w->pending = 1;
    w->deadline = oshrun_now() + (asked ? ANSWER_WAIT_S : 0);
    /* Node 0 asks the other nodes too (not at a timeout: every node has
     * one and reports its own). They answer within their own second. */
    struct oshrun_net *net = job->net;
    if (net && net->node_rank == 0 && !then_timeout && !w->relay) {
        if (!w->remote_got) w->remote_got = calloc((size_t)net->nnodes, sizeof *w->remote_got);
        if (!w->remote_got) return;
        memset(w->remote_got, 0, (size_t)net->nnodes * sizeof *w->remote_got);
        w->remote_len = 0;
        w->remote_expect = net->nnodes - 1;
        for (int n = 1; n < net->nnodes; n++) oshrun_net_send(job, &net->links[n], OSHRUN_NET_WHERE, NULL, 0, NULL, 0);
        w->for_stderr |= to_stderr;
        w->deadline = oshrun_now() + ANSWER_WAIT_S + REMOTE_EXTRA_S;
    }
}

void oshrun_where_relay_request(struct oshrun_job *job)
{
    if (!job->where) return;
    job->where->relay = 1;
    oshrun_where_request(job, 0, 0);
}

void oshrun_where_remote_text(struct oshrun_job *job, int node, const unsigned char *text, size_t len)
{
    struct oshrun_where *w = job->where;
    if (!w || !w->remote_got || node <= 0 || node > w->remote_expect || w->remote_got[node]) return;
    char *grown = realloc(w->remote, w->remote_len + len);
    if (!grown) return;
    w->remote = grown;
    /* Printable lines only: it is another host's text. */
    for (size_t k = 0; k < len; k++)
        w->remote[w->remote_len + k] = text[k] == '\n' || (text[k] >= 0x20 && text[k] != 0x7f) ? (char)text[k] : '?';
    w->remote_len += len;
    w->remote_got[node] = 1;
}

int oshrun_where_pollfds(struct oshrun_job *job, struct pollfd *pfd)
{
    struct oshrun_where *w = job->where;
    int n = 0;
    if (!w) return 0;
    pfd[n++] = (struct pollfd){.fd = w->rd, .events = POLLIN};
    pfd[n++] = (struct pollfd){.fd = w->nclients < OSHRUN_WHERE_MAX_CLIENTS ? w->listener : -1, .events = POLLIN};
    return n;
}

/* A message from process sender (as the kernel says). */
static void take(struct oshrun_job *job, const struct shoal_where_msg *m, size_t len, pid_t sender)
{
    struct oshrun_where *w = job->where;
    const int local = m->pe - job->rank_base;
    if (len < SHOAL_WHERE_MSG_SIZE(0) || m->magic != SHOAL_WHERE_MAGIC || m->nthreads > SHOAL_WHERE_MAX_THREADS ||
        len != SHOAL_WHERE_MSG_SIZE(m->nthreads) || local < 0 || local >= job->npes ||
        job->pes[local].pid != sender || m->pid != sender)
        return;
    if (m->state == SHOAL_WHERE_READY) {
        w->ready[local] = 1;
        return;
    }
    memcpy(&w->answers[local], m, SHOAL_WHERE_MSG_SIZE(m->nthreads));
    w->answered[local] = 1;
}

static void read_answers(struct oshrun_job *job)
{
    struct oshrun_where *w = job->where;
    for (;;) {
        struct shoal_where_msg m;
        union {
            char buf[CMSG_SPACE(sizeof(struct ucred))];
            struct cmsghdr align;
        } control;
        struct iovec iov = {.iov_base = &m, .iov_len = sizeof m};
        struct msghdr h = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                           .msg_controllen = sizeof control.buf};
        ssize_t n = recvmsg(w->rd, &h, MSG_DONTWAIT);
        if (n < 0) return;
        pid_t sender = 0;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&h); c; c = CMSG_NXTHDR(&h, c))
            if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
                struct ucred cred;
                memcpy(&cred, CMSG_DATA(c), sizeof cred);
                sender = cred.pid;
            }
        if (!(h.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) take(job, &m, (size_t)n, sender);
    }
}

static void accept_client(struct oshrun_job *job)
{
    struct oshrun_where *w = job->where;
    int c = accept4(w->listener, NULL, NULL, SOCK_CLOEXEC);
    if (c < 0) return;
    struct ucred cred;
    socklen_t len = sizeof cred;
    /* Another user learns nothing of this job. */
    if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.uid != getuid()) {
        close(c);
        return;
    }
    w->clients[w->nclients++] = c;
    oshrun_where_request(job, 0, 0);
}

void oshrun_where_serve(struct oshrun_job *job, const struct pollfd *pfd)
{
    struct oshrun_where *w = job->where;
    if (!w) return;
    if (pfd[0].revents) read_answers(job);
    if (pfd[1].revents) accept_client(job);
}

static int all_answered(const struct oshrun_job *job)
{
    const struct oshrun_where *w = job->where;
    for (int r = 0; r < job->npes; r++)
        if (job->pes[r].running && w->ready[r] && !w->answered[r]) return 0;
    for (int n = 1; n < w->remote_expect + 1; n++)
        if (!w->remote_got[n]) return 0;
    return 1;
}

/* Node k: this host's lines go to node 0. */
static void relay_lines(struct oshrun_job *job)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return;
    oshrun_where_print(job, f, 1);
    fclose(f);
    oshrun_net_send(job, &job->net->links[0], OSHRUN_NET_WHERE_TEXT, text, len, NULL, 0);
    free(text);
}

double oshrun_where_tick(struct oshrun_job *job, double now)
{
    struct oshrun_where *w = job->where;
    if (!w || !w->pending) return -1;
    read_answers(job);
    if (!all_answered(job) && now < w->deadline) return w->deadline;
    w->pending = 0;
    if (w->relay && job->net) relay_lines(job);
    w->relay = 0;
    if (w->for_stderr) {
        fflush(stderr);
        oshrun_where_print(job, stderr, 0);
        fflush(stderr);
    }
    for (int i = 0; i < w->nclients; i++) {
        FILE *f = fdopen(w->clients[i], "w");
        if (!f) {
            close(w->clients[i]);
            continue;
        }
        oshrun_where_print(job, f, 0);
        fclose(f);
    }
    w->nclients = 0;
    w->for_stderr = 0;
    w->remote_expect = 0;
    w->remote_len = 0;
    if (w->then_timeout) {
        w->then_timeout = 0;
        oshrun_fail(job, 124, -1, "job timed out after %ld second%s", job->opt->timeout_s,
                    job->opt->timeout_s == 1 ? "" : "s");
    }
    return -1;
}

/* ---- the client ---- */

/* PIDs of this user's oshrun jobs that answer --where (from /proc/net/unix). */
static int find_jobs(long *pids, int max)
{
    FILE *f = fopen("/proc/net/unix", "r");
    char line[512];
    int n = 0;
    if (!f) return 0;
    while (fgets(line, sizeof line, f)) {
        char *p = strstr(line, " @" NAME_PREFIX);
        if (!p) continue;
        long pid = strtol(p + 2 + strlen(NAME_PREFIX), NULL, 10);
        int seen = 0;
        for (int i = 0; i < n; i++) seen |= pids[i] == pid;
        if (!seen && n < max && pid > 0 && kill((pid_t)pid, 0) == 0) pids[n++] = pid;
    }
    fclose(f);
    return n;
}

int oshrun_where_client(const char *pid_arg)
{
    long pid;
    if (pid_arg) {
        char *end;
        pid = strtol(pid_arg, &end, 10);
        if (*end || pid <= 0) {
            fprintf(stderr, "oshrun: --where: '%s' is not a process id (oshrun --where [PID])\n", pid_arg);
            return 2;
        }
    } else {
        long pids[16];
        int n = find_jobs(pids, 16);
        if (n != 1) {
            if (n == 0) fprintf(stderr, "oshrun: --where: no running oshrun job of yours was found\n");
            else {
                fprintf(stderr, "oshrun: --where: %d oshrun jobs run; name one: oshrun --where PID, PID one of", n);
                for (int i = 0; i < n; i++) fprintf(stderr, " %ld", pids[i]);
                fprintf(stderr, "\n");
            }
            return 1;
        }
        pid = pids[0];
    }
    struct sockaddr_un a;
    socklen_t alen = socket_name(&a, pid, "");
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0 || connect(s, (struct sockaddr *)&a, alen) < 0) {
        fprintf(stderr, "oshrun: --where: no oshrun job with pid %ld answers: %s\n", pid, strerror(errno));
        if (s >= 0) close(s);
        return 1;
    }
    char buf[4096];
    ssize_t n;
    while ((n = read(s, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
        if (n > 0 && fwrite(buf, 1, (size_t)n, stdout) != (size_t)n) break;
    close(s);
    return 0;
}
