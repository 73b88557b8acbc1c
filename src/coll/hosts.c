/* hosts.c: ordering a group's members by host (hosts.h). */
#include "coll/hosts.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/runtime.h"

/* A team's order, kept in one block: the fields below, then order (n
 * ints) and start (hosts + 1 ints). */
struct kept_order {
    struct shoal_coll_hosts h; /* order and start point into ints */
    int ints[];
};

static int by_key(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static int node_of(const struct shoal_group *g, int rank) { return shoal_rt.peers[shoal_group_pe(g, rank)].node; }

static shoal_status_t order_members(struct shoal_coll_hosts *h, const struct shoal_group *g)
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
    for (int r = 1; r < n && sorted; r++) sorted = node_of(g, r - 1) <= node_of(g, r);
    h->in_order = sorted;
    if (sorted) {
        for (int r = 0; r < n; r++) h->order[r] = r;
    } else {
        uint64_t *key = malloc((size_t)n * sizeof *key);
        if (!key) {
            free(h->heap);
            return SHOAL_ERR_NOMEM;
        }
        for (int r = 0; r < n; r++) key[r] = (uint64_t)node_of(g, r) << 32 | (uint64_t)r;
        qsort(key, (size_t)n, sizeof *key, by_key);
        for (int p = 0; p < n; p++) h->order[p] = (int)(key[p] & 0xffffffffu);
        free(key);
    }
    h->hosts = 0;
    h->all_direct = 1;
    for (int p = 0; p < n; p++) {
        const int node = node_of(g, h->order[p]);
        if (p == 0 || node != node_of(g, h->order[p - 1])) h->start[h->hosts++] = p;
        if (h->order[p] == g->rank) {
            h->pos = p;
            h->host = h->hosts - 1;
        }
        h->all_direct &= shoal_rt.peers[shoal_group_pe(g, h->order[p])].direct != 0;
    }
    h->start[h->hosts] = n;
    h->host_direct = 1;
    for (int p = h->start[h->host]; p < h->start[h->host + 1]; p++)
        h->host_direct &= shoal_rt.peers[shoal_group_pe(g, h->order[p])].direct != 0;
    return SHOAL_OK;
}

/* The order kept in *g->layout, made on first use. Published with a
 * compare-and-swap: a program calling collectives on one team from two
 * threads at once (which the standard does not allow) still never reads a
 * half-made block, and keeps one of the two. */
static const struct kept_order *kept(const struct shoal_group *g)
{
    struct kept_order *k = __atomic_load_n((struct kept_order **)g->layout, __ATOMIC_ACQUIRE);
    if (k) return k;
    struct shoal_coll_hosts h;
    if (order_members(&h, g) != SHOAL_OK) return NULL;
    k = malloc(sizeof *k + (2 * (size_t)h.n + 1) * sizeof(int));
    if (k) {
        k->h = h;
        k->h.heap = NULL;
        k->h.order = k->ints;
        k->h.start = k->ints + h.n;
        memcpy(k->h.order, h.order, (size_t)h.n * sizeof(int));
        memcpy(k->h.start, h.start, ((size_t)h.hosts + 1) * sizeof(int));
        struct kept_order *none = NULL;
        if (!__atomic_compare_exchange_n((struct kept_order **)g->layout, &none, k, 0, __ATOMIC_ACQ_REL,
                                         __ATOMIC_ACQUIRE)) {
            free(k);
            k = none;
        }
    }
    shoal_coll_hosts_fini(&h);
    return k;
}

/* Active sets (start, stride, size) have no team to keep their order in,
 * yet one set names the same members every time: the first SETS_KEPT of
 * them are kept here until the job ends (never replaced, so that no call
 * loses its order to another thread's), the rest made per call. */
#define SETS_KEPT 16
static struct {
    pthread_mutex_t lock;
    const void *peers; /* the peer table they were made from; another table drops them */
    int n;
    struct kept_set {
        int start, stride, size;
        void *order;
    } set[SETS_KEPT];
} sets = {.lock = PTHREAD_MUTEX_INITIALIZER};

static const struct kept_order *kept_set(const struct shoal_group *g)
{
    const struct kept_order *k = NULL;
    pthread_mutex_lock(&sets.lock);
    if (sets.peers != shoal_rt.peers) {
        for (int i = 0; i < sets.n; i++) free(sets.set[i].order);
        sets.n = 0;
        sets.peers = shoal_rt.peers;
    }
    for (int i = 0; i < sets.n && !k; i++)
        if (sets.set[i].start == g->start && sets.set[i].stride == g->stride && sets.set[i].size == g->size)
            k = sets.set[i].order;
    if (!k && sets.n < SETS_KEPT) {
        struct kept_set *e = &sets.set[sets.n];
        *e = (struct kept_set){g->start, g->stride, g->size, NULL};
        struct shoal_group with_slot = *g;
        with_slot.layout = &e->order;
        if ((k = kept(&with_slot))) sets.n++;
    }
    pthread_mutex_unlock(&sets.lock);
    return k;
}

/* g's kept order: its team's, or its active set's if kept; NULL without
 * memory (a team) or past the kept sets. */
static const struct kept_order *kept_for(const struct shoal_group *g) { return g->layout ? kept(g) : kept_set(g); }

shoal_status_t shoal_coll_hosts_init(struct shoal_coll_hosts *h, const struct shoal_group *g)
{
    const struct kept_order *k = kept_for(g);
    if (!k) return g->layout ? SHOAL_ERR_NOMEM : order_members(h, g);
    /* The fields only: order and start stay in the team's block. */
    memcpy(h, &k->h, offsetof(struct shoal_coll_hosts, small));
    return SHOAL_OK;
}

void shoal_coll_hosts_fini(struct shoal_coll_hosts *h)
{
    free(h->heap);
    h->heap = NULL;
}

int shoal_coll_hosts_pos(const struct shoal_coll_hosts *h, int r)
{
    if (h->in_order) return r;
    for (int p = 0; p < h->n; p++)
        if (h->order[p] == r) return p;
    return -1;
}

int shoal_coll_all_direct(const struct shoal_group *g)
{
    const struct kept_order *k = kept_for(g);
    if (k) return k->h.all_direct;
    /* Failing here would let members choose differently: end the job. */
    if (g->layout) shoal_runtime_abort(1, "out of memory choosing a collective");
    for (int r = 0; r < g->size; r++)
        if (!shoal_rt.peers[shoal_group_pe(g, r)].direct) return 0;
    return 1;
}

int shoal_coll_group_hosts(const struct shoal_group *g)
{
    const struct kept_order *k = kept_for(g);
    if (k) return k->h.hosts;
    if (g->layout) shoal_runtime_abort(1, "out of memory choosing a collective");
    /* Members usually come in host order (block placement): then one pass
     * counts the hosts; otherwise order them. */
    int hosts = 1, sorted = 1;
    for (int r = 1; r < g->size && sorted; r++) {
        const int a = node_of(g, r - 1), b = node_of(g, r);
        sorted = a <= b;
        hosts += a != b;
    }
    if (sorted) return hosts;
    struct shoal_coll_hosts h;
    if (shoal_coll_hosts_init(&h, g) != SHOAL_OK) shoal_runtime_abort(1, "out of memory choosing a collective");
    hosts = h.hosts;
    shoal_coll_hosts_fini(&h);
    return hosts;
}
