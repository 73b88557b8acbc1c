/* where.h: hang reports (where.c, where_report.c). oshrun asks every PE of
 * this host what it is blocked in (observe/where_wire.h) on SIGUSR1, on
 * --timeout, and for `oshrun --where [PID]` run beside the job, which
 * connects to the abstract Unix socket "shoal-oshrun-PID" (same user
 * only). The answers come back within a second; then one line per PE and
 * a verdict, when one is evident, go to oshrun's stderr or to the client.
 * Across hosts each host's oshrun reports its own PEs. */
#ifndef OSHRUN_WHERE_H
#define OSHRUN_WHERE_H

#include <stdio.h>

#include "observe/where_wire.h"

struct oshrun_job;
struct pollfd;

#define OSHRUN_WHERE_MAX_CLIENTS 8

struct oshrun_where {
    int rd;       /* the datagram socket every PE answers on */
    int listener; /* abstract socket for `oshrun --where PID`; -1: none */
    int clients[OSHRUN_WHERE_MAX_CLIENTS]; /* waiting for the next report */
    int nclients;
    int pending;       /* a request is out */
    int for_stderr;    /* print it on oshrun's stderr too (SIGUSR1, timeout) */
    int then_timeout;  /* fail the job with the timeout once printed */
    double deadline;   /* give up waiting for answers */
    int relay;         /* node k: send the lines to node 0 when complete */
    int remote_expect; /* node 0: nodes whose lines are awaited */
    int *remote_got;   /* node 0, per node: its lines arrived */
    char *remote;      /* node 0: their lines, as they came */
    size_t remote_len;
    int *ready;        /* per local PE: it can answer */
    struct shoal_where_msg *answers; /* per local PE */
    int *answered;
};

/* Sets up the sockets (0, or -1 with a line printed). */
int oshrun_where_open(struct oshrun_job *job);
void oshrun_where_close(struct oshrun_job *job);
/* In the PE's child before exec: names the answer socket. */
void oshrun_where_child(const struct oshrun_job *job);
/* Asks the PEs; the report goes to stderr when to_stderr. */
void oshrun_where_request(struct oshrun_job *job, int to_stderr, int then_timeout);
int oshrun_where_pollfds(struct oshrun_job *job, struct pollfd *pfd);
void oshrun_where_serve(struct oshrun_job *job, const struct pollfd *pfd);
/* Prints the report once complete or due; -1 when none is pending, else
 * the time it is due. */
double oshrun_where_tick(struct oshrun_job *job, double now);

/* Across hosts: node 0 asked this node (WHERE), and node k's lines came
 * back (WHERE_TEXT). */
void oshrun_where_relay_request(struct oshrun_job *job);
void oshrun_where_remote_text(struct oshrun_job *job, int node, const unsigned char *text, size_t len);

/* where_report.c: writes the report: a header, one line per PE of this
 * host, the other hosts' lines (node 0), then the verdict; lines_only:
 * the PE lines alone (for node 0). */
void oshrun_where_print(const struct oshrun_job *job, FILE *f, int lines_only);

/* `oshrun --where [PID]`: prints the report of a running job. */
int oshrun_where_client(const char *pid_arg);

#endif
