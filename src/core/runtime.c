/* runtime.c: bring-up and tear-down of a PE. Order matters: configuration,
 * bootstrap, segments, transports (which map the peers' segments), then one
 * bootstrap barrier so no PE writes into a peer that has not mapped yet. */
#include "core/runtime.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "boot/bind_addr.h"
#include "core/internal.h"
#include "core/machine.h"
#include "core/team.h"
#include "util/log.h"

struct shoal_runtime shoal_rt = {.my_pe = -1, .heap_lock = PTHREAD_MUTEX_INITIALIZER};

static shoal_status_t fail(shoal_status_t st, char *err, size_t errlen, const char *fmt, const char *what)
{
    snprintf(err, errlen, fmt, what, shoal_status_str(st));
    return st;
}

/* Each PE's record: its node key, its machine id, and 64 random bits that
 * name the machine's board (core/machine.h) when it is the machine's
 * lowest PE. */
#define MACHINE_ID_AT SHOAL_NODE_KEY_MAX
#define BOARD_NAME_AT (SHOAL_NODE_KEY_MAX + SHOAL_MACHINE_ID_MAX)
#define HOST_RECORD (BOARD_NAME_AT + 8)

/* Numbers the hosts by their lowest PE from the bootstrap's node keys, so
 * every PE derives the same numbering, and counts the PEs sharing this
 * host and this machine. */
static shoal_status_t find_hosts(struct shoal_runtime *rt)
{
    const int n = rt->n_pes;
    char mine[HOST_RECORD] = {0};
    memcpy(mine, rt->boot->node_key, SHOAL_NODE_KEY_MAX - 1);
    shoal_boot_machine_id(mine + MACHINE_ID_AT);
    uint64_t board_name = 0;
    if (getrandom(&board_name, sizeof board_name, 0) != (ssize_t)sizeof board_name) board_name = 0;
    memcpy(mine + BOARD_NAME_AT, &board_name, sizeof board_name);
    struct shoal_boot_view view;
    shoal_status_t st = shoal_boot_allgather_view(rt->boot, mine, sizeof mine, &view);
    const char *all = view.data;
    if (st == SHOAL_OK) {
        rt->n_nodes = 0;
        for (int pe = 0; pe < n; pe++) {
            int same = -1; /* the lowest PE with this key */
            for (int q = 0; q < pe; q++)
                if (!memcmp(all + (size_t)q * HOST_RECORD, all + (size_t)pe * HOST_RECORD, SHOAL_NODE_KEY_MAX)) {
                    same = q;
                    break;
                }
            rt->peers[pe].node = same < 0 ? rt->n_nodes++ : rt->peers[same].node;
        }
        rt->my_node = rt->peers[rt->my_pe].node;
        rt->peer_host[0] = 0;
        for (int pe = 0; pe < n; pe++)
            if (rt->peers[pe].node != rt->my_node) {
                shoal_bind_host_of_key(all + (size_t)pe * HOST_RECORD, rt->peer_host, sizeof rt->peer_host);
                break;
            }
        rt->node_pes = rt->machine_pes = 0;
        rt->machine_board = 0;
        for (int pe = 0; pe < n; pe++) {
            const char *rec = all + (size_t)pe * HOST_RECORD;
            rt->node_pes += rt->peers[pe].node == rt->my_node;
            if (memcmp(rec + MACHINE_ID_AT, mine + MACHINE_ID_AT, SHOAL_MACHINE_ID_MAX)) continue;
            if (!rt->machine_pes) memcpy(&rt->machine_board, rec + BOARD_NAME_AT, sizeof rt->machine_board);
            if (pe == rt->my_pe) rt->machine_rank = rt->machine_pes;
            rt->machine_pes++;
        }
    }
    shoal_boot_view_release(&view);
    return st;
}

/* A transport operation that cannot complete ends the job. */
static __attribute__((noreturn)) void transport_fatal(const char *reason)
{
    shoal_runtime_abort(1, reason);
}

/* How long a PE that lost a peer waits for the job to end by that peer's
 * own failure. A launcher stops every PE within milliseconds of one's
 * exit; across hosts the fault goes through node 0 first. */
#define PEER_LOST_GRACE_MS 1500

