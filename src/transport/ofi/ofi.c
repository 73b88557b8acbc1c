/* ofi.c: bring-up and tear-down of the libfabric transport: provider choice,
 * fabric/domain/address vector, registration of the symmetric segments, and
 * the exchange of endpoint addresses, keys and segment addresses through the
 * bootstrap. The fabric reaches every PE, this one included; the peers'
 * direct flags and bases belong to shm and are left alone.
 *
 * Endpoints listen only on the address boot/bind_addr.h chooses: for
 * providers that address by IP it is the src_addr of the fi_info every
 * endpoint opens with (and FI_TCP_IFACE / FI_SOCKETS_IFACE name its
 * interface), so each endpoint's listening port is there and nowhere else. */
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boot/bind_addr.h"
#include "transport/ofi/ofi.h"
#include "util/config.h"
#include "util/log.h"

struct shoal_ofi shoal_ofi;
int shoal_ofi_force_mr_local;
int shoal_ofi_skip_ro_check;

static shoal_status_t end_job(void (*how)(const char *), const char *fmt, va_list ap)
{
    char line[512];
    vsnprintf(line, sizeof line, fmt, ap);
    if (how) how(line);
    shoal_error("ofi", "%s", line);
    return SHOAL_ERR_SYS;
}

shoal_status_t shoal_ofi_fatal(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    shoal_status_t st = end_job(shoal_ofi.fatal, fmt, ap);
    va_end(ap);
    return st;
}

shoal_status_t shoal_ofi_lost(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    shoal_status_t st = end_job(shoal_ofi.peer_lost, fmt, ap);
    va_end(ap);
    return st;
}

/* Registration modes this transport knows how to honour. */
#define OFI_MR_HANDLED (FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT)
/* Endpoint names up to this size travel in the fixed-size exchange record. */
#define OFI_ADDR_MAX 128
#define OFI_AV_BATCH 4

shoal_status_t shoal_ofi_fail(const char *call, int ret)
{
    shoal_error("ofi", "%s failed: %s (%d)", call, fi_strerror(ret < 0 ? -ret : ret), ret);
    return SHOAL_ERR_SYS;
}

/* Lower is better; -1 is skipped unless FI_PROVIDER named it. Hardware
 * first, then TCP; emulations and the on-host provider are left out. */
static int provider_rank(const char *name)
{
    static const char *const hardware[] = {"verbs;ofi_rxm", "efa", "cxi", "psm3", "psm2", "opx", "ucx", NULL};
    static const char *const skipped[] = {"sockets", "udp;ofi_rxd", "shm", "udp", NULL};
    for (int i = 0; hardware[i]; i++)
        if (!strcmp(name, hardware[i])) return 0;
    if (!strcmp(name, "tcp;ofi_rxm") || !strcmp(name, "tcp")) return 1;
    for (int i = 0; skipped[i]; i++)
        if (!strcmp(name, skipped[i])) return -1;
    return 2;
}

/* Provider defaults; a user's setting wins. libfabric reads these when
 * first initialised, i.e. at fi_getinfo below.
 * - rxm's shared receive context pre-allocates 4096 16 KiB buffers per
 *   endpoint (64 MiB, ~100 ms to open). Shoal sends no messages, only RMA
 *   and atomics, so per-connection buffers are plenty.
 * - rxm handles connection requests at most every 10 ms by default, so each
 *   first contact between two PEs waited up to 10 ms on each side; every
 *   200 us costs nothing measurable in steady state (bench_p2p over ofi). */
static void tune_provider_defaults(void)
{
    if (setenv("FI_OFI_RXM_USE_SRX", "0", 0) != 0) shoal_debug("ofi", "cannot set FI_OFI_RXM_USE_SRX");
    if (setenv("FI_OFI_RXM_CM_PROGRESS_INTERVAL", "200", 0) != 0)
        shoal_debug("ofi", "cannot set FI_OFI_RXM_CM_PROGRESS_INTERVAL");
}

/* What every provider must offer Shoal. */
static struct fi_info *make_hints(void)
{
    struct fi_info *hints = fi_allocinfo();
    if (!hints) return NULL;
    hints->caps = FI_RMA | FI_ATOMIC | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
    hints->mode = 0;
    hints->ep_attr->type = FI_EP_RDM;
    hints->domain_attr->threading = FI_THREAD_SAFE;
    hints->domain_attr->mr_mode = OFI_MR_HANDLED;
    hints->tx_attr->op_flags = FI_DELIVERY_COMPLETE;
    return hints;
}

