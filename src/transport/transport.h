/* transport.h: the transport seam. A transport moves bytes and atomics to
 * peers the direct load/store path cannot reach. The on-host path is
 * inlined ahead of this table (core/route.h); the table is consulted only
 * for peers whose `direct` flag is clear.
 *
 * shm (transport/shm) is the first transport: it maps the peers' segments
 * so every peer on the host becomes direct. ofi (libfabric) will fill the
 * same table for peers on other hosts. */
#ifndef SHOAL_TRANSPORT_TRANSPORT_H
#define SHOAL_TRANSPORT_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "boot/boot.h"
#include "transport/cpu_atomic.h"
#include "heap/segment.h"
#include "util/status.h"

/* Which symmetric segment an address lies in. */
enum shoal_segment_id { SHOAL_SEG_HEAP = 0, SHOAL_SEG_DATA = 1, SHOAL_SEG_COUNT = 2 };

/* What the runtime knows of each peer. Filled by the transports at start-up. */
struct shoal_peer {
    char *base[SHOAL_SEG_COUNT]; /* where the peer's segments are mapped here */
    int direct;                  /* load/store reachable */
};

/* What a transport receives at start-up. */
struct shoal_transport_setup {
    shoal_boot_t *boot;
    int my_pe;
    int n_pes;
    const shoal_segment_t *local[SHOAL_SEG_COUNT];
    struct shoal_peer *peers; /* n_pes entries, filled by the transport */
};

struct shoal_transport_ops {
    const char *name;
    /* Reaches the peers it can; marks them in setup->peers. Collective. */
    shoal_status_t (*init)(struct shoal_transport_setup *setup);
    /* Byte transfers to/from a peer segment offset, for non-direct peers. */
    shoal_status_t (*put)(int pe, enum shoal_segment_id seg, size_t offset, const void *src, size_t len);
    shoal_status_t (*get)(int pe, enum shoal_segment_id seg, size_t offset, void *dst, size_t len);
    /* One atomic on a 4- or 8-byte element; *fetched gets the old value. */
    shoal_status_t (*amo)(int pe, enum shoal_segment_id seg, size_t offset, size_t elem, enum shoal_amo_op op,
                          uint64_t operand, uint64_t cond, uint64_t *fetched);
    /* Orders (fence) or completes (quiet) this PE's outstanding operations. */
    void (*fence)(void);
    void (*quiet)(void);
    /* Releases peer mappings and endpoints. Collective. */
    void (*fini)(struct shoal_transport_setup *setup);
};

extern const struct shoal_transport_ops shoal_transport_shm;

#endif
