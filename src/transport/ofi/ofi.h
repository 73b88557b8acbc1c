/* ofi.h: state shared by the files of the libfabric transport.
 *
 * One fabric, domain, address vector and set of memory registrations per PE.
 * Every transport context owns one endpoint with its own completion queue,
 * so a quiet waits only for that context's operations; peers address the
 * default context's endpoint, which is the one a progress thread (and the
 * runtime's waits) drive for incoming operations.
 *
 * Completion model: every operation but writes complete once injected asks
 * for a completion queue entry and counts on its context (issued against
 * done + failed, as entries are read), which is what fence and quiet wait
 * for, except while only the runtime's signals are outstanding
 * (plain_mark). An operation the caller waits for by itself (get, fetching
 * amo, large put) has a shoal_ofi_op on the caller's stack as its entry's
 * context; whichever thread reads the entry marks the op done. Injected
 * writes that need no answer (flags and, where writes are ordered, small
 * puts, which fence and quiet make visible with a flush: ofi_ops.c) ask for
 * nothing and are not counted (after the first: contacted, below). No
 * counter is bound: with one, ofi_rxm sends even those writes through a
 * buffer whose completion the transport reaps, and the default queue's
 * wait object turns each completion into a system call on a signal
 * descriptor and one more where it is read (2 PEs on one host, barrier_all
 * 28.9 -> 21.7 us: docs/design.md). Their failures still come as error
 * entries, counted as failed. An operation that fails, or waits longer than
 * SHMEM_FABRIC_TIMEOUT, ends the job through setup->fatal with one line
 * naming it and the PE.
 *
 * Trust: every registration has a random 64-bit key (or the provider's
 * own), learnt by peers only through the bootstrap; endpoints listen only
 * on the address boot/bind_addr.h chooses. A segment is registered as up
 * to SHOAL_OFI_REGIONS regions so the static segment's read-only (RELRO)
 * span is remotely readable but never writable: the provider refuses the
 * write at the target, and this PE refuses it before posting. */
#ifndef SHOAL_TRANSPORT_OFI_OFI_H
#define SHOAL_TRANSPORT_OFI_OFI_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "transport/transport.h"

/* A registered scratch area per context for providers that need local
 * buffers registered (FI_MR_LOCAL). */
#define SHOAL_OFI_BOUNCE_SIZE ((size_t)64 * 1024)
/* Small puts answered after a flush that found some unanswered (ofi_ops.c). */
#define SHOAL_OFI_ANSWERED_AFTER_FLUSH 64

struct shoal_tctx {
    struct fid_ep *ep;
    struct fid_cq *cq;
    /* Operations posted that report a completion (issued), and those whose
     * completion was read from cq, good (done) or failed (failed); see
     * "Completion model" above for what goes uncounted. */
    atomic_uint_fast64_t issued, done, failed;
    /* Signals (transport.h, signal) are counted too, but where the
     * provider keeps atomics in order (atomics_ordered) fence and quiet
     * need not wait for them: their targets' waits see them land.
     * plain_mark is issued's count at the newest other operation, settled
     * a count of which a full wait saw every operation complete: while
     * plain_mark <= settled, only signals are outstanding (ofi_ops.c). */
    atomic_uint_fast64_t plain_mark, settled;
    /* Where writes are ordered (writes_ordered), small puts may complete
     * when injected, with no answer from the target: unflushed[pe] is set
     * by such a put to pe, and fence and quiet make those visible with one
     * more write per PE (ofi_ops.c, shoal_ofi_flush_writes). n_pes entries. */
    atomic_uchar *unflushed;
    atomic_int any_unflushed;
    /* contacted[pe]: a counted operation to pe completed, so the provider's
     * connection to it is up. Until then writes that would go uncounted are
     * counted: a first contact by an uncounted write left the quiet after it
     * waiting for the target's next call (ofi.quiet_busy_target: 115 ms).
     * n_pes entries. */
    atomic_uchar *contacted;
    /* Small puts still to be answered, as before: a flush that found puts
     * to make visible sets it to SHOAL_OFI_ANSWERED_AFTER_FLUSH (ofi_ops.c). */
    atomic_int answered_left;
    /* One flush posts its writes at a time: a quiet that finds the marks
     * cleared by another then waits for that one's writes too. */
    pthread_mutex_t flush_lock;
    atomic_uint_fast64_t errors_reported; /* failed count already logged */
    /* The last failed operation nobody waited for (error CQ entry), for the
     * line the next fence or quiet ends the job with. */
    atomic_int failed_err, failed_prov, failed_pe;
    /* Operands of atomics nobody waits for (ofi_ops.c, take_slot). */
    struct shoal_ofi_slot *slots;
    atomic_uint slot_next;
    struct fid_mr *slots_mr;
    void *slots_desc;
    pthread_mutex_t bounce_lock;
    char *bounce;
    struct fid_mr *bounce_mr;
    void *bounce_desc;
    atomic_int ready;         /* endpoint open (contexts open at first use) */
    struct shoal_tctx *next;  /* in the pool of idle open contexts */
    struct shoal_tctx *live_prev, *live_next; /* open contexts the program holds */
};

