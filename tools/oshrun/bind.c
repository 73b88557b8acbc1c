/* bind.c: --bind-to. The cores are those of the CPUs oshrun may run on
 * (sched_getaffinity), grouped by core (sysfs topology: the hardware
 * threads of one core stay together), in the order of their first CPU.
 * Local PE i is bound to core i. By default PEs are bound when there are
 * two or more on one host and they do not outnumber the cores: a lone PE
 * has no peer to keep apart from, and PEs beyond the cores would share
 * anyway. Across hosts the default is none, since several nodes of a job
 * may share one machine's cores (tests do); --bind-to core asks for it. */
#include "oshrun.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "package:core" of cpu, or -1 when sysfs does not say (then each CPU is a core). */
static long core_key(int cpu)
{
    char path[96];
    long core = -1, package = 0;
    FILE *f;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/core_id", cpu);
    if ((f = fopen(path, "r"))) {
        if (fscanf(f, "%ld", &core) != 1) core = -1;
        fclose(f);
    }
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", cpu);
    if ((f = fopen(path, "r"))) {
        if (fscanf(f, "%ld", &package) != 1) package = 0;
        fclose(f);
    }
    return core < 0 ? -1 : package * 1000000L + core;
}

int oshrun_bind_plan(struct oshrun_job *job)
{
    const struct oshrun_options *opt = job->opt;
    cpu_set_t allowed;
    long keys[CPU_SETSIZE];
    int ncores = 0;
    job->cores = NULL;
    job->ncores = 0;
    if (opt->bind == OSHRUN_BIND_NONE || (opt->bind == OSHRUN_BIND_AUTO && (job->net || job->npes < 2))) return 0;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
        if (opt->bind == OSHRUN_BIND_AUTO) return 0;
        fprintf(stderr, "oshrun: --bind-to core: cannot read the CPUs oshrun may use: %s\n", strerror(errno));
        return 1;
    }
    cpu_set_t *cores = calloc(CPU_SETSIZE, sizeof *cores);
    if (!cores) {
        fprintf(stderr, "oshrun: out of memory planning --bind-to\n");
        return 1;
    }
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, &allowed)) continue;
        long key = core_key(cpu);
        int c = 0;
        while (c < ncores && (key < 0 || keys[c] != key)) c++;
        if (c == ncores) {
            keys[ncores] = key;
            CPU_ZERO(&cores[ncores]);
            ncores++;
        }
        CPU_SET(cpu, &cores[c]);
    }
    if (job->npes > ncores) {
        free(cores);
        if (opt->bind == OSHRUN_BIND_AUTO) return 0;
        fprintf(stderr, "oshrun: --bind-to core: %d PEs on this host but only %d core%s available to oshrun; use "
                "--bind-to none\n", job->npes, ncores, ncores == 1 ? "" : "s");
        return 1;
    }
    job->cores = cores;
    job->ncores = ncores;
    return 0;
}

int oshrun_bind_pe(const struct oshrun_job *job, int local)
{
    if (!job->cores) return 0;
    return sched_setaffinity(0, sizeof job->cores[local], &job->cores[local]) == 0 ? 0 : errno;
}
