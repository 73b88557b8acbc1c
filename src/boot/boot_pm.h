/* boot_pm.h: bootstraps that ride on a process manager's key-value store
 * (PMI-1 from MPICH's Hydra, PMIx from Open MPI's mpirun or Slurm), and the
 * descriptor exchange they share. Internal to the boot layer. */
#ifndef SHOAL_BOOT_BOOT_PM_H
#define SHOAL_BOOT_BOOT_PM_H

#include "boot/boot.h"

/* PMI-1 over the descriptor in PMI_FD (rank and size from PMI_RANK and
 * PMI_SIZE, already validated by the caller). */
shoal_status_t shoal_boot_open_pmi(int fd, int rank, int size, shoal_boot_t **out);

/* PMI-1 over a TCP connection to hostport ("host:port", from PMI_PORT).
 * With id >= 0 (PMI_ID) the server's initack tells rank and size;
 * otherwise rank and size are the caller's (PMI_RANK, PMI_SIZE). */
shoal_status_t shoal_boot_open_pmi_port(const char *hostport, long id, int rank, int size, shoal_boot_t **out);

/* PMIx through the system's libpmix, loaded at run time. */
shoal_status_t shoal_boot_open_pmix(shoal_boot_t **out);

/* allgather_fds for a bootstrap that can only move bytes: peers on this
 * host open each other's descriptors through /proc (see procfd.c). */
shoal_status_t shoal_boot_procfd_allgather(shoal_boot_t *boot, const int *fds, int nfds, int *recv_fds);

#endif