/* Registrations per segment: before, inside and after its read-only span. */
#define SHOAL_OFI_REGIONS 3

/* One registered region of a segment, as peers address it. */
struct shoal_ofi_region {
    uint64_t offset, len; /* within the segment; len 0: unused */
    uint64_t key;
    uint64_t base;        /* remote address of the region's first byte (0 unless FI_MR_VIRT_ADDR) */
    uint64_t ro;          /* remote reads only */
};

/* One blocking operation (possibly several chunks) awaited by its caller. */
struct shoal_ofi_op {
    atomic_int pending; /* chunks posted and not yet completed */
    atomic_int err;     /* first failing chunk's fi_errno, 0 if none */
    atomic_int prov;    /* its provider error */
};

/* The completion context of an operation nobody waits for: its target PE
 * and whether it is counted, tagged odd (a shoal_ofi_op is aligned), so a
 * failure can name the PE. */
static inline void *shoal_ofi_tag(int pe, int counted)
{
    return (void *)(((uintptr_t)(unsigned)pe << 2) | ((uintptr_t)(counted != 0) << 1) | 1);
}
static inline int shoal_ofi_tag_pe(const void *tag) { return (int)((uintptr_t)tag >> 2); }
static inline int shoal_ofi_tag_counted(const void *tag) { return ((uintptr_t)tag >> 1) & 1; }

/* An atomic nobody waits for keeps its operand (or put_signal's data, up
 * to SHOAL_OFI_SLOT_BYTES) here until its completion frees the slot: a
 * provider need not report completions of injected atomics. */
#define SHOAL_OFI_SLOTS 256
#define SHOAL_OFI_SLOT_BYTES 64
struct shoal_ofi_slot {
    struct shoal_ofi_op op; /* pending: 1 while in use */
    _Alignas(8) unsigned char data[SHOAL_OFI_SLOT_BYTES];
};

