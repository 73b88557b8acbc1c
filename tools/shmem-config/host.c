/* host.c: the "host" section of --diagnose. Each probe reports what it
 * found; only what would make a Shoal job fail or run badly with this
 * build becomes a problem.
 * Probes are read-only except the memfd one, which creates, maps and
 * releases a heap-sized memfd exactly as shmem_init would. */
#include "shmem_config.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

static char meminfo[16384];

static void load_meminfo(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    size_t n = 0;
    meminfo[0] = '\n'; /* so every key is found as "\nKey:" */
    if (f) {
        n = fread(meminfo + 1, 1, sizeof meminfo - 2, f);
        fclose(f);
    }
    meminfo[n + 1] = '\0';
}

/* A /proc/meminfo field, scaled by its unit ("kB" -> bytes); 0 if absent. */
static int meminfo_get(const char *key, unsigned long long *out)
{
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\n%s:", key);
    const char *at = strstr(meminfo, pattern);
    if (!at) return 0;
    char *end;
    unsigned long long v = strtoull(at + strlen(pattern), &end, 10);
    while (*end == ' ') end++;
    *out = strncmp(end, "kB", 2) == 0 ? v * 1024 : v;
    return 1;
}

static void json_meminfo(struct sc_json *j, const char *name, const char *key)
{
    unsigned long long v;
    if (meminfo_get(key, &v))
        sc_json_uint(j, name, v);
    else
        sc_json_null(j, name);
}

/* First line of a small /proc or /sys file, without the newline; 0 if unreadable. */
static int read_line(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    int ok = fgets(buf, (int)len, f) != NULL;
    fclose(f);
    if (ok) buf[strcspn(buf, "\n")] = '\0';
    return ok;
}

static void report_cores(struct sc_json *j)
{
    cpu_set_t set;
    sc_json_open(j, "cores", '{');
    sc_json_int(j, "online", sysconf(_SC_NPROCESSORS_ONLN));
    sc_json_int(j, "configured", sysconf(_SC_NPROCESSORS_CONF));
    /* PEs inherit this process's affinity from oshrun. */
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        sc_json_int(j, "usable_by_this_process", CPU_COUNT(&set));
    else
        sc_json_null(j, "usable_by_this_process");
    sc_json_close(j, '{');
}

static void report_memory(struct sc_json *j)
{
    char line[64];
    sc_json_open(j, "memory", '{');
    json_meminfo(j, "total_bytes", "MemTotal");
    json_meminfo(j, "available_bytes", "MemAvailable");
    json_meminfo(j, "swap_total_bytes", "SwapTotal");
    json_meminfo(j, "swap_free_bytes", "SwapFree");
    if (read_line("/proc/sys/vm/overcommit_memory", line, sizeof line))
        sc_json_int(j, "overcommit_memory", atoi(line));
    else
        sc_json_null(j, "overcommit_memory");
    sc_json_close(j, '{');
}

static void report_dev_shm(struct sc_json *j)
{
    struct statvfs st;
    sc_json_open(j, "shared_memory", '{');
    sc_json_str(j, "path", "/dev/shm");
    if (statvfs("/dev/shm", &st) == 0) {
        sc_json_uint(j, "total_bytes", (unsigned long long)st.f_blocks * st.f_frsize);
        sc_json_uint(j, "available_bytes", (unsigned long long)st.f_bavail * st.f_frsize);
    } else {
        sc_json_str(j, "error", strerror(errno));
    }
    /* memfds live on the kernel's internal tmpfs mount, which has no size
     * option, so a small /dev/shm (64 MiB in Docker) does not limit Shoal. */
    sc_json_str(j, "note", "Shoal's segments are anonymous memfds; /dev/shm's size does not limit them");
    sc_json_close(j, '{');
}

/* Creates, sizes and maps a memfd as the heap does (segment.c), then
 * releases it; returns the failing step or NULL. */
static const char *probe_memfd(size_t bytes, int *err)
{
    const char *step = NULL;
    void *p = MAP_FAILED;
    /* Over RLIMIT_FSIZE, ftruncate would raise SIGXFSZ and end this tool. */
    struct sigaction ignore = {.sa_handler = SIG_IGN}, old;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGXFSZ, &ignore, &old);
    int fd = memfd_create("shoal-diagnose", MFD_CLOEXEC);
    if (fd < 0) {
        step = "memfd_create";
    } else if ((off_t)bytes < 0 || (size_t)(off_t)bytes != bytes) {
        step = "ftruncate";
        errno = EFBIG;
    } else if (ftruncate(fd, (off_t)bytes) != 0) {
        step = "ftruncate";
    } else if ((p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0)) == MAP_FAILED) {
        step = "mmap";
    }
    *err = errno;
    if (p != MAP_FAILED) munmap(p, bytes);
    if (fd >= 0) close(fd);
    sigaction(SIGXFSZ, &old, NULL);
    return step;
}

