/* checked_file.c: see checked_file.h. */
#include "util/checked_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *kind(mode_t m)
{
    if (S_ISFIFO(m)) return "a FIFO (named pipe)";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISDIR(m)) return "a directory";
    if (S_ISSOCK(m)) return "a socket";
    if (S_ISLNK(m)) return "a symbolic link";
    return "not a regular file";
}

/* Owner, mode and size of a regular file; SHOAL_OK when acceptable. */
static shoal_status_t judge(const char *setting, const char *path, int flags, size_t max, const struct stat *st,
                            char *err, size_t errlen)
{
    if (!S_ISREG(st->st_mode)) {
        snprintf(err, errlen, "%s=%s is %s, not a regular file: refusing it", setting, path, kind(st->st_mode));
        return SHOAL_ERR_INVAL;
    }
    if ((flags & SHOAL_FILE_PRIVATE) && st->st_uid != geteuid()) {
        snprintf(err, errlen, "%s=%s is owned by uid %u, not by you (uid %u): refusing it", setting, path,
                 (unsigned)st->st_uid, (unsigned)geteuid());
        return SHOAL_ERR_INVAL;
    }
    if ((flags & SHOAL_FILE_PRIVATE) && (st->st_mode & 077)) {
        snprintf(err, errlen, "%s=%s has mode %04o, so other users may read it: run 'chmod 600 %s'", setting, path,
                 (unsigned)(st->st_mode & 07777), path);
        return SHOAL_ERR_INVAL;
    }
    if ((unsigned long long)st->st_size > (unsigned long long)max) {
        snprintf(err, errlen, "%s=%s is %llu bytes, more than the %zu bytes allowed: refusing it", setting, path,
                 (unsigned long long)st->st_size, max);
        return SHOAL_ERR_RANGE;
    }
    return SHOAL_OK;
}

shoal_status_t shoal_file_open_checked(const char *setting, const char *path, int flags, size_t max, int *fd,
                                       char *err, size_t errlen)
{
    struct stat before, st;
    int priv = flags & SHOAL_FILE_PRIVATE;
    shoal_status_t s;
    *fd = -1;
    /* lstat first: a FIFO or device is refused without being opened at all. */
    if ((priv ? lstat(path, &before) : stat(path, &before)) != 0) {
        snprintf(err, errlen, "%s=%s cannot be read: %s", setting, path, strerror(errno));
        return SHOAL_ERR_SYS;
    }
    if (priv && S_ISLNK(before.st_mode)) {
        snprintf(err, errlen, "%s=%s is a symbolic link: refusing it (name the file itself, owned by you, mode 0600)",
                 setting, path);
        return SHOAL_ERR_INVAL;
    }
    if ((s = judge(setting, path, flags, max, &before, err, errlen)) != SHOAL_OK) return s;
    /* O_NONBLOCK: should the path be swapped for a FIFO after the lstat, open still returns at once. */
    int f = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | (priv ? O_NOFOLLOW : 0));
    if (f < 0) {
        if (errno == ELOOP && priv)
            snprintf(err, errlen, "%s=%s is a symbolic link: refusing it (name the file itself)", setting, path);
        else
            snprintf(err, errlen, "%s=%s cannot be read: %s", setting, path, strerror(errno));
        return SHOAL_ERR_SYS;
    }
    if (fstat(f, &st) != 0) {
        snprintf(err, errlen, "%s=%s cannot be read: %s", setting, path, strerror(errno));
        close(f);
        return SHOAL_ERR_SYS;
    }
    if ((s = judge(setting, path, flags, max, &st, err, errlen)) != SHOAL_OK) {
        close(f);
        return s;
    }
    if (st.st_dev != before.st_dev || st.st_ino != before.st_ino) {
        snprintf(err, errlen, "%s=%s changed while it was being opened: refusing it", setting, path);
        close(f);
        return SHOAL_ERR_INVAL;
    }
    *fd = f;
    return SHOAL_OK;
}

shoal_status_t shoal_file_read_checked(const char *setting, const char *path, int flags, size_t max,
                                       unsigned char *buf, size_t cap, size_t *len, char *err, size_t errlen)
{
    int fd;
    size_t n = 0;
    shoal_status_t s = shoal_file_open_checked(setting, path, flags, max, &fd, err, errlen);
    if (s != SHOAL_OK) return s;
    /* Read to the end: a file that grew past the limit since fstat is refused too. */
    for (;;) {
        ssize_t r = n < cap ? read(fd, buf + n, cap - n) : 0;
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            snprintf(err, errlen, "%s=%s cannot be read: %s", setting, path, strerror(errno));
            close(fd);
            return SHOAL_ERR_SYS;
        }
        if (r == 0) break;
        n += (size_t)r;
    }
    close(fd);
    if (n > max || n >= cap) {
        snprintf(err, errlen, "%s=%s is more than the %zu bytes allowed: refusing it", setting, path, max);
        return SHOAL_ERR_RANGE;
    }
    *len = n;
    return SHOAL_OK;
}
