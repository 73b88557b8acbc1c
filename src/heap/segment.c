/* segment.c: the symmetric heap segment and peer mappings.
 *
 * Invariants:
 *  - A heap segment is one memfd of exactly seg->size bytes (a page multiple)
 *    mapped once, MAP_SHARED|MAP_NORESERVE, at seg->base, a multiple of
 *    SHOAL_HEAP_BASE_ALIGN (address space only is reserved for the slack,
 *    and the slack is returned at once).
 *  - Nothing is populated up front: pages cost memory only once touched, so
 *    a large SHMEM_SYMMETRIC_SIZE that is never used is free.
 *  - The memfd is close-on-exec and unnamed in the file system; it lives as
 *    long as a mapping or a descriptor (ours or a peer's) refers to it.
 *  - On failure nothing is left behind and *out is untouched. */
#include "heap/segment.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/log.h"

static size_t page_size(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

shoal_status_t shoal_segment_create_heap(size_t size, shoal_segment_t *out)
{
    char hb[32];
    size_t pg = page_size();
    if (size == 0 || size > SIZE_MAX - pg || size > (size_t)INT64_MAX) {
        shoal_error("heap", "heap size %zu bytes is invalid", size);
        return SHOAL_ERR_INVAL;
    }
    size = (size + pg - 1) & ~(pg - 1);
    shoal_format_bytes(size, hb, sizeof hb);

    int fd = memfd_create("shoal-heap", MFD_CLOEXEC);
    if (fd < 0) {
        shoal_error("heap", "memfd_create for %s heap failed: %s", hb, strerror(errno));
        return SHOAL_ERR_SYS;
    }
    if (ftruncate(fd, (off_t)size) != 0) {
        shoal_error("heap", "ftruncate of %s heap failed: %s", hb, strerror(errno));
        close(fd);
        return SHOAL_ERR_SYS;
    }
    /* Reserve size + alignment of address space, map the memfd over its
     * aligned part, give back the rest. */
    const size_t align = SHOAL_HEAP_BASE_ALIGN;
    char *reserve = MAP_FAILED;
    if (size <= SIZE_MAX - align)
        reserve = mmap(NULL, size + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    void *p = MAP_FAILED;
    if (reserve != MAP_FAILED) {
        char *aligned = (char *)(((uintptr_t)reserve + align - 1) & ~(uintptr_t)(align - 1));
        p = mmap(aligned, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE | MAP_FIXED, fd, 0);
        if (p == MAP_FAILED) {
            int e = errno;
            munmap(reserve, size + align);
            errno = e;
        } else {
            if (aligned > reserve) munmap(reserve, (size_t)(aligned - reserve));
            size_t tail = (size_t)((reserve + size + align) - (aligned + size));
            if (tail) munmap(aligned + size, tail);
        }
    }
    if (p == MAP_FAILED) {
        int e = errno;
        shoal_error("heap", "mmap of %s heap failed: %s", hb, strerror(e));
        close(fd);
        return e == ENOMEM ? SHOAL_ERR_NOMEM : SHOAL_ERR_SYS;
    }
    out->base = p;
    out->size = size;
    out->fd = fd;
    out->ro_offset = out->ro_len = 0;
    shoal_debug("heap", "heap of %s at %p (fd %d)", hb, p, fd);
    return SHOAL_OK;
}

shoal_status_t shoal_segment_map_peer(int fd, size_t size, char **base_out)
{
    char hb[32];
    if (fd < 0 || size == 0) {
        shoal_error("heap", "cannot map peer segment: fd %d, size %zu", fd, size);
        return SHOAL_ERR_INVAL;
    }
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
    if (p == MAP_FAILED) {
        int e = errno;
        shoal_error("heap", "mmap of %s peer segment (fd %d) failed: %s",
                    shoal_format_bytes(size, hb, sizeof hb), fd, strerror(e));
        return e == ENOMEM ? SHOAL_ERR_NOMEM : SHOAL_ERR_SYS;
    }
    *base_out = p;
    return SHOAL_OK;
}

void shoal_segment_unmap_peer(char *base, size_t size)
{
    if (!base || size == 0) return;
    if (munmap(base, size) != 0)
        shoal_warn("heap", "munmap of peer segment at %p (%zu bytes) failed: %s", (void *)base, size,
                   strerror(errno));
}

void shoal_segment_destroy_heap(shoal_segment_t *seg)
{
    if (seg->base && seg->size && munmap(seg->base, seg->size) != 0)
        shoal_warn("heap", "munmap of heap at %p failed: %s", (void *)seg->base, strerror(errno));
    if (seg->fd >= 0) close(seg->fd);
    seg->base = NULL;
    seg->size = 0;
    seg->fd = -1;
}

void shoal_segment_release_static(shoal_segment_t *seg)
{
    /* base/size stay valid: the globals remain mapped for the whole run. */
    if (seg->fd >= 0) close(seg->fd);
    seg->fd = -1;
}
