/* bind_addr.c: which address data endpoints listen on (rules in
 * bind_addr.h). Route lookups use a connected UDP socket, which asks the
 * kernel for the route without sending anything; the default route comes
 * from /proc/net/route. */
#include "boot/bind_addr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/config.h"
#include "util/log.h"

/* What a rule found, before it is copied to the caller's buffers. */
struct bind_result {
    char ip[SHOAL_BIND_IP_MAX];
    char ifname[SHOAL_BIND_IFNAME_MAX];
    char rule[160];
};

/* The first IPv4 address of interface name (which must be up). */
static shoal_status_t iface_addr(const char *by, const char *name, struct bind_result *r, char *err, size_t errlen)
{
    struct ifaddrs *list, *i;
    if (getifaddrs(&list) != 0) {
        snprintf(err, errlen, "getifaddrs failed: %s", strerror(errno));
        return SHOAL_ERR_SYS;
    }
    int seen = 0, down = 0;
    for (i = list; i; i = i->ifa_next) {
        if (!i->ifa_name || strcmp(i->ifa_name, name)) continue;
        seen = 1;
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET) continue;
        if (!(i->ifa_flags & IFF_UP)) {
            down = 1;
            continue;
        }
        inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, r->ip, sizeof r->ip);
        snprintf(r->ifname, sizeof r->ifname, "%s", name);
        freeifaddrs(list);
        return SHOAL_OK;
    }
    freeifaddrs(list);
    snprintf(err, errlen, "%s=%s: %s", by, name,
             !seen ? "no such network interface on this host"
             : down ? "the interface is down"
                    : "the interface has no IPv4 address");
    return SHOAL_ERR_INVAL;
}

/* The interface that holds IPv4 address ip (a local address). */
static int iface_of(const char *ip, char *ifname, size_t len)
{
    struct ifaddrs *list, *i;
    struct in_addr want;
    if (inet_pton(AF_INET, ip, &want) != 1 || getifaddrs(&list) != 0) return -1;
    int found = -1;
    for (i = list; i && found; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !i->ifa_name) continue;
        if (((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr != want.s_addr) continue;
        snprintf(ifname, len, "%s", i->ifa_name);
        found = 0;
    }
    freeifaddrs(list);
    return found;
}

static int is_loopback(const struct sockaddr *a)
{
    return (ntohl(((const struct sockaddr_in *)a)->sin_addr.s_addr) >> 24) == 127;
}

/* Source address of the route to host (a name or dotted quad). A name is
 * taken at its first non-loopback address: a host's own name often maps to
 * 127.0.1.1 locally, which other hosts cannot reach. A loopback dotted quad
 * is taken as given (every "host" of the job is on this machine). */
static shoal_status_t route_to(const char *what, const char *host, struct bind_result *r, char *err, size_t errlen)
{
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_DGRAM}, *res = NULL, *pick;
    struct in_addr literal;
    int gai = getaddrinfo(host, "9", &hints, &res);
    if (gai != 0 || !res) {
        snprintf(err, errlen, "cannot resolve %s '%s' to an IPv4 address: %s", what, host,
                 gai_strerror(gai));
        return SHOAL_ERR_INVAL;
    }
    pick = res;
    if (inet_pton(AF_INET, host, &literal) != 1) {
        for (pick = res; pick && is_loopback(pick->ai_addr); pick = pick->ai_next) continue;
        if (!pick) {
            freeaddrinfo(res);
            snprintf(err, errlen, "%s '%s' resolves only to loopback addresses here", what, host);
            return SHOAL_ERR_INVAL;
        }
    }
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in src;
    socklen_t slen = sizeof src;
    int ok = fd >= 0 && connect(fd, pick->ai_addr, pick->ai_addrlen) == 0 &&
             getsockname(fd, (struct sockaddr *)&src, &slen) == 0;
    int e = errno;
    char dst[SHOAL_BIND_IP_MAX] = "";
    inet_ntop(AF_INET, &((struct sockaddr_in *)pick->ai_addr)->sin_addr, dst, sizeof dst);
    freeaddrinfo(res);
    if (fd >= 0) close(fd);
    if (!ok) {
        snprintf(err, errlen, "no route to %s %s (%s): %s", what, host, dst, strerror(e));
        return SHOAL_ERR_SYS;
    }
    inet_ntop(AF_INET, &src.sin_addr, r->ip, sizeof r->ip);
    if (iface_of(r->ip, r->ifname, sizeof r->ifname) != 0) {
        snprintf(err, errlen, "the route to %s %s leaves from %s, which no interface holds", what,
                 host, r->ip);
        return SHOAL_ERR_SYS;
    }
    if (strcmp(host, dst) == 0)
        snprintf(r->rule, sizeof r->rule, "route to the %s %s", what, dst);
    else
        snprintf(r->rule, sizeof r->rule, "route to the %s %s (%s)", what, host, dst);
    return SHOAL_OK;
}

