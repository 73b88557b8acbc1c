/* boot_single.c: a program started without a launcher is a one-PE job.
 * Every collective is local: allgather copies, allgather_fds duplicates
 * (so the caller may close what it receives), barrier has nobody to wait
 * for. */
#include "boot/boot.h"
#include "util/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static shoal_status_t single_allgather(shoal_boot_t *boot, const void *send, size_t len, void *recv)
{
    (void)boot;
    if (len && (!send || !recv)) return SHOAL_ERR_INVAL;
    if (len) memmove(recv, send, len);
    return SHOAL_OK;
}

static shoal_status_t single_allgather_fds(shoal_boot_t *boot, const int *fds, int nfds, int *recv_fds)
{
    (void)boot;
    if (nfds < 0 || (nfds && (!fds || !recv_fds))) return SHOAL_ERR_INVAL;
    for (int i = 0; i < nfds; i++) {
        int fd = fcntl(fds[i], F_DUPFD_CLOEXEC, 0);
        if (fd < 0) {
            shoal_error("boot", "allgather_fds: cannot duplicate descriptor %d: %s", fds[i], strerror(errno));
            for (int j = 0; j < i; j++) close(recv_fds[j]);
            return SHOAL_ERR_SYS;
        }
        recv_fds[i] = fd;
    }
    return SHOAL_OK;
}

static shoal_status_t single_barrier(shoal_boot_t *boot)
{
    (void)boot;
    return SHOAL_OK;
}

static shoal_status_t single_finalize(shoal_boot_t *boot)
{
    (void)boot;
    return SHOAL_OK;
}

static void __attribute__((noreturn)) single_abort(shoal_boot_t *boot, int status, const char *reason)
{
    (void)boot;
    if (reason && *reason)
        fprintf(stderr, "shoal: PE 0: %s\n", reason);
    else
        fprintf(stderr, "shoal: PE 0 called shmem_global_exit(%d)\n", status);
    fflush(NULL);
    /* _exit: atexit handlers could re-enter the library mid-abort. */
    _exit(status);
}

static void single_close(shoal_boot_t *boot) { free(boot); }

static const struct shoal_boot_ops single_ops = {
    .name = "single",
    .allgather = single_allgather,
    .allgather_fds = single_allgather_fds,
    .barrier = single_barrier,
    .finalize = single_finalize,
    .abort = single_abort,
    .close = single_close,
};

shoal_status_t shoal_boot_open_single(shoal_boot_t **out)
{
    shoal_boot_t *boot;
    if (!out) return SHOAL_ERR_INVAL;
    boot = calloc(1, sizeof *boot);
    if (!boot) return SHOAL_ERR_NOMEM;
    boot->ops = &single_ops;
    boot->rank = 0;
    boot->size = 1;
    shoal_boot_default_node_key(boot->node_key);
    *out = boot;
    return SHOAL_OK;
}
