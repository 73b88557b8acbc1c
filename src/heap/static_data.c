/* static_data.c: makes the executable's globals symmetric by moving its
 * writable PT_LOAD range(s) onto a memfd mapped at the same addresses.
 *
 * Invariants:
 *  - The static segment covers [base, base + size): from the first writable
 *    PT_LOAD's page-rounded start to the last one's page-rounded end. The
 *    memfd offset of an address is addr - base, for us and for peers. Gaps
 *    between writable PT_LOADs (lld layouts) are never remapped; their part
 *    of the memfd stays unused zeros.
 *  - Data are identical across the switch: each range is copied into the
 *    memfd by the kernel and then mapped MAP_FIXED over itself, and nothing
 *    between the two steps writes into the range (no malloc, no stdio, no
 *    libc wrapper that ASan or lazy binding could redirect; raw syscalls).
 *  - Pages that are all zero are not copied, so a large untouched .bss stays
 *    sparse in the memfd as it was in anonymous memory.
 *  - PT_GNU_RELRO ends up PROT_READ again, rounded as the dynamic loader
 *    rounds it (both ends down to a page), so protections are as before.
 *  - Runs only while the process has one thread: a write by another thread
 *    between copy and switch would be lost silently (sanitizer runtimes,
 *    for one, keep a writing thread). With more threads it refuses with
 *    SHOAL_ERR_UNSUPPORTED, leaving everything as it was. Under
 *    ThreadSanitizer it always refuses: its runtime is linked into the
 *    executable and updates its own .bss from any instrumented code. */
#include "heap/segment.h"

#include <dirent.h>
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/log.h"

#define MAX_RANGES 16

#if defined(__SANITIZE_THREAD__)
#define SHOAL_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SHOAL_UNDER_TSAN 1
#endif
#endif

struct range {
    uintptr_t start, end; /* page-rounded */
    int prot;
};

struct exe_layout {
    int seen;
    struct range rw[MAX_RANGES];
    int n_rw;
    struct range ro[MAX_RANGES]; /* other PT_LOADs, to detect shared pages */
    int n_ro;
    uintptr_t relro_start, relro_end; /* page-rounded down, as ld.so does */
    int too_many;
};

static int find_exe(struct dl_phdr_info *info, size_t len, void *arg)
{
    (void)len;
    struct exe_layout *L = arg;
    /* The first object reported is the main program (empty name). */
    L->seen = 1;
    uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        uintptr_t hi = lo + ph->p_memsz;
        if (ph->p_type == PT_GNU_RELRO) {
            L->relro_start = lo & ~(pg - 1);
            L->relro_end = hi & ~(pg - 1);
            continue;
        }
        if (ph->p_type != PT_LOAD || ph->p_memsz == 0) continue;
        struct range r = {lo & ~(pg - 1), (hi + pg - 1) & ~(pg - 1), 0};
        if (ph->p_flags & PF_R) r.prot |= PROT_READ;
        if (ph->p_flags & PF_W) r.prot |= PROT_WRITE;
        if (ph->p_flags & PF_X) r.prot |= PROT_EXEC;
        if (ph->p_flags & PF_W) {
            if (L->n_rw == MAX_RANGES) L->too_many = 1;
            else L->rw[L->n_rw++] = r;
        } else {
            if (L->n_ro == MAX_RANGES) L->too_many = 1;
            else L->ro[L->n_ro++] = r;
        }
    }
    return 1; /* stop after the executable */
}

/* Threads in this process, or -1 if /proc cannot tell. */
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

/* Sorts the writable ranges and merges those that share a page. */
static void normalise(struct exe_layout *L)
{
    for (int i = 1; i < L->n_rw; i++)
        for (int j = i; j > 0 && L->rw[j].start < L->rw[j - 1].start; j--) {
            struct range t = L->rw[j];
            L->rw[j] = L->rw[j - 1];
            L->rw[j - 1] = t;
        }
    int n = 0;
    for (int i = 0; i < L->n_rw; i++) {
        if (n > 0 && L->rw[i].start <= L->rw[n - 1].end) {
            if (L->rw[i].end > L->rw[n - 1].end) L->rw[n - 1].end = L->rw[i].end;
            L->rw[n - 1].prot |= L->rw[i].prot;
        } else {
            L->rw[n++] = L->rw[i];
        }
    }
    L->n_rw = n;
}

/* Reads the range to decide what to copy; ASan must not flag the redzones
 * between globals, which are part of the range. */
__attribute__((no_sanitize_address)) static int page_is_zero(const void *p, size_t len)
{
    const unsigned long *w = p;
    for (size_t i = 0; i < len / sizeof *w; i++)
        if (w[i]) return 0;
    return 1;
}

/* Raw syscalls: sanitizer interceptors of pwrite/mmap would check or
 * unpoison the globals' redzones. The offsets fit one register on LP64. */
static long raw_pwrite(int fd, const void *buf, size_t len, size_t off)
{
#if UINTPTR_MAX == UINT64_MAX
    return syscall(SYS_pwrite64, fd, buf, len, (long)off);
#else
    return pwrite(fd, buf, len, (off_t)off);
#endif
}

static void *raw_mmap_fixed(uintptr_t addr, size_t len, int prot, int fd, size_t off)
{
#if UINTPTR_MAX == UINT64_MAX
    long r = syscall(SYS_mmap, addr, len, prot, MAP_SHARED | MAP_FIXED, fd, (long)off);
    return r == -1 ? MAP_FAILED : (void *)r;
#else
    return mmap((void *)addr, len, prot, MAP_SHARED | MAP_FIXED, fd, (off_t)off);
#endif
}

