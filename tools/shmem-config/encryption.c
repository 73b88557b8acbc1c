/* encryption.c: the "encryption" part of --diagnose: the policy in force
 * for data between hosts (SHMEM_ENCRYPT), the OpenSSL the encrypted
 * transport would load, and whether the kernel takes over its records
 * (kernel TLS) or OpenSSL encrypts in user space. The kernel check is real:
 * it attaches the "tls" upper-layer protocol to a loopback TCP socket, as
 * OpenSSL does when it hands a stream to the kernel. */
#include "shmem_config.h"

#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/config.h"

#ifndef TCP_ULP
#define TCP_ULP 31
#endif

/* 1 when the kernel accepts the tls ULP on a connected TCP socket, else 0
 * with the reason in why. Uses a loopback connection of its own. */
static int kernel_tls(char *why, size_t len)
{
    int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), c = -1, a = -1, ok = 0;
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof sin;
    if (l < 0 || bind(l, (struct sockaddr *)&sin, sizeof sin) != 0 || listen(l, 1) != 0 ||
        getsockname(l, (struct sockaddr *)&sin, &sl) != 0) {
        snprintf(why, len, "cannot open a loopback socket to test: %s", strerror(errno));
        goto out;
    }
    c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (c < 0 || connect(c, (struct sockaddr *)&sin, sizeof sin) != 0 || (a = accept(l, NULL, NULL)) < 0) {
        snprintf(why, len, "cannot connect on loopback to test: %s", strerror(errno));
        goto out;
    }
    if (setsockopt(c, IPPROTO_TCP, TCP_ULP, "tls", sizeof "tls") == 0)
        ok = 1;
    else
        snprintf(why, len, "the kernel refuses the tls upper-layer protocol (%s): the tls module is not loaded "
                 "or not built", strerror(errno));
out:
    if (a >= 0) close(a);
    if (c >= 0) close(c);
    if (l >= 0) close(l);
    return ok;
}

void sc_encryption_report(struct sc_json *j, struct sc_problems *p)
{
    const char *policy = getenv("SHMEM_ENCRYPT");
    if (!policy || !*policy) policy = "auto";
    sc_json_open(j, "encryption", '{');
    sc_json_str(j, "policy", policy);
    if (!strcmp(policy, "off"))
        sc_json_str(j, "between_hosts", "libfabric in the clear (SHMEM_ENCRYPT=off)");
    else if (!strcmp(policy, "required"))
        sc_json_str(j, "between_hosts", "TLS 1.3 streams, whatever the network");
    else
        sc_json_str(j, "between_hosts", "TLS 1.3 streams where the best network is TCP; RDMA hardware (verbs, efa, "
                    "cxi, ...) carries data unencrypted, announced at start-up");
    /* The same library the transport loads at run time. */
    void *ssl = dlopen("libssl.so.3", RTLD_NOW | RTLD_LOCAL);
    const char *(*version)(int) = ssl ? (const char *(*)(int))dlsym(ssl, "OpenSSL_version") : NULL;
    if (version) {
        sc_json_str(j, "openssl", version(0));
    } else {
        sc_json_null(j, "openssl");
        if (strcmp(policy, "off"))
            sc_problem(p, "error", "install libssl3",
                       "libssl.so.3 cannot be loaded: jobs spanning hosts cannot encrypt their data and will not "
                       "start with SHMEM_ENCRYPT=%s", policy);
    }
    char why[200] = "";
    int ktls = kernel_tls(why, sizeof why);
    sc_json_bool(j, "kernel_tls", ktls);
    sc_json_str(j, "data_path", ktls ? "kernel TLS: the kernel encrypts and decrypts records (AES-GCM)"
                                     : "user-space OpenSSL: one more pass over the data on each side");
    /* Slower, not wrong: a fact to show, not a problem to fix. */
    if (!ktls) sc_json_str(j, "kernel_tls_reason", why);
    sc_json_close(j, '{');
}
