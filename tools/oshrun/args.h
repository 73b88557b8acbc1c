/* args.h: oshrun's command line, parsed by a pure function (no I/O, no
 * exit, no globals) so it can be unit-tested and fuzzed. */
#ifndef OSHRUN_ARGS_H
#define OSHRUN_ARGS_H

#include <stddef.h>

#define OSHRUN_MAX_PES 4096
#define OSHRUN_MAX_NODES 4096
#define OSHRUN_MAX_TIMEOUT 31536000L /* one year, in seconds */
#define OSHRUN_TREE_FANOUT 4 /* children per node in the allgather tree, unless --tree-fanout */
#define OSHRUN_MAX_FANOUT 64
#define OSHRUN_MAX_EXPORTS 256 /* -x options */

enum oshrun_bind {
    OSHRUN_BIND_AUTO, /* cores when 2 or more PEs fit one per core, on one host; else none */
    OSHRUN_BIND_CORE,
    OSHRUN_BIND_NONE,
};

struct oshrun_options {
    int npes;
    int tag_output;
    long timeout_s;  /* 0: no time limit */
    int prog_index;  /* argv[prog_index] is the program, the rest its arguments */
    /* Across hosts (--nnodes > 1): this node's rank and node 0's address.
     * rendezvous points into argv. */
    int nnodes;          /* 0: not given (one host) */
    int node_rank;       /* -1: not given */
    const char *rendezvous;
    int tree_fanout; /* children per node in the allgather tree; 0: not given */
    enum oshrun_bind bind; /* --bind-to */
    /* -x: "VAR" (pass oshrun's value on) or "VAR=VALUE"; point into argv. */
    const char *exports[OSHRUN_MAX_EXPORTS];
    int nexports;
};

enum oshrun_parse {
    OSHRUN_PARSE_RUN,
    OSHRUN_PARSE_HELP,
    OSHRUN_PARSE_VERSION,
    OSHRUN_PARSE_ERROR /* err holds one line (no "oshrun: " prefix, no newline) */
};

enum oshrun_parse oshrun_parse_args(int argc, char *const argv[], struct oshrun_options *opt, char *err,
                                    size_t errlen);

#endif
