/* fuzz_oshrun_args.c: libFuzzer target for oshrun's command-line parser
 * (tools/oshrun/args.c).
 *
 * Input: the command line as NUL-separated words, argv[0] first (like
 * /proc/PID/cmdline); a trailing NUL is optional. Each word lives in its own
 * allocation of exactly its size, argv[argc] is NULL, and the parser runs
 * with a large error buffer and again with one of exactly the size given by
 * the first byte, so reads past a word or writes past the buffer are caught
 * by ASan. The result is checked against the parser's contract (args.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"

#define CHECK(cond)                                                                              \
    do {                                                                                         \
        if (!(cond)) {                                                                           \
            fprintf(stderr, "fuzz_oshrun_args: check failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
            abort();                                                                             \
        }                                                                                        \
    } while (0)

#define MAX_WORDS 256

static void check_result(enum oshrun_parse r, int argc, char *const argv[], const struct oshrun_options *opt,
                         const char *err, size_t errlen)
{
    switch (r) {
    case OSHRUN_PARSE_RUN:
        CHECK(opt->npes >= 1 && opt->npes <= OSHRUN_MAX_PES);
        CHECK(opt->timeout_s >= 0 && opt->timeout_s <= OSHRUN_MAX_TIMEOUT);
        CHECK(opt->tag_output == 0 || opt->tag_output == 1);
        CHECK(opt->prog_index >= 1 && opt->prog_index < argc);
        CHECK(argv[opt->prog_index] && argv[opt->prog_index][0]);
        if (errlen) CHECK(err[0] == '\0');
        break;
    case OSHRUN_PARSE_HELP:
    case OSHRUN_PARSE_VERSION:
        break;
    case OSHRUN_PARSE_ERROR:
        if (errlen) {
            size_t n = strnlen(err, errlen);
            CHECK(n < errlen);
            if (errlen > 1) CHECK(n > 0);
            for (size_t k = 0; k < n; k++) /* one printable line */
                CHECK((unsigned char)err[k] >= 0x20 && err[k] != 0x7f);
        }
        break;
    default: CHECK(!"unknown result");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *argv[MAX_WORDS + 1];
    int argc = 0;
    size_t pos = 0;
    if (size > 8192) return 0;
    while (pos < size && argc < MAX_WORDS) {
        const uint8_t *nul = memchr(data + pos, 0, size - pos);
        size_t n = nul ? (size_t)(nul - (data + pos)) : size - pos;
        argv[argc] = malloc(n + 1);
        CHECK(argv[argc]);
        memcpy(argv[argc], data + pos, n);
        argv[argc][n] = '\0';
        argc++;
        pos += n + 1;
    }
    argv[argc] = NULL;

    struct oshrun_options opt, again;
    char err[1024];
    memset(err, 'x', sizeof err);
    enum oshrun_parse r = oshrun_parse_args(argc, argv, &opt, err, sizeof err);
    check_result(r, argc, argv, &opt, err, sizeof err);

    /* Same words, a buffer of exactly errlen bytes: same answer, truncated message. */
    size_t errlen = size ? data[0] % 64 : 0;
    char *small = errlen ? malloc(errlen) : NULL;
    if (small) memset(small, 'x', errlen);
    enum oshrun_parse r2 = oshrun_parse_args(argc, argv, &again, small, errlen);
    check_result(r2, argc, argv, &again, small, errlen);
    CHECK(r2 == r);
    CHECK(memcmp(&opt, &again, sizeof opt) == 0);
    if (r == OSHRUN_PARSE_ERROR && errlen) CHECK(strncmp(err, small, errlen - 1) == 0);
    free(small);

    for (int i = 0; i < argc; i++) free(argv[i]);
    return 0;
}
