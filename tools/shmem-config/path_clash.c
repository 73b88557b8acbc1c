/* path_clash.c: the "commands" section of --diagnose. Open MPI (and other
 * OpenSHMEMs) install commands named like Shoal's: oshcc, oshc++, oshCC,
 * oshrun. Whichever PATH finds first builds or launches the program, and a
 * program built by one and started by the other fails in confusing ways.
 * Each command is looked up in PATH as the shell would; another one found
 * before this Shoal's is a problem naming both paths. */
#include "shmem_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const commands[] = {"oshcc", "oshc++", "oshCC", "oshrun"};

/* Looks `name` up in PATH as execvp does (an empty entry is the current
 * directory). `first` gets the first executable found as PATH names it
 * ("" when none); *first_is_shoal whether that is `shoal` (canonical).
 * Returns whether `shoal` is found at all. */
static int search_path(const char *name, const char *shoal, char *first, int *first_is_shoal)
{
    const char *path = getenv("PATH");
    first[0] = '\0';
    *first_is_shoal = 0;
    if (!path) return 0;
    for (const char *dir = path;; dir++) {
        const char *end = strchr(dir, ':');
        size_t len = end ? (size_t)(end - dir) : strlen(dir);
        char candidate[PATH_MAX], real[PATH_MAX];
        struct stat st;
        int n = snprintf(candidate, sizeof candidate, "%.*s/%s", (int)(len ? len : 1), len ? dir : ".", name);
        if (n > 0 && n < (int)sizeof candidate && stat(candidate, &st) == 0 && S_ISREG(st.st_mode) &&
            access(candidate, X_OK) == 0) {
            int is_shoal = realpath(candidate, real) && !strcmp(real, shoal);
            if (!first[0]) {
                snprintf(first, PATH_MAX, "%s", candidate);
                *first_is_shoal = is_shoal;
            }
            if (is_shoal) return 1;
        }
        if (!end) return 0;
        dir = end;
    }
}

/* Where this Shoal's `name` is: `shown` as the install names it, `real`
 * canonical. In the build tree the wrappers are in the build root and
 * oshrun next to this tool; installed, all share bin/. */
static void shoal_command(const struct sc_paths *paths, const char *name, char *shown, char *real)
{
    const char *dir = paths->build_tree && strcmp(name, "oshrun") != 0 ? paths->prefix : paths->bindir;
    snprintf(shown, PATH_MAX, "%.*s/%s", PATH_MAX - 16, dir, name);
    if (!realpath(shown, real)) snprintf(real, PATH_MAX, "%s", shown);
}

void sc_path_report(struct sc_json *j, struct sc_problems *p)
{
    struct sc_paths paths;
    if (sc_paths_find(&paths) != 0) return;
    sc_json_open(j, "commands", '[');
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        char shoal[PATH_MAX], shoal_real[PATH_MAX], first[PATH_MAX];
        shoal_command(&paths, commands[i], shoal, shoal_real);
        int first_is_shoal;
        int shoal_in_path = search_path(commands[i], shoal_real, first, &first_is_shoal);
        /* Only a clash when Shoal's is in PATH too: without it, the user
         * has not asked for Shoal's commands by name. */
        int clash = shoal_in_path && !first_is_shoal;
        sc_json_open(j, NULL, '{');
        sc_json_str(j, "name", commands[i]);
        sc_json_str(j, "shoal", shoal);
        sc_json_str(j, "first_in_path", first[0] ? first : NULL);
        sc_json_bool(j, "shoal_in_path", shoal_in_path);
        sc_json_bool(j, "shoal_first", shoal_in_path && !clash);
        sc_json_close(j, '{');
        if (clash) {
            char next_step[SC_PROBLEM_TEXT];
            snprintf(next_step, sizeof next_step,
                     "put %.*s first in PATH (an installed Shoal's bin/set_env.sh does) or run Shoal's %s "
                     "by its full path",
                     (int)(sizeof next_step - 160), paths.build_tree ? paths.prefix : paths.bindir, commands[i]);
            sc_problem(p, "warning", next_step,
                       "%s in PATH is %.200s, found before this Shoal's %.200s: another OpenSHMEM's (Open MPI "
                       "installs one) would build or launch the program",
                       commands[i], first, shoal);
        }
    }
    sc_json_close(j, '[');
}
