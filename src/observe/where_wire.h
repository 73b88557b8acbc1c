/* where_wire.h: the hang report's message, shared by the library (which
 * writes it from a signal handler) and oshrun (which reads and prints it).
 *
 * oshrun listens on an abstract Unix datagram socket whose name it gives
 * every PE (SHOAL_WHERE_SOCKET, without the leading NUL). At start-up a PE
 * that can answer connects to it (its own descriptor: the PE inherits
 * nothing from oshrun) and sends a message with no threads (state
 * SHOAL_WHERE_READY); from then on oshrun may send it SHOAL_WHERE_SIGNAL,
 * and the PE's handler answers with one message in one send(2). oshrun
 * takes the sender's pid from the kernel (SCM_CREDENTIALS), so a PE
 * cannot answer for another. Both sides are built from the same tree: no
 * versioning. */
#ifndef SHOAL_OBSERVE_WHERE_WIRE_H
#define SHOAL_OBSERVE_WHERE_WIRE_H

#include <signal.h>
#include <stdint.h>

#define SHOAL_WHERE_MAGIC 0x53485752u /* "SHWR" */
#define SHOAL_WHERE_SIGNAL (SIGRTMIN + 5)
#define SHOAL_WHERE_MAX_THREADS 12
#define SHOAL_WHERE_MAX_LOCKS 4
#define SHOAL_WHERE_CALL_LEN 40

/* What a thread is blocked in. */
enum shoal_where_kind {
    SHOAL_WHERE_NONE,     /* in no blocking Shoal call */
    SHOAL_WHERE_WAIT,     /* a point-to-point wait (addr, cmp, expected) */
    SHOAL_WHERE_COLL,     /* a collective or barrier (team, seq) */
    SHOAL_WHERE_LOCK,     /* acquiring a lock (addr) */
    SHOAL_WHERE_QUIET,    /* completing puts */
    SHOAL_WHERE_FINALIZE, /* shmem_finalize, waiting for the other PEs */
};

/* Which team a collective runs on. */
enum shoal_where_team { SHOAL_WHERE_WORLD, SHOAL_WHERE_SHARED, SHOAL_WHERE_TEAM, SHOAL_WHERE_ACTIVE_SET };

/* Segments an address may lie in; SHOAL_WHERE_SEG_NONE: not symmetric. */
enum { SHOAL_WHERE_SEG_HEAP = 0, SHOAL_WHERE_SEG_STATIC = 1, SHOAL_WHERE_SEG_NONE = -1 };

/* A PE's state, in the report header. */
enum shoal_where_state { SHOAL_WHERE_READY, SHOAL_WHERE_RUNNING, SHOAL_WHERE_FINALIZED, SHOAL_WHERE_STARTING };

struct shoal_where_thread {
    char call[SHOAL_WHERE_CALL_LEN]; /* "shmem_long_wait_until"; the last call when kind is NONE */
    uint32_t kind;                   /* enum shoal_where_kind */
    int32_t tid;
    int32_t main_thread;             /* the PE's initial thread */
    int32_t changing;                /* the record was being rewritten while read */
    /* collective */
    uint32_t team;                   /* enum shoal_where_team */
    int32_t team_slot, team_start, team_stride, team_size;
    int32_t root;                    /* -1: none */
    uint64_t seq;                    /* the team's collective number, from 1 */
    uint64_t bytes;                  /* size argument (bytes), or 0 */
    /* wait and lock */
    int32_t seg;                     /* SHOAL_WHERE_SEG_* */
    uint32_t size;                   /* of the compared scalar */
    int32_t is_signed, cmp;          /* SHMEM_CMP_* */
    uint64_t offset;                 /* in seg; the address itself when seg is NONE */
    uint64_t exe_off;                /* address less the program's load bias (symbol lookup) */
    uint64_t nelems;                 /* of a wait set (0: a single variable) */
    uint64_t expected, current;
    int32_t peer;                    /* -1: none */
    uint32_t last_kind;              /* of the last call, when kind is NONE */
    uint64_t blocked_ns;             /* time in the call (or since it returned, when kind is NONE) */
};

struct shoal_where_msg {
    uint32_t magic;
    int32_t pe;
    int32_t pid;
    uint32_t state;                  /* enum shoal_where_state */
    uint32_t nthreads;
    uint32_t nlocks;
    int32_t lock_seg[SHOAL_WHERE_MAX_LOCKS]; /* locks this PE holds */
    uint64_t lock_off[SHOAL_WHERE_MAX_LOCKS];
    uint64_t lock_exe_off[SHOAL_WHERE_MAX_LOCKS];
    struct shoal_where_thread threads[SHOAL_WHERE_MAX_THREADS];
};
_Static_assert(sizeof(struct shoal_where_msg) <= 4096, "a hang report message must stay small");

/* Bytes of a message with n threads. */
#define SHOAL_WHERE_MSG_SIZE(n) \
    (sizeof(struct shoal_where_msg) - (SHOAL_WHERE_MAX_THREADS - (n)) * sizeof(struct shoal_where_thread))

#endif
