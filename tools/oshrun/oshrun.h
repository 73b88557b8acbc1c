/* oshrun.h: the launcher's job state, shared by its files:
 *   main.c    entry point, --help, --version
 *   args.c    command line (pure)
 *   spawn.c   fork/exec of the PEs
 *   job.c     event loop: signals, exits, timeouts, stopping the job
 *   serve.c   the bootstrap protocol (allgather, finalize, abort)
 *   output.c  PE output, forwarded a line at a time (--tag-output prefixes)
 *   guard.c   the guardian: sweeps the PEs' groups however oshrun ends
 *   limits.c  the open-file limit, named with its numbers
 *   bind.c    --bind-to: which cores the PEs are bound to
 *   observe.c SHMEM_TRACE, SHMEM_STATS: merges the PEs' parts at the end
 *   where.c   hang reports: asks the PEs where they are (where.h)
 *   net.h     across hosts: rendezvous.c, accept.c, nodes.c, link.c, tls.c
 *
 * Invariants: every descriptor the launcher holds is close-on-exec; a PE
 * is its own process group (pgid == pid) and is always signalled by group;
 * job->status is set once, by the first failure (oshrun_fail). */
#ifndef OSHRUN_OSHRUN_H
#define OSHRUN_OSHRUN_H

#include <poll.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "args.h"
#include "boot/wire.h"

#define OSHRUN_STREAM_EPIPE 1  /* the reader of oshrun's output is gone */
#define OSHRUN_STREAM_FAILED 2 /* another write error */

struct oshrun_stream {
    int fd;     /* read end of the PE's stdout/stderr pipe, -1 when closed */
    int target; /* launcher's STDOUT_FILENO or STDERR_FILENO */
    int tag;    /* prefix lines with "[PE n] " (--tag-output) */
    int broken; /* 0, or OSHRUN_STREAM_*: output is read and dropped */
    char *buf;  /* read from the PE, not yet a whole line */
    size_t len, cap;
    char *obuf; /* outbox: whole lines (prefixed) waiting for the target */
    size_t olen, ooff, ocap;
};

struct oshrun_net;

struct oshrun_pe {
    int rank; /* in the whole job */
    pid_t pid;
    int running;   /* not yet reaped */
    int sock;      /* launcher end of the private socket, -1 when closed */
    int hello;     /* the PE is a SHMEM program (sent HELLO) */
    int finalized; /* sent FINALIZE */
    struct shoal_wire_reader reader;
    struct oshrun_stream out, err;
    int contributed; /* its part of the current allgather is in `gather` */
    struct shoal_wire_msg gather;
};

struct oshrun_job {
    const struct oshrun_options *opt;
    char *const *argv; /* program and its arguments, NULL-terminated */
    int npes;          /* PEs on this host; pes[i] has rank rank_base + i */
    int size;          /* PEs in the whole job */
    int rank_base;
    struct oshrun_pe *pes;
    struct oshrun_net *net; /* NULL on one host */
    int net_pending;        /* this host's part of an allgather went to node 0 */
    int running;
    pid_t self;
    int sigfd;
    int guard; /* pipe to the guardian (guard.c), -1 when none */
    struct oshrun_where *where; /* hang reports (where.h); NULL when none */

    int failed; /* the job is being stopped */
    int status; /* exit status of oshrun */
    double kill_at;   /* when SIGKILL follows SIGTERM; 0 when not pending */
    double deadline;  /* --timeout; 0 when none */
    int term_signals; /* terminating signals received from outside */
    int die_by;       /* signal oshrun ends by (SIGINT, SIGPIPE, ...): 0 for an exit */
    cpu_set_t *cores; /* --bind-to: local PE i runs on cores[i]; NULL: not bound */
    int ncores;

    /* current allgather */
    int ngathered;
    int gather_first; /* rank of the first contributor */
    uint32_t gather_kind;
    size_t gather_len;
    int gather_nfds;
};

double oshrun_now(void);

/* "PE 3 (pid 123)" on one host, "PE 3 on node 1" across hosts (with_pid
 * 0: "PE 3"). */
void oshrun_pe_name(const struct oshrun_job *job, const struct oshrun_pe *pe, int with_pid, char *buf, size_t len);

/* Records the first failure: prints "oshrun: <what>; stopping ..." and
 * starts stopping the PEs still running (SIGTERM, SIGKILL 0.5 s later).
 * culprit is the PE the failure is about (-1: none), left out of the count. */
