/* segment.h: symmetric segments. A segment is a range of this PE's address
 * space backed by an anonymous memfd, so peers on this host can map it after
 * receiving the descriptor over the bootstrap socket. Nothing is named in
 * /dev/shm; the memory goes away with the last mapping/descriptor.
 *
 * Two segments per PE: the heap (SHMEM_SYMMETRIC_SIZE bytes, sparse until
 * touched) and the program's static data (.data/.bss of the executable,
 * remapped in place onto a memfd so globals are remotely accessible). */
#ifndef SHOAL_HEAP_SEGMENT_H
#define SHOAL_HEAP_SEGMENT_H

#include <stddef.h>

#include "util/status.h"

typedef struct shoal_segment {
    char *base;  /* page aligned */
    size_t size; /* page multiple */
    int fd;      /* memfd backing the range, -1 if none */
    /* [ro_offset, ro_offset + ro_len) is read-only (the static segment's
     * PT_GNU_RELRO part): transports refuse remote writes into it. */
    size_t ro_offset, ro_len;
} shoal_segment_t;

/* The heap's base address is a multiple of this on every PE, so an offset
 * aligned to any power of two up to it is an aligned address everywhere. */
#define SHOAL_HEAP_BASE_ALIGN ((size_t)1 << 30)

/* Creates a lazily-populated shared heap of at least size bytes, based at a
 * multiple of SHOAL_HEAP_BASE_ALIGN. */
shoal_status_t shoal_segment_create_heap(size_t size, shoal_segment_t *out);

/* Moves the executable's writable PT_LOAD range (page-rounded) onto a memfd
 * mapped MAP_SHARED|MAP_FIXED at the same addresses, preserving contents;
 * the PT_GNU_RELRO part stays read-only. */
shoal_status_t shoal_segment_remap_static(shoal_segment_t *out);

/* Maps a peer's segment (its fd and size) anywhere in this address space. */
shoal_status_t shoal_segment_map_peer(int fd, size_t size, char **base_out);
void shoal_segment_unmap_peer(char *base, size_t size);

/* Unmaps a heap segment and closes its fd. For the static segment only the
 * fd is closed: the program's globals must stay mapped. */
void shoal_segment_destroy_heap(shoal_segment_t *seg);
void shoal_segment_release_static(shoal_segment_t *seg);

#endif