static __attribute__((noreturn)) void transport_peer_lost(const char *reason)
{
    for (int ms = 0; ms < PEER_LOST_GRACE_MS; ms += 50) {
        struct timespec pause = {0, 50 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    shoal_runtime_abort(1, reason);
}

/* Which transport carries data between hosts (or for every PE when one is
 * forced): "tls" or "ofi". SHMEM_ENCRYPT=auto asks libfabric whether RDMA
 * hardware is here; every PE must choose the same, so the choices are
 * gathered and any PE without hardware makes the whole job encrypt. */
static shoal_status_t choose_fabric(struct shoal_runtime *rt, const char *mode, const char **out, char *err,
                                    size_t errlen)
{
    const char *enc = rt->config.encrypt;
    const int spans = rt->n_nodes > 1;
    if (!strcmp(mode, "tls") || !strcmp(mode, "ofi")) {
        if (!strcmp(mode, "ofi") && spans && !strcmp(enc, "required")) {
            snprintf(err, errlen, "SHMEM_ENCRYPT=required, but SHMEM_TRANSPORT=ofi carries data between the "
                     "job's %d hosts unencrypted: unset one of them", rt->n_nodes);
            return SHOAL_ERR_INVAL;
        }
        *out = mode;
        return SHOAL_OK;
    }
    if (!strcmp(enc, "off")) { *out = "ofi"; return SHOAL_OK; }
    if (!strcmp(enc, "required")) { *out = "tls"; return SHOAL_OK; }
    char prov[64] = "";
    char hardware = 0;
#ifdef SHOAL_HAVE_OFI
    hardware = shoal_ofi_probe_hardware(prov, sizeof prov) == 1;
#endif
    struct shoal_boot_view view;
    shoal_status_t st = shoal_boot_allgather_view(rt->boot, &hardware, 1, &view);
    const char *all = view.data;
    int everywhere = st == SHOAL_OK;
    for (int pe = 0; everywhere && pe < rt->n_pes; pe++) everywhere = all[pe];
    shoal_boot_view_release(&view);
    if (st != SHOAL_OK) return st;
    *out = everywhere ? "ofi" : "tls";
    if (everywhere && rt->my_pe == 0)
        fprintf(stderr, "shoal: data between hosts goes unencrypted over RDMA (libfabric %s): RDMA adapters "
                "cannot carry TLS; set SHMEM_ENCRYPT=required to encrypt over TCP instead (docs/bootstrap.md)\n",
                prov);
    return SHOAL_OK;
}

/* shm maps this host's peers (unless a transport is forced for all); tls or
 * ofi reaches everyone when the job spans hosts or when it is forced. */
static shoal_status_t start_transports(struct shoal_runtime *rt, const char *mode, char *err, size_t errlen)
{
    const int force_fabric = !strcmp(mode, "ofi") || !strcmp(mode, "tls");
    const int need_fabric = force_fabric || rt->n_nodes > 1;
    if (!strcmp(mode, "shm") && rt->n_nodes > 1) {
        snprintf(err, errlen, "SHMEM_TRANSPORT=shm, but the job spans %d hosts: use auto, tls or ofi",
                 rt->n_nodes);
        return SHOAL_ERR_INVAL;
    }
    rt->transport_setup = (struct shoal_transport_setup){
        .boot = rt->boot, .my_pe = rt->my_pe, .n_pes = rt->n_pes, .my_node = rt->my_node, .n_nodes = rt->n_nodes,
        .peer_host = rt->peer_host,
        .machine_pes = rt->machine_pes, .fabric_all = force_fabric, .peers = rt->peers, .fatal = transport_fatal,
        .tls_pair = !strcmp(rt->config.tls_pair, "on") ? 1 : !strcmp(rt->config.tls_pair, "off") ? 0 : -1,
        .peer_lost = transport_peer_lost,
        .flush_word = rt->internal_offset + offsetof(struct shoal_internal_area, flush_sink),
        .local = {&rt->seg[SHOAL_SEG_HEAP], &rt->seg[SHOAL_SEG_DATA]}};
    shoal_status_t st;
    rt->transport = &shoal_transport_shm;
    if (!force_fabric) {
        st = shoal_transport_shm.init(&rt->transport_setup);
        if (st != SHOAL_OK) return fail(st, err, errlen, "the %s transport failed to start: %s", "shm");
        rt->mapped_shm = 1;
    } else {
        /* This PE's own memory stays load/store reachable. */
        struct shoal_peer *self = &rt->peers[rt->my_pe];
        for (int s = 0; s < SHOAL_SEG_COUNT; s++) self->base[s] = rt->seg[s].base;
        self->direct = 1;
    }
    if (!need_fabric) return SHOAL_OK;
    const char *which;
    st = choose_fabric(rt, mode, &which, err, errlen);
    if (st != SHOAL_OK) return st;
    const char *what = "tls (encrypted TCP)";
    if (!strcmp(which, "tls")) {
        rt->transport = &shoal_transport_tls;
    } else {
#ifdef SHOAL_HAVE_OFI
        rt->transport = &shoal_transport_ofi;
        what = "ofi (libfabric)";
#else
        snprintf(err, errlen, "%s, but this build has no libfabric transport",
                 force_fabric ? "SHMEM_TRANSPORT=ofi" : "the job spans hosts");
        return SHOAL_ERR_INVAL;
#endif
    }
    st = rt->transport->init(&rt->transport_setup);
    if (st != SHOAL_OK) return fail(st, err, errlen, "the %s transport failed to start: %s", what);
    rt->fabric = 1; /* waits call its progress */
    /* Where the target's CPU applies peers' atomics (tls's server threads,
     * ofi_rxm's software handlers) they are atomic with this PE's own CPU
     * atomics, so on-host ones stay direct; where a NIC applies them, this
     * PE's own and on-host atomics go through the fabric too. */
    rt->amo_fabric = !rt->transport_setup.atomics_by_cpu;
    return SHOAL_OK;
}

/* Problems every PE checks before it knows its peers; after the bootstrap
 * is up, the lowest PE that has each one reports it, once for the job. */
enum { START_BAD_SETTING = 1, START_UNKNOWN_NAMES = 2, START_STATIC_PRIVATE = 4 };
#define START_TAG UINT64_C(0x53484f414c00) /* "SHOAL", then the problem bits */

static int lowest_with(const unsigned char *all, int n, unsigned bit)
{
    for (int pe = 0; pe < n; pe++)
        if (all[pe] & bit) return pe;
    return -1;
}

static int count_with(const unsigned char *all, int n, unsigned bit)
{
    int c = 0;
    for (int pe = 0; pe < n; pe++) c += (all[pe] & bit) != 0;
    return c;
}

/* Agrees on the start-up problems; warns once for each; on a bad setting
 * anywhere, returns SHOAL_ERR_INVAL with only the lowest PE that has one
 * left to report it (startup_reporter). */
static shoal_status_t report_start(struct shoal_runtime *rt, unsigned char mine, const char *unknown,
                                   const char *static_why, char *why, size_t whylen)
{
    const int n = rt->n_pes;
    /* Each PE's record is a tag and its problem bits: a record without the
     * tag is a broken exchange, never taken for problems. */
    uint64_t record = START_TAG | mine;
    unsigned char *all = malloc((size_t)n);
    struct shoal_boot_view view = {0};
    /* A broken exchange is said in the one start-up line (why). */
    shoal_log_capture(why, whylen);
    shoal_status_t st = all ? shoal_boot_allgather_view(rt->boot, &record, sizeof record, &view) : SHOAL_ERR_NOMEM;
    const uint64_t *records = view.data;
    for (int pe = 0; st == SHOAL_OK && pe < n; pe++) {
        if ((records[pe] & ~(uint64_t)0xff) != START_TAG) {
            shoal_error("boot", "PE %d's start-up record is %#llx, not a record of Shoal %s", pe,
                        (unsigned long long)records[pe], SHOAL_VERSION_STRING);
            st = SHOAL_ERR_PROTO;
        }
        all[pe] = (unsigned char)records[pe];
    }
    shoal_boot_view_release(&view);
    shoal_log_capture(NULL, 0);
    if (st != SHOAL_OK) {
        free(all);
        return st;
    }
    if (lowest_with(all, n, START_UNKNOWN_NAMES) == rt->my_pe) shoal_warn("config", "%s", unknown);
    if (lowest_with(all, n, START_STATIC_PRIVATE) == rt->my_pe) {
        int c = count_with(all, n, START_STATIC_PRIVATE);
        char on[48] = "";
        if (n > 1) snprintf(on, sizeof on, " on %d of %d PEs", c, n);
        /* Typically MPI_Init came first and its threads run. */
        shoal_warn("heap", "static data could not be made symmetric%s (%s); only heap objects are remotely "
                   "accessible (with MPI, call shmem_init before MPI_Init)", on, static_why);
    }
    int bad = lowest_with(all, n, START_BAD_SETTING);
    free(all);
    if (bad < 0) return SHOAL_OK;
    rt->startup_reporter = bad == rt->my_pe;
    return SHOAL_ERR_INVAL;
}

shoal_status_t shoal_runtime_init(int requested_thread_level, char *err, size_t errlen)
{
    struct shoal_runtime *rt = &shoal_rt;
    unsigned char problems = 0;
    char unknown[512] = "", static_why[256] = "";
    rt->startup_reporter = 1;
    shoal_status_t setting = shoal_config_load(&rt->config, NULL, err, errlen);
    if (setting != SHOAL_OK) problems |= START_BAD_SETTING;
    else if (rt->config.debug) shoal_log_level = SHOAL_LOG_DEBUG;
    if (shoal_config_unknown(unknown, sizeof unknown)) problems |= START_UNKNOWN_NAMES;

    /* Before the bootstrap, which may start threads (PMIx's progress
     * thread): remapping static data needs a single-threaded process. Its
     * complaint is kept, to be said once for the job below.
     * SHMEM_SYMMETRIC_STATIC=0 (set by the Python package) skips it. */
    shoal_status_t st = SHOAL_OK;
    if (setting == SHOAL_OK && rt->config.symmetric_static) {
        shoal_log_capture(static_why, sizeof static_why);
        st = shoal_segment_remap_static(&rt->seg[SHOAL_SEG_DATA]);
        shoal_log_capture(NULL, 0);
    } else if (setting == SHOAL_OK) {
        rt->seg[SHOAL_SEG_DATA] = (shoal_segment_t){.base = NULL, .size = 0, .fd = -1};
    }
    if (st != SHOAL_OK) {
        /* Without it globals are not remotely accessible; heap objects still are. */
        if (!static_why[0]) snprintf(static_why, sizeof static_why, "%s", shoal_status_str(st));
        problems |= START_STATIC_PRIVATE;
        rt->seg[SHOAL_SEG_DATA] = (shoal_segment_t){.base = NULL, .size = 0, .fd = -1};
    }
    /* The bootstrap's own reason becomes the one start-up line, instead of
     * a line of its own before a vaguer one. */
    char boot_why[384] = "";
    shoal_log_capture(boot_why, sizeof boot_why);
    st = shoal_boot_open(&rt->boot);
    shoal_log_capture(NULL, 0);
    if (st != SHOAL_OK && setting != SHOAL_OK) return setting; /* the setting is the news */
    if (st != SHOAL_OK && boot_why[0]) {
        snprintf(err, errlen, "%s", boot_why);
        return st;
    }
    if (st != SHOAL_OK) return fail(st, err, errlen, "cannot reach the %s: %s", "launcher");
    if (boot_why[0]) shoal_warn("boot", "%s", boot_why); /* a warning of a start that worked */
    rt->my_pe = rt->boot->rank;
    rt->n_pes = rt->boot->size;
    shoal_log_set_pe(rt->my_pe);
    st = report_start(rt, problems, unknown, static_why, boot_why, sizeof boot_why);
    if (st == SHOAL_ERR_INVAL) {
        if (setting == SHOAL_OK) snprintf(err, errlen, "another PE's setting is not valid");
        return st;
    }
    if (st != SHOAL_OK && boot_why[0]) {
        snprintf(err, errlen, "the start-up exchange failed: %s", boot_why);
        return st;
    }
    if (st != SHOAL_OK) return fail(st, err, errlen, "the start-up %s failed: %s", "exchange");
    const char *mode = rt->config.transport;
    /* The host path takes no lock, so every level is provided as asked. */
    rt->thread_level = requested_thread_level;

    /* The table bounds it (16 TiB), so the internal area always fits on top. */
    size_t heap_bytes = rt->config.symmetric_size;
    st = shoal_segment_create_heap(heap_bytes + SHOAL_INTERNAL_AREA, &rt->seg[SHOAL_SEG_HEAP]);
    if (st != SHOAL_OK) return fail(st, err, errlen, "cannot create the %s: %s", "symmetric heap");
    for (int s = 0; s < SHOAL_SEG_COUNT; s++) {
        rt->seg_start[s] = (uintptr_t)rt->seg[s].base;
        rt->seg_size[s] = rt->seg[s].size;
    }
    rt->internal_offset = rt->seg[SHOAL_SEG_HEAP].size - SHOAL_INTERNAL_AREA;
    rt->internal = rt->seg[SHOAL_SEG_HEAP].base + rt->internal_offset;

    rt->peers = calloc((size_t)rt->n_pes, sizeof *rt->peers);
    if (!rt->peers) return fail(SHOAL_ERR_NOMEM, err, errlen, "cannot allocate the %s table: %s", "peer");
    st = find_hosts(rt);
    if (st != SHOAL_OK) return fail(st, err, errlen, "cannot tell which %s share a host: %s", "PEs");
    st = start_transports(rt, mode, err, errlen);
    if (st != SHOAL_OK) return st;

    st = shoal_alloc_create(rt->internal_offset, &rt->alloc);
    if (st != SHOAL_OK) return fail(st, err, errlen, "cannot create the %s allocator: %s", "heap");

    /* The team bitmap is cleared before the barrier, so no peer reads it
     * (a split) before it is ready. */
    shoal_team_init_predefined();
    /* Hosts that share this machine's cores count their running PEs on one
     * board; its creator makes it before the barrier, the others open it
     * after. Without one (a random draw failed) waits count their host. */
    const int board = rt->machine_pes > rt->node_pes && rt->machine_board;
    const int creator = board && rt->machine_rank == 0 && shoal_machine_board_create(rt->machine_pes, rt->machine_board);
    st = rt->boot->ops->barrier(rt->boot);
    if (st != SHOAL_OK) return fail(st, err, errlen, "the start-up %s failed: %s", "barrier");
    if (board) shoal_machine_board_join(rt->machine_rank, rt->machine_pes, rt->machine_board, creator);
    rt->initialized = 1;
    return SHOAL_OK;
}

void shoal_runtime_finalize(void)
{
    struct shoal_runtime *rt = &shoal_rt;
    rt->transport->quiet(NULL);
    /* Every PE must be done with every peer before anyone unmaps. */
    rt->boot->ops->barrier(rt->boot);
    __atomic_store_n(&rt->plain_calls, 0, __ATOMIC_RELAXED);
    rt->initialized = 0;
    rt->finalized = 1;
    shoal_machine_board_close();
    shoal_team_fini_predefined();
    if (rt->transport != &shoal_transport_shm) rt->transport->fini(&rt->transport_setup);
    if (rt->mapped_shm) shoal_transport_shm.fini(&rt->transport_setup);
    rt->mapped_shm = rt->fabric = rt->amo_fabric = 0;
    shoal_alloc_destroy(rt->alloc);
    rt->alloc = NULL;
    shoal_segment_destroy_heap(&rt->seg[SHOAL_SEG_HEAP]);
    shoal_segment_release_static(&rt->seg[SHOAL_SEG_DATA]);
    for (int s = 0; s < SHOAL_SEG_COUNT; s++) rt->seg_start[s] = 0, rt->seg_size[s] = 0;
    free(rt->peers);
    rt->peers = NULL;
    rt->boot->ops->finalize(rt->boot);
    rt->boot->ops->close(rt->boot);
    rt->boot = NULL;
}

void shoal_runtime_await_end(void)
{
    /* The reporter's abort ends the job (the launcher stops every PE);
     * should it not come, the caller says why itself after a while. */
    for (int i = 0; i < 100; i++) {
        struct timespec pause = {0, 100 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
}

void shoal_runtime_abort(int status, const char *reason)
{
    if (shoal_rt.boot) shoal_rt.boot->ops->abort(shoal_rt.boot, status, reason);
    /* No bootstrap yet (or any more): say it here and leave. Under oshrun the
     * rank is known from the environment even before shmem_init. */
    /* Else the rank a launcher gave; a program no launcher started is PE 0
     * of a job of one. */
    static const char *const rank_vars[] = {"SHOAL_RANK", "PMI_RANK", "PMI_ID", "PMIX_RANK",
                                            "OMPI_COMM_WORLD_RANK", "SLURM_PROCID"};
    const char *rank = NULL;
    for (size_t i = 0; !rank && i < sizeof rank_vars / sizeof rank_vars[0]; i++) rank = getenv(rank_vars[i]);
    if (shoal_rt.my_pe >= 0)
        fprintf(stderr, "shoal: PE %d: %s\n", shoal_rt.my_pe, reason ? reason : "");
    else
        fprintf(stderr, "shoal: PE %s: %s\n", rank ? rank : "0", reason ? reason : "");
    fflush(NULL);
    _exit(status);
}
