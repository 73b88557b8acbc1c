/* transport_fatal.h: for the transport tests below the runtime. A
 * transport ends the job through setup.fatal; here test_fatal is that
 * callback. Inside EXPECT_FATAL it returns to the test, which checks the
 * line; anywhere else it is a failure. Include after harness.h. */
#ifndef SHOAL_TESTS_TRANSPORT_FATAL_H
#define SHOAL_TESTS_TRANSPORT_FATAL_H

#include <setjmp.h>
#include <stdio.h>
#include <string.h>

static sigjmp_buf fatal_jmp;
static int fatal_armed;
static char fatal_line[512];
/* Set where a test wants the job ended, from any thread, as the runtime
 * would: the line goes to stderr for the test's expected output. */
static volatile int fatal_ends_job;

static __attribute__((noreturn)) void test_fatal(const char *reason)
{
    if (fatal_ends_job) {
        fprintf(stderr, "PE %d: the transport ended the job: %s\n", test_pe, reason);
        fflush(stderr);
        _exit(TEST_FAIL);
    }
    snprintf(fatal_line, sizeof fatal_line, "%s", reason);
    if (fatal_armed) siglongjmp(fatal_jmp, 1);
    fprintf(stderr, "PE %d: unexpected fatal transport error: %s\n", test_pe, reason);
    exit(TEST_FAIL);
}

/* Runs body, which must end the job (fatal) with a line containing want
 * and "PE <pe>". A real fatal never returns, so whatever body held (a
 * stream's lock) stays held: give it a context of its own. */
#define EXPECT_FATAL(body, want, pe)                                                              \
    do {                                                                                          \
        fatal_line[0] = 0;                                                                        \
        fatal_armed = 1;                                                                          \
        if (sigsetjmp(fatal_jmp, 1) == 0) {                                                       \
            body;                                                                                 \
            fatal_armed = 0;                                                                      \
            CHECK_MSG(0, "%s: no fatal error", #body);                                            \
        } else {                                                                                  \
            char pe_[32];                                                                         \
            fatal_armed = 0;                                                                      \
            snprintf(pe_, sizeof pe_, "PE %d", (pe));                                             \
            CHECK_MSG(strstr(fatal_line, (want)) && strstr(fatal_line, pe_), "%s: line '%s' lacks '%s' or '%s'", \
                      #body, fatal_line, (want), pe_);                                            \
        }                                                                                         \
    } while (0)

#endif
