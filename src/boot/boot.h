/* boot.h: the bootstrap seam. It tells a PE its rank and the job size and
 * exchanges small blobs (addresses, keys) and, between PEs of one host,
 * file descriptors. It never carries user data.
 *
 * Implementations: "launcher" (oshrun's private socketpair, fd in
 * SHOAL_BOOT_FD), "pmi" (PMI-1 over PMI_FD or PMI_PORT), "pmix" and
 * "single" (a program started without a launcher runs as a one-PE job). */
#ifndef SHOAL_BOOT_BOOT_H
#define SHOAL_BOOT_BOOT_H

#include <stddef.h>

#include "util/status.h"

typedef struct shoal_boot shoal_boot_t;

/* An allgather's result read in place: data holds len * size bytes in rank
 * order, for the caller to read, never to write (it may be a mapping every
 * PE of the host shares); shoal_boot_view_release gives it back. */
struct shoal_boot_view {
    const void *data;
    void *heap;     /* a buffer of this PE's to free, or NULL */
    void *map;      /* a read-only mapping to unmap, or NULL */
    size_t map_len;
};

struct shoal_boot_ops {
    const char *name;
    /* Every PE contributes len bytes; recv receives len * size bytes in rank
     * order. len must be equal on all PEs. len 0 makes a barrier. */
    shoal_status_t (*allgather)(shoal_boot_t *boot, const void *send, size_t len, void *recv);
    /* The same exchange, its result left where it arrived (optional:
     * shoal_boot_allgather_view copies through allgather without it). */
    shoal_status_t (*allgather_view)(shoal_boot_t *boot, const void *send, size_t len,
                                     struct shoal_boot_view *view);
    /* Every PE of this host (same node_key) contributes nfds descriptors;
     * recv_fds receives nfds * (PEs on this host) descriptors, ordered by
     * rank (this PE's own are duplicates). The caller owns and closes the
     * received descriptors. */
    shoal_status_t (*allgather_fds)(shoal_boot_t *boot, const int *fds, int nfds, int *recv_fds);
    shoal_status_t (*barrier)(shoal_boot_t *boot);
    /* Tells the launcher this PE finished cleanly (called by shmem_finalize). */
    shoal_status_t (*finalize)(shoal_boot_t *boot);
    /* Asks the launcher to end the whole job with status and a one-line
     * reason, then exits this process. Does not return. */
    void (*abort)(shoal_boot_t *boot, int status, const char *reason) __attribute__((noreturn));
    void (*close)(shoal_boot_t *boot);
};

#define SHOAL_NODE_KEY_MAX 64

struct shoal_boot {
    const struct shoal_boot_ops *ops;
    int rank;
    int size;
    /* Equal exactly for PEs that share memory (one host, one allgather_fds
     * group); NUL-terminated. Set by the implementation at open. */
    char node_key[SHOAL_NODE_KEY_MAX];
    void *impl;
};

/* A node key from this machine's identity: host name, boot id and network
 * namespace, so PEs in different namespaces count as different hosts. */
void shoal_boot_default_node_key(char key[SHOAL_NODE_KEY_MAX]);

/* The kernel's boot id: equal for every process sharing this machine's
 * cores, whatever its namespaces (empty if unreadable). */
#define SHOAL_MACHINE_ID_MAX 40
void shoal_boot_machine_id(char id[SHOAL_MACHINE_ID_MAX]);

/* Chooses the bootstrap from the environment (see boot.c and
 * docs/launchers.md) and connects; a launcher found but unusable is an
 * error (one line), never a one-PE job. */
shoal_status_t shoal_boot_open(shoal_boot_t **out);

/* Internal constructors, used by shoal_boot_open and by unit tests. */
shoal_status_t shoal_boot_open_launcher(int fd, int rank, int size, shoal_boot_t **out);
shoal_status_t shoal_boot_open_single(shoal_boot_t **out);
/* An allgather whose result the caller only reads: a host's PEs then
 * share one copy of a large one (a start-up table of 65,536 PEs is up to
 * 25 MB, 64 copies of it 1.6 GB). Any bootstrap; len 0 is a barrier with
 * an empty view. Release the view on every path, failed ones included. */
shoal_status_t shoal_boot_allgather_view(shoal_boot_t *boot, const void *send, size_t len,
                                         struct shoal_boot_view *view);
void shoal_boot_view_release(struct shoal_boot_view *view);

/* Blob allgathers this PE read from oshrun's shared memory file instead of
 * its socket (boot_launcher.c), and of them those it mapped rather than
 * copied (a view's); tests check that large ones do. */
extern unsigned long shoal_boot_shared_results;
extern unsigned long shoal_boot_mapped_results;

#endif
