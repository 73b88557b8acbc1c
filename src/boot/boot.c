/* boot.c: picks the bootstrap from what the launcher left in the
 * environment: oshrun (SHOAL_BOOT_FD, SHOAL_RANK, SHOAL_SIZE), a PMIx
 * launcher (PMIX_RANK, PMIX_NAMESPACE), a PMI-1 launcher such as Hydra
 * (PMI_FD, PMI_RANK, PMI_SIZE; or PMI_PORT and PMI_ID); without any the
 * program is a one-PE job. oshrun comes first: a PE it starts from inside
 * an MPI job must not answer to the outer job's process manager.
 *
 * A launcher that is detected but unusable ends start-up with one line;
 * it never falls back to a one-PE job, since N such jobs each "succeed"
 * where one job of N PEs was meant. */
#include "boot/boot.h"
#include "boot/boot_pm.h"
#include "util/log.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Strict decimal int in [min, max]; 0 on success. `by` names the
 * variable that chose this bootstrap, for the message. */
static int env_int(const char *by, const char *name, long min, long max, int *out)
{
    const char *text = getenv(name);
    char *end;
    long v;
    if (!text || !*text) {
        shoal_error("boot", "%s is set but %s is not; which launcher started this program?", by, name);
        return -1;
    }
    errno = 0;
    v = strtol(text, &end, 10);
    if (errno || *end || end == text || v < min || v > max) {
        shoal_error("boot", "%s='%s' is not a number in [%ld, %ld]", name, text, min, max);
        return -1;
    }
    *out = (int)v;
    return 0;
}

/* PMI_FD with PMI_RANK and PMI_SIZE: the PMI-1 wire protocol. The
 * variables stay set: an MPI library in this process reads them too. */
static shoal_status_t open_pmi(shoal_boot_t **out)
{
    const char *by = "PMI_FD";
    int fd, rank, size;
    if (env_int(by, "PMI_FD", 0, INT_MAX, &fd) || env_int(by, "PMI_SIZE", 1, INT_MAX, &size) ||
        env_int(by, "PMI_RANK", 0, size - 1, &rank))
        return SHOAL_ERR_INVAL;
    return shoal_boot_open_pmi(fd, rank, size, out);
}

static int env_set(const char *name)
{
    const char *v = getenv(name);
    return v && *v;
}

/* PMI_PORT (Hydra's -pmi-port): with PMI_ID the server tells rank and
 * size; without it they come from PMI_RANK and PMI_SIZE. */
static shoal_status_t open_pmi_port(shoal_boot_t **out)
{
    const char *by = "PMI_PORT";
    int id = -1, rank = 0, size = 1;
    if (env_set("PMI_ID")) {
        if (env_int(by, "PMI_ID", 0, INT_MAX, &id)) return SHOAL_ERR_INVAL;
    } else if (env_int(by, "PMI_SIZE", 1, INT_MAX, &size) || env_int(by, "PMI_RANK", 0, size - 1, &rank)) {
        return SHOAL_ERR_INVAL;
    }
    return shoal_boot_open_pmi_port(getenv("PMI_PORT"), id, rank, size, out);
}

/* Variables launchers set in each process of a job of several; beside
 * none of the process-manager variables above they mean the launcher gave
 * this process nobody to talk to. */
static const struct {
    const char *var, *launcher, *hint;
} job_sizes[] = {
    {"PMI_SIZE", "a PMI launcher", "no PMI_FD or PMI_PORT"},
    {"MPI_LOCALNRANKS", "MPICH's mpiexec", "no PMI_FD or PMI_PORT"},
    {"OMPI_COMM_WORLD_SIZE", "Open MPI's mpirun", "no PMIX_RANK"},
    {"SLURM_STEP_NUM_TASKS", "srun", "srun --mpi=pmix gives one"},
};

/* SHOAL_ERR_UNSUPPORTED (and one line) when the environment says this
 * process is one of several started together. */