static shoal_status_t choose_provider(void)
{
    tune_provider_defaults();
    shoal_status_t loaded = shoal_ofi_load();
    if (loaded != SHOAL_OK) return loaded;
    struct fi_info *hints = make_hints(), *list = NULL;
    if (!hints) return SHOAL_ERR_NOMEM;
    int ret = fi_getinfo(FI_VERSION(1, 10), NULL, NULL, 0, hints, &list);
    fi_freeinfo(hints);
    const char *forced = getenv("FI_PROVIDER");
    if (ret != 0 || !list) {
        shoal_error("ofi", "no libfabric provider offers reliable endpoints with RMA and atomics%s%s%s (fi_getinfo: %s)",
                    forced ? " (FI_PROVIDER=" : "", forced ? forced : "", forced ? ")" : "",
                    fi_strerror(ret < 0 ? -ret : FI_ENODATA));
        if (list) fi_freeinfo(list);
        return SHOAL_ERR_UNSUPPORTED;
    }
    /* libfabric already filtered by FI_PROVIDER; otherwise rank the answers. */
    struct fi_info *best = NULL;
    int best_rank = 1 << 30;
    for (struct fi_info *i = list; i; i = i->next) {
        int r = forced ? 0 : provider_rank(i->fabric_attr->prov_name);
        if (r >= 0 && r < best_rank) best = i, best_rank = r;
    }
    if (!best) {
        shoal_error("ofi", "libfabric offers only providers Shoal does not use by default (first: %s); "
                    "set FI_PROVIDER to use one anyway", list->fabric_attr->prov_name);
        fi_freeinfo(list);
        return SHOAL_ERR_UNSUPPORTED;
    }
    shoal_ofi.info = fi_dupinfo(best);
    fi_freeinfo(list);
    if (!shoal_ofi.info) return SHOAL_ERR_NOMEM;
    return SHOAL_OK;
}

/* Whether dir holds an entry other than . and .. (0 where it is absent). */
static int dir_has_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    const struct dirent *e;
    int found = 0;
    while (!found && (e = readdir(d))) found = strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return found;
}

/* Every provider provider_rank counts as hardware drives an adapter that
 * the kernel lists here: verbs, efa, psm3 and Omni-Path (psm2, opx: hfi1)
 * under the RDMA class, Slingshot (cxi) under its own. */
static int rdma_adapters_listed(void)
{
    return dir_has_entries("/sys/class/infiniband") || dir_has_entries("/sys/class/cxi");
}

/* Whether libfabric's best provider here moves data by RDMA hardware (1),
 * by TCP or another software path (0), or none is usable (-1); its name
 * goes to name. Lets the runtime choose between ofi and encrypted TLS.
 * Where the kernel lists no RDMA adapter the answer is 0 without loading
 * libfabric (whatever FI_PROVIDER says: only the providers of adapters
 * listed there count as hardware): its providers' start-up (a clock
 * calibration in a constructor, each provider's scan for devices) took
 * 0.3 s of every PE's shmem_init on a host with none. */
int shoal_ofi_probe_hardware(char *name, size_t len)
{
    if (!rdma_adapters_listed()) {
        snprintf(name, len, "none (no RDMA adapter listed)");
        return 0;
    }
    if (choose_provider() != SHOAL_OK) return -1;
    const char *prov = shoal_ofi.info->fabric_attr->prov_name;
    snprintf(name, len, "%s", prov);
    int hardware = provider_rank(prov) == 0;
    fi_freeinfo(shoal_ofi.info);
    shoal_ofi.info = NULL;
    return hardware;
}

/* ofi_rxm (libfabric 1.17) sends a small write posted without a completion
 * (Shoal's unanswered puts and flags, ofi_ops.c) as a plain inject on the
 * peer's tcp connection, with no context; when that connection breaks with
 * such a write queued (the peer's process ended), tcp reports it canceled
 * and rxm's handler reads the missing context: the progress thread of a
 * surviving PE died of SIGSEGV instead of the job ending by the peer's own
 * status (8 of 10 runs of a PE streaming puts to one that exits, as
 * config.exit.put_exit.ofi does). A write counter bound to the endpoints
 * makes rxm copy such writes into a buffer of its own, posted with a
 * context, and count them there; nothing reads the counter. The price,
 * small messages about 10-17% slower (docs/design.md), is paid on tcp
 * only: rxm over other providers keeps the straight inject (untested). */
