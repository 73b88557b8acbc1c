/* outsider.c: plays a process on a neighbouring host that knows no secret
 * and tries to touch a Shoal job's memory through libfabric: for every
 * IP:PORT given (the ports the PEs listen on), over tcp;ofi_rxm, an 8-byte
 * fi_write and an fi_read with each key 0..64 and 64 random keys, at
 * offsets 0, 8, 4096 and 1 MiB. Written bytes are 0xA5 (the job's pattern
 * never contains them).
 *
 *   netns_outsider IP:PORT...
 *
 * Prints "outsider: N attempts (W writes, R reads), W_OK writes and R_OK
 * reads completed, B bytes read" and exits 0 when no write and no read
 * completed, 1 when any did, 2 when it could not even start (a setup
 * failure, not a verdict). Each operation waits at most OP_WAIT_S.
 *
 * A target that refuses an operation drops the connection and rxm does not
 * reconnect that endpoint, so after every failure the outsider opens a
 * fresh endpoint: each attempt is a real one. */
#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#define N_SMALL_KEYS 65
#define N_RANDOM_KEYS 64
#define OP_WAIT_S 5.0

static struct fid_fabric *fabric;
static struct fid_domain *domain;
static struct fi_info *info;
static struct fid_av *av;
static struct fid_ep *ep;
static struct fid_cq *cq;

static void die(const char *call, int ret)
{
    fprintf(stderr, "outsider: %s failed: %s (%d)\n", call, fi_strerror(ret < 0 ? -ret : ret), ret);
    exit(2);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void open_fabric(void)
{
    struct fi_info *hints = fi_allocinfo();
    if (!hints) die("fi_allocinfo", -FI_ENOMEM);
    hints->caps = FI_RMA | FI_READ | FI_WRITE;
    hints->ep_attr->type = FI_EP_RDM;
    hints->domain_attr->mr_mode = 0; /* local buffers need no registration */
    hints->addr_format = FI_SOCKADDR_IN;
    hints->fabric_attr->prov_name = strdup("tcp;ofi_rxm");
    int ret = fi_getinfo(FI_VERSION(1, 10), NULL, NULL, 0, hints, &info);
    if (ret) die("fi_getinfo(tcp;ofi_rxm)", ret);
    fi_freeinfo(hints);
    if ((ret = fi_fabric(info->fabric_attr, &fabric, NULL))) die("fi_fabric", ret);
    if ((ret = fi_domain(fabric, info, &domain, NULL))) die("fi_domain", ret);
}

/* A fresh endpoint (with its own queue and address vector) aimed at sin. */
static fi_addr_t open_ep(const struct sockaddr_in *sin)
{
    int ret;
    struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
    if ((ret = fi_av_open(domain, &av_attr, &av, NULL))) die("fi_av_open", ret);
    struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_CONTEXT, .wait_obj = FI_WAIT_NONE};
    if ((ret = fi_cq_open(domain, &cq_attr, &cq, NULL))) die("fi_cq_open", ret);
    if ((ret = fi_endpoint(domain, info, &ep, NULL))) die("fi_endpoint", ret);
    if ((ret = fi_ep_bind(ep, &av->fid, 0))) die("fi_ep_bind(av)", ret);
    if ((ret = fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV))) die("fi_ep_bind(cq)", ret);
    if ((ret = fi_enable(ep))) die("fi_enable", ret);
    fi_addr_t to;
    ret = fi_av_insert(av, sin, 1, &to, 0, NULL);
    if (ret != 1) die("fi_av_insert", ret < 0 ? ret : -FI_EINVAL);
    return to;
}

static void close_ep(void)
{
    fi_close(&ep->fid);
    fi_close(&cq->fid);
    fi_close(&av->fid);
}

/* Waits for the one outstanding operation: 1 completed, 0 failed or no
 * answer within OP_WAIT_S. */
static int wait_one(void)
{
    double end = now_s() + OP_WAIT_S;
    struct fi_cq_entry e;
    for (;;) {
        ssize_t n = fi_cq_read(cq, &e, 1);
        if (n == 1) return 1;
        if (n == -FI_EAVAIL) {
            struct fi_cq_err_entry err;
            memset(&err, 0, sizeof err);
            fi_cq_readerr(cq, &err, 0);
            if (getenv("OUTSIDER_VERBOSE"))
                fprintf(stderr, "outsider: error %s (%s)\n", fi_strerror(err.err),
                        fi_cq_strerror(cq, err.prov_errno, err.err_data, NULL, 0));
            return 0;
        }
        if (now_s() > end) return 0;
    }
}