/* The interface of the IPv4 default route (lowest metric), from the kernel's
 * routing table, and its address. */
static shoal_status_t default_route(struct bind_result *r, char *err, size_t errlen)
{
    FILE *f = fopen("/proc/net/route", "r");
    char line[256], best[SHOAL_BIND_IFNAME_MAX] = "";
    unsigned long best_metric = ~0UL;
    if (!f) {
        snprintf(err, errlen, "cannot read /proc/net/route: %s", strerror(errno));
        return SHOAL_ERR_SYS;
    }
    while (fgets(line, sizeof line, f)) {
        char name[64];
        unsigned long dest, gw, flags, refcnt, use, metric, mask;
        if (sscanf(line, "%63s %lx %lx %lx %lu %lu %lu %lx", name, &dest, &gw, &flags, &refcnt, &use, &metric,
                   &mask) != 8)
            continue; /* the header */
        if (dest != 0 || mask != 0 || !(flags & 1 /* RTF_UP */)) continue;
        if (metric < best_metric && strlen(name) < sizeof best) best_metric = metric, strcpy(best, name);
    }
    fclose(f);
    if (!best[0]) {
        snprintf(err, errlen, "no default route on this host either: set SHMEM_NETWORK_IFACE to the interface "
                              "the job uses");
        return SHOAL_ERR_INVAL;
    }
    shoal_status_t st = iface_addr("the default route's interface", best, r, err, errlen);
    if (st == SHOAL_OK) snprintf(r->rule, sizeof r->rule, "the default route's interface");
    return st;
}

/* The default route's interface when the route the rules wanted failed
 * (why), with one warning line saying so. */
static shoal_status_t default_route_because(struct bind_result *r, const char *why, char *err, size_t errlen)
{
    char fallback[256];
    shoal_status_t st = default_route(r, fallback, sizeof fallback);
    if (st == SHOAL_OK)
        shoal_warn("boot", "data endpoints listen on %s (%s), the default route's interface (%s); set "
                   "SHMEM_NETWORK_IFACE to choose another", r->ip, r->ifname, why);
    else /* both reasons: what the rule wanted, and why the fallback failed too */
        snprintf(err, errlen, "%s; %s", why, fallback);
    return st;
}