static shoal_status_t open_write_counter(void)
{
    if (strcmp(shoal_ofi.info->fabric_attr->prov_name, "tcp;ofi_rxm")) return SHOAL_OK;
    struct fi_cntr_attr attr = {.events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_NONE};
    int ret = fi_cntr_open(shoal_ofi.domain, &attr, &shoal_ofi.write_cntr, NULL);
    return ret ? shoal_ofi_fail("fi_cntr_open(writes)", ret) : SHOAL_OK;
}

/* Checks what the chosen provider demands and records how to honour it. */
static shoal_status_t check_provider(struct shoal_transport_setup *setup)
{
    struct fi_info *info = shoal_ofi.info;
    uint64_t mode = (uint64_t)info->domain_attr->mr_mode;
    if (mode & ~(uint64_t)OFI_MR_HANDLED) {
        shoal_error("ofi", "provider %s needs memory registration modes 0x%llx, which Shoal does not handle",
                    info->fabric_attr->prov_name, (unsigned long long)(mode & ~(uint64_t)OFI_MR_HANDLED));
        return SHOAL_ERR_UNSUPPORTED;
    }
    if (info->domain_attr->mr_key_size > sizeof(uint64_t)) {
        shoal_error("ofi", "provider %s uses %zu-byte memory keys; Shoal handles up to 8",
                    info->fabric_attr->prov_name, info->domain_attr->mr_key_size);
        return SHOAL_ERR_UNSUPPORTED;
    }
    shoal_ofi.inject_size = info->tx_attr->inject_size;
    shoal_ofi.max_msg = info->ep_attr->max_msg_size ? info->ep_attr->max_msg_size : SIZE_MAX;
    /* Every op on both element sizes, fetching and not, must be native. */
    static const enum fi_op ops[] = {FI_ATOMIC_WRITE, FI_SUM, FI_BAND, FI_BOR, FI_BXOR};
    static const enum fi_datatype types[] = {FI_UINT32, FI_UINT64};
    struct fid_ep *ep = shoal_ofi.dflt.ep;
    for (int t = 0; t < 2; t++) {
        size_t count;
        int ret = fi_fetch_atomicvalid(ep, types[t], FI_ATOMIC_READ, &count);
        if (ret == 0) ret = fi_compare_atomicvalid(ep, types[t], FI_CSWAP, &count);
        for (int o = 0; ret == 0 && o < 5; o++) {
            ret = fi_atomicvalid(ep, types[t], ops[o], &count);
            if (ret == 0) ret = fi_fetch_atomicvalid(ep, types[t], ops[o], &count);
        }
        if (ret != 0) {
            shoal_error("ofi", "provider %s lacks a %d-bit atomic Shoal needs: %s", info->fabric_attr->prov_name,
                        t ? 64 : 32, fi_strerror(-ret));
            return SHOAL_ERR_UNSUPPORTED;
        }
    }
    /* Atomic writes of bytes, applied in order at the target: put_signal's
     * data then its signal (ofi_ops.c). A few injected chunks at most. */
    size_t bytes = 0, words = 0;
    const uint64_t ordered = FI_ORDER_ATOMIC_WAW;
    shoal_ofi.signal_data_max = 0;
    shoal_ofi.atomics_ordered = (info->tx_attr->msg_order & ordered) && (info->rx_attr->msg_order & ordered);
    const uint64_t writes = FI_ORDER_RMA_WAW;
    shoal_ofi.writes_ordered =
        (info->tx_attr->msg_order & writes) && (info->rx_attr->msg_order & writes) && shoal_ofi.flush_word;
    /* libfabric promises no order inside one message (no provider sets
     * FI_ORDER_DATA), but the tcp provider, alone or under ofi_rxm, reads a
     * write's payload from its byte stream straight into the write's
     * targets, one after the other: a tag named last lands after the data
     * named before it. Elsewhere a flag's data and tag stay two writes. */
    const char *prov = info->fabric_attr->prov_name;
    /* ofi_rxm applies a peer's atomic in the target's progress with
     * libfabric's software handlers, which use the compiler's atomic
     * builtins (util_atomic.c, where the compiler has them: every compiler
     * Shoal builds with), so they are CPU atomics on the target's memory. */
    static const char rxm[] = ";ofi_rxm";
    const size_t prov_len = strlen(prov);
    setup->atomics_by_cpu = prov_len > sizeof rxm - 1 && !strcmp(prov + prov_len - (sizeof rxm - 1), rxm);
    shoal_ofi.flag_one_write = shoal_ofi.writes_ordered && (!strcmp(prov, "tcp") || !strcmp(prov, "tcp;ofi_rxm")) &&
                               info->tx_attr->iov_limit >= 2 && info->tx_attr->rma_iov_limit >= 2 &&
                               shoal_ofi.inject_size > sizeof(uint64_t);
    if (shoal_ofi.atomics_ordered &&
        fi_atomicvalid(ep, FI_UINT8, FI_ATOMIC_WRITE, &bytes) == 0 && bytes >= shoal_ofi.inject_size &&
        fi_atomicvalid(ep, FI_UINT64, FI_ATOMIC_WRITE, &words) == 0 && words >= shoal_ofi.inject_size / 8)
        shoal_ofi.signal_data_max = 4 * shoal_ofi.inject_size;
    shoal_debug("ofi", "provider %s, domain %s, mr_mode 0x%llx, inject %zu, max message %zu, put_signal as atomics up "
                "to %zu, small puts %s, flags with data %s, progress %s, on-host atomics %s",
                info->fabric_attr->prov_name, info->domain_attr->name, (unsigned long long)mode,
                shoal_ofi.inject_size, shoal_ofi.max_msg, shoal_ofi.signal_data_max,
                shoal_ofi.writes_ordered ? "unanswered (ordered writes)" : "answered by the target",
                shoal_ofi.flag_one_write ? "in one write" : "data then tag",
                info->domain_attr->data_progress == FI_PROGRESS_MANUAL ? "manual" : "auto",
                setup->atomics_by_cpu ? "direct (the target's CPU applies fabric atomics)" : "through the fabric");
    return SHOAL_OK;
}

