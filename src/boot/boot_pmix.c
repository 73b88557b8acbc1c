/* boot_pmix.c: a PMIx client (Open MPI's mpirun, Slurm's srun --mpi=pmix,
 * PRRTE). Blobs go through the PMIx key-value store as byte objects:
 * PMIx_Put + PMIx_Commit, a fence that collects the data, then PMIx_Get of
 * every rank's key, served locally after the fence.
 *
 * libpmix is loaded at run time rather than linked: programs and tools
 * built with Shoal then start on machines without it, and a process that
 * also runs Open MPI shares the one loaded copy, whose PMIx_Init and
 * PMIx_Finalize are reference-counted, so MPI_Init may come before or
 * after shmem_init. The PMIx headers are needed at build time only. */
#include "boot/boot_pm.h"
#include "util/log.h"

#ifndef SHOAL_HAVE_PMIX

shoal_status_t shoal_boot_open_pmix(shoal_boot_t **out)
{
    (void)out;
    shoal_error("boot", "PMIX_RANK is set (started by a PMIx launcher such as Open MPI's mpirun or srun "
                "--mpi=pmix), but this Shoal was built without PMIx (install libpmix-dev and rebuild); "
                "start it with oshrun or mpiexec.mpich instead");
    return SHOAL_ERR_UNSUPPORTED;
}

#else

#include <dlfcn.h>
#include <pmix.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The entry points we use, typed from the header so a mismatch cannot
 * compile. */
struct pmix_api {
    __typeof__(&PMIx_Init) init;
    __typeof__(&PMIx_Finalize) finalize;
    __typeof__(&PMIx_Put) put;
    __typeof__(&PMIx_Commit) commit;
    __typeof__(&PMIx_Fence) fence;
    __typeof__(&PMIx_Get) get;
    __typeof__(&PMIx_Abort) abort;
    __typeof__(&PMIx_Error_string) error_string;
};

struct pmix {
    struct pmix_api api;
    pmix_proc_t me;
    pmix_proc_t all; /* our namespace, wildcard rank */
    unsigned seq;    /* allgather number: keys are never reused */
    int finalized;
};

static shoal_status_t load_api(struct pmix_api *api)
{
    static const char *const names[] = {
#ifdef SHOAL_PMIX_LIBRARY
        SHOAL_PMIX_LIBRARY, /* the one found when Shoal was configured */
#endif
        "libpmix.so.2", "libpmix.so"};
    void *lib = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !lib; i++)
        /* GLOBAL: libpmix's own plugins resolve its symbols through it. */
        lib = dlopen(names[i], RTLD_NOW | RTLD_GLOBAL);
    if (!lib) {
        shoal_error("boot", "PMIX_RANK is set but libpmix cannot be loaded (%s); install PMIx or start the "
                    "program with oshrun", dlerror());
        return SHOAL_ERR_UNSUPPORTED;
    }
    struct {
        const char *name;
        void *slot;
    } syms[] = {
        {"PMIx_Init", &api->init},     {"PMIx_Finalize", &api->finalize},
        {"PMIx_Put", &api->put},       {"PMIx_Commit", &api->commit},
        {"PMIx_Fence", &api->fence},   {"PMIx_Get", &api->get},
        {"PMIx_Abort", &api->abort},   {"PMIx_Error_string", &api->error_string},
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
        void *fn = dlsym(lib, syms[i].name);
        if (!fn) {
            shoal_error("boot", "libpmix lacks %s; is it older than PMIx 3?", syms[i].name);
            return SHOAL_ERR_UNSUPPORTED;
        }
        /* POSIX guarantees data and function pointers convert this way. */
        memcpy(syms[i].slot, &fn, sizeof fn);
    }
    return SHOAL_OK; /* never unloaded: MPI may share it */
}

static shoal_status_t fail(struct pmix *x, const char *what, pmix_status_t rc)
{
    shoal_error("boot", "%s failed: %s", what, x->api.error_string(rc));
    return rc == PMIX_ERR_UNREACH || rc == PMIX_ERR_LOST_CONNECTION ? SHOAL_ERR_CLOSED : SHOAL_ERR_PROTO;
}

/* Values come from libpmix's malloc; release them without its macros
 * (which would need link-time symbols). */
static void value_free(pmix_value_t *v)
{
    if (!v) return;
    if (v->type == PMIX_BYTE_OBJECT) free(v->data.bo.bytes);
    free(v);
}

static shoal_status_t check_open(struct pmix *x)
{
    if (!x->finalized) return SHOAL_OK;
    shoal_error("boot", "bootstrap used after finalize");
    return SHOAL_ERR_INVAL;
}

static shoal_status_t pmix_barrier(shoal_boot_t *boot)
{
    struct pmix *x = boot->impl;
    shoal_status_t st = check_open(x);
    if (st != SHOAL_OK) return st;
    pmix_status_t rc = x->api.fence(&x->all, 1, NULL, 0);
    return rc == PMIX_SUCCESS ? SHOAL_OK : fail(x, "PMIx_Fence", rc);
}

