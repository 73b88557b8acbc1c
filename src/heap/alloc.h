/* alloc.h: the symmetric heap allocator. Deterministic: the same sequence of
 * calls yields the same offsets on every PE. Its bookkeeping lives in
 * private memory, never inside the heap, so a stray remote write cannot
 * corrupt it. Offsets are relative to the start of the managed range.
 * Not thread-safe; the caller serialises. */
#ifndef SHOAL_HEAP_ALLOC_H
#define SHOAL_HEAP_ALLOC_H

#include <stddef.h>

#include "util/status.h"

typedef struct shoal_alloc shoal_alloc_t;

/* Every block is aligned to and sized in multiples of this. */
#define SHOAL_ALLOC_GRANULE 64

shoal_status_t shoal_alloc_create(size_t size, shoal_alloc_t **out);
void shoal_alloc_destroy(shoal_alloc_t *a);

/* alignment is a power of two (0 means the granule). SHOAL_ERR_NOMEM when no
 * free block fits; size 0 is the caller's business (never passed). */
shoal_status_t shoal_alloc_alloc(shoal_alloc_t *a, size_t size, size_t alignment, size_t *offset);
/* SHOAL_ERR_INVAL when offset is not the start of a live block. */
shoal_status_t shoal_alloc_free(shoal_alloc_t *a, size_t offset);
/* Grows or shrinks a live block in place if possible; SHOAL_ERR_NOMEM if the
 * block cannot grow where it is (the caller then allocates, copies, frees). */
shoal_status_t shoal_alloc_resize(shoal_alloc_t *a, size_t offset, size_t new_size);
/* Size of the live block at offset, or 0 if none starts there. */
size_t shoal_alloc_block_size(const shoal_alloc_t *a, size_t offset);

size_t shoal_alloc_free_bytes(const shoal_alloc_t *a);
size_t shoal_alloc_largest_free(const shoal_alloc_t *a);
size_t shoal_alloc_live_blocks(const shoal_alloc_t *a);
/* Walks every structure and checks its invariants (SHMEM_DEBUG). */
shoal_status_t shoal_alloc_check(const shoal_alloc_t *a);
/* A hash of the allocation state, equal on PEs that made the same calls. */
unsigned long long shoal_alloc_fingerprint(const shoal_alloc_t *a);

#endif
