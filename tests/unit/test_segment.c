/* test_segment.c: the heap segment. A 16 GiB heap must cost no memory until
 * touched; a second mapping of its fd (as a peer would make) must see the
 * same bytes both ways; failures must name the syscall and the size. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "heap/segment.h"

#define GiB ((size_t)1 << 30)

/* A field of /proc/self/status in kB, or -1. */
static long status_kb(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    size_t n = strlen(field);
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, field, n) == 0 && line[n] == ':') {
            v = strtol(line + n + 1, NULL, 10);
            break;
        }
    fclose(f);
    return v;
}

/* Runs fn with stderr captured into buf (the error message under test). */
static void capture_stderr(void (*fn)(void *), void *arg, char *buf, size_t len)
{
    int p[2], saved = dup(STDERR_FILENO);
    buf[0] = 0;
    if (saved < 0 || pipe(p) != 0) {
        fn(arg);
        return;
    }
    dup2(p[1], STDERR_FILENO);
    close(p[1]);
    fn(arg);
    dup2(saved, STDERR_FILENO);
    close(saved);
    ssize_t n = read(p[0], buf, len - 1);
    buf[n > 0 ? n : 0] = 0;
    close(p[0]);
}

struct huge_try {
    size_t size;
    shoal_segment_t seg;
    shoal_status_t st;
};
static void try_create(void *arg)
{
    struct huge_try *t = arg;
    t->st = shoal_segment_create_heap(t->size, &t->seg);
}

static void test_lazy_16g(void)
{
    const size_t size = 16 * GiB;
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < 2 * size) {
        printf("skip: address space limited to %llu bytes\n", (unsigned long long)rl.rlim_cur);
        exit(TEST_SKIP);
    }
    long rss0 = status_kb("VmRSS");
    shoal_segment_t seg = {NULL, 0, -1, 0, 0};
    shoal_status_t st = shoal_segment_create_heap(size, &seg);
    CHECK_MSG(st == SHOAL_OK, "create 16 GiB heap: %s", shoal_status_str(st));
    if (st != SHOAL_OK) return;
    long pg = sysconf(_SC_PAGESIZE);
    CHECK(seg.size == size && seg.fd >= 0 && ((uintptr_t)seg.base % (uintptr_t)pg) == 0);
    CHECK((fcntl(seg.fd, F_GETFD) & FD_CLOEXEC) != 0);
    long rss1 = status_kb("VmRSS");
    CHECK_MSG(rss1 - rss0 < 4096, "creating the heap cost %ld kB of RSS", rss1 - rss0);

    /* touch 17 pages spread over the whole heap, including its last byte */
    size_t offs[17];
    for (int i = 0; i < 16; i++) offs[i] = (size_t)i * GiB + (size_t)i * 4096 * 7 + 123;
    offs[16] = size - 1;
    for (int i = 0; i < 17; i++) seg.base[offs[i]] = (char)test_pattern(0, offs[i], 1);
    int bad = 0;
    for (int i = 0; i < 17; i++) bad += (unsigned char)seg.base[offs[i]] != test_pattern(0, offs[i], 1);
    CHECK(bad == 0);
    /* untouched bytes read as zero and do not populate memory either */
    CHECK(seg.base[8 * GiB + 4096 * 3] == 0 && seg.base[3 * GiB + 5] == 0);
    long rss2 = status_kb("VmRSS");
    CHECK_MSG(rss2 - rss0 < 8192, "17 touched pages cost %ld kB of RSS", rss2 - rss0);
    struct stat sb;
    CHECK(fstat(seg.fd, &sb) == 0 && sb.st_size == (off_t)size);
    CHECK_MSG((size_t)sb.st_blocks * 512 <= 64 * (size_t)pg, "memfd holds %lld blocks",
              (long long)sb.st_blocks);
    printf("16 GiB heap: RSS %ld -> %ld -> %ld kB, memfd %lld bytes allocated\n", rss0, rss1, rss2,
           (long long)sb.st_blocks * 512);

    /* a peer's view: same bytes, both directions, at a different address */
    char *peer = NULL;
    st = shoal_segment_map_peer(seg.fd, seg.size, &peer);
    CHECK(st == SHOAL_OK && peer != NULL && peer != seg.base);
    if (st == SHOAL_OK) {
        bad = 0;
        for (int i = 0; i < 17; i++) bad += peer[offs[i]] != seg.base[offs[i]];
        CHECK(bad == 0);
        for (size_t i = 0; i < 8192; i++) peer[5 * GiB + i] = (char)test_pattern(1, i, 2);
        for (size_t i = 0; i < 8192; i++) bad += (unsigned char)seg.base[5 * GiB + i] != test_pattern(1, i, 2);
        for (size_t i = 0; i < 8192; i++) seg.base[size - 8192 + i] = (char)test_pattern(2, i, 3);
        for (size_t i = 0; i < 8192; i++) bad += (unsigned char)peer[size - 8192 + i] != test_pattern(2, i, 3);
        CHECK(bad == 0);
        shoal_segment_unmap_peer(peer, seg.size);
    }
    shoal_segment_destroy_heap(&seg);
    CHECK(seg.base == NULL && seg.size == 0 && seg.fd == -1);
}

static void test_rounding(void)
{
    shoal_segment_t seg = {NULL, 0, -1, 0, 0};
    long pg = sysconf(_SC_PAGESIZE);
    CHECK(shoal_segment_create_heap(1, &seg) == SHOAL_OK && seg.size == (size_t)pg);
    seg.base[pg - 1] = 7;
    CHECK(seg.base[pg - 1] == 7);
    shoal_segment_destroy_heap(&seg);
    CHECK(shoal_segment_create_heap((size_t)pg + 1, &seg) == SHOAL_OK && seg.size == 2 * (size_t)pg);
    shoal_segment_destroy_heap(&seg);
}

static void test_errors(void)
{
    char msg[4096];
    /* 2^62 bytes: the memfd may grow that far, the address space cannot */
    struct huge_try t = {(size_t)1 << 62, {(char *)0x1, 1, 42, 0, 0}, SHOAL_OK};
    capture_stderr(try_create, &t, msg, sizeof msg);
    CHECK(t.st == SHOAL_ERR_NOMEM || t.st == SHOAL_ERR_SYS);
    CHECK(t.seg.base == (char *)0x1 && t.seg.size == 1 && t.seg.fd == 42); /* untouched */
    CHECK_MSG((strstr(msg, "mmap of ") || strstr(msg, "ftruncate of ")) && strstr(msg, "heap failed: ") &&
                  strstr(msg, "TiB"),
              "message was \"%s\"", msg);
    printf("expected error: %s", msg);

    t.size = 0;
    capture_stderr(try_create, &t, msg, sizeof msg);
    CHECK(t.st == SHOAL_ERR_INVAL);

    char *p = NULL;
    CHECK(shoal_segment_map_peer(-1, 4096, &p) == SHOAL_ERR_INVAL && p == NULL);
    int fd = 1000; /* a descriptor number that is not open */
    while (fcntl(fd, F_GETFD) != -1) fd++;
    int saved = dup(STDERR_FILENO), nul = open("/dev/null", O_WRONLY);
    dup2(nul, STDERR_FILENO);
    shoal_status_t st = shoal_segment_map_peer(fd, 4096, &p);
    dup2(saved, STDERR_FILENO);
    close(saved);
    close(nul);
    CHECK(st == SHOAL_ERR_SYS && p == NULL);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    test_rounding();
    test_errors();
    test_lazy_16g();
    return test_finish();
}
