/* config_names.c: SHMEM_* names in the environment that are not settings
 * of the table. A misspelt name would otherwise be ignored without a word
 * (the default applies), so start-up and `shmem-config --diagnose` name it,
 * with the closest known name.
 *
 * Left alone: names another OpenSHMEM implementation reads for its own
 * internals and that have no counterpart here. A shared environment (a
 * site module, a job script written for Sandia OpenSHMEM) may export them
 * for that library, and a warning on every run would teach users to ignore
 * warnings. A foreign name that does have a counterpart (a heap size, a
 * collective algorithm, a provider) is still reported, since the user
 * expects it to take effect. Open MPI's mpirun/oshrun and MPICH's mpiexec
 * set no SHMEM_* variable themselves. */
#include "util/config.h"

#include <stdio.h>
#include <string.h>

/* Sandia OpenSHMEM (src/shmem_env_defs.h): bounce buffers, CMA, OFI
 * shared-context pools, debugging aids. */
static const char *const foreign_names[] = {
    "SHMEM_BOUNCE_SIZE",         "SHMEM_MAX_BOUNCE_BUFFERS",        "SHMEM_TRAP_ON_ABORT",
    "SHMEM_BACKTRACE",           "SHMEM_BARRIERS_FLUSH",            "SHMEM_CMA_PUT_MAX",
    "SHMEM_CMA_GET_MAX",         "SHMEM_OFI_ATOMIC_CHECKS_WARN",    "SHMEM_OFI_TX_POLL_LIMIT",
    "SHMEM_OFI_RX_POLL_LIMIT",   "SHMEM_OFI_PUT_PIPELINE_DEPTH",    "SHMEM_OFI_STX_MAX",
    "SHMEM_OFI_STX_AUTO",        "SHMEM_OFI_STX_THRESHOLD",         "SHMEM_OFI_STX_ALLOCATOR",
    "SHMEM_OFI_STX_DISABLE_PRIVATE", "SHMEM_OFI_DISABLE_MULTIRAIL", "SHMEM_OFI_DISABLE_SINGLE_EP",
    "SHMEM_SYMMETRIC_HEAP_USE_MALLOC", "SHMEM_SYMMETRIC_HEAP_USE_DSMML", "SHMEM_DISABLE_ASLR_CHECK",
    "SHMEM_MPI_THREAD_LEVEL",
};

static int same(const char *name, size_t len, const char *known)
{
    return strlen(known) == len && !strncmp(known, name, len);
}

int shoal_config_known(const char *name, size_t len)
{
    for (size_t i = 0; i < shoal_config_var_count; i++)
        if (same(name, len, shoal_config_vars[i].name)) return 1;
    return 0;
}

int shoal_config_foreign(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof foreign_names / sizeof foreign_names[0]; i++)
        if (same(name, len, foreign_names[i])) return 1;
    return 0;
}

/* Edit distance (insertions, deletions, substitutions, swaps of two
 * neighbours) between a[0..la) and b, names being short. */
static size_t distance(const char *a, size_t la, const char *b)
{
    enum { MAX = 64 };
    size_t lb = strlen(b);
    if (la >= MAX || lb >= MAX) return (size_t)-1;
    size_t d[MAX][MAX];
    for (size_t i = 0; i <= la; i++) d[i][0] = i;
    for (size_t j = 0; j <= lb; j++) d[0][j] = j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[la][lb];
}

const char *shoal_config_closest(const char *name, size_t len)
{
    const char *best = NULL;
    size_t best_d = (size_t)-1;
    for (size_t i = 0; i < shoal_config_var_count; i++) {
        size_t dist = distance(name, len, shoal_config_vars[i].name);
        if (dist < best_d) best_d = dist, best = shoal_config_vars[i].name;
    }
    /* Past a third of the name it is another word, not a typo. */
    return best_d <= (len - 6) / 3 + 1 ? best : NULL;
}

extern char **environ;

int shoal_config_unknown(char *line, size_t len)
{
    int count = 0;
    size_t used = 0;
    if (len) line[0] = 0;
    for (char **e = environ; e && *e; e++) {
        const char *eq = strchr(*e, '=');
        if (strncmp(*e, "SHMEM_", 6) != 0 || !eq) continue;
        size_t n = (size_t)(eq - *e);
        if (shoal_config_known(*e, n) || shoal_config_foreign(*e, n)) continue;
        const char *near = shoal_config_closest(*e, n);
        char one[160];
        if (near)
            snprintf(one, sizeof one, "%s%.*s (did you mean %s?)", count ? ", " : "", (int)n, *e, near);
        else
            snprintf(one, sizeof one, "%s%.*s", count ? ", " : "", (int)n, *e);
        if (used + strlen(one) + 64 < len) used += (size_t)snprintf(line + used, len - used, "%s", one);
        count++;
    }
    if (count && used < len)
        snprintf(line + used, len - used, " %s not a Shoal setting and %s ignored (docs/configuration.md)",
                 count == 1 ? "is" : "are", count == 1 ? "is" : "are");
    return count;
}