static const char *memfd_next_step(const char *step, int err)
{
    if (!strcmp(step, "memfd_create"))
        return err == ENOSYS || err == EPERM
                   ? "memfd_create is unavailable (Linux older than 3.17, or blocked by a seccomp profile): "
                     "allow it, e.g. run the container with a profile that permits memfd_create"
                   : "check the open-file limit (ulimit -n) and the kernel log";
    if (!strcmp(step, "ftruncate"))
        return "lower SHMEM_SYMMETRIC_SIZE, or raise the file-size limit (ulimit -f)";
    return "lower SHMEM_SYMMETRIC_SIZE, or raise the address-space limit (ulimit -v); the heap is "
           "reserved lazily, so only address space is needed up front";
}

static void report_memfd(struct sc_json *j, struct sc_problems *p, size_t bytes, const char *text)
{
    sc_json_open(j, "memfd", '{');
    if (!text) {
        sc_json_str(j, "status", "skipped");
        sc_json_str(j, "reason", "no valid SHMEM_SYMMETRIC_SIZE to probe");
        sc_json_close(j, '{');
        return;
    }
    sc_json_uint(j, "bytes", bytes);
    int err = 0;
    /* The library adds its internal area, so even a 0-byte heap maps something. */
    const char *step = probe_memfd(bytes ? bytes : (size_t)sysconf(_SC_PAGESIZE), &err);
    if (!step) {
        sc_json_str(j, "status", "ok");
    } else {
        sc_json_str(j, "status", "error");
        sc_json_str(j, "step", step);
        sc_json_str(j, "error", strerror(err));
        sc_problem(p, "error", memfd_next_step(step, err),
                   "a symmetric heap of SHMEM_SYMMETRIC_SIZE=%s (%zu bytes) cannot be created here: %s failed: "
                   "%s; shmem_init would stop",
                   text, bytes, step, strerror(err));
    }
    sc_json_close(j, '{');
}

static void report_huge_pages(struct sc_json *j)
{
    char line[128];
    sc_json_open(j, "huge_pages", '{');
    json_meminfo(j, "total", "HugePages_Total");
    json_meminfo(j, "free", "HugePages_Free");
    json_meminfo(j, "reserved", "HugePages_Rsvd");
    json_meminfo(j, "surplus", "HugePages_Surp");
    json_meminfo(j, "page_size_bytes", "Hugepagesize");
    /* The heap is shmem (memfd): this, not "enabled", governs its THP use. */
    if (read_line("/sys/kernel/mm/transparent_hugepage/shmem_enabled", line, sizeof line)) {
        char *open = strchr(line, '['), *close = open ? strchr(open, ']') : NULL;
        if (open && close) *close = '\0';
        sc_json_str(j, "transparent_shmem", open && close ? open + 1 : line);
    } else {
        sc_json_null(j, "transparent_shmem");
    }
    sc_json_close(j, '{');
}

static void json_limit(struct sc_json *j, const char *key, rlim_t value)
{
    if (value == RLIM_INFINITY)
        sc_json_str(j, key, "unlimited");
    else
        sc_json_uint(j, key, (unsigned long long)value);
}

static void report_memlock(struct sc_json *j)
{
    struct rlimit lim;
    sc_json_open(j, "locked_memory_limit", '{');
    if (getrlimit(RLIMIT_MEMLOCK, &lim) == 0) {
        json_limit(j, "soft_bytes", lim.rlim_cur);
        json_limit(j, "hard_bytes", lim.rlim_max);
    } else {
        sc_json_str(j, "error", strerror(errno));
    }
    sc_json_str(j, "note", "matters only to fabric providers that register memory with the NIC (verbs, efa)");
    sc_json_close(j, '{');
}

/* A kernel setting from /proc/sys, or -1. */
static long long proc_sys(const char *path)
{
    char line[32];
    return read_line(path, line, sizeof line) ? atoll(line) : -1;
}

/* value, or null where it is unknown (-1). */
static void json_known(struct sc_json *j, const char *key, long long value)
{
    if (value >= 0)
        sc_json_int(j, key, value);
    else
        sc_json_null(j, key);
}

/* The encrypted transport serves each peer's stream with a thread, so the
 * kernel's thread limits bound how many peers one PE can talk to
 * (docs/scaling.md, 'Where the first wall is'). */