static shoal_status_t refuse_lone_member(void)
{
    for (size_t i = 0; i < sizeof job_sizes / sizeof job_sizes[0]; i++) {
        const char *text = getenv(job_sizes[i].var);
        char *end;
        long n;
        if (!text || !*text) continue;
        errno = 0;
        n = strtol(text, &end, 10);
        if (errno || *end || n <= 1) continue;
        shoal_error("boot", "started by %s as one of %ld processes (%s=%s) without a process manager Shoal can "
                    "use (%s); each would run alone as a one-PE job", job_sizes[i].launcher, n, job_sizes[i].var,
                    text, job_sizes[i].hint);
        return SHOAL_ERR_UNSUPPORTED;
    }
    return SHOAL_OK;
}

static shoal_status_t open_from_env(shoal_boot_t **out)
{
    const char *by = "SHOAL_BOOT_FD";
    int fd, rank, size;
    shoal_status_t st;
    if (!out) return SHOAL_ERR_INVAL;
    if (!getenv("SHOAL_BOOT_FD")) {
        /* Either PMIx variable: PMIx_Init then says what is missing. */
        if (env_set("PMIX_RANK") || env_set("PMIX_NAMESPACE")) return shoal_boot_open_pmix(out);
        if (env_set("PMI_FD")) return open_pmi(out);
        if (env_set("PMI_PORT")) return open_pmi_port(out);
        st = refuse_lone_member();
        return st == SHOAL_OK ? shoal_boot_open_single(out) : st;
    }
    if (env_int(by, "SHOAL_BOOT_FD", 0, INT_MAX, &fd) || env_int(by, "SHOAL_SIZE", 1, INT_MAX, &size) ||
        env_int(by, "SHOAL_RANK", 0, size - 1, &rank))
        return SHOAL_ERR_INVAL;
    /* Programs this PE starts must not mistake an unrelated descriptor for
     * a launcher socket (the socket itself is close-on-exec from here on). */
    unsetenv("SHOAL_BOOT_FD");
    st = shoal_boot_open_launcher(fd, rank, size, out);
    if (st != SHOAL_OK && st != SHOAL_ERR_SYS) close(fd);
    return st;
}

shoal_status_t shoal_boot_open(shoal_boot_t **out)
{
    if (!out) return SHOAL_ERR_INVAL;
    shoal_status_t st = open_from_env(out);
    if (st == SHOAL_OK)
        shoal_debug("boot", "bootstrap %s: PE %d of %d on host %s", (*out)->ops->name, (*out)->rank, (*out)->size,
                    (*out)->node_key);
    return st;
}

/* FNV-1a, to fold the identity into a short key. */
static uint64_t fold(uint64_t h, const char *s)
{
    for (; *s; s++) h = (h ^ (unsigned char)*s) * UINT64_C(0x100000001b3);
    return h;
}

void shoal_boot_machine_id(char id[SHOAL_MACHINE_ID_MAX])
{
    memset(id, 0, SHOAL_MACHINE_ID_MAX);
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (!f) return;
    if (!fgets(id, SHOAL_MACHINE_ID_MAX, f)) id[0] = 0;
    fclose(f);
}

void shoal_boot_default_node_key(char key[SHOAL_NODE_KEY_MAX])
{
    char host[256] = "", boot_id[SHOAL_MACHINE_ID_MAX], netns[64] = "";
    gethostname(host, sizeof host - 1);
    shoal_boot_machine_id(boot_id);
    ssize_t n = readlink("/proc/self/ns/net", netns, sizeof netns - 1);
    netns[n > 0 ? n : 0] = 0;
    uint64_t h = fold(fold(UINT64_C(0xcbf29ce484222325), boot_id), netns);
    snprintf(key, SHOAL_NODE_KEY_MAX, "%.40s/%016llx", host, (unsigned long long)h);
}
