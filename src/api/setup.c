/* setup.c: initialisation, finalisation and the query calls. */
#include <shmem.h>
#include <shmemx.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/check.h"
#include "observe/blocked.h"
#include "api/finalize.h"
#include "api/profiling.h"
#include "coll/coll.h"
#include "observe/observe.h"
#include "sync/barrier.h"
#include "util/clock.h"
#include "util/log.h"

/* SHMEM_INFO: one row per setting, columns as wide as their widest cell;
 * the help text is left out (shmem-config --markdown has it). */
static void print_settings(void)
{
    int name_w = 0, value_w = 0;
    for (size_t i = 0; i < shoal_config_var_count; i++) {
        const struct shoal_config_var *v = &shoal_config_vars[i];
        const char *env = getenv(v->name);
        int nw = (int)strlen(v->name), vw = (int)strlen(env ? env : v->default_value);
        if (nw > name_w) name_w = nw;
        if (vw > value_w) value_w = vw;
    }
    if (value_w > 40) value_w = 40;
    printf("%-*s  %-*s  %s\n", name_w, "Setting", value_w, "Value", "Source");
    for (size_t i = 0; i < shoal_config_var_count; i++) {
        const struct shoal_config_var *v = &shoal_config_vars[i];
        const char *env = getenv(v->name);
        const char *value = env ? env : v->default_value;
        printf("%-*s  %-*s  %s\n", name_w, v->name, value_w, value[0] ? value : "''", env ? "environment" : "default");
    }
}

static void print_start_info(void)
{
    /* Every PE says where it accepts its peers' operations: that address is
     * what an outsider would need, so users can check it. */
    if (shoal_rt.config.print_info && shoal_rt.transport_setup.listen[0]) {
        printf("shoal: PE %d listens on %s\n", shoal_rt.my_pe, shoal_rt.transport_setup.listen);
        fflush(stdout);
    }
    if (shoal_rt.my_pe != 0) return;
    if (shoal_rt.config.print_version)
        printf("Shoal %s (OpenSHMEM %d.%d)\n", SHOAL_VERSION_STRING, SHMEM_MAJOR_VERSION, SHMEM_MINOR_VERSION);
    if (shoal_rt.config.print_info) print_settings();
    fflush(stdout);
}

/* shmem_init and shmem_init_thread; call names the one the program made. */
static int init_as(const char *call, int requested, int *provided)
{
    if (shoal_rt.initialized) {
        if (provided) *provided = shoal_rt.thread_level;
        return 0;
    }
    if (shoal_rt.finalized) shoal_api_fail(call, "cannot initialise again after shmem_finalize");
    if (requested < SHMEM_THREAD_SINGLE || requested > SHMEM_THREAD_MULTIPLE)
        shoal_api_fail(call, "thread level %d is not one of SHMEM_THREAD_SINGLE..SHMEM_THREAD_MULTIPLE (%d..%d)",
                       requested, SHMEM_THREAD_SINGLE, SHMEM_THREAD_MULTIPLE);
    char err[512] = "";
    /* First: a PE stuck in start-up answers a hang report too. */
    shoal_blocked_install();
    shoal_status_t st = shoal_runtime_init(requested, err, sizeof err);
    if (st != SHOAL_OK) {
        if (!shoal_rt.startup_reporter) shoal_runtime_await_end();
        shoal_api_fail(call, "start-up failed: %s", err[0] ? err : shoal_status_str(st));
    }
    shoal_barrier_init();
    /* The configuration table has refused a bad SHMEM_COLL_ALGORITHM (one
     * line for the job); this applies the setting, which never changes. */
    if (shoal_coll_setup(err, sizeof err) != SHOAL_OK) shoal_api_fail(call, "%s", err);
    shoal_finalize_start();
    shoal_finalize_arm_exit();
    print_start_info();
    shoal_obs_init(); /* SHMEM_TRACE, SHMEM_STATS */
    if (provided) *provided = shoal_rt.thread_level;
    return 0;
}

SHOAL_WEAK_ALIAS(shmem_init_thread);
int pshmem_init_thread(int requested, int *provided) { return init_as("shmem_init_thread", requested, provided); }

