/* route.h: symmetric address translation, inlined into every operation.
 * A local symmetric address is (segment, offset); the same offset in the
 * peer's segment is the remote address. Routing resolves a peer once: a
 * direct peer gets a pointer, others go through the transport table. */
#ifndef SHOAL_CORE_ROUTE_H
#define SHOAL_CORE_ROUTE_H

#include <stddef.h>
#include <stdint.h>

#include "core/runtime.h"

/* Finds the segment holding [addr, addr+len). Returns the segment id, or -1
 * when the range is not entirely inside one symmetric segment. */
static inline int shoal_route_segment(const void *addr, size_t len, size_t *offset)
{
    uintptr_t a = (uintptr_t)addr;
    for (int s = 0; s < SHOAL_SEG_COUNT; s++) {
        uintptr_t off = a - shoal_rt.seg_start[s];
        if (off < shoal_rt.seg_size[s] && len <= shoal_rt.seg_size[s] - off) {
            *offset = off;
            return s;
        }
    }
    /* Zero-length ranges may sit exactly at a segment's end. */
    if (len == 0)
        for (int s = 0; s < SHOAL_SEG_COUNT; s++)
            if (a == shoal_rt.seg_start[s] + shoal_rt.seg_size[s]) { *offset = shoal_rt.seg_size[s]; return s; }
    return -1;
}

/* The direct address of addr on pe, or NULL if pe is not load/store
 * reachable. Caller has checked pe and the segment. */
static inline void *shoal_route_direct(int seg, size_t offset, int pe)
{
    const struct shoal_peer *peer = &shoal_rt.peers[pe];
    return peer->direct ? peer->base[seg] + offset : NULL;
}

/* One atomic on pe's copy of (seg, offset): a CPU atomic on a direct peer,
 * the transport's otherwise, and always the transport's when the fabric
 * applies atomics (runtime.h, amo_fabric). fetched may be NULL. */
static inline shoal_status_t shoal_route_amo(shoal_tctx_t *ctx, int seg, size_t offset, int pe, size_t elem,
                                             enum shoal_amo_op op, uint64_t operand, uint64_t cond,
                                             uint64_t *fetched)
{
    char *p = shoal_rt.amo_fabric ? NULL : shoal_route_direct(seg, offset, pe);
    if (p) {
        uint64_t old = shoal_cpu_amo(p, elem, op, operand, cond);
        if (fetched) *fetched = old;
        return SHOAL_OK;
    }
    return shoal_rt.transport->amo(ctx, pe, (enum shoal_segment_id)seg, offset, elem, op, operand, cond, fetched);
}

#endif
