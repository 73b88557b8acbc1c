/* tls.c: the encrypted transport's start and end, and its ops table
 * (tls.h says how it works). Start-up is one bootstrap allgather of
 * listening addresses and PE 0's job key; streams open at first use. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "boot/bind_addr.h"
#include "transport/tls/tls.h"
#include "util/log.h"

struct shoal_tls shoal_tls = {.listen_fd = -1};

static shoal_status_t fail(const char *why, shoal_status_t st)
{
    shoal_error("tls", "the encrypted transport cannot start: %s", why);
    return st;
}

/* A socket listening on ip (ifname's address), on a port the kernel picks. */
static shoal_status_t open_listener(const char *ip, const char *ifname, struct sockaddr_in *where, char *err,
                                    size_t errlen)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "socket: %s", strerror(errno));
        return SHOAL_ERR_SYS;
    }
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = 0};
    socklen_t sl = sizeof sin;
    if (inet_pton(AF_INET, ip, &sin.sin_addr) != 1 ||
        bind(fd, (struct sockaddr *)&sin, sizeof sin) != 0 || listen(fd, 128) != 0 ||
        getsockname(fd, (struct sockaddr *)&sin, &sl) != 0) {
        snprintf(err, errlen, "cannot listen on %s (%s): %s", ip, ifname, strerror(errno));
        close(fd);
        return SHOAL_ERR_SYS;
    }
    shoal_tls.listen_fd = fd;
    *where = sin;
    return SHOAL_OK;
}

static shoal_status_t tls_init(struct shoal_transport_setup *setup)
{
    char err[300], rule[100], ip[SHOAL_BIND_IP_MAX], ifname[SHOAL_BIND_IFNAME_MAX];
    shoal_status_t st;
    shoal_tls.setup = setup;
    setup->atomics_by_cpu = 1; /* the target's CPU applies them (tls_server.c) */
    shoal_tls.my_pe = setup->my_pe;
    shoal_tls.n_pes = setup->n_pes;
    /* Where PEs outnumber cores readers yield between their polls
     * (tls_ssl.c), so the PE being waited for gets the core. */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    shoal_tls.spin_yields = setup->machine_pes > cores;
    atomic_init(&shoal_tls.stopping, 0);
    atomic_init(&shoal_tls.handshakes, 0);
    pthread_mutex_init(&shoal_tls.ctx_lock, NULL);
    pthread_mutex_init(&shoal_tls.serve_lock, NULL);

    /* Collective steps come first and always, so a PE that fails locally
     * still takes part in them and nobody waits for it in vain. */
    struct shoal_tls_addr mine;
    memset(&mine, 0, sizeof mine);
    st = shoal_tls_load(err, sizeof err);
    if (st == SHOAL_OK)
        st = shoal_bind_address_explain(setup->n_nodes, setup->peer_host, ip, sizeof ip, ifname, sizeof ifname, rule,
                                        sizeof rule, err, sizeof err);
    if (st == SHOAL_OK) st = open_listener(ip, ifname, &mine.sin, err, sizeof err);
    /* The job key is PE 0's draw (the bootstrap has no broadcast: it rides
     * in PE 0's record of the exchange). */
    if (st == SHOAL_OK && setup->my_pe == 0 && getrandom(mine.key, sizeof mine.key, 0) != (ssize_t)sizeof mine.key) {
        snprintf(err, sizeof err, "getrandom: %s", strerror(errno));
        st = SHOAL_ERR_SYS;
    }
    struct shoal_tls_addr *all = calloc((size_t)setup->n_pes, sizeof *all);
    shoal_tls.peer = calloc((size_t)setup->n_pes, sizeof *shoal_tls.peer);
    if (!all || !shoal_tls.peer) {
        free(all);
        return fail("out of memory", SHOAL_ERR_NOMEM);
    }
    /* A PE that failed contributes a zero port; everyone then gives up.
     * Copied, not viewed (boot.h): the records hold the job key, which is
     * wiped below, and a host's shared mapping could not be. */
    shoal_status_t gst = setup->boot->ops->allgather(setup->boot, &mine, sizeof mine, all);
    explicit_bzero(mine.key, sizeof mine.key);
    int failed_pe = -1;
    for (int pe = 0; pe < setup->n_pes; pe++) {
        shoal_tls.peer[pe].sin = all[pe].sin;
        if (failed_pe < 0 && all[pe].sin.sin_port == 0) failed_pe = pe;
    }
    if (st == SHOAL_OK && gst == SHOAL_OK && failed_pe < 0) st = shoal_tls_contexts(all[0].key, err, sizeof err);
    explicit_bzero(all, (size_t)setup->n_pes * sizeof *all);
    free(all);
    if (st != SHOAL_OK) return fail(err, st);
    if (gst != SHOAL_OK) return fail("the address exchange failed", gst);
    if (failed_pe >= 0) {
        snprintf(err, sizeof err, "PE %d could not start its side", failed_pe);
        return fail(err, SHOAL_ERR_SYS);
    }
    st = shoal_tls_pair_init();
    if (st == SHOAL_OK) st = shoal_tls_ctx_open_default();
    if (st == SHOAL_OK) st = shoal_tls_server_start(err, sizeof err);
    if (st != SHOAL_OK) return fail(err, st);
    snprintf(setup->listen, sizeof setup->listen, "tls %s:%u on %s (%s)", ip, ntohs(mine.sin.sin_port), ifname,
             rule);
    shoal_debug("tls", "listening: %s; %s", setup->listen, shoal_tls_lib.OpenSSL_version(OPENSSL_VERSION));
    return SHOAL_OK;
}

