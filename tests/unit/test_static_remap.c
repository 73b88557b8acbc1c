/* test_static_remap.c: moving the executable's globals onto a memfd. After
 * the remap every kind of global keeps its value, stays writable, is seen
 * through a second (peer) mapping of the fd both ways, stdio and brk malloc
 * still work, and the RELRO pages are read-only again. Built as PIE here;
 * test_static_remap_nopie.c includes this file for the non-PIE build. */
#include <dirent.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "heap/segment.h"
#include "util/log.h"

#define MiB ((size_t)1 << 20)

int g_int = 12345;
double g_doubles[4] = {1.5, 2.5, 3.5, 4.5};
char g_text[64] = "hello, symmetric world";
long g_bss[100000];              /* 800 kB of .bss over many pages */
static char g_big_bss[64 << 20]; /* never touched: must stay sparse */
static const char *const g_names[] = {"alpha", "beta", "gamma"}; /* .data.rel.ro under PIE */
const char *volatile g_names_sink;

static int *static_local(void)
{
    static int counter = 77;
    return &counter;
}

static int count_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    if (!d) return -1;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

struct maps_entry {
    uintptr_t lo, hi;
    char perms[8];
    char path[256];
};

/* The /proc/self/maps line containing addr. */
static int find_mapping(uintptr_t addr, struct maps_entry *e)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int found = 0;
    if (!f) return 0;
    while (!found && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char perms[8] = "", path[256] = "";
        if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %255[^\n]", &lo, &hi, perms, path) < 3) continue;
        if (addr >= lo && addr < hi) {
            e->lo = lo;
            e->hi = hi;
            snprintf(e->perms, sizeof e->perms, "%s", perms);
            snprintf(e->path, sizeof e->path, "%s", path);
            found = 1;
        }
    }
    fclose(f);
    return found;
}

struct exe_info {
    int seen;
    uintptr_t load_bias;
    uintptr_t relro_lo, relro_hi; /* page-rounded as ld.so does */
};

static int exe_cb(struct dl_phdr_info *info, size_t len, void *arg)
{
    (void)len;
    struct exe_info *x = arg;
    uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
    x->seen = 1;
    x->load_bias = info->dlpi_addr;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_GNU_RELRO) {
            uintptr_t lo = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
            x->relro_lo = lo & ~(pg - 1);
            x->relro_hi = (lo + info->dlpi_phdr[i].p_memsz) & ~(pg - 1);
        }
    return 1;
}

static int inside(const shoal_segment_t *s, const void *p, size_t len)
{
    return (const char *)p >= s->base && (const char *)p + len <= s->base + s->size;
}

/* The peer view's copy of a global. */
#define PEER(view, seg, var) ((__typeof__(&(var)))((view) + ((char *)&(var) - (seg).base)))

static void test_malloc_after(const shoal_segment_t *seg)
{
    /* many small blocks: these come from brk, right after .bss */
    enum { N = 200000, SZ = 200 };
    unsigned char **blocks = malloc(N * sizeof *blocks);
    int bad = 0, overlap = 0;
    if (!blocks) {
        CHECK(blocks != NULL);
        return;
    }
    for (size_t i = 0; i < N; i++) {
        blocks[i] = malloc(SZ);
        if (!blocks[i]) {
            bad++;
            continue;
        }
        overlap += (char *)blocks[i] < seg->base + seg->size && (char *)blocks[i] + SZ > seg->base;
        for (size_t j = 0; j < SZ; j++) blocks[i][j] = test_pattern(3, i * SZ + j, 4);
    }
    for (size_t i = 0; i < N; i++)
        if (blocks[i]) {
            for (size_t j = 0; j < SZ; j++) bad += blocks[i][j] != test_pattern(3, i * SZ + j, 4);
            free(blocks[i]);
        }
    free(blocks);
    CHECK_MSG(bad == 0, "%d malloc'd bytes lost their values", bad);
    CHECK(overlap == 0);
    /* brk itself grows past the remapped .bss (sanitizers' malloc may not use it) */
    const size_t grow = 32 * MiB;
    unsigned char *b = sbrk((intptr_t)grow);
    CHECK(b != (void *)-1);
    if (b != (void *)-1) {
        CHECK(!(b < (unsigned char *)seg->base + seg->size && b + grow > (unsigned char *)seg->base));
        for (size_t i = 0; i < grow; i += 512) b[i] = test_pattern(4, i, 5);
        for (size_t i = 0; i < grow; i += 512) bad += b[i] != test_pattern(4, i, 5);
        CHECK(bad == 0);
        CHECK(sbrk(-(intptr_t)grow) != (void *)-1);
    }
    /* and one large block (mmap threshold) */
    char *big = malloc(64 * MiB);
    CHECK(big != NULL);
    if (big) {
        memset(big, 0x5a, 64 * MiB);
        CHECK(big[0] == 0x5a && big[64 * MiB - 1] == 0x5a);
        free(big);
    }
}

