/* bind_addr.h: the one IPv4 address (and its interface) on which a PE's
 * data-plane endpoints listen. Endpoint addresses are capabilities
 * (docs/bootstrap.md, "What grants access"): a PE must listen only on the
 * interface its job uses, never on every interface of the host.
 *
 * Every transport that opens a listening socket or fabric endpoint (ofi,
 * tls) calls shoal_bind_address before it does, and binds exactly there.
 *
 * Rules, first match wins:
 *  (a) the user named an interface: SHMEM_NETWORK_IFACE, else FI_TCP_IFACE
 *      -> that interface's first IPv4 address (error if it has none or is
 *      down);
 *  (b) the job runs on one host (n_nodes == 1) -> 127.0.0.1 on "lo";
 *  (c) under multi-node oshrun (SHOAL_RENDEZVOUS=HOST:PORT, set by oshrun
 *      for every PE; node 0's is its own address) -> the source address of
 *      the route to the rendezvous host (a UDP socket connect, which sends
 *      nothing, then getsockname). A host name is taken at its first
 *      non-loopback address (a host's own name often maps to 127.0.1.1);
 *      one that resolves only to loopback falls back to the default route's
 *      interface with a warning line; a loopback dotted quad stays loopback;
 *  (d) otherwise (PMI/PMIx launchers) -> the source address of the route to
 *      peer_host, a host name of another node (shoal_bind_host_of_key);
 *      if there is none or it does not resolve, the default route's
 *      interface, and one warning line says so;
 *  no default route either -> error: set SHMEM_NETWORK_IFACE.
 * No rule reads the network; nothing is sent. */
#ifndef SHOAL_BOOT_BIND_ADDR_H
#define SHOAL_BOOT_BIND_ADDR_H

#include <stddef.h>

#include "boot/boot.h"
#include "util/status.h"

/* Sizes that always suffice for the outputs ("255.255.255.255", IFNAMSIZ). */
#define SHOAL_BIND_IP_MAX 16
#define SHOAL_BIND_IFNAME_MAX 16

/* Writes the address (dotted quad) to ip and its interface name to ifname.
 * n_nodes: hosts in the job (>= 1). peer_host: a host name of another node
 * of this job, used by rule (d) only; NULL or "" when unknown. Not
 * collective; the same on every PE of a host given the same environment.
 * Returns SHOAL_OK, or SHOAL_ERR_INVAL / SHOAL_ERR_SYS with one line in err
 * naming the rule, the value and why (outputs untouched on error). */
shoal_status_t shoal_bind_address(int n_nodes, const char *peer_host, char *ip, size_t iplen, char *ifname,
                                  size_t ifnamelen, char *err, size_t errlen);

/* The same, and a short phrase naming the rule that chose the address
 * ("SHMEM_NETWORK_IFACE=eth1", "one host: loopback", "route to the
 * rendezvous 10.0.0.1", ...) in rule (for SHMEM_INFO, shmem-config). */
shoal_status_t shoal_bind_address_explain(int n_nodes, const char *peer_host, char *ip, size_t iplen, char *ifname,
                                          size_t ifnamelen, char *rule, size_t rulelen, char *err, size_t errlen);

/* The host name in a node key (boot.h), into host: for rule (d), the
 * runtime's peer_host, the host of the lowest-ranked PE on another host,
 * which it learns from the start-up exchange of node keys. */
void shoal_bind_host_of_key(const char *key, char *host, size_t hostlen);

#endif
