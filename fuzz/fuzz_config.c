/* fuzz_config.c: libFuzzer target for the configuration parsers
 * (src/util/config.c) and shoal_format_bytes (src/util/log.c).
 *
 * Input: text. The whole input (up to its first NUL) goes to
 * shoal_parse_size, shoal_parse_bool and shoal_parse_int, whose results are
 * checked against what the text says. Then the input is read as lines
 * "NAME=VALUE" (NAME: a table name such as SHMEM_DEBUG, or its index in the
 * table as one digit); each such line sets that environment variable and
 * shoal_config_load runs against the result with an error buffer of exactly
 * the size given by the first byte (so truncation is checked by ASan). The
 * table's variables are restored after every input. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/config.h"
#include "util/log.h"

#define CHECK(cond)                                                                       \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            fprintf(stderr, "fuzz_config: check failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
            abort();                                                                      \
        }                                                                                 \
    } while (0)

static int is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* Independent reading of the whole-number part and the suffix of a size
 * that parse_size accepted: value must lie in [whole << shift, (whole + 1) << shift]. */
static void check_size(const char *text, size_t value)
{
    while (is_space(*text)) text++;
    CHECK(is_digit(*text));
    unsigned __int128 whole = 0;
    while (is_digit(*text)) {
        whole = whole * 10 + (unsigned)(*text - '0');
        CHECK(whole <= UINT64_MAX);
        text++;
    }
    int has_frac = 0;
    if (*text == '.') {
        text++;
        CHECK(is_digit(*text));
        while (is_digit(*text)) {
            if (*text != '0') has_frac = 1;
            text++;
        }
    }
    unsigned shift = 0;
    switch (*text) {
    case 'k': case 'K': shift = 10; break;
    case 'm': case 'M': shift = 20; break;
    case 'g': case 'G': shift = 30; break;
    case 't': case 'T': shift = 40; break;
    default: break;
    }
    CHECK(!has_frac || shift);
    unsigned __int128 lo = whole << shift;
    unsigned __int128 hi = (whole + 1) << shift;
    CHECK(lo <= SIZE_MAX);
    CHECK((unsigned __int128)value >= lo && (unsigned __int128)value <= hi);
    if (!has_frac) CHECK((unsigned __int128)value == lo);
}

static void check_int(const char *text, long value)
{
    CHECK(is_digit(text[0]));
    unsigned __int128 v = 0;
    for (const char *p = text; *p; p++) {
        CHECK(is_digit(*p));
        v = v * 10 + (unsigned)(*p - '0');
        CHECK(v <= (unsigned __int128)INT64_MAX);
    }
    CHECK((unsigned __int128)value == v);
}

static void parse_scalars(const char *text)
{
    size_t size = 12345;
    shoal_status_t st = shoal_parse_size(text, &size);
    CHECK(st == SHOAL_OK || st == SHOAL_ERR_INVAL || st == SHOAL_ERR_RANGE);
    if (st == SHOAL_OK) {
        check_size(text, size);
        char buf[64];
        shoal_format_bytes(size, buf, sizeof buf);
        CHECK(strlen(buf) < sizeof buf - 1);
        char tiny[5];
        shoal_format_bytes(size, tiny, sizeof tiny);
        CHECK(strlen(tiny) < sizeof tiny);
    } else {
        CHECK(size == 12345);
    }

    int b = 7;
    st = shoal_parse_bool(text, &b);
    CHECK(st == SHOAL_OK || st == SHOAL_ERR_INVAL);
    CHECK(st == SHOAL_OK ? (b == 0 || b == 1) : b == 7);

    long l = -7;
    st = shoal_parse_int(text, &l);
    CHECK(st == SHOAL_OK || st == SHOAL_ERR_INVAL || st == SHOAL_ERR_RANGE);
    if (st == SHOAL_OK) check_int(text, l);
    else CHECK(l == -7);
}

/* The environment as it was before the first input, restored after each. */
static char **saved_env;

static void save_env(void)
{
    if (saved_env) return;
    saved_env = calloc(shoal_config_var_count, sizeof *saved_env);
    CHECK(saved_env);
    for (size_t i = 0; i < shoal_config_var_count; i++) {
        const char *v = getenv(shoal_config_vars[i].name);
        if (v) {
            saved_env[i] = strdup(v);
            CHECK(saved_env[i]);
        }
    }
}

static void restore_env(void)
{
    for (size_t i = 0; i < shoal_config_var_count; i++) {
        if (saved_env[i]) setenv(shoal_config_vars[i].name, saved_env[i], 1);
        else unsetenv(shoal_config_vars[i].name);
    }
}

static const struct shoal_config_var *find_var(const char *name, size_t len, size_t *index)
{
    if (len == 1 && is_digit(name[0])) {
        size_t i = (size_t)(name[0] - '0');
        if (i >= shoal_config_var_count) return NULL;
        *index = i;
        return &shoal_config_vars[i];
    }
    for (size_t i = 0; i < shoal_config_var_count; i++) {
        if (strlen(shoal_config_vars[i].name) == len && memcmp(shoal_config_vars[i].name, name, len) == 0) {
            *index = i;
            return &shoal_config_vars[i];
        }
    }
    return NULL;
}

static void load_from_lines(char *text, size_t errlen)
{
    for (char *line = text; line && *line;) {
        char *next = strchr(line, '\n');
        if (next) *next++ = '\0';
        char *eq = strchr(line, '=');
        size_t index;
        if (eq && find_var(line, (size_t)(eq - line), &index))
            CHECK(setenv(shoal_config_vars[index].name, eq + 1, 1) == 0);
        line = next;
    }

    struct shoal_config cfg;
    shoal_config_source_t *sources = malloc(shoal_config_var_count * sizeof *sources);
    char *err = errlen ? malloc(errlen) : NULL;
    CHECK(sources && (err || !errlen));
    if (err) memset(err, 'x', errlen);
    shoal_status_t st = shoal_config_load(&cfg, sources, err, errlen);
    CHECK(st == SHOAL_OK || st == SHOAL_ERR_INVAL || st == SHOAL_ERR_RANGE);
    if (st == SHOAL_OK) {
        for (size_t i = 0; i < shoal_config_var_count; i++) {
            const struct shoal_config_var *var = &shoal_config_vars[i];
            const char *env = getenv(var->name);
            CHECK(sources[i] == (env ? SHOAL_CONFIG_FROM_ENV : SHOAL_CONFIG_FROM_DEFAULT));
            if (var->type == SHOAL_CONFIG_STRING) {
                const char *got = *(const char *const *)((const char *)&cfg + var->offset);
                CHECK(got && strcmp(got, env ? env : var->default_value) == 0);
            }
        }
    } else if (errlen) {
        size_t n = strnlen(err, errlen);
        CHECK(n < errlen);
        CHECK(!strchr(err, '\n'));
        /* The message names the variable when there is room for it. */
        if (errlen > 64) CHECK(strncmp(err, "SHMEM_", 6) == 0);
    }
    free(err);
    free(sources);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096) return 0;
    save_env();
    char *text = malloc(size + 1);
    CHECK(text);
    memcpy(text, data, size);
    text[size] = '\0';

    parse_scalars(text);
    size_t errlen = size ? data[0] : 0;
    load_from_lines(text, errlen);
    restore_env();
    free(text);
    return 0;
}
