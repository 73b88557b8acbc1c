/* transport.h: the transport seam. A transport moves bytes and atomics to
 * peers the direct load/store path cannot reach. The on-host path is
 * inlined ahead of this table (core/route.h); the table is consulted only
 * for peers whose `direct` flag is clear.
 *
 * shm (transport/shm) maps the segments of the peers on this host so they
 * become direct. Between hosts, tls (transport/tls, TLS 1.3 streams) or ofi
 * (transport/ofi, libfabric: RDMA hardware, or encryption turned off)
 * reaches the others; when a job spans hosts that one is the runtime's
 * table, and shm only the mapper. */
#ifndef SHOAL_TRANSPORT_TRANSPORT_H
#define SHOAL_TRANSPORT_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "boot/boot.h"
#include "transport/cpu_atomic.h"
#include "heap/segment.h"
#include "util/status.h"

/* Which symmetric segment an address lies in. */
enum shoal_segment_id { SHOAL_SEG_HEAP = 0, SHOAL_SEG_DATA = 1, SHOAL_SEG_COUNT = 2 };

/* What the runtime knows of each peer. Filled by the transports at start-up. */
struct shoal_peer {
    char *base[SHOAL_SEG_COUNT]; /* where the peer's segments are mapped here (direct peers) */
    int direct;                  /* load/store reachable */
    int node;                    /* index of the peer's host, 0 .. n_nodes-1 */
};

/* What a transport receives at start-up. */
struct shoal_transport_setup {
    shoal_boot_t *boot;
    int my_pe;
    int n_pes;
    int my_node;  /* this PE's host index (peers[pe].node of every PE is filled before init) */
    int n_nodes;
    const char *peer_host; /* a host name of another host, "" on one host (bind_addr.h, rule (d)) */
    int machine_pes; /* PEs sharing this machine's cores (every namespace "host" included) */
    /* The fabric transport must reach every PE, this host's and itself
     * included (SHMEM_TRANSPORT=ofi: every test runs over the fabric). */
    int fabric_all;
    /* SHMEM_TLS_PAIR: -1 auto, 0 off, 1 on (transport/tls/tls_pair.c). */
    int tls_pair;
    const shoal_segment_t *local[SHOAL_SEG_COUNT];
    /* Offset in every PE's heap of an 8-byte word that a transport may
     * write to make its earlier writes to that PE visible (ofi), and that
     * nobody reads; 0: none (the transport then needs none). */
    size_t flush_word;
    struct shoal_peer *peers; /* n_pes entries */
    /* Ends the whole job with one line naming what failed: a transport
     * calls it when an operation cannot complete (peer gone, remote
     * refusal), instead of warning forever. Set by the runtime. */
    void (*fatal)(const char *reason) __attribute__((noreturn));
    /* The same for a failure a peer's end explains (its stream ended or
     * broke, its completions failed): that peer's own failure, which its
     * launcher sees at once, is what the job should report, so this line
     * is said only if the job has not ended within a short grace. */
    void (*peer_lost)(const char *reason) __attribute__((noreturn));
    /* Where this PE accepts its peers' operations ("tls 10.0.0.1:41234 on
     * veth0 (...)"), filled by the transport's init for SHMEM_INFO. */
    char listen[200];
    /* Filled by the transport's init: nonzero where the target applies
     * peers' atomics with the CPU's atomic instructions on its own memory
     * (tls; ofi_rxm's software atomics), so they are atomic with respect to
     * CPU atomics there and on-host atomics may stay direct. */
    int atomics_by_cpu;
};

/* A transport context: independent ordering and completion (one fabric
 * endpoint and its counters). NULL names the transport's default context. */
typedef struct shoal_tctx shoal_tctx_t;

/* Rules every transport keeps:
 * - put returns when src may be reused; the data are delivered (visible at
 *   the target) by the next quiet on the same context.
 * - get and every fetching amo (fetched != NULL) return complete.
 * - a non-fetching amo (fetched == NULL) is complete by the next quiet.
 * - fence orders this context's earlier puts and amos to each PE before its
 *   later ones; quiet completes them all. Both also order this PE's direct
 *   (load/store) accesses, as a seq_cst CPU fence does.
 * - progress performs work for incoming operations a provider with manual
 *   progress needs the target to drive; waits call it while they poll. */
