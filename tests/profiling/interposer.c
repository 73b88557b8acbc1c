/* interposer.c: a profiling tool in miniature, built as a shared library
 * (preloaded, or linked before libshoal) and as an object linked with
 * libshoal.a. It defines some shmem_ names itself, counts the calls and
 * forwards each through its pshmem_ twin, as TAU or Score-P do. Besides the
 * calls a program makes, it wraps calls that Shoal could make internally
 * (shmem_free from shmem_realloc, shmem_ctx_destroy from
 * shmem_team_destroy, shmem_ptr from shmem_team_ptr): those must not be
 * counted, since the program did not make them. */
#include <pshmem.h>
#include <string.h>

enum { PUTMEM, BARRIER_ALL, FETCH_ADD, MALLOC, BROADCASTMEM, FREE, PTR, CTX_DESTROY, REALLOC, NCOUNTERS };
static const char *const names[NCOUNTERS] = {
    "shmem_putmem", "shmem_barrier_all", "shmem_long_atomic_fetch_add", "shmem_malloc", "shmem_broadcastmem",
    "shmem_free", "shmem_ptr", "shmem_ctx_destroy", "shmem_realloc",
};
static long counts[NCOUNTERS];

/* The count of one wrapped name, -1 for a name not wrapped; the test
 * program finds this with dlsym, so it also tells it the tool is there. */
long prof_count(const char *name)
{
    for (int i = 0; i < NCOUNTERS; i++)
        if (strcmp(name, names[i]) == 0) return counts[i];
    return -1;
}

void shmem_putmem(void *dest, const void *source, size_t nelems, int pe)
{
    counts[PUTMEM]++;
    pshmem_putmem(dest, source, nelems, pe);
}

void shmem_barrier_all(void)
{
    counts[BARRIER_ALL]++;
    pshmem_barrier_all();
}

long shmem_long_atomic_fetch_add(long *dest, long value, int pe)
{
    counts[FETCH_ADD]++;
    return pshmem_long_atomic_fetch_add(dest, value, pe);
}

void *shmem_malloc(size_t size)
{
    counts[MALLOC]++;
    return pshmem_malloc(size);
}

int shmem_broadcastmem(shmem_team_t team, void *dest, const void *source, size_t nelems, int PE_root)
{
    counts[BROADCASTMEM]++;
    return pshmem_broadcastmem(team, dest, source, nelems, PE_root);
}

void shmem_free(void *ptr)
{
    counts[FREE]++;
    pshmem_free(ptr);
}

void *shmem_ptr(const void *dest, int pe)
{
    counts[PTR]++;
    return pshmem_ptr(dest, pe);
}

void shmem_ctx_destroy(shmem_ctx_t ctx)
{
    counts[CTX_DESTROY]++;
    pshmem_ctx_destroy(ctx);
}

void *shmem_realloc(void *ptr, size_t size)
{
    counts[REALLOC]++;
    return pshmem_realloc(ptr, size);
}