struct shoal_ofi {
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_cntr *write_cntr; /* bound to every endpoint on tcp;ofi_rxm (ofi.c says why), else NULL */
    struct fid_mr *mr[SHOAL_SEG_COUNT][SHOAL_OFI_REGIONS];
    void *desc[SHOAL_SEG_COUNT][SHOAL_OFI_REGIONS];
    struct shoal_ofi_region region[SHOAL_SEG_COUNT][SHOAL_OFI_REGIONS]; /* this PE's */
    char *local_base[SHOAL_SEG_COUNT];
    size_t local_size[SHOAL_SEG_COUNT];
    struct shoal_tctx dflt;
    int my_pe, n_pes;
    fi_addr_t *addr;   /* n_pes entries */
    /* [(pe * SHOAL_SEG_COUNT + seg) * SHOAL_OFI_REGIONS + r] */
    struct shoal_ofi_region *remote;
    size_t inject_size;
    size_t max_msg;
    /* put_signal sends data up to this size as atomics ordered before the
     * signal (ofi_ops.c); 0 where the provider does not order atomics. */
    size_t signal_data_max;
    /* The provider applies atomics to a peer in order (FI_ORDER_ATOMIC_WAW,
     * sent and received), so no signal overtakes an earlier one to the
     * same word (a barrier's epoch) and none needs waiting for (plain_mark). */
    int atomics_ordered;
    /* The provider processes RMA writes to a peer in the order posted
     * (FI_ORDER_RMA_WAW, sent and received): small puts then complete
     * when injected, unanswered by the target (ofi_ops.c). */
    int writes_ordered;
    /* A flag's data (up to 256 bytes) and tag go as one write with two
     * targets, the tag last: the provider writes one message's payload into
     * its targets in their order (ofi.c says which providers do). */
    int flag_one_write;
    size_t flush_word; /* in every PE's heap: where flushes write (transport.h) */
    int mr_local;      /* local buffers must be registered */
    int mr_endpoint;   /* registrations are bound to one endpoint */
    int cq_wait;       /* the default CQ has a wait object (blocking sread) */
    int wait_fd;       /* ... as a file descriptor (FI_WAIT_FD), or -1 */
    /* Progress calls of the runtime's waits that found network data for
     * this PE (ofi_progress.c): the transport's incoming mark. */
    atomic_llong incoming;
    int prov_key;      /* the provider chooses keys (FI_MR_PROV_KEY) */
    uint64_t keys[8];  /* keys this PE requested so far: never reused */
    int n_keys;
    pthread_mutex_t key_lock;
    long long timeout_ns;  /* SHMEM_FABRIC_TIMEOUT */
    void (*fatal)(const char *reason) __attribute__((noreturn));
    void (*peer_lost)(const char *reason) __attribute__((noreturn));
    char listen[128];  /* "ip:port on ifname", fi_getname of the default endpoint */
    /* Contexts opened lazily and pooled when destroyed: a program that makes
     * and drops many contexts pays for few endpoints. */
    pthread_mutex_t ctx_lock;
    struct shoal_tctx *pool;
    int pooled;
    struct shoal_tctx *live; /* closed at fini if the program did not destroy them */
    pthread_t thread;
    int thread_started;
    int want_thread;   /* SHMEM_FABRIC_PROGRESS_THREAD and the provider's progress mode */
    atomic_int stop;
    /* Threads waiting for their own operations on the default context:
     * while any does, the PE progresses itself and the thread stands aside. */
    atomic_int own_waits;
    atomic_int standing_by; /* the thread sleeps until own_waits is 0 */
    _Atomic long long own_ns; /* when the last such wait ended (ofi_progress.c) */
    /* The lease (ofi_progress.c): while a runtime wait spins, driving the
     * endpoint itself, the thread parks instead of sleeping on it. */
    _Atomic long long served_ns; /* the spinning wait's last call; 0: no lease */
    _Atomic long long lease_since; /* when the current lease began */
    atomic_int lease_gen;        /* futex word: an ending lease bumps it */
    atomic_int parked;           /* the thread sleeps on lease_gen */
    atomic_int in_sread;         /* the thread sleeps on the endpoint */
};

extern struct shoal_ofi shoal_ofi;
/* Tests set this before init to exercise the FI_MR_LOCAL path on providers
 * that do not need it. */
extern int shoal_ofi_force_mr_local;
/* Tests set this to post writes into a peer's read-only span anyway, to
 * prove the target's provider refuses them. */
extern int shoal_ofi_skip_ro_check;

/* ofi_ctx.c */
shoal_status_t shoal_ofi_ctx_open(struct shoal_tctx *ctx, int is_default);
void shoal_ofi_ctx_close(struct shoal_tctx *ctx);
/* The context to use for ctx (NULL: the default), its endpoint opened on
 * first use; NULL if that failed (logged). */
struct shoal_tctx *shoal_ofi_ctx_ready(shoal_tctx_t *ctx);
/* Closes the pooled contexts and the endpoints of contexts still held. */
void shoal_ofi_pool_close(void);
shoal_status_t shoal_ofi_ctx_create(shoal_tctx_t **out);
void shoal_ofi_ctx_destroy(shoal_tctx_t *ctx);

/* ofi_mr.c */
/* Registers [buf, buf+len) for the given access with a fresh random key
 * (or the provider's); binds it to ep if needed. */
shoal_status_t shoal_ofi_mr_reg(void *buf, size_t len, uint64_t access, struct fid_ep *ep, struct fid_mr **out);
/* Registers this PE's segments, the static one split around its RELRO span. */
shoal_status_t shoal_ofi_register_segments(const struct shoal_transport_setup *setup);
void shoal_ofi_deregister_segments(void);
/* Peer pe's region holding offset of seg, or NULL (offset outside it). */
const struct shoal_ofi_region *shoal_ofi_remote_region(int pe, enum shoal_segment_id seg, size_t offset);

/* ofi_ops.c */
/* Posts the writes that make ctx's unanswered puts visible; the caller
 * then waits for everything posted. */
void shoal_ofi_flush_writes(struct shoal_tctx *ctx);

/* ofi_progress.c */
/* One read of ctx's completion queue: reaps entries, drives progress. */
void shoal_ofi_drain(struct shoal_tctx *ctx);
/* One step of a thread waiting on ctx: drains ctx and the default context
 * (peers' requests to this PE arrive there). */
