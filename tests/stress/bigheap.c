/* bigheap.c: a heap far larger than what is touched (run with
 * SHMEM_SYMMETRIC_SIZE=16G on a host with less free memory than PEs x 16
 * GiB). The reservation must cost no memory: VmRSS stays small after
 * shmem_init and after a malloc of nearly the whole heap. Then each PE puts
 * a pattern into 4 pages at each end of its right neighbour's block (the
 * first and the last pages of the heap), and checks what its left
 * neighbour put; VmRSS may grow by about those pages, no more.
 * argv[1]: the RSS limit in MiB (default 64). Prints each PE's RSS. */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define PAGE 4096
#define PAGES 4

static long status_kb(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    const size_t n = strlen(field);
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, field, n) && line[n] == ':') sscanf(line + n + 1, "%ld", &v);
    fclose(f);
    return v;
}

static long meminfo_kb(const char *field)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    long v = -1;
    const size_t n = strlen(field);
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, field, n) && line[n] == ':') sscanf(line + n + 1, "%ld", &v);
    fclose(f);
    return v;
}

static unsigned char pat(int pe, size_t i) { return (unsigned char)(pe * 37 + i * 13 + (i >> 12)); }

int main(int argc, char **argv)
{
    const long limit_mib = argc > 1 ? atol(argv[1]) : 64;
    shmem_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    const int right = (me + 1) % npes, left = (me - 1 + npes) % npes;
    test_pe = me;
    const char *e = getenv("SHMEM_SYMMETRIC_SIZE");
    const size_t heap = e ? (size_t)strtoull(e, NULL, 10) << 30 : (size_t)1 << 30; /* "16G" */
    const long rss_init = status_kb("VmRSS");
    const size_t size = heap - ((size_t)1 << 20);
    unsigned char *big = shmem_malloc(size);
    CHECK_MSG(big != NULL, "shmem_malloc of %zu bytes failed", size);
    if (!big) return test_finish();
    const long rss_malloc = status_kb("VmRSS");

    unsigned char src[PAGES * PAGE];
    for (size_t i = 0; i < sizeof src; i++) src[i] = pat(me, i);
    shmem_putmem(big, src, sizeof src, right);
    shmem_putmem(big + size - sizeof src, src, sizeof src, right);
    shmem_barrier_all();
    size_t bad = 0;
    for (size_t i = 0; i < sizeof src; i++) {
        bad += big[i] != pat(left, i);
        bad += big[size - sizeof src + i] != pat(left, i);
    }
    CHECK_MSG(bad == 0, "%zu bytes of the pages PE %d put at both ends differ", bad, left);
    /* And read the neighbour's ends back. */
    unsigned char got[PAGES * PAGE];
    shmem_getmem(got, big + size - sizeof got, sizeof got, right);
    CHECK_MSG(memcmp(got, src, sizeof got) == 0, "get of the last pages of PE %d", right);
    const long rss_touch = status_kb("VmRSS"), shmem_kb = status_kb("RssShmem");
    CHECK_MSG(rss_init >= 0 && rss_init < limit_mib * 1024, "VmRSS after init %ld kB", rss_init);
    CHECK_MSG(rss_malloc < limit_mib * 1024, "VmRSS after a %zu-byte malloc %ld kB", size, rss_malloc);
    CHECK_MSG(rss_touch < limit_mib * 1024, "VmRSS after touching the ends %ld kB", rss_touch);
    printf("bigheap: PE %d of %d: heap %.0f GiB; VmRSS %ld kB after init, %ld kB after malloc(%.2f GiB), %ld kB "
           "(RssShmem %ld kB) after %d pages at each end\n",
           me, npes, (double)heap / (1 << 30), rss_init, rss_malloc, (double)size / (1 << 30), rss_touch, shmem_kb,
           PAGES);
    if (me == 0)
        printf("bigheap: %d PEs x %.0f GiB reserved on a host with %.1f GiB of memory (Committed_AS %.1f GiB)\n", npes,
               (double)heap / (1 << 30), meminfo_kb("MemTotal") / 1048576.0, meminfo_kb("Committed_AS") / 1048576.0);
    fflush(stdout);
    shmem_barrier_all();
    shmem_free(big);
    shmem_finalize();
    return test_finish();
}
