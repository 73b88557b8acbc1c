/* diagnose.c: --diagnose. Prints one JSON object: "build", then
 * "configuration" (every row of the table with its value in force and
 * source), "host" (host.c), "commands" (path_clash.c) and last
 * "problems", which the other sections fill while they are written. A bad
 * value is a problem, never a crash: the tool always exits 0 with valid
 * JSON, so it can be run exactly when something is wrong. */
#include "shmem_config.h"

#include <shmem.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/config.h"

#ifndef SHOAL_BUILD_TYPE
#define SHOAL_BUILD_TYPE ""
#endif
#ifndef SHOAL_SANITIZE_STRING
#define SHOAL_SANITIZE_STRING ""
#endif

/* clang's __VERSION__ names the compiler; gcc's is only the number. */
#if defined(__clang__) || !defined(__GNUC__)
#define COMPILER __VERSION__
#else
#define COMPILER "gcc " __VERSION__
#endif

/* Transports compiled into this build; SHMEM_TRANSPORT must name one. */
static const char *const built_transports[] = {"auto", "shm", "ofi", "tls"};

void sc_problem(struct sc_problems *p, const char *severity, const char *next_step, const char *fmt, ...)
{
    if (p->count == SC_MAX_PROBLEMS) return;
    p->item[p->count].severity = severity;
    snprintf(p->item[p->count].next_step, SC_PROBLEM_TEXT, "%s", next_step);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->item[p->count].what, SC_PROBLEM_TEXT, fmt, ap);
    va_end(ap);
    p->count++;
}

static void report_build(struct sc_json *j)
{
    char openshmem[16];
    snprintf(openshmem, sizeof openshmem, "%d.%d", SHMEM_MAJOR_VERSION, SHMEM_MINOR_VERSION);
    sc_json_open(j, "build", '{');
    sc_json_str(j, "version", SHOAL_VERSION_STRING);
    sc_json_str(j, "openshmem", openshmem);
    sc_json_str(j, "compiler", COMPILER);
    sc_json_str(j, "build_type", SHOAL_BUILD_TYPE[0] ? SHOAL_BUILD_TYPE : NULL);
    sc_json_str(j, "sanitizers", SHOAL_SANITIZE_STRING[0] ? SHOAL_SANITIZE_STRING : NULL);
    sc_json_open(j, "transports", '[');
    for (size_t i = 0; i < sizeof built_transports / sizeof built_transports[0]; i++)
        sc_json_str(j, NULL, built_transports[i]);
    sc_json_close(j, '[');
    sc_json_close(j, '{');
}

/* Parses text as var's type and writes it as a typed JSON value under
 * "value"; returns 0, or -1 (and writes nothing) when it does not parse. */
static int write_value(struct sc_json *j, const struct shoal_config_var *var, const char *text)
{
    size_t size;
    int flag;
    long number;
    switch (var->type) {
    case SHOAL_CONFIG_SIZE:
        if (shoal_parse_size(text, &size) != SHOAL_OK) return -1;
        sc_json_uint(j, "value", size);
        return 0;
    case SHOAL_CONFIG_BOOL:
        if (shoal_parse_bool(text, &flag) != SHOAL_OK) return -1;
        sc_json_bool(j, "value", flag);
        return 0;
    case SHOAL_CONFIG_INT:
        if (shoal_parse_int(text, &number) != SHOAL_OK) return -1;
        sc_json_int(j, "value", number);
        return 0;
    case SHOAL_CONFIG_STRING: sc_json_str(j, "value", text); return 0;
    }
    return -1;
}

/* One entry per row of the table. Returns the heap size in force (the
 * default when the environment's value is bad) for the host probes. */
static size_t report_configuration(struct sc_json *j, struct sc_problems *p, const char **heap_text)
{
    size_t heap_bytes = 0;
    sc_json_open(j, "configuration", '[');
    for (size_t i = 0; i < shoal_config_var_count; i++) {
        const struct shoal_config_var *var = &shoal_config_vars[i];
        const char *env = getenv(var->name);
        sc_json_open(j, NULL, '{');
        sc_json_str(j, "name", var->name);
        sc_json_str(j, "type", shoal_config_type_name(var->type));
        sc_json_str(j, "default", var->default_value);
        sc_json_str(j, "source", env ? "environment" : "default");
        if (env) sc_json_str(j, "environment", env);
        const char *in_force = env ? env : var->default_value;
        char why[400];
        /* The same check as shmem_init's (util/config.c): a value it
         * refuses is a problem here, whether it does not parse or lies
         * outside the setting's limits. */
        const int parses = write_value(j, var, in_force) == 0;
        if (!parses) sc_json_null(j, "value");
        if (shoal_config_parse(var, in_force, NULL, why, sizeof why) != SHOAL_OK) {
            if (env)
                sc_problem(p, "error", "correct or unset the variable; see docs/configuration.md",
                           "%s: shmem_init would stop", why);
            else
                sc_problem(p, "error", "report this as a bug in Shoal", "internal: the default does not pass: %s", why);
            in_force = var->default_value;
        }
        sc_json_str(j, "help", var->help);
        sc_json_close(j, '{');

        if (!strcmp(var->name, "SHMEM_SYMMETRIC_SIZE") && shoal_parse_size(in_force, &heap_bytes) == SHOAL_OK)
            *heap_text = in_force;
    }
    sc_json_close(j, '[');
    return heap_bytes;
}

/* A misspelt variable is silently ignored by the library; say so here. */
static void report_unknown_variables(struct sc_problems *p)
{
    for (char **e = environ; *e; e++) {
        const char *eq = strchr(*e, '=');
        if (strncmp(*e, "SHMEM_", 6) != 0 || !eq) continue;
        /* The same judgement as shmem_init's warning (util/config_names.c). */
        const size_t n = (size_t)(eq - *e);
        if (shoal_config_known(*e, n) || shoal_config_foreign(*e, n)) continue;
        const char *near = shoal_config_closest(*e, n);
        char hint[96] = "";
        if (near) snprintf(hint, sizeof hint, " (did you mean %s?)", near);
        sc_problem(p, "warning", "check the name against docs/configuration.md or `shmem-config --markdown`",
                   "%.*s is set but Shoal does not read it; it has no effect%s", (int)n, *e, hint);
    }
}

static void report_problems(struct sc_json *j, const struct sc_problems *p)
{
    sc_json_open(j, "problems", '[');
    for (int i = 0; i < p->count; i++) {
        sc_json_open(j, NULL, '{');
        sc_json_str(j, "severity", p->item[i].severity);
        sc_json_str(j, "what", p->item[i].what);
        sc_json_str(j, "next_step", p->item[i].next_step);
        sc_json_close(j, '{');
    }
    sc_json_close(j, '[');
}

int sc_diagnose(FILE *out)
{
    static struct sc_problems problems; /* large; not on the stack */
    struct sc_json j;
    const char *heap_text = NULL;
    sc_json_begin(&j, out);
    sc_json_open(&j, NULL, '{');
    report_build(&j);
    size_t heap_bytes = report_configuration(&j, &problems, &heap_text);
    report_unknown_variables(&problems);
    sc_host_report(&j, &problems, heap_bytes, heap_text);
    sc_path_report(&j, &problems);
    report_problems(&j, &problems);
    sc_json_close(&j, '{');
    sc_json_end(&j);
    return 0;
}
