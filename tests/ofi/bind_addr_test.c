/* bind_addr_test.c: the bind rules of boot/bind_addr.h in one process, on
 * this host's real interfaces (loopback is always there): a named interface
 * wins, a one-host job gets loopback, a multi-host job under oshrun follows
 * the route to the rendezvous, a name that maps only to loopback falls back
 * to the default route's interface (or fails when there is none), and
 * errors are one line naming the setting and the value; the host name
 * rule (d) takes from another node's key. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boot/bind_addr.h"
#include "harness.h"

static char ip[SHOAL_BIND_IP_MAX], ifname[SHOAL_BIND_IFNAME_MAX], rule[160], err[320];

static shoal_status_t bind_with(int n_nodes, const char *peer)
{
    ip[0] = ifname[0] = rule[0] = err[0] = 0;
    return shoal_bind_address_explain(n_nodes, peer, ip, sizeof ip, ifname, sizeof ifname, rule, sizeof rule, err,
                                      sizeof err);
}

static void clear_env(void)
{
    unsetenv("SHMEM_NETWORK_IFACE");
    unsetenv("FI_TCP_IFACE");
    unsetenv("SHOAL_RENDEZVOUS");
}

int main(void)
{
    test_pe = 0;
    clear_env();
    /* (b) one host */
    CHECK(bind_with(1, NULL) == SHOAL_OK);
    CHECK_MSG(!strcmp(ip, "127.0.0.1") && !strcmp(ifname, "lo"), "one host: %s on %s", ip, ifname);
    /* (a) a named interface wins, SHMEM_NETWORK_IFACE over FI_TCP_IFACE */
    setenv("FI_TCP_IFACE", "lo", 1);
    CHECK(bind_with(4, NULL) == SHOAL_OK);
    CHECK_MSG(!strcmp(ip, "127.0.0.1") && strstr(rule, "FI_TCP_IFACE=lo"), "FI_TCP_IFACE: %s (%s)", ip, rule);
    setenv("SHMEM_NETWORK_IFACE", "shoal-no-such0", 1);
    CHECK(bind_with(1, NULL) == SHOAL_ERR_INVAL);
    CHECK_MSG(strstr(err, "SHMEM_NETWORK_IFACE=shoal-no-such0") && strstr(err, "no such network interface"),
              "error line: %s", err);
    CHECK_MSG(!strcmp(ip, "") && !strcmp(ifname, ""), "outputs written on error: '%s' '%s'", ip, ifname);
    setenv("SHMEM_NETWORK_IFACE", "lo", 1);
    CHECK(bind_with(2, NULL) == SHOAL_OK);
    CHECK_MSG(strstr(rule, "SHMEM_NETWORK_IFACE=lo") != NULL, "rule %s", rule);
    clear_env();
    /* (c) under oshrun across hosts: the route to the rendezvous */
    setenv("SHOAL_RENDEZVOUS", "127.0.0.1:29400", 1);
    CHECK(bind_with(2, NULL) == SHOAL_OK);
    CHECK_MSG(!strcmp(ip, "127.0.0.1") && !strcmp(ifname, "lo") && strstr(rule, "rendezvous"),
              "rendezvous 127.0.0.1: %s on %s (%s)", ip, ifname, rule);
    /* A name that maps only to loopback (from /etc/hosts: no DNS query)
     * never yields loopback for a job across hosts: the default route's
     * interface, or an error. */
    setenv("SHOAL_RENDEZVOUS", "localhost:29400", 1);
    shoal_status_t st = bind_with(2, NULL);
    CHECK_MSG(st == SHOAL_OK ? strncmp(ip, "127.", 4) != 0 && strstr(rule, "default route") != NULL
                             : strstr(err, "SHMEM_NETWORK_IFACE") != NULL,
              "rendezvous localhost: %s %s (%s) err '%s'", shoal_status_str(st), ip, rule, err);
    clear_env();
    /* (d) PMI/PMIx: another node's name, same rule for loopback-only names */
    st = bind_with(2, "localhost");
    CHECK_MSG(st == SHOAL_OK ? strncmp(ip, "127.", 4) != 0 : strstr(err, "SHMEM_NETWORK_IFACE") != NULL,
              "peer localhost: %s %s (%s) err '%s'", shoal_status_str(st), ip, rule, err);
    /* Rule (d)'s name: the host part of another node's key (boot.c:
     * "hostname/hash[/nRANK]"), cut to the buffer. */
    char host[SHOAL_NODE_KEY_MAX] = "unchanged", small[5];
    shoal_bind_host_of_key("node7.example/5f3a09c2", host, sizeof host);
    CHECK_MSG(!strcmp(host, "node7.example"), "host of a key: '%s'", host);
    shoal_bind_host_of_key("node7/5f3a09c2/n3", host, sizeof host);
    CHECK_MSG(!strcmp(host, "node7"), "host of an oshrun node's key: '%s'", host);
    shoal_bind_host_of_key("plainhost", host, sizeof host);
    CHECK_MSG(!strcmp(host, "plainhost"), "host of a key without a hash: '%s'", host);
    shoal_bind_host_of_key("node7.example/5f3a09c2", small, sizeof small);
    CHECK_MSG(!strcmp(small, "node"), "host cut to 5 bytes: '%s'", small);
    /* Buffers too small are refused, not overrun. */
    char tiny[4];
    CHECK(shoal_bind_address(1, NULL, tiny, sizeof tiny, ifname, sizeof ifname, err, sizeof err) == SHOAL_ERR_INVAL);
    return test_finish();
}
