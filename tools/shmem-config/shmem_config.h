/* shmem_config.h: the pieces of the shmem-config tool.
 *   main.c      options; --version, --cflags, --libs, --prefix, --help
 *   paths.c     where the tool, headers, library, oshrun and the self-test are
 *   json.c      a streaming JSON writer with strict string escaping
 *   diagnose.c  --diagnose: build, configuration table, problems
 *   host.c      --diagnose: host probes (memory, memfd, limits, launcher)
 *   path_clash.c --diagnose: another OpenSHMEM's oshcc/oshrun before Shoal's in PATH
 *   markdown.c  --markdown: docs/configuration.md from the table
 *   check.c     --check: runs shoal-selftest on 2 PEs under oshrun
 * The tool links only the util layer: it reads the configuration table
 * but never starts the library. */
#ifndef SHMEM_CONFIG_H
#define SHMEM_CONFIG_H

#include <limits.h>
#include <stdio.h>

struct sc_paths {
    char bindir[PATH_MAX]; /* directory holding this executable */
    int build_tree;        /* running from the build tree, not an install */
    char prefix[PATH_MAX];
    char includedir[PATH_MAX];
    char libdir[PATH_MAX];
    char oshrun[PATH_MAX];
    char selftest[PATH_MAX];
};

/* Fills paths from /proc/self/exe; 0 on success, -1 with a message on stderr. */
int sc_paths_find(struct sc_paths *paths);

#define SC_JSON_MAX_DEPTH 16

struct sc_json {
    FILE *out;
    int depth;
    int members[SC_JSON_MAX_DEPTH]; /* written so far at each level */
};

/* key is the member name inside an object and NULL inside an array. */
void sc_json_begin(struct sc_json *j, FILE *out);
void sc_json_open(struct sc_json *j, const char *key, char bracket); /* '{' or '[' */
void sc_json_close(struct sc_json *j, char bracket);
void sc_json_str(struct sc_json *j, const char *key, const char *value); /* NULL -> null */
void sc_json_int(struct sc_json *j, const char *key, long long value);
void sc_json_uint(struct sc_json *j, const char *key, unsigned long long value);
void sc_json_bool(struct sc_json *j, const char *key, int value);
void sc_json_null(struct sc_json *j, const char *key);
void sc_json_end(struct sc_json *j);

#define SC_MAX_PROBLEMS 32
#define SC_PROBLEM_TEXT 600

/* Something that would make a job fail ("error") or run badly ("warning"). */
struct sc_problems {
    int count;
    struct {
        const char *severity;
        char what[SC_PROBLEM_TEXT];
        char next_step[SC_PROBLEM_TEXT];
    } item[SC_MAX_PROBLEMS];
};

void sc_problem(struct sc_problems *p, const char *severity, const char *next_step, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Writes the "host" object; heap_bytes is the symmetric size to probe and
 * heap_text how it was given (for messages). */
void sc_host_report(struct sc_json *j, struct sc_problems *p, size_t heap_bytes, const char *heap_text);
/* libfabric and its providers, OpenSSL, PMIx (fabric.c). */
void sc_fabric_report(struct sc_json *j, struct sc_problems *p);
/* encryption.c: SHMEM_ENCRYPT, the OpenSSL to load, kernel TLS. */
void sc_encryption_report(struct sc_json *j, struct sc_problems *p);

/* The "commands" section: oshcc, oshc++, oshCC, oshrun as PATH finds them. */
void sc_path_report(struct sc_json *j, struct sc_problems *p);

int sc_diagnose(FILE *out);
int sc_markdown(FILE *out);
int sc_check(const struct sc_paths *paths);

#endif
