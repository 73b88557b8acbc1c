/* log.h: leveled logging with the PE number in every line. A disabled level
 * costs one predictable branch. SHMEM_DEBUG raises the level. */
#ifndef SHOAL_UTIL_LOG_H
#define SHOAL_UTIL_LOG_H

#include <stdarg.h>

enum shoal_log_level { SHOAL_LOG_ERROR = 0, SHOAL_LOG_WARN = 1, SHOAL_LOG_INFO = 2, SHOAL_LOG_DEBUG = 3 };

extern int shoal_log_level;

/* Sets the PE number shown in each line (-1 before it is known). */
void shoal_log_set_pe(int pe);
int shoal_log_pe(void);

/* While a buffer is set, lines are kept there (joined by "; ") instead of
 * written, so start-up can report a problem once for the job, in one line,
 * rather than once per PE. NULL writes to stderr again. */
void shoal_log_capture(char *buf, unsigned long len);

void shoal_log_write(int level, const char *subsys, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void shoal_log_vwrite(int level, const char *subsys, const char *fmt, va_list ap);

#define SHOAL_LOG(level, subsys, ...)                                  \
    do {                                                               \
        if ((level) <= shoal_log_level)                                \
            shoal_log_write((level), (subsys), __VA_ARGS__);           \
    } while (0)
#define shoal_error(subsys, ...) SHOAL_LOG(SHOAL_LOG_ERROR, subsys, __VA_ARGS__)
#define shoal_warn(subsys, ...) SHOAL_LOG(SHOAL_LOG_WARN, subsys, __VA_ARGS__)
#define shoal_info(subsys, ...) SHOAL_LOG(SHOAL_LOG_INFO, subsys, __VA_ARGS__)
#define shoal_debug(subsys, ...) SHOAL_LOG(SHOAL_LOG_DEBUG, subsys, __VA_ARGS__)

/* Formats a byte count as "1.5 GiB" into buf; returns buf. */
char *shoal_format_bytes(unsigned long long bytes, char *buf, unsigned long len);

#endif
