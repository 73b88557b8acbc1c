/* thread_limit_shim.c: preloaded into the PEs of tls.thread_limit, makes
 * pthread_create fail with EAGAIN, as the kernel does at its limits
 * (ulimit -u, kernel.pid_max, kernel.threads-max, vm.max_map_count), once
 * PE SHIM_LIMIT_PE has started SHIM_THREADS_MAX threads. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *), void *arg)
{
    static int started;
    create_fn real = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
    const char *max = getenv("SHIM_THREADS_MAX"), *pe = getenv("SHIM_LIMIT_PE"), *rank = getenv("SHOAL_RANK");
    if (max && pe && rank && atoi(rank) == atoi(pe) &&
        __atomic_fetch_add(&started, 1, __ATOMIC_RELAXED) >= atoi(max))
        return EAGAIN;
    return real(thread, attr, start, arg);
}
