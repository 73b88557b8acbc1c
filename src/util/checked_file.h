/* checked_file.h: opening files named by settings (secrets, keys,
 * certificates) safely. The path is checked with lstat before it is opened,
 * and opened with O_NONBLOCK, so a FIFO or a device never blocks the caller
 * and is refused at once; the opened descriptor is checked again (fstat) to
 * be the same regular file. A private file must also be owned by the user
 * and readable by nobody else, and must not be a symbolic link. */
#ifndef SHOAL_UTIL_CHECKED_FILE_H
#define SHOAL_UTIL_CHECKED_FILE_H

#include <stddef.h>

#include "util/status.h"

enum {
    SHOAL_FILE_PRIVATE = 1 /* owned by the effective user, mode 0600 or stricter, no symlink */
};

/* Opens path (named `setting` in messages, e.g. "SHMEM_BOOTSTRAP_TLS_KEY")
 * for reading, refusing anything but a regular file of at most max bytes.
 * Returns SHOAL_OK and a close-on-exec descriptor in *fd, or an error with
 * one line in err naming the setting, the path, what is wrong and the
 * limit. */
shoal_status_t shoal_file_open_checked(const char *setting, const char *path, int flags, size_t max, int *fd,
                                       char *err, size_t errlen);

/* The same, then reads the whole file into buf (cap bytes; cap > max):
 * *len bytes, refusing more than max. The caller wipes buf if it is secret. */
shoal_status_t shoal_file_read_checked(const char *setting, const char *path, int flags, size_t max,
                                       unsigned char *buf, size_t cap, size_t *len, char *err, size_t errlen);

#endif
