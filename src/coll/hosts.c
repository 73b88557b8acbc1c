/* hosts.c: ordering a group's members by host (hosts.h). */
#include "coll/hosts.h"

#include <stdint.h>
#include <stdlib.h>

#include "core/runtime.h"

static int by_key(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

shoal_status_t shoal_coll_hosts_init(struct shoal_coll_hosts *h, const struct shoal_group *g)
{
    const int n = g->size;
    h->n = n;
    h->heap = NULL;
    h->order = h->small;
    if (n > SHOAL_COLL_HOSTS_SMALL) {
        h->heap = malloc((2 * (size_t)n + 1) * sizeof *h->heap);
        if (!h->heap) return SHOAL_ERR_NOMEM;
        h->order = h->heap;
    }
    h->start = h->order + n;
    /* Members are usually in host order already (block placement): check
     * before sorting, which needs a key array. */
    int sorted = 1;
    for (int r = 1; r < n && sorted; r++)
        sorted = shoal_rt.peers[shoal_group_pe(g, r - 1)].node <= shoal_rt.peers[shoal_group_pe(g, r)].node;
    if (sorted) {
        for (int r = 0; r < n; r++) h->order[r] = r;
    } else {
        uint64_t *key = malloc((size_t)n * sizeof *key);
        if (!key) {
            free(h->heap);
            return SHOAL_ERR_NOMEM;
        }
        for (int r = 0; r < n; r++) key[r] = (uint64_t)shoal_rt.peers[shoal_group_pe(g, r)].node << 32 | (uint64_t)r;
        qsort(key, (size_t)n, sizeof *key, by_key);
        for (int p = 0; p < n; p++) h->order[p] = (int)(key[p] & 0xffffffffu);
        free(key);
    }
    h->hosts = 0;
    for (int p = 0; p < n; p++) {
        int node = shoal_rt.peers[shoal_group_pe(g, h->order[p])].node;
        if (p == 0 || node != shoal_rt.peers[shoal_group_pe(g, h->order[p - 1])].node) h->start[h->hosts++] = p;
        if (h->order[p] == g->rank) {
            h->pos = p;
            h->host = h->hosts - 1;
        }
    }
    h->start[h->hosts] = n;
    return SHOAL_OK;
}

void shoal_coll_hosts_fini(struct shoal_coll_hosts *h)
{
    free(h->heap);
    h->heap = NULL;
}

int shoal_coll_hosts_pos(const struct shoal_coll_hosts *h, int r)
{
    for (int p = 0; p < h->n; p++)
        if (h->order[p] == r) return p;
    return -1;
}

int shoal_coll_host_direct(const struct shoal_coll_hosts *h, const struct shoal_group *g)
{
    for (int p = h->start[h->host]; p < h->start[h->host + 1]; p++)
        if (!shoal_rt.peers[shoal_group_pe(g, h->order[p])].direct) return 0;
    return 1;
}

int shoal_coll_group_hosts(const struct shoal_group *g)
{
    /* Members usually come in host order (block placement): then one pass
     * counts the hosts; otherwise order them. */
    int hosts = 1, sorted = 1;
    for (int r = 1; r < g->size && sorted; r++) {
        int a = shoal_rt.peers[shoal_group_pe(g, r - 1)].node, b = shoal_rt.peers[shoal_group_pe(g, r)].node;
        sorted = a <= b;
        hosts += a != b;
    }
    if (sorted) return hosts;
    struct shoal_coll_hosts h;
    /* Failing here would let members choose differently: end the job. */
    if (shoal_coll_hosts_init(&h, g) != SHOAL_OK) shoal_runtime_abort(1, "out of memory choosing a collective");
    hosts = h.hosts;
    shoal_coll_hosts_fini(&h);
    return hosts;
}