/* Where this PE's endpoints listen (bind_addr.h), decided before any
 * endpoint opens (rule (d) takes another host's name from the runtime). */
struct bind_choice {
    char ip[SHOAL_BIND_IP_MAX], ifname[SHOAL_BIND_IFNAME_MAX], rule[160];
};

static shoal_status_t choose_bind(const struct shoal_transport_setup *setup, struct bind_choice *b)
{
    char err[320];
    shoal_status_t st = shoal_bind_address_explain(setup->n_nodes, setup->peer_host, b->ip, sizeof b->ip, b->ifname,
                                                   sizeof b->ifname, b->rule, sizeof b->rule, err, sizeof err);
    if (st != SHOAL_OK) {
        shoal_error("ofi", "%s", err);
        return st;
    }
    /* The tcp and sockets providers read these when libfabric starts; the
     * src_addr below is what binds, these only keep them consistent. */
    setenv("FI_TCP_IFACE", b->ifname, 1);
    setenv("FI_SOCKETS_IFACE", b->ifname, 1);
    return SHOAL_OK;
}

/* Providers that address endpoints by IP listen on sockets: pin them to the
 * chosen address by asking for the provider again with it as src_addr. */
static shoal_status_t bind_provider(const struct bind_choice *b)
{
    struct fi_info *info = shoal_ofi.info;
    uint32_t f = info->addr_format;
    if (f != FI_SOCKADDR && f != FI_SOCKADDR_IN && f != FI_SOCKADDR_IN6) return SHOAL_OK;
    struct sockaddr_in *sin = calloc(1, sizeof *sin);
    struct fi_info *hints = make_hints(), *list = NULL;
    if (!sin || !hints) {
        free(sin);
        if (hints) fi_freeinfo(hints);
        return SHOAL_ERR_NOMEM;
    }
    sin->sin_family = AF_INET;
    inet_pton(AF_INET, b->ip, &sin->sin_addr);
    hints->addr_format = FI_SOCKADDR_IN;
    hints->src_addr = sin; /* freed with hints */
    hints->src_addrlen = sizeof *sin;
    hints->fabric_attr->prov_name = strdup(info->fabric_attr->prov_name);
    /* Software providers number their own keys 1, 2, ...: take our random
     * ones where the provider accepts them. */
    hints->domain_attr->mr_mode &= ~FI_MR_PROV_KEY;
    int ret = hints->fabric_attr->prov_name ? fi_getinfo(FI_VERSION(1, 10), NULL, NULL, 0, hints, &list) : -FI_ENOMEM;
    if (ret == -FI_ENODATA) {
        hints->domain_attr->mr_mode |= FI_MR_PROV_KEY;
        ret = fi_getinfo(FI_VERSION(1, 10), NULL, NULL, 0, hints, &list);
    }
    fi_freeinfo(hints);
    if (ret != 0 || !list) {
        shoal_error("ofi", "provider %s cannot listen on %s (%s; %s): fi_getinfo: %s; set SHMEM_NETWORK_IFACE",
                    info->fabric_attr->prov_name, b->ip, b->ifname, b->rule, fi_strerror(ret < 0 ? -ret : FI_ENODATA));
        return SHOAL_ERR_UNSUPPORTED;
    }
    shoal_ofi.info = fi_dupinfo(list);
    fi_freeinfo(list);
    fi_freeinfo(info);
    return shoal_ofi.info ? SHOAL_OK : SHOAL_ERR_NOMEM;
}

