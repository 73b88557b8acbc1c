/* harness.h: the small test harness. A test exits 0 (pass), 1 (fail) or
 * 77 (skip). CHECK prints the failing expression with the PE number and
 * keeps going so one run reports every mismatch; test_finish() decides. */
#ifndef SHOAL_TESTS_HARNESS_H
#define SHOAL_TESTS_HARNESS_H

#include <stdio.h>
#include <stdlib.h>

/* A failure message cut at 512 bytes is fine; gcc's warning about it is not. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

#define TEST_PASS 0
#define TEST_FAIL 1
#define TEST_SKIP 77

static int test_failures;
static int test_pe = -1;

#define CHECK(cond)                                                                     \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            test_failures++;                                                            \
            if (test_failures <= 20)                                                    \
                fprintf(stderr, "FAIL PE %d %s:%d: %s\n", test_pe, __FILE__, __LINE__, #cond); \
        }                                                                               \
    } while (0)

/* The message is built first and written with one call so lines of
 * different PEs do not interleave. */
#define CHECK_MSG(cond, ...)                                                            \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            test_failures++;                                                            \
            if (test_failures <= 20) {                                                  \
                char test_msg_[512];                                                    \
                int test_n_ = snprintf(test_msg_, sizeof test_msg_, "FAIL PE %d %s:%d: %s: ", \
                                       test_pe, __FILE__, __LINE__, #cond);             \
                if (test_n_ > 0 && (size_t)test_n_ < sizeof test_msg_)                  \
                    snprintf(test_msg_ + test_n_, sizeof test_msg_ - (size_t)test_n_, __VA_ARGS__); \
                fprintf(stderr, "%s\n", test_msg_);                                     \
            }                                                                           \
        }                                                                               \
    } while (0)

/* Deterministic byte pattern for (pe, index, salt): catches misplaced,
 * shifted and stale data. */
static inline unsigned char test_pattern(int pe, size_t i, unsigned salt)
{
    unsigned long long x = (unsigned long long)(pe + 1) * 0x9E3779B97F4A7C15ull + i * 0xBF58476D1CE4E5B9ull + salt;
    x ^= x >> 29;
    return (unsigned char)(x ^ (x >> 17));
}

static inline int test_finish(void)
{
    if (test_failures) {
        fprintf(stderr, "PE %d: %d check(s) failed\n", test_pe, test_failures);
        return TEST_FAIL;
    }
    return TEST_PASS;
}

#endif