void shoal_ofi_poll(struct shoal_tctx *ctx);
/* Waits (progressing ctx, with backoff) until op has no pending chunk.
 * Returns the op's status; what names the operation in the error line. */
shoal_status_t shoal_ofi_wait_op(struct shoal_tctx *ctx, struct shoal_ofi_op *op, const char *what, int pe);
/* Waits until every operation posted on ctx so far has completed. */
shoal_status_t shoal_ofi_wait_all(struct shoal_tctx *ctx, const char *what);
/* Called while a wait polls: after SHMEM_FABRIC_TIMEOUT since the first
 * call (*start 0) ends the job naming what and pe (-1: any). */
shoal_status_t shoal_ofi_deadline(long long *start, unsigned polls, const char *what, int pe);
/* One step of a polling wait: spin, then yield, then sleep briefly, so more
 * PEs than cores still progress. *n counts the steps taken. */
void shoal_ofi_backoff(unsigned *n);
/* The runtime's waits: progress while they spin, rest when they are about
 * to yield or sleep (the thread serves peers from then on). */
void shoal_ofi_progress(void);
void shoal_ofi_rest(void);
long long shoal_ofi_incoming(void);
shoal_status_t shoal_ofi_thread_start(void);
void shoal_ofi_thread_stop(void);

/* ofi_ops.c */
shoal_status_t shoal_ofi_put(shoal_tctx_t *ctx, int pe, enum shoal_segment_id seg, size_t offset, const void *src,
                             size_t len);
shoal_status_t shoal_ofi_get(shoal_tctx_t *ctx, int pe, enum shoal_segment_id seg, size_t offset, void *dst,
                             size_t len);
shoal_status_t shoal_ofi_get_nbi(shoal_tctx_t *ctx, int pe, enum shoal_segment_id seg, size_t offset, void *dst,
                                 size_t len);
shoal_status_t shoal_ofi_amo(shoal_tctx_t *ctx, int pe, enum shoal_segment_id seg, size_t offset, size_t elem,
                             enum shoal_amo_op op, uint64_t operand, uint64_t cond, uint64_t *fetched);
shoal_status_t shoal_ofi_put_signal(shoal_tctx_t *ctx, int counted, int pe, enum shoal_segment_id seg,
                                    size_t offset, const void *src, size_t len, enum shoal_segment_id sig_seg,
                                    size_t sig_offset, enum shoal_amo_op op, uint64_t operand);
shoal_status_t shoal_ofi_signal(int pe, enum shoal_segment_id seg, size_t offset, enum shoal_amo_op op,
                                uint64_t operand);
shoal_status_t shoal_ofi_flag(int pe, enum shoal_segment_id seg, size_t offset, const void *src, size_t len,
                              enum shoal_segment_id flag_seg, size_t flag_offset, uint64_t value);
void shoal_ofi_fence(shoal_tctx_t *ctx);
void shoal_ofi_quiet(shoal_tctx_t *ctx);

/* Logs one line for a failed fi_* call and returns the status to report. */
shoal_status_t shoal_ofi_fail(const char *call, int ret);
/* After start-up: ends the job with one line (setup->fatal); without a
 * fatal callback (unit tests) logs it and returns SHOAL_ERR_SYS. */
shoal_status_t shoal_ofi_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same for operations that completed in error: most often their
 * target has ended, and its own failure is the one to report
 * (setup->peer_lost). */
shoal_status_t shoal_ofi_lost(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* libfabric's few real functions, resolved when the fabric is first needed
 * (ofi_load.c); the macros below route this transport's calls to them. */
struct shoal_ofi_lib {
    int (*getinfo)(uint32_t version, const char *node, const char *service, uint64_t flags,
                   const struct fi_info *hints, struct fi_info **info);
    void (*freeinfo)(struct fi_info *info);
    struct fi_info *(*dupinfo)(const struct fi_info *info);
    int (*fabric)(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context);
    const char *(*strerror)(int errnum);
};
extern struct shoal_ofi_lib shoal_ofi_lib;
/* Loads libfabric once; SHOAL_OK when every function resolved. */
shoal_status_t shoal_ofi_load(void);

#define fi_getinfo shoal_ofi_lib.getinfo
#define fi_freeinfo shoal_ofi_lib.freeinfo
#define fi_dupinfo shoal_ofi_lib.dupinfo
#define fi_fabric shoal_ofi_lib.fabric
#define fi_strerror shoal_ofi_lib.strerror
#define fi_allocinfo() shoal_ofi_lib.dupinfo(NULL)

#endif