/* The runtime has quieted and synchronised every PE: no peer sends more. */
static void tls_fini(struct shoal_transport_setup *setup)
{
    (void)setup;
    shoal_tls_ctx_close_all();
    shoal_tls_pair_shutdown();
    shoal_tls_server_stop();
    shoal_tls_pair_free();
    shoal_tls_contexts_free();
    explicit_bzero(shoal_tls.key, sizeof shoal_tls.key);
    free(shoal_tls.peer);
    shoal_tls.peer = NULL;
}

/* Server threads apply peers' requests by themselves; a waiting PE applies
 * them too (tls_server.c says why), leasing the streams while it spins, and
 * reads the get_nbi answers that have come (tls_client.c). */
static void tls_progress(void)
{
    shoal_tls_drain_gets();
    shoal_tls_serve(1, 1);
}

static void tls_rest(void)
{
    shoal_tls_drain_gets();
    shoal_tls_serve(1, 0);
}

static long long tls_incoming(void)
{
    return atomic_load_explicit(&shoal_tls.applied_ns, memory_order_relaxed);
}

const char *shoal_tls_refusal_text(uint32_t status)
{
    switch (status) {
    case SHOAL_TLS_OUT_OF_RANGE: return "outside the target's symmetric segment";
    case SHOAL_TLS_READ_ONLY: return "a write into the target's read-only static data (const or RELRO)";
    default: return "a malformed request";
    }
}

void shoal_tls_addr_text(const struct sockaddr_in *sin, char out[SHOAL_TLS_ADDR_TEXT])
{
    char ip[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &sin->sin_addr, ip, sizeof ip);
    snprintf(out, SHOAL_TLS_ADDR_TEXT, "%s:%u", ip, ntohs(sin->sin_port));
}

static int tls_serves_itself(void) { return 1; }

static int tls_threads_busy(void) { return atomic_load_explicit(&shoal_tls.working, memory_order_relaxed) > 0; }

const struct shoal_transport_ops shoal_transport_tls = {
    .name = "tls",
    .init = tls_init,
    .ctx_create = shoal_tls_ctx_create,
    .ctx_destroy = shoal_tls_ctx_destroy,
    .put = shoal_tls_put,
    .get = shoal_tls_get,
    .get_nbi = shoal_tls_get_nbi,
    .amo = shoal_tls_amo,
    .signal = shoal_tls_signal,
    .put_signal = shoal_tls_put_signal,
    .fence = shoal_tls_fence,
    .quiet = shoal_tls_quiet,
    .progress = tls_progress,
    .rest = tls_rest,
    .serves_itself = tls_serves_itself,
    .incoming = tls_incoming,
    .threads_busy = tls_threads_busy,
    .fini = tls_fini,
};