SHOAL_WEAK_ALIAS(shmem_init);
void pshmem_init(void)
{
    int provided;
    init_as("shmem_init", SHMEM_THREAD_SINGLE, &provided);
}

SHOAL_WEAK_ALIAS(shmem_query_thread);
void pshmem_query_thread(int *provided)
{
    shoal_check_init("shmem_query_thread");
    if (provided) *provided = shoal_rt.thread_level;
}

SHOAL_WEAK_ALIAS(shmem_query_initialized);
int pshmem_query_initialized(void) { return shoal_rt.initialized; }

SHOAL_WEAK_ALIAS(shmem_finalize);
void pshmem_finalize(void)
{
    if (!shoal_rt.initialized) {
        if (shoal_rt.finalized) return; /* a second finalize has nothing left to do */
        shoal_api_fail_uninitialized("shmem_finalize");
    }
    /* A peer may still be working on this PE until it reaches finalize too,
     * and the bootstrap's barrier does not serve a transport whose target
     * must progress (SHMEM_FABRIC_PROGRESS_THREAD=off): every PE quiets,
     * then they meet in waits that do (finalize.c). */
    shoal_finalize_run(0);
}

SHOAL_WEAK_ALIAS(shmem_global_exit);
void pshmem_global_exit(int status)
{
    fflush(stdout);
    fflush(stderr);
    /* An empty reason makes the launcher say "PE n called shmem_global_exit(status)". */
    shoal_runtime_abort(status, "");
}

SHOAL_WEAK_ALIAS(shmem_my_pe);
int pshmem_my_pe(void)
{
    shoal_check_init("shmem_my_pe");
    return shoal_rt.my_pe;
}

SHOAL_WEAK_ALIAS(shmem_n_pes);
int pshmem_n_pes(void)
{
    shoal_check_init("shmem_n_pes");
    return shoal_rt.n_pes;
}

SHOAL_WEAK_ALIAS(shmem_pe_accessible);
int pshmem_pe_accessible(int pe)
{
    shoal_check_init("shmem_pe_accessible");
    return pe >= 0 && pe < shoal_rt.n_pes;
}

SHOAL_WEAK_ALIAS(shmem_addr_accessible);
int pshmem_addr_accessible(const void *addr, int pe)
{
    shoal_check_init("shmem_addr_accessible");
    size_t off;
    return pe >= 0 && pe < shoal_rt.n_pes && shoal_route_segment(addr, 1, &off) >= 0;
}

SHOAL_WEAK_ALIAS(shmem_ptr);
void *pshmem_ptr(const void *dest, int pe)
{
    shoal_check_init("shmem_ptr");
    size_t off;
    if (pe < 0 || pe >= shoal_rt.n_pes) return NULL;
    int seg = shoal_route_segment(dest, 0, &off);
    if (seg < 0 || off == shoal_rt.seg_size[seg]) return NULL;
    return shoal_route_direct(seg, off, pe);
}

SHOAL_WEAK_ALIAS(shmem_info_get_version);
void pshmem_info_get_version(int *major, int *minor)
{
    if (major) *major = SHMEM_MAJOR_VERSION;
    if (minor) *minor = SHMEM_MINOR_VERSION;
}

SHOAL_WEAK_ALIAS(shmem_info_get_name);
void pshmem_info_get_name(char *name)
{
    if (!name) return;
    strncpy(name, SHMEM_VENDOR_STRING, SHMEM_MAX_NAME_LEN - 1);
    name[SHMEM_MAX_NAME_LEN - 1] = '\0';
}

/* Profiling control: the level of SHMEM_TRACE and SHMEM_STATS recording
 * (observe.h): 0 stops it, 1 records the program's calls (the default), 2
 * adds the operations nested in them. Tools interposing the pshmem_ names
 * see the call as well. */
SHOAL_WEAK_ALIAS(shmem_pcontrol);
void pshmem_pcontrol(int level, ...) { shoal_obs_pcontrol(level); }

double shmemx_wtime(void) { return shoal_now_s(); }