/* Copies the non-zero pages of [start, end) into fd at start - base. */
static int copy_range(int fd, uintptr_t base, uintptr_t start, uintptr_t end, size_t pg)
{
    uintptr_t run = 0; /* start of the pending run of non-zero pages, 0 if none */
    for (uintptr_t p = start; p <= end; p += pg) {
        int zero = p == end || page_is_zero((const void *)p, pg);
        if (!zero && !run) run = p;
        if (zero && run) {
            size_t len = p - run, done = 0;
            while (done < len) {
                long w = raw_pwrite(fd, (const char *)run + done, len - done, run - base + done);
                if (w < 0 && errno == EINTR) continue;
                if (w <= 0) return -1;
                done += (size_t)w;
            }
            run = 0;
        }
    }
    return 0;
}

shoal_status_t shoal_segment_remap_static(shoal_segment_t *out)
{
    struct exe_layout L;
    char sb[32];
#ifdef SHOAL_UNDER_TSAN
    shoal_error("heap", "static data cannot be remapped under ThreadSanitizer, whose state lives in it");
    return SHOAL_ERR_UNSUPPORTED;
#endif
    memset(&L, 0, sizeof L);
    dl_iterate_phdr(find_exe, &L);
    if (!L.seen || L.n_rw == 0) {
        shoal_error("heap", "the executable has no writable PT_LOAD segment to make symmetric");
        return SHOAL_ERR_UNSUPPORTED;
    }
    if (L.too_many) {
        shoal_error("heap", "the executable has more than %d PT_LOAD segments", MAX_RANGES);
        return SHOAL_ERR_UNSUPPORTED;
    }
    normalise(&L);
    /* A page shared with a read-only or code segment cannot be remapped
     * without changing that segment's protection too. */
    for (int i = 0; i < L.n_rw; i++)
        for (int j = 0; j < L.n_ro; j++)
            if (L.rw[i].start < L.ro[j].end && L.ro[j].start < L.rw[i].end) {
                shoal_error("heap", "writable segment [%#lx, %#lx) shares a page with a read-only one",
                            (unsigned long)L.rw[i].start, (unsigned long)L.rw[i].end);
                return SHOAL_ERR_UNSUPPORTED;
            }

    int threads = count_threads();
    if (threads > 1) {
        shoal_error("heap", "cannot remap static data while %d threads run (a write by another thread "
                    "could be lost); remap before starting threads", threads);
        return SHOAL_ERR_UNSUPPORTED;
    }
    if (threads < 0) shoal_debug("heap", "cannot count threads (/proc/self/task): %s", strerror(errno));

    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t base = L.rw[0].start;
    size_t size = L.rw[L.n_rw - 1].end - base;
    shoal_format_bytes(size, sb, sizeof sb);

    int fd = memfd_create("shoal-static", MFD_CLOEXEC);
    if (fd < 0) {
        shoal_error("heap", "memfd_create for %s of static data failed: %s", sb, strerror(errno));
        return SHOAL_ERR_SYS;
    }
    if (ftruncate(fd, (off_t)size) != 0) {
        shoal_error("heap", "ftruncate of %s static data memfd failed: %s", sb, strerror(errno));
        close(fd);
        return SHOAL_ERR_SYS;
    }
    for (int i = 0; i < L.n_rw; i++) {
        struct range *r = &L.rw[i];
        /* From here to the mmap below nothing may write into r. */
        if (copy_range(fd, base, r->start, r->end, pg) != 0) {
            int e = errno;
            close(fd);
            shoal_error("heap", "copying static data [%#lx, %#lx) to a memfd failed: %s",
                        (unsigned long)r->start, (unsigned long)r->end, strerror(e));
            /* Ranges already switched stay valid: the memfd outlives fd. */
            return SHOAL_ERR_SYS;
        }
        void *p = raw_mmap_fixed(r->start, r->end - r->start, r->prot | PROT_READ | PROT_WRITE, fd,
                                 r->start - base);
        if (p == MAP_FAILED) {
            int e = errno;
            close(fd);
            /* A failed MAP_FIXED may already have unmapped the old pages. */
            shoal_error("heap", "mmap of static data [%#lx, %#lx) onto a memfd failed: %s",
                        (unsigned long)r->start, (unsigned long)r->end, strerror(e));
            return SHOAL_ERR_SYS;
        }
    }
    /* Restore RELRO: read-only, over the part that we remapped. */
    out->ro_offset = out->ro_len = 0;
    for (int i = 0; i < L.n_rw; i++) {
        uintptr_t lo = L.relro_start > L.rw[i].start ? L.relro_start : L.rw[i].start;
        uintptr_t hi = L.relro_end < L.rw[i].end ? L.relro_end : L.rw[i].end;
        if (lo >= hi) continue;
        if (mprotect((void *)lo, hi - lo, PROT_READ) != 0) {
            shoal_error("heap", "mprotect of RELRO [%#lx, %#lx) to read-only failed: %s",
                        (unsigned long)lo, (unsigned long)hi, strerror(errno));
            close(fd);
            return SHOAL_ERR_SYS;
        }
        /* One RELRO range per program, so at most one read-only span. */
        out->ro_offset = lo - base;
        out->ro_len = hi - lo;
    }
    out->base = (char *)base;
    out->size = size;
    out->fd = fd;
    shoal_debug("heap", "static data [%p, %p) (%s) moved onto memfd %d", (void *)base,
                (void *)(base + size), sb, fd);
    return SHOAL_OK;
}
