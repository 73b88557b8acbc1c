/* signal_api.h: the byte-based put-with-signal entry point behind every
 * typed, sized and mem put_signal wrapper (blocking and nbi, ctx or not).
 * The data are written, then the signal with release ordering, so a PE that
 * observes the signal (signal_wait_until, wait_until, signal_fetch) sees all
 * the data sent with it. sig_op is SHMEM_SIGNAL_SET or SHMEM_SIGNAL_ADD. */
#ifndef SHOAL_API_SIGNAL_API_H
#define SHOAL_API_SIGNAL_API_H

#include <stddef.h>
#include <stdint.h>

#include <shmem.h>

void shoal_api_put_signal(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, size_t elem,
                          uint64_t *sig_addr, uint64_t signal, int sig_op, int pe, const char *call);

#endif