static shoal_status_t choose(int n_nodes, const char *peer_host, struct bind_result *r, char *err, size_t errlen)
{
    struct shoal_config cfg;
    shoal_status_t st = shoal_config_load(&cfg, NULL, err, errlen);
    if (st != SHOAL_OK) return st;
    const char *tcp_iface = getenv("FI_TCP_IFACE");
    /* (a) the user's choice */
    const char *by = cfg.network_iface && *cfg.network_iface ? "SHMEM_NETWORK_IFACE"
                     : tcp_iface && *tcp_iface                ? "FI_TCP_IFACE"
                                                              : NULL;
    if (by) {
        const char *name = by[0] == 'S' ? cfg.network_iface : tcp_iface;
        st = iface_addr(by, name, r, err, errlen);
        if (st == SHOAL_OK) snprintf(r->rule, sizeof r->rule, "%s=%s", by, name);
        return st;
    }
    /* (b) nothing leaves this host */
    if (n_nodes <= 1) {
        snprintf(r->ip, sizeof r->ip, "127.0.0.1");
        snprintf(r->ifname, sizeof r->ifname, "lo");
        snprintf(r->rule, sizeof r->rule, "one host: loopback");
        return SHOAL_OK;
    }
    /* (c) oshrun across hosts: toward node 0's rendezvous address */
    const char *rdv = getenv("SHOAL_RENDEZVOUS");
    if (rdv && *rdv) {
        char host[256];
        const char *colon = strrchr(rdv, ':');
        size_t n = colon ? (size_t)(colon - rdv) : strlen(rdv);
        if (n >= sizeof host || n == 0) {
            snprintf(err, errlen, "SHOAL_RENDEZVOUS='%s' is not HOST:PORT", rdv);
            return SHOAL_ERR_INVAL;
        }
        memcpy(host, rdv, n);
        host[n] = 0;
        if (host[0] == '[' && host[n - 1] == ']') { /* [ADDR]:PORT */
            memmove(host, host + 1, n - 2);
            host[n - 2] = 0;
        }
        char why[256];
        st = route_to("rendezvous", host, r, why, sizeof why);
        if (st == SHOAL_OK) return st;
        /* Node 0 named by its own host name, which maps to loopback here. */
        return default_route_because(r, why, err, errlen);
    }
    /* (d) PMI/PMIx: toward another node, else the default route */
    char why[256] = "no other host is known";
    if (peer_host && *peer_host) {
        st = route_to("node", peer_host, r, why, sizeof why);
        if (st == SHOAL_OK) return st;
    }
    return default_route_because(r, why, err, errlen);
}

shoal_status_t shoal_bind_address_explain(int n_nodes, const char *peer_host, char *ip, size_t iplen, char *ifname,
                                          size_t ifnamelen, char *rule, size_t rulelen, char *err, size_t errlen)
{
    struct bind_result r;
    memset(&r, 0, sizeof r);
    if (err && errlen) err[0] = 0;
    char scratch[256];
    if (!err || !errlen) err = scratch, errlen = sizeof scratch;
    if (!ip || iplen < SHOAL_BIND_IP_MAX || !ifname || ifnamelen == 0) {
        snprintf(err, errlen, "bind address: output buffers too small (ip %zu bytes, need %d)", iplen,
                 SHOAL_BIND_IP_MAX);
        return SHOAL_ERR_INVAL;
    }
    /* The rules say why without a prefix; it is added here, once. */
    char why[320];
    shoal_status_t st = choose(n_nodes, peer_host, &r, why, sizeof why);
    if (st != SHOAL_OK) {
        snprintf(err, errlen, "bind address: %s", why);
        return st;
    }
    if (strlen(r.ifname) >= ifnamelen) {
        snprintf(err, errlen, "bind address: interface name '%s' does not fit %zu bytes", r.ifname, ifnamelen);
        return SHOAL_ERR_INVAL;
    }
    snprintf(ip, iplen, "%s", r.ip);
    snprintf(ifname, ifnamelen, "%s", r.ifname);
    if (rule && rulelen) snprintf(rule, rulelen, "%s", r.rule);
    return SHOAL_OK;
}

shoal_status_t shoal_bind_address(int n_nodes, const char *peer_host, char *ip, size_t iplen, char *ifname,
                                  size_t ifnamelen, char *err, size_t errlen)
{
    return shoal_bind_address_explain(n_nodes, peer_host, ip, iplen, ifname, ifnamelen, NULL, 0, err, errlen);
}

void shoal_bind_host_of_key(const char *key, char *host, size_t hostlen)
{
    if (!host || hostlen == 0) return;
    /* A node key is "hostname/hash[/nRANK]" (boot.c). */
    size_t n = strnlen(key, SHOAL_NODE_KEY_MAX - 1);
    const char *slash = memchr(key, '/', n);
    if (slash) n = (size_t)(slash - key);
    if (n >= hostlen) n = hostlen - 1;
    memcpy(host, key, n);
    host[n] = 0;
}
