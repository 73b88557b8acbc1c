/* clock.h: the monotonic clock, in nanoseconds (waits, leases, progress
 * threads) or seconds (deadlines, shmemx_wtime). */
#ifndef SHOAL_UTIL_CLOCK_H
#define SHOAL_UTIL_CLOCK_H

#include <time.h>

static inline long long shoal_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline double shoal_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif
