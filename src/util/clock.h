/* clock.h: the monotonic clock in nanoseconds, which waits, leases and
 * progress threads time themselves by. */
#ifndef SHOAL_UTIL_CLOCK_H
#define SHOAL_UTIL_CLOCK_H

#include <time.h>

static inline long long shoal_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

#endif
