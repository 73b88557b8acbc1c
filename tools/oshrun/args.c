/* args.c: oshrun's argument parser. Options come before the program; the
 * first word that is not an option (or the word after "--") is the
 * program, and everything after it belongs to the program. */
#include "args.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Strict positive decimal in [1, max]; 0 on success. */
static int parse_positive(const char *text, long max, long *out)
{
    char *end;
    long v;
    if (!text || *text < '0' || *text > '9') return -1;
    errno = 0;
    v = strtol(text, &end, 10);
    if (errno || *end || v < 1 || v > max) return -1;
    *out = v;
    return 0;
}

/* An error message echoes words of the command line: control bytes in them
 * become '?' so the message stays one printable line. */
static enum oshrun_parse fail(char *err, size_t errlen)
{
    for (size_t k = 0; k < errlen && err[k]; k++)
        if ((unsigned char)err[k] < 0x20 || err[k] == 0x7f) err[k] = '?';
    return OSHRUN_PARSE_ERROR;
}

/* Matches "--name value", "--name=value" (and "-n value" for short ones).
 * Returns 1 and the value (NULL when missing), 0 when arg is not name. */
static int option_value(const char *arg, const char *name, int *i, int argc, char *const argv[],
                        const char **value)
{
    size_t n = strlen(name);
    if (strncmp(arg, name, n) != 0) return 0;
    if (arg[n] == '=') {
        *value = arg + n + 1;
        return 1;
    }
    if (arg[n] != '\0') return 0;
    *value = (*i + 1 < argc) ? argv[++*i] : NULL;
    return 1;
}

