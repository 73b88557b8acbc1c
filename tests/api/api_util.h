/* api_util.h: helpers shared by the API tests: pattern fill and check of
 * byte ranges, guard bytes, and exactly representable typed values. */
#ifndef SHOAL_TESTS_API_UTIL_H
#define SHOAL_TESTS_API_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "harness.h"

#define GUARD_BYTE 0xA5

/* Seconds on the monotonic clock. */
static inline double test_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Keeps the CPU busy for that long, outside Shoal (no wait, no call). */
static inline void test_compute_for(double seconds)
{
    volatile unsigned long x = 0;
    const double end = test_now_s() + seconds;
    while (test_now_s() < end) x++;
}

static inline void fill_pattern(unsigned char *p, size_t n, int pe, size_t first, unsigned salt)
{
    for (size_t i = 0; i < n; i++) p[i] = test_pattern(pe, first + i, salt);
}

/* Counts the bytes of p[0..n) that differ from the pattern; reports the first. */
static inline size_t check_pattern_at(const unsigned char *p, size_t n, int pe, size_t first, unsigned salt,
                                      const char *what, int line)
{
    size_t bad = 0, first_bad = 0;
    for (size_t i = 0; i < n; i++)
        if (p[i] != test_pattern(pe, first + i, salt)) {
            if (!bad) first_bad = i;
            bad++;
        }
    if (bad) {
        test_failures++;
        if (test_failures <= 20)
            fprintf(stderr,
                    "FAIL PE %d line %d: %s: %zu of %zu bytes differ from the pattern of PE %d (salt %u); first at "
                    "byte %zu: 0x%02x, expected 0x%02x\n",
                    test_pe, line, what, bad, n, pe, salt, first_bad, p[first_bad],
                    test_pattern(pe, first + first_bad, salt));
    }
    return bad;
}
#define check_pattern(p, n, pe, first, salt, what) check_pattern_at(p, n, pe, first, salt, what, __LINE__)

/* Counts the bytes of p[0..n) that are not byte; reports the first. */
static inline size_t check_fill_at(const unsigned char *p, size_t n, unsigned char byte, const char *what, int line)
{
    size_t bad = 0, first_bad = 0;
    for (size_t i = 0; i < n; i++)
        if (p[i] != byte) {
            if (!bad) first_bad = i;
            bad++;
        }
    if (bad) {
        test_failures++;
        if (test_failures <= 20)
            fprintf(stderr, "FAIL PE %d line %d: %s: %zu of %zu bytes changed; first at byte %zu: 0x%02x, expected 0x%02x\n",
                    test_pe, line, what, bad, n, first_bad, p[first_bad], byte);
    }
    return bad;
}
#define check_fill(p, n, byte, what) check_fill_at(p, n, byte, what, __LINE__)

/* A 64-bit mix of (pe, i, salt); the typed tests derive values from it. */
static inline unsigned long long test_mix(int pe, size_t i, unsigned salt)
{
    unsigned long long x = 0;
    for (int b = 0; b < 8; b++) x = (x << 8) | test_pattern(pe, i * 8 + (size_t)b, salt);
    return x;
}

/* Floating values that are exact in their type: a float needs 24 bits of
 * mantissa, a double 53; a long double value uses 63 bits so a path that
 * went through double would lose some. Both signs occur. */
static inline float test_float(int pe, size_t i, unsigned salt)
{
    long long m = (long long)(test_mix(pe, i, salt) % 16000001ull) - 8000000;
    return (float)m / 8.0f;
}
static inline double test_double(int pe, size_t i, unsigned salt)
{
    long long m = (long long)(test_mix(pe, i, salt) >> 11) - (1ll << 52);
    return (double)m / 1024.0;
}
static inline long double test_longdouble(int pe, size_t i, unsigned salt)
{
    unsigned long long x = test_mix(pe, i, salt) | 1ull | (1ull << 62);
    long double v = (long double)(x >> 1) / 4096.0L;
    return (x & 2) ? -v : v;
}

#define TEST_VALUE(T, pe, i, salt)                                                             \
    _Generic((T)0, float: test_float(pe, i, salt), double: test_double(pe, i, salt),           \
             long double: test_longdouble(pe, i, salt), default: test_mix(pe, i, salt))

#endif
