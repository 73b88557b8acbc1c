/* log.c: one write(2) per line so lines of different PEs do not interleave. */
#include "util/log.h"
#include "util/status.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

int shoal_log_level = SHOAL_LOG_WARN;
static int log_pe = -1;

void shoal_log_set_pe(int pe) { log_pe = pe; }
int shoal_log_pe(void) { return log_pe; }

static char *capture_buf;
static unsigned long capture_len;

void shoal_log_capture(char *buf, unsigned long len)
{
    capture_buf = len ? buf : NULL;
    capture_len = len;
    if (capture_buf) capture_buf[0] = 0;
}

static const char *const level_names[] = {"error", "warning", "info", "debug"};

void shoal_log_vwrite(int level, const char *subsys, const char *fmt, va_list ap)
{
    char line[1024];
    int n;
    if (capture_buf) { /* several lines become one, joined by "; " */
        size_t used = strlen(capture_buf);
        if (used && used + 2 < capture_len) {
            memcpy(capture_buf + used, "; ", 3);
            used += 2;
        }
        if (used + 1 < capture_len) vsnprintf(capture_buf + used, capture_len - used, fmt, ap);
        return;
    }
    if (level < 0) level = 0;
    if (level > SHOAL_LOG_DEBUG) level = SHOAL_LOG_DEBUG;
    if (log_pe >= 0)
        n = snprintf(line, sizeof line, "shoal: PE %d: %s%s%s: ", log_pe, subsys ? subsys : "",
                     subsys ? " " : "", level_names[level]);
    else
        n = snprintf(line, sizeof line, "shoal: %s%s%s: ", subsys ? subsys : "", subsys ? " " : "",
                     level_names[level]);
    if (n < 0) return;
    if ((size_t)n < sizeof line) {
        int m = vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
        if (m > 0) n += m;
    }
    if ((size_t)n >= sizeof line - 1) n = (int)sizeof line - 2;
    line[n++] = '\n';
    ssize_t off = 0;
    while (off < n) {
        ssize_t w = write(STDERR_FILENO, line + off, (size_t)(n - off));
        if (w <= 0) break;
        off += w;
    }
}

void shoal_log_write(int level, const char *subsys, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    shoal_log_vwrite(level, subsys, fmt, ap);
    va_end(ap);
}

char *shoal_format_bytes(unsigned long long bytes, char *buf, unsigned long len)
{
    static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024.0 && u < 4) { v /= 1024.0; u++; }
    if (u == 0)
        snprintf(buf, len, "%llu bytes", bytes);
    else if (v == (double)(unsigned long long)v)
        snprintf(buf, len, "%llu %s", (unsigned long long)v, units[u]);
    else
        snprintf(buf, len, "%.1f %s", v, units[u]);
    return buf;
}

const char *shoal_status_str(shoal_status_t status)
{
    switch (status) {
    case SHOAL_OK: return "success";
    case SHOAL_ERR_NOMEM: return "out of memory";
    case SHOAL_ERR_INVAL: return "invalid argument";
    case SHOAL_ERR_RANGE: return "value out of range";
    case SHOAL_ERR_SYS: return "system call failed";
    case SHOAL_ERR_PROTO: return "malformed bootstrap message";
    case SHOAL_ERR_CLOSED: return "launcher connection closed";
    case SHOAL_ERR_UNSUPPORTED: return "unsupported";
    }
    return "unknown status";
}