/* setup->listen: the default endpoint's own name, as peers reach it. */
static void describe_listen(struct shoal_transport_setup *setup, const struct bind_choice *b, const void *name)
{
    char addr[96] = "?";
    size_t len = sizeof addr;
    if (!fi_av_straddr(shoal_ofi.av, name, addr, &len)) addr[sizeof addr - 1] = 0;
    snprintf(shoal_ofi.listen, sizeof shoal_ofi.listen, "%s on %s", addr, b->ifname);
    /* Cut to fit: the address comes first, the rule is only a reminder. */
    int n = snprintf(setup->listen, sizeof setup->listen, "ofi %.24s %s (", shoal_ofi.info->fabric_attr->prov_name,
                     shoal_ofi.listen);
    if (n > 0 && (size_t)n < sizeof setup->listen)
        snprintf(setup->listen + n, sizeof setup->listen - (size_t)n, "%.*s)",
                 (int)(sizeof setup->listen - (size_t)n - 2), b->rule);
}

/* What each PE tells the others. */
struct ofi_record {
    uint64_t addrlen;
    struct shoal_ofi_region region[SHOAL_SEG_COUNT][SHOAL_OFI_REGIONS];
    unsigned char addr[OFI_ADDR_MAX];
};

static shoal_status_t exchange(struct shoal_transport_setup *setup, const struct bind_choice *b)
{
    const int n = setup->n_pes;
    struct ofi_record mine;
    struct shoal_boot_view view = {0};
    /* The provider takes the names packed, OFI_AV_BATCH PEs at a time: at
     * 65,536 PEs the whole array would be 8.4 MB in every PE. Its cost is
     * per name, not per call (65,536 names into tcp;ofi_rxm's table: 0.16
     * to 0.25 s 4 at a time, 0.33 to 0.36 s at once), and a batch this
     * small makes the tests' jobs of 5 to 8 PEs insert in several. */
    unsigned char *names = calloc(OFI_AV_BATCH, OFI_ADDR_MAX);
    shoal_status_t st = SHOAL_ERR_NOMEM;
    shoal_ofi.addr = calloc((size_t)n, sizeof *shoal_ofi.addr);
    shoal_ofi.remote = calloc((size_t)n * SHOAL_SEG_COUNT * SHOAL_OFI_REGIONS, sizeof *shoal_ofi.remote);
    if (!names || !shoal_ofi.addr || !shoal_ofi.remote) goto out;
    memset(&mine, 0, sizeof mine);
    size_t len = sizeof mine.addr;
    int ret = fi_getname(&shoal_ofi.dflt.ep->fid, mine.addr, &len);
    if (ret != 0) {
        st = shoal_ofi_fail("fi_getname", ret);
        goto out;
    }
    mine.addrlen = len;
    describe_listen(setup, b, mine.addr);
    memcpy(mine.region, shoal_ofi.region, sizeof mine.region);
    st = shoal_boot_allgather_view(setup->boot, &mine, sizeof mine, &view);
    if (st != SHOAL_OK) goto out;
    const struct ofi_record *all = view.data;
    for (int pe = 0; pe < n; pe++) {
        if (all[pe].addrlen != mine.addrlen) {
            shoal_error("ofi", "PE %d has a %llu-byte fabric address, this PE %llu: all PEs must use one provider",
                        pe, (unsigned long long)all[pe].addrlen, (unsigned long long)mine.addrlen);
            st = SHOAL_ERR_INVAL;
            goto out;
        }
        memcpy(names + (size_t)(pe % OFI_AV_BATCH) * mine.addrlen, all[pe].addr, mine.addrlen);
        memcpy(&shoal_ofi.remote[(size_t)pe * SHOAL_SEG_COUNT * SHOAL_OFI_REGIONS], all[pe].region,
               sizeof all[pe].region);
        const int first = pe - pe % OFI_AV_BATCH, count = pe + 1 - first;
        if (count < OFI_AV_BATCH && pe + 1 < n) continue;
        ret = fi_av_insert(shoal_ofi.av, names, (size_t)count, shoal_ofi.addr + first, 0, NULL);
        if (ret != count) {
            st = shoal_ofi_fail("fi_av_insert", ret < 0 ? ret : -FI_EADDRNOTAVAIL);
            goto out;
        }
    }
    st = SHOAL_OK;
out:
    free(names);
    shoal_boot_view_release(&view);
    return st;
}

