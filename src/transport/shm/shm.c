/* shm.c: the same-host transport. Every PE hands its segments' memfds to the
 * others through the bootstrap; each PE maps every peer's heap and static
 * data once at start-up, so afterwards a put is a memcpy into the peer's
 * mapping and an atomic is a CPU atomic on it: no system call, no copy
 * through a bounce buffer.
 *
 * Invariants: after init, for every PE on this host (peers[pe].node ==
 * my_node) peers[pe].base[s] maps the same bytes as PE pe's own segment s
 * (for pe == my_pe it is the segment itself) and the peer is direct; PEs on
 * other hosts are left to the fabric. Segment sizes are equal on all PEs
 * (checked). */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heap/segment.h"
#include "transport/transport.h"
#include "util/log.h"

/* The setup the runtime handed to init; the table's put/get read peers from it. */
static struct shoal_transport_setup *shm_setup;

struct shm_segment_info {
    uint64_t size[SHOAL_SEG_COUNT];
};

static shoal_status_t shm_init(struct shoal_transport_setup *setup)
{
    const int n = setup->n_pes;
    int local = 0;
    for (int pe = 0; pe < n; pe++) local += setup->peers[pe].node == setup->my_node;
    struct shm_segment_info mine;
    struct shoal_boot_view view = {0};
    int *fds = calloc((size_t)local * SHOAL_SEG_COUNT, sizeof *fds);
    int my_fds[SHOAL_SEG_COUNT], nfds = 0;
    shoal_status_t st = SHOAL_ERR_NOMEM;
    shm_setup = setup;
    if (!fds) goto out;
    for (int s = 0; s < SHOAL_SEG_COUNT; s++) {
        mine.size[s] = setup->local[s]->size;
        my_fds[s] = setup->local[s]->fd;
    }
    st = shoal_boot_allgather_view(setup->boot, &mine, sizeof mine, &view);
    if (st != SHOAL_OK) goto out;
    const struct shm_segment_info *all = view.data;
    for (int pe = 0; pe < n; pe++)
        for (int s = 0; s < SHOAL_SEG_COUNT; s++)
            if (all[pe].size[s] != mine.size[s]) {
                shoal_error("shm", "PE %d has a %s segment of %llu bytes, this PE %llu: every PE must run "
                            "the same program with the same SHMEM_SYMMETRIC_SIZE",
                            pe, s == SHOAL_SEG_HEAP ? "heap" : "static data",
                            (unsigned long long)all[pe].size[s], (unsigned long long)mine.size[s]);
                st = SHOAL_ERR_INVAL;
                goto out;
            }
    /* A segment every PE lacks (static data that could not be remapped: the
     * sizes agree, so all lack it) has no descriptor to hand over. */
    nfds = 0;
    for (int s = 0; s < SHOAL_SEG_COUNT; s++)
        if (mine.size[s]) my_fds[nfds++] = setup->local[s]->fd;
    st = setup->boot->ops->allgather_fds(setup->boot, my_fds, nfds, fds);
    if (st != SHOAL_OK) goto out;
    /* The descriptors come in rank order of this host's PEs. */
    for (int pe = 0, li = 0; pe < n && st == SHOAL_OK; pe++) {
        struct shoal_peer *peer = &setup->peers[pe];
        if (peer->node != setup->my_node) continue;
        const int at = li++;
        for (int s = 0, k = 0; s < SHOAL_SEG_COUNT; s++) {
            if (mine.size[s] == 0) {
                peer->base[s] = setup->local[s]->base;
                continue;
            }
            int fd = fds[at * nfds + k++];
            if (pe == setup->my_pe) {
                peer->base[s] = setup->local[s]->base;
                continue;
            }
            st = shoal_segment_map_peer(fd, mine.size[s], &peer->base[s]);
            if (st != SHOAL_OK) break;
        }
        peer->direct = 1;
    }
out:
    if (fds)
        for (int i = 0; i < local * nfds; i++)
            if (fds[i] > 2) close(fds[i]);
    free(fds);
    shoal_boot_view_release(&view);
    return st;
}

static void shm_fini(struct shoal_transport_setup *setup)
{
    for (int pe = 0; pe < setup->n_pes; pe++) {
        struct shoal_peer *peer = &setup->peers[pe];
        if (pe != setup->my_pe)
            for (int s = 0; s < SHOAL_SEG_COUNT; s++)
                if (peer->base[s] && peer->base[s] != setup->local[s]->base)
                    shoal_segment_unmap_peer(peer->base[s], setup->local[s]->size);
        const int node = peer->node;
        memset(peer, 0, sizeof *peer);
        peer->node = node;
    }
}

/* The table entries below serve callers that go through the seam rather than
 * the inlined direct path (tests, forced routing); they do the same thing. */
static shoal_status_t shm_ctx_create(shoal_tctx_t **out)
{
    /* The host path has no per-context state: every context is the default. */
    *out = NULL;
    return SHOAL_OK;
}

static void shm_ctx_destroy(shoal_tctx_t *ctx) { (void)ctx; }

static shoal_status_t shm_put(shoal_tctx_t *ctx, int pe, enum shoal_segment_id seg, size_t offset, const void *src,
                              size_t len)
{
    (void)ctx;
    memcpy(shm_setup->peers[pe].base[seg] + offset, src, len);
    return SHOAL_OK;
}

static shoal_status_t shm_get(shoal_tctx_t *ctx, int pe, enum shoal_segment_id seg, size_t offset, void *dst,
                              size_t len)
{
    (void)ctx;
    memcpy(dst, shm_setup->peers[pe].base[seg] + offset, len);
    return SHOAL_OK;
}

static shoal_status_t shm_amo(shoal_tctx_t *ctx, int pe, enum shoal_segment_id seg, size_t offset, size_t elem,
                              enum shoal_amo_op op, uint64_t operand, uint64_t cond, uint64_t *fetched)
{
    (void)ctx;
    uint64_t old = shoal_cpu_amo(shm_setup->peers[pe].base[seg] + offset, elem, op, operand, cond);
    if (fetched) *fetched = old;
    return SHOAL_OK;
}

/* Stores to mapped peers are globally visible once they leave this core;
 * a full fence orders them, including glibc's non-temporal memcpy stores. */
static void shm_fence(shoal_tctx_t *ctx) { (void)ctx; atomic_thread_fence(memory_order_seq_cst); }
static void shm_quiet(shoal_tctx_t *ctx) { (void)ctx; atomic_thread_fence(memory_order_seq_cst); }
static void shm_progress(void) {}

const struct shoal_transport_ops shoal_transport_shm = {
    .name = "shm",
    .init = shm_init,
    .ctx_create = shm_ctx_create,
    .ctx_destroy = shm_ctx_destroy,
    .put = shm_put,
    .get = shm_get,
    .get_nbi = shm_get,
    .amo = shm_amo,
    .fence = shm_fence,
    .quiet = shm_quiet,
    .progress = shm_progress,
    .fini = shm_fini,
};
