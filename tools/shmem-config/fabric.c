/* fabric.c: the parts of --diagnose about reaching other hosts: libfabric
 * and the providers that can carry Shoal's traffic (reliable datagrams with
 * RMA and atomics), the address data endpoints would listen on here
 * (boot/bind_addr.h), OpenSSL for the bootstrap between hosts, and PMIx. */
#include "shmem_config.h"

#include "boot/bind_addr.h"

#include <rdma/fabric.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Providers libfabric offers for Shoal's needs, each named once. */
static int list_providers(struct sc_json *j)
{
    struct fi_info *hints = fi_allocinfo(), *info = NULL;
    int count = 0;
    if (!hints) return -1;
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_RMA | FI_ATOMIC;
    hints->mode = ~0ULL;
    hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_PROV_KEY | FI_MR_ALLOCATED | FI_MR_ENDPOINT | FI_MR_LOCAL;
    int rc = fi_getinfo(FI_VERSION(1, 9), NULL, NULL, 0, hints, &info);
    sc_json_open(j, "providers", '[');
    char seen[16][64];
    for (struct fi_info *i = rc == 0 ? info : NULL; i; i = i->next) {
        const char *name = i->fabric_attr->prov_name;
        int dup = 0;
        for (int k = 0; k < count && !dup; k++) dup = !strcmp(seen[k], name);
        if (dup || count == 16) continue;
        snprintf(seen[count++], sizeof seen[0], "%s", name);
        sc_json_str(j, NULL, name);
    }
    sc_json_close(j, '[');
    if (info) fi_freeinfo(info);
    fi_freeinfo(hints);
    return count;
}

/* One bind rule's answer on this host: address, interface, rule, or why not. */
static int report_bind(struct sc_json *j, const char *key, int n_nodes)
{
    char ip[SHOAL_BIND_IP_MAX], ifname[SHOAL_BIND_IFNAME_MAX], rule[160], err[320];
    shoal_status_t st = shoal_bind_address_explain(n_nodes, NULL, ip, sizeof ip, ifname, sizeof ifname, rule,
                                                   sizeof rule, err, sizeof err);
    sc_json_open(j, key, '{');
    if (st == SHOAL_OK) {
        sc_json_str(j, "address", ip);
        sc_json_str(j, "interface", ifname);
        sc_json_str(j, "rule", rule);
    } else {
        sc_json_null(j, "address");
        sc_json_str(j, "error", err);
    }
    sc_json_close(j, '{');
    return st == SHOAL_OK;
}

/* Where this host's PEs would listen for their peers' operations, for a
 * job on this host alone and for one spanning hosts (under oshrun --nnodes
 * the route to the rendezvous decides; here, without one, the default
 * route's interface does unless an interface is named). */
static void report_listen(struct sc_json *j, struct sc_problems *p)
{
    sc_json_open(j, "listen", '{');
    report_bind(j, "one_host", 1);
    int ok = report_bind(j, "across_hosts", 2);
    sc_json_str(j, "note", "data endpoints (ofi, tls) listen only on this address, never on every interface; "
                           "SHMEM_NETWORK_IFACE names another; SHMEM_INFO=1 prints each PE's actual address");
    sc_json_close(j, '{');
    if (!ok)
        sc_problem(p, "warning", "set SHMEM_NETWORK_IFACE to the interface jobs across hosts should use",
                   "no address to listen on for jobs spanning hosts was found on this host (see listen.across_hosts)");
}

void sc_fabric_report(struct sc_json *j, struct sc_problems *p)
{
    char version[32];
    uint32_t v = fi_version();
    snprintf(version, sizeof version, "%u.%u", FI_MAJOR(v), FI_MINOR(v));
    sc_json_open(j, "libfabric", '{');
    sc_json_bool(j, "available", 1);
    sc_json_str(j, "version", version);
    sc_json_str(j, "FI_PROVIDER", getenv("FI_PROVIDER"));
    const int n = list_providers(j);
    sc_json_str(j, "note", "jobs spanning hosts (and SHMEM_TRANSPORT=ofi) use these; FI_PROVIDER chooses one");
    sc_json_close(j, '{');
    if (n == 0)
        sc_problem(p, "warning", "check FI_PROVIDER and the network interfaces (FI_TCP_IFACE for tcp)",
                   "libfabric offers no provider with reliable datagrams, RMA and atomics%s%s: jobs on one host "
                   "work, jobs spanning hosts would not start",
                   getenv("FI_PROVIDER") ? " for FI_PROVIDER=" : "", getenv("FI_PROVIDER") ? getenv("FI_PROVIDER") : "");

    report_listen(j, p);

    sc_json_open(j, "openssl", '{');
    sc_json_bool(j, "available", 1);
    sc_json_str(j, "version", OpenSSL_version(OPENSSL_VERSION));
    sc_json_str(j, "note", "oshrun uses TLS 1.3 between the hosts of a job (docs/bootstrap.md)");
    sc_json_close(j, '{');

    sc_json_open(j, "pmix", '{');
#ifdef SHOAL_HAVE_PMIX
    sc_json_bool(j, "available", 1);
    sc_json_str(j, "note", "programs start under Open MPI's mpirun and srun --mpi=pmix (docs/launchers.md)");
#else
    sc_json_bool(j, "available", 0);
    sc_json_str(j, "reason", "Shoal was built without PMIx (install libpmix-dev and rebuild)");
#endif
    sc_json_close(j, '{');
}
