/* runtime.h: the one runtime root. Everything a PE knows about the job lives
 * in shoal_rt; it is written only by init/finalize (and the allocator under
 * heap_lock), so the communication fast path reads it without locks.
 *
 * Heap layout: the allocator manages [0, heap size - SHOAL_INTERNAL_AREA);
 * the last SHOAL_INTERNAL_AREA bytes are the runtime's own symmetric area
 * (barrier flags and the like). The user part starts at the heap base, which
 * the segment aligns generously, so shmem_align's alignments are addresses
 * on every PE. */
#ifndef SHOAL_CORE_RUNTIME_H
#define SHOAL_CORE_RUNTIME_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "boot/boot.h"
#include "heap/alloc.h"
#include "heap/segment.h"
#include "transport/transport.h"
#include "util/config.h"

#define SHOAL_INTERNAL_AREA (8 * 1024 * 1024)

struct shoal_runtime {
    int initialized;  /* 1 from the end of init to the start of finalize */
    /* Initialized and nothing observed (SHMEM_TRACE, SHMEM_STATS): the hot
     * calls' only test on entry (api/check.h, SHOAL_HOT_ENTER); 0 sends
     * them to the slow branch, which tells the two apart. */
    int plain_calls;
    int finalized;
    int startup_reporter; /* this PE says why start-up failed (else another does) */
    int thread_level;
    int my_pe;
    int n_pes;
    struct shoal_config config;
    shoal_boot_t *boot;
    shoal_segment_t seg[SHOAL_SEG_COUNT];  /* this PE's heap and static data */
    uintptr_t seg_start[SHOAL_SEG_COUNT];   /* copies of seg[].base for translation */
    size_t seg_size[SHOAL_SEG_COUNT];
    struct shoal_peer *peers;               /* n_pes entries */
    int my_node, n_nodes;                   /* hosts, numbered by their lowest PE */
    /* The host name of the lowest PE on another host ("" on one host):
     * where data endpoints bind by the route to it (boot/bind_addr.h). */
    char peer_host[SHOAL_NODE_KEY_MAX];
    int node_pes;                           /* PEs on this host */
    /* PEs sharing this machine's cores: hosts made of namespaces on one
     * machine count together, so waits know when to stop spinning. */
    int machine_pes;
    int machine_rank;       /* this PE among them, by PE number */
    uint64_t machine_board; /* the name of their board (core/machine.h); 0: none */
    /* The table for peers that are not direct: ofi when a job spans hosts
     * (or SHMEM_TRANSPORT=ofi), else shm. */
    const struct shoal_transport_ops *transport;
    int mapped_shm;                         /* shm mapped this host's peers */
    /* The transport is a fabric: waits drive its progress. */
    int fabric;
    /* Every atomic, this PE's own included, goes through the transport, so
     * atomics stay atomic with respect to the fabric's (software) ones. */
    int amo_fabric;
    struct shoal_transport_setup transport_setup;
    shoal_alloc_t *alloc;                   /* manages heap [SHOAL_INTERNAL_AREA, size) */
    pthread_mutex_t heap_lock;
    size_t internal_offset;                 /* of the internal area in the heap */
    char *internal;                         /* this PE's internal area */
};

extern struct shoal_runtime shoal_rt;

/* Brings up the runtime: config, bootstrap, segments, transports, first
 * barrier. On failure writes one line to err and returns the status; a bad
 * setting is agreed on first, and only startup_reporter's PE should say it. */
shoal_status_t shoal_runtime_init(int requested_thread_level, char *err, size_t errlen);
/* For a PE that leaves the start-up failure to the reporter: waits (some
 * seconds at most) for the reporter's abort to end the job. */
void shoal_runtime_await_end(void);
/* Quiets, barriers and tears down; the static segment stays mapped. */
void shoal_runtime_finalize(void);
/* Ends the whole job: tells the launcher, then exits. */
void shoal_runtime_abort(int status, const char *reason) __attribute__((noreturn));

#endif
