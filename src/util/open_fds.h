/* open_fds.h: how many descriptors a process holds, for naming the
 * open-file limit when a descriptor pass does not fit (oshrun and the PE's
 * side of its bootstrap). */
#ifndef SHOAL_UTIL_OPEN_FDS_H
#define SHOAL_UTIL_OPEN_FDS_H

#include <sys/types.h>

/* Descriptors open in process pid (0: this one, not counting the listing's
 * own), from /proc/PID/fd; -1 with errno set where it cannot be listed
 * (EMFILE: this process is at its own limit). */
long shoal_open_fds(pid_t pid);

#endif