static void ofi_fini(struct shoal_transport_setup *setup);

static shoal_status_t ofi_init(struct shoal_transport_setup *setup)
{
    shoal_status_t st;
    int ret;
    struct bind_choice bind;
    struct shoal_config cfg;
    char err[320];
    memset(&shoal_ofi, 0, sizeof shoal_ofi);
    shoal_ofi.wait_fd = -1;
    shoal_ofi.my_pe = setup->my_pe;
    shoal_ofi.n_pes = setup->n_pes;
    shoal_ofi.flush_word = setup->flush_word;
    pthread_mutex_init(&shoal_ofi.ctx_lock, NULL);
    pthread_mutex_init(&shoal_ofi.key_lock, NULL);
    if (shoal_config_load(&cfg, NULL, err, sizeof err) != SHOAL_OK) {
        shoal_error("ofi", "%s", err);
        st = SHOAL_ERR_INVAL;
        goto fail;
    }
    shoal_ofi.timeout_ns = (cfg.fabric_timeout > 0 ? cfg.fabric_timeout : 1) * 1000000000LL;
    const char *thread = cfg.fabric_progress_thread;
    if (strcmp(thread, "auto") && strcmp(thread, "on") && strcmp(thread, "off")) {
        shoal_error("ofi", "SHMEM_FABRIC_PROGRESS_THREAD is '%s': it must be auto, on or off", thread);
        st = SHOAL_ERR_INVAL;
        goto fail;
    }
    st = choose_bind(setup, &bind);
    if (st != SHOAL_OK) goto fail;
    st = choose_provider();
    if (st == SHOAL_OK) st = bind_provider(&bind);
    if (st != SHOAL_OK) goto fail;
    ret = fi_fabric(shoal_ofi.info->fabric_attr, &shoal_ofi.fabric, NULL);
    if (ret) goto fail_call_fabric;
    ret = fi_domain(shoal_ofi.fabric, shoal_ofi.info, &shoal_ofi.domain, NULL);
    if (ret) {
        st = shoal_ofi_fail("fi_domain", ret);
        goto fail;
    }
    struct fi_av_attr av_attr = {
        .type = shoal_ofi.info->domain_attr->av_type != FI_AV_UNSPEC ? shoal_ofi.info->domain_attr->av_type
                                                                     : FI_AV_TABLE,
        .count = (size_t)setup->n_pes};
    ret = fi_av_open(shoal_ofi.domain, &av_attr, &shoal_ofi.av, NULL);
    if (ret) {
        st = shoal_ofi_fail("fi_av_open", ret);
        goto fail;
    }
    /* Registrations bound to an endpoint need it first, and the provider's
     * demands are read before anything is registered. */
    shoal_ofi.mr_endpoint = (shoal_ofi.info->domain_attr->mr_mode & FI_MR_ENDPOINT) != 0;
    shoal_ofi.mr_local = (shoal_ofi.info->domain_attr->mr_mode & FI_MR_LOCAL) || shoal_ofi_force_mr_local;
    shoal_ofi.prov_key = (shoal_ofi.info->domain_attr->mr_mode & FI_MR_PROV_KEY) != 0;
    st = open_write_counter();
    if (st == SHOAL_OK) st = shoal_ofi_ctx_open(&shoal_ofi.dflt, 1);
    if (st != SHOAL_OK) goto fail;
    atomic_store(&shoal_ofi.dflt.ready, 1);
    st = check_provider(setup);
    if (st != SHOAL_OK) goto fail;
    st = shoal_ofi_register_segments(setup);
    if (st != SHOAL_OK) goto fail;
    st = exchange(setup, &bind);
    if (st != SHOAL_OK) goto fail;
    /* A provider with automatic progress moves data on its own. */
    const int auto_progress = shoal_ofi.info->domain_attr->data_progress == FI_PROGRESS_AUTO;
    shoal_ofi.want_thread = !strcmp(thread, "on") || (!strcmp(thread, "auto") && !auto_progress);
    shoal_debug("ofi", "progress thread %s (SHMEM_FABRIC_PROGRESS_THREAD=%s, provider progress %s)",
                shoal_ofi.want_thread ? "on" : "off", thread, auto_progress ? "auto" : "manual");
    st = shoal_ofi_thread_start();
    if (st != SHOAL_OK) goto fail;
    shoal_ofi.fatal = setup->fatal; /* from here on a failed operation ends the job */
    shoal_ofi.peer_lost = setup->peer_lost;
    shoal_debug("ofi", "libfabric transport up on %s: %d PEs reachable; listening on %s (%s)",
                shoal_ofi.info->fabric_attr->prov_name, setup->n_pes, shoal_ofi.listen, bind.rule);
    return SHOAL_OK;
fail_call_fabric:
    st = shoal_ofi_fail("fi_fabric", ret);
fail:
    ofi_fini(setup);
    return st;
}