static void test_relro(const shoal_segment_t *seg, const struct exe_info *x)
{
    struct maps_entry e;
    long pg = sysconf(_SC_PAGESIZE);
    if (x->relro_lo >= x->relro_hi) {
        printf("no full RELRO page in this executable; nothing to check\n");
        return;
    }
    CHECK(inside(seg, (void *)x->relro_lo, x->relro_hi - x->relro_lo));
    int pages = 0;
    for (uintptr_t a = x->relro_lo; a < x->relro_hi; a += (uintptr_t)pg, pages++) {
        CHECK(find_mapping(a, &e));
        CHECK_MSG(strcmp(e.perms, "r--s") == 0, "RELRO page %#lx is %s (%s)", (unsigned long)a, e.perms,
                  e.path);
    }
    printf("RELRO [%#lx, %#lx): %d page(s) read-only and shared\n", (unsigned long)x->relro_lo,
           (unsigned long)x->relro_hi, pages);
}

int main(void)
{
    struct exe_info x = {0, 0, 0, 0};
    int threads = count_threads();
    dl_iterate_phdr(exe_cb, &x);
    int pie = x.load_bias != 0;
#ifdef STATIC_REMAP_WANT_NOPIE
    if (pie) {
        printf("skip: this test must be built with -fno-pie -no-pie\n");
        return TEST_SKIP;
    }
#endif
    printf("executable is %s (load bias %#lx)\n", pie ? "PIE" : "not PIE", (unsigned long)x.load_bias);

    /* state before: modified values, a half-written stdout buffer */
    g_int++;
    g_bss[500] = 42;
    g_bss[99999] = -7;
    (*static_local())++;
    g_big_bss[12345] = 1;
    int level = shoal_log_level;
    setvbuf(stdout, NULL, _IOFBF, 4096);
    printf("buffered before the remap... ");

    shoal_segment_t seg = {NULL, 0, -1, 0, 0};
    shoal_status_t st = shoal_segment_remap_static(&seg);

    printf("and flushed after it\n");
    fflush(stdout);
    setvbuf(stdout, NULL, _IONBF, 0);
#if defined(__SANITIZE_THREAD__)
    int tsan = 1;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
    int tsan = 1;
#else
    int tsan = 0;
#endif
#else
    int tsan = 0;
#endif
    if (st == SHOAL_ERR_UNSUPPORTED && tsan) {
        printf("skip: the remap refuses under ThreadSanitizer, as it should\n");
        return TEST_SKIP;
    }
    if (st == SHOAL_ERR_UNSUPPORTED && threads > 1) {
        printf("skip: %d threads run at start (a sanitizer runtime?); remap refuses, as it should\n",
               threads);
        return TEST_SKIP;
    }
    CHECK_MSG(st == SHOAL_OK, "remap: %s", shoal_status_str(st));
    if (st != SHOAL_OK) return test_finish();
    printf("static segment [%p, %p), %zu bytes, fd %d\n", (void *)seg.base, (void *)(seg.base + seg.size),
           seg.size, seg.fd);

    /* every kind of global is in the segment, with its value */
    CHECK(inside(&seg, &g_int, sizeof g_int) && inside(&seg, g_bss, sizeof g_bss));
    CHECK(inside(&seg, g_doubles, sizeof g_doubles) && inside(&seg, g_text, sizeof g_text));
    CHECK(inside(&seg, static_local(), sizeof(int)) && inside(&seg, g_big_bss, sizeof g_big_bss));
    CHECK(inside(&seg, &shoal_log_level, sizeof shoal_log_level));
    CHECK(g_int == 12346 && g_bss[500] == 42 && g_bss[99999] == -7 && g_bss[0] == 0);
    CHECK(g_doubles[0] == 1.5 && g_doubles[3] == 4.5 && strcmp(g_text, "hello, symmetric world") == 0);
    CHECK(*static_local() == 78 && g_big_bss[12345] == 1 && g_big_bss[0] == 0);
    CHECK(shoal_log_level == level);
    g_names_sink = g_names[2];
    CHECK(strcmp(g_names_sink, "gamma") == 0);

    struct maps_entry e;
    CHECK(find_mapping((uintptr_t)&g_int, &e));
    CHECK_MSG(strcmp(e.perms, "rw-s") == 0 && strstr(e.path, "shoal-static"), "g_int mapped %s %s", e.perms,
              e.path);

    /* sparse: the untouched 64 MiB .bss was not copied */
    struct stat sb;
    CHECK(fstat(seg.fd, &sb) == 0 && (size_t)sb.st_size == seg.size);
    CHECK_MSG((size_t)sb.st_blocks * 512 < 8 * MiB, "memfd holds %lld bytes for a %zu-byte segment",
              (long long)sb.st_blocks * 512, seg.size);
    printf("memfd holds %lld of %zu bytes\n", (long long)sb.st_blocks * 512, seg.size);

    /* writes, and a peer's view both ways */
    char *view = NULL;
    CHECK(shoal_segment_map_peer(seg.fd, seg.size, &view) == SHOAL_OK && view && view != seg.base);
    if (view) {
        CHECK(*PEER(view, seg, g_int) == 12346 && *PEER(view, seg, g_bss[500]) == 42);
        CHECK(strcmp(*PEER(view, seg, g_text), "hello, symmetric world") == 0);
        g_int = 999;
        g_bss[77777] = 31337;
        (*static_local()) = -5;
        for (size_t i = 0; i < 1 * MiB; i++) g_big_bss[40 * MiB + i] = (char)test_pattern(5, i, 6);
        CHECK(*PEER(view, seg, g_int) == 999 && *PEER(view, seg, g_bss[77777]) == 31337);
        CHECK(*(int *)(view + ((char *)static_local() - seg.base)) == -5);
        int bad = 0;
        for (size_t i = 0; i < 1 * MiB; i++)
            bad += (unsigned char)*PEER(view, seg, g_big_bss[40 * MiB + i]) != test_pattern(5, i, 6);
        CHECK(bad == 0);
        *PEER(view, seg, g_doubles[2]) = -8.25;
        snprintf(*PEER(view, seg, g_text), sizeof g_text, "written by a peer");
        *PEER(view, seg, g_bss[3]) = 3;
        CHECK(g_doubles[2] == -8.25 && strcmp(g_text, "written by a peer") == 0 && g_bss[3] == 3);
    }

    test_relro(&seg, &x);
    test_malloc_after(&seg);

    /* the fd may go; the globals and the peer view stay */
    shoal_segment_release_static(&seg);
    CHECK(seg.fd == -1);
    g_int = 4242;
    if (view) {
        CHECK(*PEER(view, seg, g_int) == 4242);
        shoal_segment_unmap_peer(view, seg.size);
    }
    CHECK(g_int == 4242);
    fprintf(stdout, "printf after the remap: %d %s %.2f\n", g_int, g_text, g_doubles[2]);
    return test_finish();
}
