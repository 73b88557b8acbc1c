/* procfd.c: allgather_fds for bootstraps that can move only bytes (PMI,
 * PMIx). Each PE publishes its pid and descriptor numbers; every PE of the
 * same host opens the peers' descriptors as /proc/<pid>/fd/<n>.
 *
 * Why this is safe and what it needs:
 *  - Opening /proc/<pid>/fd/<n> opens the very file the peer holds (our
 *    segments are memfds), with a fresh open file description. The kernel
 *    allows it when we may read the peer's /proc entries (same user, peer
 *    dumpable, same PID namespace); Yama's ptrace_scope restricts only
 *    attaching, not this. Another user's PEs cannot do it, so nothing is
 *    exposed beyond what the same user could reach anyway.
 *  - A pid names the right process only while that process lives: every
 *    PE passes a barrier after opening, so no owner returns (and might
 *    exit or close) before all its peers hold their own references.
 *  - PEs on one host must see each other's pids: the record carries the
 *    PID namespace, and a mismatch is an error, not a wrong open. */
#include "boot/boot_pm.h"
#include "util/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The shm transport passes one descriptor per segment; this is headroom. */
#define PROCFD_MAX_FDS 16

struct procfd_record {
    char node_key[SHOAL_NODE_KEY_MAX];
    uint64_t pidns;
    int32_t pid;
    int32_t nfds;
    int32_t fd[PROCFD_MAX_FDS];
};

static uint64_t my_pidns(void)
{
    struct stat st;
    return stat("/proc/self/ns/pid", &st) == 0 ? (uint64_t)st.st_ino : 0;
}

/* Opens PE pe's descriptors into out; on failure closes what it opened. */
static shoal_status_t open_peer(const shoal_boot_t *boot, int pe, const struct procfd_record *r, int *out)
{
    char path[64];
    for (int i = 0; i < r->nfds; i++) {
        int fd;
        if (pe == boot->rank) {
            fd = fcntl(r->fd[i], F_DUPFD_CLOEXEC, 0);
        } else {
            snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)r->pid, (int)r->fd[i]);
            fd = open(path, O_RDWR | O_CLOEXEC);
        }
        if (fd < 0) {
            if (pe == boot->rank)
                shoal_error("boot", "allgather_fds: cannot duplicate descriptor %d: %s", (int)r->fd[i], strerror(errno));
            else
                shoal_error("boot", "cannot open PE %d's descriptor as %s: %s (PEs of one host must run as the same "
                            "user, in one PID namespace, and stay dumpable)", pe, path, strerror(errno));
            for (int j = 0; j < i; j++) close(out[j]);
            return SHOAL_ERR_SYS;
        }
        out[i] = fd;
    }
    return SHOAL_OK;
}

shoal_status_t shoal_boot_procfd_allgather(shoal_boot_t *boot, const int *fds, int nfds, int *recv_fds)
{
    struct procfd_record mine, *all;
    shoal_status_t st, bst;
    int nlocal = 0;
    if (nfds < 0 || (nfds && (!fds || !recv_fds))) return SHOAL_ERR_INVAL;
    if (nfds > PROCFD_MAX_FDS) {
        shoal_error("boot", "allgather_fds: %d descriptors, at most %d", nfds, PROCFD_MAX_FDS);
        return SHOAL_ERR_RANGE;
    }
    all = calloc((size_t)boot->size, sizeof *all);
    if (!all) return SHOAL_ERR_NOMEM;
    memset(&mine, 0, sizeof mine);
    memcpy(mine.node_key, boot->node_key, sizeof mine.node_key);
    mine.node_key[SHOAL_NODE_KEY_MAX - 1] = 0;
    mine.pidns = my_pidns();
    mine.pid = (int32_t)getpid();
    mine.nfds = nfds;
    for (int i = 0; i < nfds; i++) mine.fd[i] = fds[i];
    st = boot->ops->allgather(boot, &mine, sizeof mine, all);
    if (st != SHOAL_OK) {
        free(all);
        return st;
    }
    /* Peers on this host in rank order; the same checks give the same
     * answer on every one of them, so they fail (or not) together. */
    for (int pe = 0; pe < boot->size && st == SHOAL_OK; pe++) {
        const struct procfd_record *r = &all[pe];
        if (memcmp(r->node_key, mine.node_key, sizeof mine.node_key) != 0) continue;
        if (r->nfds != nfds) {
            shoal_error("boot", "allgather_fds: PE %d passes %d descriptors, this PE %d", pe, (int)r->nfds, nfds);
            st = SHOAL_ERR_INVAL;
        } else if (r->pidns != mine.pidns) {
            shoal_error("boot", "PE %d is on this host but in another PID namespace; cannot reach its memory "
                        "(run all PEs of a host in one container)", pe);
            st = SHOAL_ERR_UNSUPPORTED;
        } else {
            st = open_peer(boot, pe, r, recv_fds + (size_t)nlocal * (size_t)nfds);
            if (st == SHOAL_OK) nlocal++;
        }
    }
    if (st != SHOAL_OK)
        for (int i = 0; i < nlocal * nfds; i++) close(recv_fds[i]);
    /* Owners stay alive, descriptors open, until every peer holds its own. */
    bst = boot->ops->barrier(boot);
    free(all);
    if (st == SHOAL_OK && bst != SHOAL_OK) {
        for (int i = 0; i < nlocal * nfds; i++) close(recv_fds[i]);
        st = bst;
    }
    return st;
}