static void close_fid(struct fid *fid, const char *what)
{
    if (!fid) return;
    int ret = fi_close(fid);
    if (ret) shoal_ofi_fail(what, ret);
}

/* Called after a bootstrap barrier: no peer sends to us any more, so the
 * progress thread can stop and everything closes in reverse order. */
static void ofi_fini(struct shoal_transport_setup *setup)
{
    (void)setup;
    shoal_ofi_thread_stop();
    if (shoal_ofi.dflt.ep) shoal_ofi_wait_all(&shoal_ofi.dflt, "finalize");
    shoal_ofi_pool_close();
    /* Registrations bound to the endpoint go before it. */
    shoal_ofi_deregister_segments();
    shoal_ofi_ctx_close(&shoal_ofi.dflt);
    close_fid(shoal_ofi.write_cntr ? &shoal_ofi.write_cntr->fid : NULL, "fi_close(write counter)");
    close_fid(shoal_ofi.av ? &shoal_ofi.av->fid : NULL, "fi_close(av)");
    close_fid(shoal_ofi.domain ? &shoal_ofi.domain->fid : NULL, "fi_close(domain)");
    close_fid(shoal_ofi.fabric ? &shoal_ofi.fabric->fid : NULL, "fi_close(fabric)");
    if (shoal_ofi.info) fi_freeinfo(shoal_ofi.info);
    free(shoal_ofi.addr);
    free(shoal_ofi.remote);
    pthread_mutex_destroy(&shoal_ofi.ctx_lock);
    pthread_mutex_destroy(&shoal_ofi.key_lock);
    memset(&shoal_ofi, 0, sizeof shoal_ofi);
    shoal_ofi.wait_fd = -1;
}

/* The progress thread, or a provider with automatic progress, applies
 * peers' operations while the PE's waits sleep. */
static int ofi_serves_itself(void)
{
    return shoal_ofi.thread_started || shoal_ofi.info->domain_attr->data_progress == FI_PROGRESS_AUTO;
}

const struct shoal_transport_ops shoal_transport_ofi = {
    .name = "ofi",
    .init = ofi_init,
    .ctx_create = shoal_ofi_ctx_create,
    .ctx_destroy = shoal_ofi_ctx_destroy,
    .put = shoal_ofi_put,
    .get = shoal_ofi_get,
    .get_nbi = shoal_ofi_get_nbi,
    .amo = shoal_ofi_amo,
    .put_signal = shoal_ofi_put_signal,
    .signal = shoal_ofi_signal,
    .flag = shoal_ofi_flag,
    .fence = shoal_ofi_fence,
    .quiet = shoal_ofi_quiet,
    .progress = shoal_ofi_progress,
    .rest = shoal_ofi_rest,
    .incoming = shoal_ofi_incoming,
    .serves_itself = ofi_serves_itself,
    .fini = ofi_fini,
};