enum oshrun_parse oshrun_parse_args(int argc, char *const argv[], struct oshrun_options *opt, char *err,
                                    size_t errlen)
{
    static const char *const np_names[] = {"-np", "-n", "--npes", "--np"};
    int i;
    if (errlen) err[0] = '\0';
    memset(opt, 0, sizeof *opt);
    opt->prog_index = -1;
    opt->node_rank = -1;
    for (i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *value = NULL;
        int matched = 0;
        if (!arg) break;
        if (strcmp(arg, "--") == 0) {
            i++;
            break;
        }
        if (arg[0] != '-' || arg[1] == '\0') break; /* the program ("-" alone is a name) */
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) return OSHRUN_PARSE_HELP;
        if (strcmp(arg, "--version") == 0) return OSHRUN_PARSE_VERSION;
        if (strcmp(arg, "--tag-output") == 0) {
            opt->tag_output = 1;
            continue;
        }
        for (size_t k = 0; k < sizeof np_names / sizeof np_names[0] && !matched; k++) {
            if (!option_value(arg, np_names[k], &i, argc, argv, &value)) continue;
            long v;
            matched = 1;
            if (parse_positive(value, OSHRUN_MAX_PES, &v)) {
                if (value && parse_positive(value, 2147483647L, &v) == 0)
                    snprintf(err, errlen, "%s %s: at most %d PEs can run on one host", np_names[k], value,
                             OSHRUN_MAX_PES);
                else if (value)
                    snprintf(err, errlen, "%s needs a positive number of PEs, got '%s'", np_names[k], value);
                else
                    snprintf(err, errlen, "%s needs a positive number of PEs", np_names[k]);
                return fail(err, errlen);
            }
            opt->npes = (int)v;
        }
        if (matched) continue;
        if (option_value(arg, "--timeout", &i, argc, argv, &value)) {
            if (parse_positive(value, OSHRUN_MAX_TIMEOUT, &opt->timeout_s)) {
                if (value)
                    snprintf(err, errlen, "--timeout needs a positive whole number of seconds (at most %ld), got '%s'",
                             OSHRUN_MAX_TIMEOUT, value);
                else
                    snprintf(err, errlen, "--timeout needs a positive whole number of seconds");
                return fail(err, errlen);
            }
            continue;
        }
        if (option_value(arg, "--nnodes", &i, argc, argv, &value)) {
            long v;
            if (parse_positive(value, OSHRUN_MAX_NODES, &v)) {
                snprintf(err, errlen, "--nnodes needs a number of hosts from 1 to %d", OSHRUN_MAX_NODES);
                return fail(err, errlen);
            }
            opt->nnodes = (int)v;
            continue;
        }
        if (option_value(arg, "--node-rank", &i, argc, argv, &value)) {
            long v;
            /* parse_positive rejects 0: accept it separately. */
            if (value && strcmp(value, "0") == 0)
                v = 0;
            else if (parse_positive(value, OSHRUN_MAX_NODES - 1, &v)) {
                snprintf(err, errlen, "--node-rank needs a number from 0 to %d", OSHRUN_MAX_NODES - 1);
                return fail(err, errlen);
            }
            opt->node_rank = (int)v;
            continue;
        }
        if (option_value(arg, "--rendezvous", &i, argc, argv, &value)) {
            const char *colon = value ? strrchr(value, ':') : NULL;
            long port;
            if (!colon || colon == value || parse_positive(colon + 1, 65535, &port)) {
                snprintf(err, errlen, "--rendezvous needs HOST:PORT (node 0's address), got '%s'",
                         value ? value : "");
                return fail(err, errlen);
            }
            opt->rendezvous = value;
            continue;
        }
        if (option_value(arg, "-x", &i, argc, argv, &value)) {
            size_t name_len = value ? strcspn(value, "=") : 0;
            int ok = name_len > 0 && !(value[0] >= '0' && value[0] <= '9');
            for (size_t k = 0; k < name_len && ok; k++)
                ok = value[k] == '_' || (value[k] >= 'A' && value[k] <= 'Z') || (value[k] >= 'a' && value[k] <= 'z') ||
                     (value[k] >= '0' && value[k] <= '9');
            if (!ok) {
                snprintf(err, errlen, "-x needs VAR or VAR=VALUE (VAR: letters, digits, '_'), got '%s'",
                         value ? value : "");
                return fail(err, errlen);
            }
            if (opt->nexports == OSHRUN_MAX_EXPORTS) {
                snprintf(err, errlen, "-x %s: at most %d variables can be exported", value, OSHRUN_MAX_EXPORTS);
                return fail(err, errlen);
            }
            opt->exports[opt->nexports++] = value;
            continue;
        }
        if (option_value(arg, "--bind-to", &i, argc, argv, &value)) {
            if (value && strcmp(value, "core") == 0)
                opt->bind = OSHRUN_BIND_CORE;
            else if (value && strcmp(value, "none") == 0)
                opt->bind = OSHRUN_BIND_NONE;
            else {
                snprintf(err, errlen, "--bind-to needs core or none, got '%s'", value ? value : "");
                return fail(err, errlen);
            }
            continue;
        }
        if (option_value(arg, "--tree-fanout", &i, argc, argv, &value)) {
            long v;
            if (parse_positive(value, OSHRUN_MAX_FANOUT, &v)) {
                snprintf(err, errlen, "--tree-fanout needs a number of children per node from 1 to %d",
                         OSHRUN_MAX_FANOUT);
                return fail(err, errlen);
            }
            opt->tree_fanout = (int)v;
            continue;
        }
        snprintf(err, errlen, "unknown option '%s'", arg);
        return fail(err, errlen);
    }
    if (i >= argc || !argv[i] || !argv[i][0]) {
        snprintf(err, errlen, "no program to run");
        return OSHRUN_PARSE_ERROR;
    }
    if (opt->npes == 0) {
        snprintf(err, errlen, "the number of PEs is missing: use -n N");
        return OSHRUN_PARSE_ERROR;
    }
    if (opt->nnodes > 1 || opt->node_rank >= 0 || opt->rendezvous) {
        if (opt->nnodes == 0 || opt->node_rank < 0 || !opt->rendezvous) {
            snprintf(err, errlen,
                     "a job across hosts needs all of --nnodes H, --node-rank R and --rendezvous HOST:PORT");
            return OSHRUN_PARSE_ERROR;
        }
        if (opt->node_rank >= opt->nnodes) {
            snprintf(err, errlen, "--node-rank %d is out of range for --nnodes %d (0 to %d)", opt->node_rank,
                     opt->nnodes, opt->nnodes - 1);
            return OSHRUN_PARSE_ERROR;
        }
    }
    opt->prog_index = i;
    return OSHRUN_PARSE_RUN;
}
