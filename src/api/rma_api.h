/* rma_api.h: the byte-based RMA entry points behind every typed, sized and
 * mem wrapper. They check their arguments (initialised, PE in range, both
 * ends symmetric, no size overflow) and end the job with one line naming
 * `call` on bad input. nelems counts elements of elem bytes. */
#ifndef SHOAL_API_RMA_API_H
#define SHOAL_API_RMA_API_H

#include <stddef.h>

#include <shmem.h>

void shoal_api_put(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, size_t elem, int pe,
                   const char *call);
void shoal_api_get(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, size_t elem, int pe,
                   const char *call);
/* The checks of a put of bytes (> 0) from source to dest on world PE pe;
 * returns dest's segment and sets *off to its offset. */
int shoal_api_put_dest(const char *call, void *dest, const void *source, size_t bytes, int pe, size_t *off);
void shoal_api_put_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, size_t elem,
                       int pe, const char *call);
void shoal_api_get_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, size_t elem,
                       int pe, const char *call);
/* Single element; elem is 1, 2, 4, 8 or 16 bytes. Sizes up to 8 are written
 * and read with one untorn access so a waiting peer never sees half a value. */
void shoal_api_p(shmem_ctx_t ctx, void *dest, const void *value, size_t elem, int pe, const char *call);
void shoal_api_g(shmem_ctx_t ctx, void *value, const void *source, size_t elem, int pe, const char *call);
/* Strided: element i goes from source[i*sst] to dest[i*dst] (strides in elements). */
void shoal_api_iput(shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,
                    size_t nelems, size_t elem, int pe, const char *call);
void shoal_api_iget(shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,
                    size_t nelems, size_t elem, int pe, const char *call);
/* Block-strided: block b of bsize elements goes from source + b*sst to dest + b*dst. */
void shoal_api_ibput(shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,
                     size_t bsize, size_t nblocks, size_t elem, int pe, const char *call);
void shoal_api_ibget(shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,
                     size_t bsize, size_t nblocks, size_t elem, int pe, const char *call);

#endif
