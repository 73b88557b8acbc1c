/* ofi_load.c: libfabric is loaded when a job first needs the fabric, not
 * when the program starts. Loading it pulls in every provider library it
 * was built with; some of them (PSM's libinfinipath) install crash handlers
 * that turn a program's SIGSEGV or abort() into "exit 1" with a backtrace.
 * A job on one host never touches the fabric, so it keeps the program's own
 * signals; a job that does gets the handlers' reports switched off unless
 * the user asked for them.
 *
 * Only five libfabric functions are real symbols; everything else in its
 * API is an inline call through an object's operation table, so those five
 * are all there is to resolve. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

#include "transport/ofi/ofi.h"
#include "util/log.h"

struct shoal_ofi_lib shoal_ofi_lib;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static shoal_status_t load_status = SHOAL_ERR_SYS;

static void *resolve(void *lib, const char *name, int *missing)
{
    void *f = dlsym(lib, name);
    if (!f) {
        shoal_error("ofi", "libfabric has no %s: %s", name, dlerror());
        *missing = 1;
    }
    return f;
}

static void load(void)
{
    /* The PSM libraries read these when they are loaded. */
    setenv("IPATH_NO_BACKTRACE", "1", 0);
    setenv("HFI_NO_BACKTRACE", "1", 0);
    void *lib = dlopen("libfabric.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        shoal_error("ofi", "cannot load libfabric (%s): install libfabric1 to reach other hosts", dlerror());
        return;
    }
    int missing = 0;
    *(void **)&shoal_ofi_lib.getinfo = resolve(lib, "fi_getinfo", &missing);
    *(void **)&shoal_ofi_lib.freeinfo = resolve(lib, "fi_freeinfo", &missing);
    *(void **)&shoal_ofi_lib.dupinfo = resolve(lib, "fi_dupinfo", &missing);
    *(void **)&shoal_ofi_lib.fabric = resolve(lib, "fi_fabric", &missing);
    *(void **)&shoal_ofi_lib.strerror = resolve(lib, "fi_strerror", &missing);
    /* The library stays loaded to the end of the process: providers keep
     * threads and handlers that must not outlive their code. */
    load_status = missing ? SHOAL_ERR_SYS : SHOAL_OK;
}

shoal_status_t shoal_ofi_load(void)
{
    pthread_once(&load_once, load);
    return load_status;
}