static void report_threads(struct sc_json *j)
{
    const long long pid_max = proc_sys("/proc/sys/kernel/pid_max");
    const long long threads_max = proc_sys("/proc/sys/kernel/threads-max");
    const long long map_count = proc_sys("/proc/sys/vm/max_map_count");
    struct rlimit nproc;
    const int have_nproc = getrlimit(RLIMIT_NPROC, &nproc) == 0;
    sc_json_open(j, "threads", '{');
    json_known(j, "pid_max", pid_max);
    json_known(j, "threads_max", threads_max);
    json_known(j, "max_map_count", map_count);
    if (have_nproc)
        json_limit(j, "processes_limit_soft", nproc.rlim_cur);
    else
        sc_json_null(j, "processes_limit_soft");
    /* Each thread maps its stack and a guard page: 2 mappings. pid_max and
     * threads-max count the host's threads, the user limit its user's. */
    long long per_process = map_count >= 0 ? map_count / 2 : -1;
    const long long host_wide[] = {pid_max, threads_max,
                                   have_nproc && nproc.rlim_cur != RLIM_INFINITY ? (long long)nproc.rlim_cur : -1};
    for (size_t i = 0; i < sizeof host_wide / sizeof host_wide[0]; i++)
        if (host_wide[i] >= 0 && (per_process < 0 || host_wide[i] < per_process)) per_process = host_wide[i];
    json_known(j, "threads_per_process_at_most", per_process);
    sc_json_str(j, "note", "the encrypted transport (tls) serves each peer's stream with a thread: a PE talks to "
                           "fewer peers than this, and a host's PEs together to fewer than pid_max and threads_max "
                           "(docs/scaling.md)");
    sc_json_close(j, '{');
}

static void report_ptrace(struct sc_json *j)
{
    char line[32];
    sc_json_open(j, "ptrace_scope", '{');
    if (read_line("/proc/sys/kernel/yama/ptrace_scope", line, sizeof line)) {
        sc_json_bool(j, "present", 1);
        sc_json_int(j, "value", atoi(line));
    } else {
        sc_json_bool(j, "present", 0);
        sc_json_null(j, "value");
    }
    sc_json_str(j, "note", "does not affect Shoal: under mpiexec/mpirun PEs of one user open each other's heaps "
                           "through /proc/PID/fd, which the scope does not restrict");
    sc_json_close(j, '{');
}

/* Environment variables by which each launcher announces a started process. */
static const struct launcher {
    const char *name;
    const char *vars[3];
} launchers[] = {
    {"oshrun", {"SHOAL_BOOT_FD", "SHOAL_RANK", "SHOAL_SIZE"}},
    {"mpich-hydra", {"PMI_RANK", "PMI_SIZE", NULL}},
    {"open-mpi", {"PMIX_RANK", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"}},
    {"slurm", {"SLURM_PROCID", "SLURM_NTASKS", NULL}},
};

static int launcher_present(const struct launcher *l)
{
    /* The first variable of each is the one the launcher always sets, except
     * Open MPI, which sets either PMIX_RANK or OMPI_COMM_WORLD_RANK. */
    return getenv(l->vars[0]) || (!strcmp(l->name, "open-mpi") && getenv(l->vars[1]));
}

static void report_launcher(struct sc_json *j, struct sc_problems *p)
{
    const size_t n = sizeof launchers / sizeof launchers[0];
    int oshrun = launcher_present(&launchers[0]);
    sc_json_open(j, "launcher", '{');
    sc_json_open(j, "detected", '[');
    for (size_t i = 0; i < n; i++)
        if (launcher_present(&launchers[i])) sc_json_str(j, NULL, launchers[i].name);
    sc_json_close(j, '[');
    sc_json_open(j, "variables", '{');
    for (size_t i = 0; i < n; i++)
        for (size_t v = 0; v < 3 && launchers[i].vars[v]; v++)
            if (getenv(launchers[i].vars[v])) sc_json_str(j, launchers[i].vars[v], getenv(launchers[i].vars[v]));
    sc_json_close(j, '{');
    sc_json_open(j, "bootstraps_built", '[');
    sc_json_str(j, NULL, "oshrun");
    sc_json_str(j, NULL, "pmi (MPICH mpiexec)");
#ifdef SHOAL_HAVE_PMIX
    sc_json_str(j, NULL, "pmix (Open MPI mpirun, srun --mpi=pmix)");
#endif
    sc_json_str(j, NULL, "single (no launcher: a 1-PE job)");
    sc_json_close(j, '[');
    sc_json_close(j, '{');
    /* A launcher without a bootstrap Shoal speaks (srun --mpi=none, say). */
    const int reachable = oshrun || getenv("PMI_FD") || getenv("PMIX_RANK");
    for (size_t i = 1; i < n && !reachable; i++)
        if (launcher_present(&launchers[i]))
            sc_problem(p, "warning", "use oshrun, mpiexec (MPICH), mpirun (Open MPI) or srun --mpi=pmix",
                       "this process runs under %s but has neither PMI_FD nor PMIX_RANK: a program started this "
                       "way would run as separate 1-PE jobs", launchers[i].name);
}

void sc_host_report(struct sc_json *j, struct sc_problems *p, size_t heap_bytes, const char *heap_text)
{
    load_meminfo();
    sc_json_open(j, "host", '{');
    report_cores(j);
    report_memory(j);
    report_dev_shm(j);
    report_memfd(j, p, heap_bytes, heap_text);
    report_huge_pages(j);
    report_memlock(j);
    report_threads(j);
    report_ptrace(j);
    sc_fabric_report(j, p);
    sc_encryption_report(j, p);
    report_launcher(j, p);
    sc_json_close(j, '{');
}
