/* limits.c: the open-file limit (RLIMIT_NOFILE, "ulimit -n"). oshrun holds
 * three descriptors per PE (its socket, two output pipes), one per node
 * link and a few of its own, and poll() refuses (EINVAL) more entries
 * than the limit; while it serves a descriptor exchange it also holds every
 * PE's shared-memory segments (two per PE). A limit that is too low would
 * otherwise surface as "poll: Invalid argument" or as a descriptor pass
 * cut short (MSG_CTRUNC) that reads as a malformed message; this names it
 * with the numbers instead. A soft limit below the need is raised up to
 * the hard limit first, quietly: the PEs inherit it and need the room too. */
#include "oshrun.h"

#include "boot/wire.h"
#include "util/open_fds.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define FDS_BASE 17   /* standard streams, signalfd, guardian pipe, spawn's transient pipes, the reserve */
#define FDS_PER_PE 5  /* socket, stdout and stderr pipes, two segments during the exchange */

/* One descriptor held back for counting: the counts are needed exactly
 * when oshrun is at its limit, where opening /proc/.../fd would itself
 * fail with EMFILE. */
static int reserve_fd = -1;

void oshrun_fd_reserve(void)
{
    if (reserve_fd < 0) reserve_fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* Descriptors open in process pid (0: this one), not counting the reserve,
 * which is freed for the listing. */
static long open_fds(pid_t pid)
{
    int had_reserve = reserve_fd >= 0;
    if (had_reserve) close(reserve_fd);
    reserve_fd = -1;
    long n = shoal_open_fds(pid);
    if (had_reserve) oshrun_fd_reserve();
    return n;
}

int oshrun_check_fd_limit(int npes, int nnodes)
{
    struct rlimit rl;
    /* Descriptors inherited beyond the standard streams count against the limit too. */
    long open_now = open_fds(0);
    unsigned long long base = FDS_BASE + (open_now > 3 ? (unsigned long long)open_now - 3 : 0);
    unsigned long long need = base + (unsigned long long)FDS_PER_PE * (unsigned long long)npes + (unsigned)nnodes;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need) return 0;
    if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= need) {
        rl.rlim_cur = need;
        if (setrlimit(RLIMIT_NOFILE, &rl) == 0) return 0;
    }
    fprintf(stderr, "oshrun: the open-file limit (ulimit -n) is %llu, hard limit %llu: too low for %d PE%s on this "
            "host, which need at least %llu descriptors in oshrun (%llu + %d per PE%s); raise it, "
            "e.g. 'ulimit -n %llu'\n",
            (unsigned long long)rl.rlim_cur, (unsigned long long)rl.rlim_max, npes, npes == 1 ? "" : "s", need,
            base, FDS_PER_PE, nnodes ? " + 1 per node" : "", need < 1024 ? 1024ULL : need);
    return 1;
}

int oshrun_fd_limit_hit(char *what, size_t len)
{
    struct rlimit rl;
    long n = open_fds(0);
    /* A pass is cut short when the descriptors it carries do not fit. */
    if (n < 0 || getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
        (unsigned long long)n + SHOAL_WIRE_FDS_PER_MSG < (unsigned long long)rl.rlim_cur)
        return 0;
    snprintf(what, len, "oshrun holds %ld open descriptors and the open-file limit (ulimit -n) is %llu: the "
             "descriptors a PE passed did not fit; raise the limit", n, (unsigned long long)rl.rlim_cur);
    return 1;
}

int oshrun_pe_fd_room(pid_t pid, size_t incoming, char *what, size_t len)
{
    struct rlimit rl;
    long n = open_fds(pid);
    if (n < 0 || prlimit(pid, RLIMIT_NOFILE, NULL, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
        (unsigned long long)n + incoming <= (unsigned long long)rl.rlim_cur)
        return 0; /* fits, or cannot tell: let the exchange try */
    snprintf(what, len, "it holds %ld open descriptors and its open-file limit (ulimit -n) is %llu, too few to "
             "receive the %zu shared-memory descriptors of this host's PEs; raise the limit", n,
             (unsigned long long)rl.rlim_cur, incoming);
    return 1;
}