void oshrun_fail(struct oshrun_job *job, int status, int culprit, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void oshrun_signal_all(struct oshrun_job *job, int sig);

/* Starts all PEs. Returns 0, or the status to exit with (message printed,
 * PEs already started are being stopped). */
int oshrun_spawn(struct oshrun_job *job);

/* Reads and handles what the PE sent; closes pe->sock at end of stream. */
void oshrun_serve(struct oshrun_job *job, struct oshrun_pe *pe);
/* Fails the job when a pending allgather can no longer complete. */
void oshrun_check_stuck(struct oshrun_job *job);
void oshrun_gather_release(struct oshrun_job *job);
/* Sends every PE of this host the allgather result (blobs of all PEs). */
void oshrun_answer(struct oshrun_job *job, const unsigned char *blobs, size_t total);

/* nodes.c: the job across hosts. open: meets the other nodes (0, or the
 * status to exit with, message printed). The others work once it did. */
int oshrun_net_open(struct oshrun_job *job);
int oshrun_net_pollfds(struct oshrun_job *job, struct pollfd *pfd);
void oshrun_net_serve(struct oshrun_job *job, const struct pollfd *pfd);
/* 1 when a link holds a whole frame already read off its socket. */
int oshrun_net_buffered(const struct oshrun_job *job);
/* Tells the other nodes (through node 0) about a failure here. */
void oshrun_net_fault(struct oshrun_job *job, int status, const char *what);
/* This host's block of an allgather (blob kinds; descriptors stay here). */
void oshrun_net_gather(struct oshrun_job *job, uint32_t kind, size_t len, const unsigned char *blobs);
/* Heartbeats: sends those due and ends the job on a silent link; next_timer
 * says when to call tick again (-1: never). */
void oshrun_net_tick(struct oshrun_job *job, double now);
double oshrun_net_next_timer(const struct oshrun_job *job);
/* Called once this host's PEs are gone: 1 when oshrun may exit. */
int oshrun_net_finished(struct oshrun_job *job);
void oshrun_net_close(struct oshrun_job *job);

void oshrun_stream_init(struct oshrun_stream *s, int fd, int target, int tag);
/* Reads what is available unless output is pending, and queues complete
 * lines; writes them as far as the target takes without blocking (sets
 * s->broken when writing fails). */
void oshrun_stream_read(struct oshrun_stream *s, int rank);
/* 1 while queued output waits for room in the target. */
int oshrun_stream_pending(const struct oshrun_stream *s);
/* Writes queued output: as far as the target takes now (block 0), or all of it. */
void oshrun_stream_flush(struct oshrun_stream *s, int block);
/* Closes the pipe and writes out everything, a partial last line too:
 * however long the reader takes (until 0), or until time `until` (then
 * the rest is dropped). */
void oshrun_stream_close(struct oshrun_stream *s, int rank, double until);

/* guard.c: the guardian process that SIGKILLs the PEs' process groups when
 * oshrun ends, however it ends. start returns the pipe to it (-1: failed,
 * message printed); tell lists (add 1) or unlists (add 0) a group. */
int oshrun_guard_start(void);
void oshrun_guard_tell(int fd, pid_t pgid, int add);

/* limits.c: 0 when the open-file limit leaves room for npes PEs and nnodes
 * links; otherwise prints one line with the numbers and returns 1. */
int oshrun_check_fd_limit(int npes, int nnodes);
/* Holds one descriptor back so that the two checks below can still list
 * /proc/.../fd when oshrun is at its limit. */
void oshrun_fd_reserve(void);
/* Called when a PE's message could not be read whole: 1 (and a line in
 * what) when the open-file limit is the likely cause. */
int oshrun_fd_limit_hit(char *what, size_t len);
/* 1 (and why in what) when PE process pid cannot take incoming more
 * descriptors under its open-file limit. */
int oshrun_pe_fd_room(pid_t pid, size_t incoming, char *what, size_t len);

/* bind.c: plans the binding (0, or 1 with a line printed); bind_pe runs
 * in local PE `local`'s child before exec (0 or an errno). */
int oshrun_bind_plan(struct oshrun_job *job);
int oshrun_bind_pe(const struct oshrun_job *job, int local);

/* observe.c: prepare (before spawning) makes the directory for the PEs'
 * trace and statistics parts when SHMEM_TRACE or SHMEM_STATS is set (0, or
 * 1 with a line printed); finish merges the parts and removes it. */
int oshrun_observe_prepare(struct oshrun_job *job);
void oshrun_observe_finish(struct oshrun_job *job);

/* Returns the exit status; *die_by is a signal oshrun should end by
 * instead (raised by main once everything is cleaned up), or 0. */
int oshrun_run(const struct oshrun_options *opt, char *const argv[], int *die_by);

#endif