/* Posts one write or read, retrying while the queue is full; -1 if the
 * provider would not take it at all. */
static int attempt(int write, fi_addr_t to, uint64_t offset, uint64_t key, unsigned char *buf)
{
    double end = now_s() + OP_WAIT_S;
    ssize_t ret;
    do {
        /* Delivery complete: a completed write is one the target applied. */
        struct iovec iov = {.iov_base = buf, .iov_len = 8};
        struct fi_rma_iov rma = {.addr = offset, .len = 8, .key = key};
        struct fi_msg_rma msg = {.msg_iov = &iov, .iov_count = 1, .addr = to, .rma_iov = &rma, .rma_iov_count = 1};
        ret = write ? fi_writemsg(ep, &msg, FI_DELIVERY_COMPLETE | FI_COMPLETION) : fi_readmsg(ep, &msg, FI_COMPLETION);
        if (ret == -FI_EAGAIN) {
            struct fi_cq_entry e;
            if (fi_cq_read(cq, &e, 1) == -FI_EAVAIL) {
                struct fi_cq_err_entry err;
                memset(&err, 0, sizeof err);
                fi_cq_readerr(cq, &err, 0);
            }
        }
    } while (ret == -FI_EAGAIN && now_s() < end);
    if (ret) return -1;
    return wait_one();
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s IP:PORT...\n", argv[0]);
        return 2;
    }
    open_fabric();
    uint64_t keys[N_SMALL_KEYS + N_RANDOM_KEYS];
    for (int k = 0; k < N_SMALL_KEYS; k++) keys[k] = (uint64_t)k;
    const size_t random_bytes = sizeof(uint64_t) * N_RANDOM_KEYS;
    if (getrandom(keys + N_SMALL_KEYS, random_bytes, 0) != (ssize_t)random_bytes) {
        perror("outsider: getrandom");
        return 2;
    }
    static const uint64_t offsets[] = {0, 8, 4096, 1 << 20};
    const double t0 = now_s();
    long attempts = 0, writes = 0, reads = 0, writes_ok = 0, reads_ok = 0, bytes = 0, refused = 0;
    for (int t = 1; t < argc; t++) {
        char ip[64];
        const char *colon = strrchr(argv[t], ':');
        if (!colon || (size_t)(colon - argv[t]) >= sizeof ip) {
            fprintf(stderr, "outsider: '%s' is not IP:PORT\n", argv[t]);
            return 2;
        }
        memcpy(ip, argv[t], (size_t)(colon - argv[t]));
        ip[colon - argv[t]] = 0;
        struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1))};
        if (inet_pton(AF_INET, ip, &sin.sin_addr) != 1) {
            fprintf(stderr, "outsider: '%s' is not an IPv4 address\n", ip);
            return 2;
        }
        fi_addr_t to = open_ep(&sin);
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
            for (size_t o = 0; o < sizeof offsets / sizeof offsets[0]; o++) {
                unsigned char buf[8];
                memset(buf, 0xA5, sizeof buf);
                int w = attempt(1, to, offsets[o], keys[k], buf);
                if (w != 1) close_ep(), to = open_ep(&sin);
                attempts++, writes++;
                writes_ok += w == 1;
                refused += w < 0;
                if (w == 1)
                    printf("outsider: WRITE completed at %s key %" PRIu64 " offset %" PRIu64 "\n", argv[t], keys[k],
                           offsets[o]);
                memset(buf, 0, sizeof buf);
                int r = attempt(0, to, offsets[o], keys[k], buf);
                if (r != 1) close_ep(), to = open_ep(&sin);
                attempts++, reads++;
                refused += r < 0;
                if (r == 1) {
                    reads_ok++;
                    bytes += 8;
                    printf("outsider: READ completed at %s key %" PRIu64 " offset %" PRIu64 ": %02x%02x%02x%02x...\n",
                           argv[t], keys[k], offsets[o], buf[0], buf[1], buf[2], buf[3]);
                }
            }
        close_ep();
        printf("outsider: %s done, %ld attempts so far, %.1f s\n", argv[t], attempts, now_s() - t0);
        fflush(stdout);
    }
    printf("outsider: %ld attempts (%ld writes, %ld reads) on %d port(s), %ld not accepted by the provider; "
           "%ld writes and %ld reads completed, %ld bytes read\n",
           attempts, writes, reads, argc - 1, refused, writes_ok, reads_ok, bytes);
    fflush(stdout);
    return writes_ok || reads_ok ? 1 : 0;
}