static shoal_status_t pmix_allgather(shoal_boot_t *boot, const void *send, size_t len, void *recv)
{
    struct pmix *x = boot->impl;
    char key[PMIX_MAX_KEYLEN + 1];
    pmix_value_t value, *got;
    pmix_info_t collect;
    pmix_status_t rc;
    shoal_status_t st = check_open(x);
    if (st != SHOAL_OK) return st;
    if (len && (!send || !recv)) return SHOAL_ERR_INVAL;
    if (!len) return pmix_barrier(boot);
    snprintf(key, sizeof key, "shoal.ag.%u", x->seq++);
    memset(&value, 0, sizeof value);
    value.type = PMIX_BYTE_OBJECT;
    value.data.bo.bytes = (char *)send; /* PMIx_Put copies it */
    value.data.bo.size = len;
    rc = x->api.put(PMIX_GLOBAL, key, &value);
    if (rc != PMIX_SUCCESS) return fail(x, "PMIx_Put", rc);
    rc = x->api.commit();
    if (rc != PMIX_SUCCESS) return fail(x, "PMIx_Commit", rc);
    memset(&collect, 0, sizeof collect);
    snprintf(collect.key, sizeof collect.key, "%s", PMIX_COLLECT_DATA);
    collect.value.type = PMIX_BOOL;
    collect.value.data.flag = true;
    rc = x->api.fence(&x->all, 1, &collect, 1);
    if (rc != PMIX_SUCCESS) return fail(x, "PMIx_Fence (collecting data)", rc);
    for (int pe = 0; pe < boot->size; pe++) {
        unsigned char *dst = (unsigned char *)recv + (size_t)pe * len;
        if (pe == boot->rank) {
            memmove(dst, send, len);
            continue;
        }
        pmix_proc_t peer = x->all;
        peer.rank = (pmix_rank_t)pe;
        got = NULL;
        rc = x->api.get(&peer, key, NULL, 0, &got);
        if (rc != PMIX_SUCCESS) {
            value_free(got);
            shoal_error("boot", "PMIx_Get of PE %d's %s failed: %s", pe, key, x->api.error_string(rc));
            return SHOAL_ERR_PROTO;
        }
        if (!got || got->type != PMIX_BYTE_OBJECT || got->data.bo.size != len || !got->data.bo.bytes) {
            shoal_error("boot", "PE %d's %s is not a %zu-byte blob: did every PE pass the same length?", pe, key, len);
            value_free(got);
            return SHOAL_ERR_PROTO;
        }
        memcpy(dst, got->data.bo.bytes, len);
        value_free(got);
    }
    return SHOAL_OK;
}

static shoal_status_t pmix_finalize(shoal_boot_t *boot)
{
    struct pmix *x = boot->impl;
    if (x->finalized) return SHOAL_OK;
    x->finalized = 1;
    /* Only drops our reference when MPI holds one too. */
    pmix_status_t rc = x->api.finalize(NULL, 0);
    return rc == PMIX_SUCCESS ? SHOAL_OK : fail(x, "PMIx_Finalize", rc);
}

static void __attribute__((noreturn)) pmix_abort(shoal_boot_t *boot, int status, const char *reason)
{
    struct pmix *x = boot->impl;
    char line[320];
    if (reason && *reason)
        snprintf(line, sizeof line, "shoal: PE %d: %s", boot->rank, reason);
    else
        snprintf(line, sizeof line, "shoal: PE %d called shmem_global_exit(%d)", boot->rank, status);
    /* Launchers differ in whether they print the message they are given, so
     * we print it and hand them none. */
    fprintf(stderr, "%s\n", line);
    fflush(NULL);
    if (!x->finalized) x->api.abort(status, NULL, NULL, 0); /* NULL procs: our whole namespace */
    _exit(status);
}

static void pmix_close(shoal_boot_t *boot)
{
    pmix_finalize(boot);
    free(boot->impl);
    free(boot);
}

static const struct shoal_boot_ops pmix_ops = {
    .name = "pmix",
    .allgather = pmix_allgather,
    .allgather_fds = shoal_boot_procfd_allgather,
    .barrier = pmix_barrier,
    .finalize = pmix_finalize,
    .abort = pmix_abort,
    .close = pmix_close,
};

shoal_status_t shoal_boot_open_pmix(shoal_boot_t **out)
{
    struct pmix *x;
    shoal_boot_t *boot;
    pmix_value_t *v = NULL;
    pmix_status_t rc;
    shoal_status_t st;
    if (!out) return SHOAL_ERR_INVAL;
    boot = calloc(1, sizeof *boot);
    x = calloc(1, sizeof *x);
    if (!boot || !x) {
        free(boot);
        free(x);
        return SHOAL_ERR_NOMEM;
    }
    st = load_api(&x->api);
    if (st != SHOAL_OK) goto fail;
    rc = x->api.init(&x->me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        shoal_error("boot", "PMIx_Init failed: %s (PMIX_RANK is set but the launcher's PMIx server does not "
                    "answer)", x->api.error_string(rc));
        st = SHOAL_ERR_CLOSED;
        goto fail;
    }
    x->all = x->me;
    x->all.rank = PMIX_RANK_WILDCARD;
    rc = x->api.get(&x->all, PMIX_JOB_SIZE, NULL, 0, &v);
    if (rc != PMIX_SUCCESS || !v || v->type != PMIX_UINT32 || v->data.uint32 == 0 || v->data.uint32 > INT32_MAX ||
        x->me.rank >= v->data.uint32) {
        shoal_error("boot", "PMIx did not report a valid job size (%s)",
                    rc != PMIX_SUCCESS ? x->api.error_string(rc) : "bad value");
        value_free(v);
        x->api.finalize(NULL, 0);
        st = SHOAL_ERR_PROTO;
        goto fail;
    }
    boot->size = (int)v->data.uint32;
    value_free(v);
    boot->rank = (int)x->me.rank;
    boot->ops = &pmix_ops;
    boot->impl = x;
    shoal_boot_default_node_key(boot->node_key);
    *out = boot;
    return SHOAL_OK;
fail:
    free(x);
    free(boot);
    return st;
}

#endif