struct shoal_transport_ops {
    const char *name;
    /* Reaches the peers it can; marks them in setup->peers. Collective. */
    shoal_status_t (*init)(struct shoal_transport_setup *setup);
    /* Creates or destroys a context (shmem_ctx_create/destroy). */
    shoal_status_t (*ctx_create)(shoal_tctx_t **out);
    void (*ctx_destroy)(shoal_tctx_t *ctx);
    /* Byte transfers to/from a peer segment offset, for non-direct peers. */
    shoal_status_t (*put)(shoal_tctx_t *ctx, int pe, enum shoal_segment_id seg, size_t offset, const void *src,
                          size_t len);
    shoal_status_t (*get)(shoal_tctx_t *ctx, int pe, enum shoal_segment_id seg, size_t offset, void *dst,
                          size_t len);
    /* Like get, but dst is only guaranteed filled at the next quiet. */
    shoal_status_t (*get_nbi)(shoal_tctx_t *ctx, int pe, enum shoal_segment_id seg, size_t offset, void *dst,
                              size_t len);
    /* One atomic on a 4- or 8-byte element; *fetched gets the old value. */
    shoal_status_t (*amo)(shoal_tctx_t *ctx, int pe, enum shoal_segment_id seg, size_t offset, size_t elem,
                          enum shoal_amo_op op, uint64_t operand, uint64_t cond, uint64_t *fetched);
    /* A non-fetching 64-bit SET or ADD that only its target waits for (a
     * barrier round, a collective's flag): ordered after this PE's earlier
     * puts and amos on the default context like them, but no quiet waits
     * for its completion, since the target's own wait sees it arrive. NULL
     * where the transport has nothing to save: callers use amo. */
    shoal_status_t (*signal)(int pe, enum shoal_segment_id seg, size_t offset, enum shoal_amo_op op,
                             uint64_t operand);
    /* A put of len bytes, then a SET or ADD of the word at (sig_seg,
     * sig_offset), in one message. With counted, on ctx and completed by
     * quiet like a put (shmem_put_signal); without, on the default context
     * and uncounted like signal (a collective's data and its flag). NULL:
     * callers use put, then signal or amo. */
    shoal_status_t (*put_signal)(shoal_tctx_t *ctx, int counted, int pe, enum shoal_segment_id seg, size_t offset,
                                 const void *src, size_t len, enum shoal_segment_id sig_seg, size_t sig_offset,
                                 enum shoal_amo_op op, uint64_t operand);
    /* Like put_signal uncounted with SHOAL_AMO_SET (len may be 0), for a
     * flag whose one reader waits until it holds exactly value, and which
     * is not written again before that reader saw it: the flag may then
     * land in pieces, a plain write the target need not answer. src may be
     * reused on return; the data need not have landed yet (the flag's
     * reader sees both). Every earlier put and amo to pe must be fenced
     * first, as for signal. NULL: callers use put_signal or signal. */
    shoal_status_t (*flag)(int pe, enum shoal_segment_id seg, size_t offset, const void *src, size_t len,
                           enum shoal_segment_id flag_seg, size_t flag_offset, uint64_t value);
    void (*fence)(shoal_tctx_t *ctx);
    void (*quiet)(shoal_tctx_t *ctx);
    void (*progress)(void);
    /* Called instead of progress by a wait about to yield or sleep: drives
     * progress too, but leaves incoming operations to the transport's own
     * threads from now on (NULL: progress). */
    void (*rest)(void);
    /* Nonzero when the transport's own threads apply incoming operations
     * (progress only speeds them up): a PE may then sleep on its bell.
     * Asked once, after init (NULL: never). */
    int (*serves_itself)(void);
    /* A value that changes whenever some thread of this PE has applied a
     * peer's operation, or, where the provider reports none, has found
     * peers' data arriving (NULL where the transport cannot tell): a wait
     * that sees it move serves peers by spinning (sync/backoff.h). */
    long long (*incoming)(void);
    /* Nonzero while the transport's own threads are applying or answering
     * peers' operations (NULL: it cannot tell): a spinning wait then gives
     * up its core between polls, which such a thread may need. */
    int (*threads_busy)(void);
    /* Releases peer mappings and endpoints. Collective. */
    void (*fini)(struct shoal_transport_setup *setup);
};

extern const struct shoal_transport_ops shoal_transport_shm;
#ifdef SHOAL_HAVE_OFI
extern const struct shoal_transport_ops shoal_transport_ofi;
/* 1: libfabric's best provider here is RDMA hardware, 0: TCP or another
 * software path, -1: none usable. Its name goes to name. */
int shoal_ofi_probe_hardware(char *name, size_t len);
#endif
/* Requests over TLS 1.3 streams (transport/tls): the default between hosts
 * where no RDMA hardware carries the data. */
extern const struct shoal_transport_ops shoal_transport_tls;

#endif
