/* hier_small.c: all-reduce and fcollect of small vectors on teams whose
 * members share hosts, crossing the fabric once per host instead of once
 * per member.
 *
 * On each host the members meet at their leader (the host's first member,
 * hosts.h) as in the hierarchical barrier (hier.c): a member publishes its
 * source, adds one to the leader's HOST_ARRIVE word and waits on its own
 * HOST_RELEASE word. The leader reads the host's sources straight from
 * their memory, then works with the other hosts' leaders through the
 * tagged lines of lines.h:
 * - reduce: the leader combines its host's vectors in rank order, then the
 *   leaders run recursive doubling (rd.c) over their partial results, in
 *   host order, so every leader holds the same bits;
 * - fcollect: the leader puts its host's blocks, in rank order, into line
 *   h (its host's index) of every other leader and reads theirs.
 * The leader then writes the result into every member's dest, and releases
 * them by storing the call's tag. One fabric step per call for 2 hosts,
 * against the tree's 2 log2(members) and the direct fcollect's barriers
 * and gets.
 *
 * Why the words and lines are safe to reuse: HOST_ARRIVE holds one call's
 * arrivals (the leader takes them back before releasing anyone, and no
 * member arrives again before its release), HOST_RELEASE only grows (the
 * team's epoch), and every leader's result needs every member's vector, as
 * lines.h requires. A member's source and dest belong to the call until
 * its release, so the leader may read and write them; it reads every
 * source before writing any dest, so in-place calls are safe. */
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "coll/hosts.h"
#include "coll/lines.h"
#include "core/runtime.h"

/* Teams only (lines and epochs), across hosts that share memory inside. */
static int hier_fits(const struct shoal_group *g)
{
    return g->epoch && shoal_rt.mapped_shm && shoal_coll_hier_useful(g) && g->size <= 1 << SHOAL_RD_ROUNDS;
}

int shoal_coll_hier_reduce_fits(const struct shoal_group *g, size_t bytes)
{
    return bytes && bytes <= SHOAL_RD_BYTES && hier_fits(g);
}

int shoal_coll_hier_fcollect_fits(const struct shoal_group *g, size_t block)
{
    if (!block || block > SHOAL_RD_BYTES || !hier_fits(g)) return 0;
    struct shoal_coll_hosts h;
    if (shoal_coll_hosts_init(&h, g) != SHOAL_OK) shoal_runtime_abort(1, "out of memory choosing a collective");
    /* A leader sends its whole host in one line, and reads one per host. */
    int fits = h.hosts <= SHOAL_RD_LINES;
    for (int k = 0; k < h.hosts && fits; k++) fits = (size_t)(h.start[k + 1] - h.start[k]) * block <= SHOAL_RD_BYTES;
    shoal_coll_hosts_fini(&h);
    return fits;
}

/* A member's part: its source readable by the leader, then the release. */
static void member_call(struct shoal_group *g, const struct shoal_coll_hosts *h, struct shoal_coll_buf src,
                        int leader, uint64_t tag)
{
    shoal_coll_publish(g, src);
    shoal_group_aux_add_host(g, leader, SHOAL_COLL_AUX_HOST_ARRIVE, 1, h->host_direct);
    const uint64_t *release = shoal_group_aux(g, SHOAL_COLL_AUX_HOST_RELEASE);
    struct shoal_backoff b = {.waits_on = shoal_group_pe(g, leader) + 1};
    SHOAL_BACKOFF_WHILE(&b, __atomic_load_n(release, __ATOMIC_ACQUIRE) < tag);
    shoal_coll_unpublish(g);
}

/* The leader's wait for the host's other members, whose arrivals it then
 * takes back off its counter. */
static void gather_host(struct shoal_group *g, const struct shoal_coll_hosts *h)
{
    const int members = h->start[h->host + 1] - h->start[h->host];
    if (members == 1) return;
    const uint64_t *arrive = shoal_group_aux(g, SHOAL_COLL_AUX_HOST_ARRIVE);
    const int host_direct = h->host_direct;
    struct shoal_backoff b = {.writers_direct = host_direct};
    SHOAL_BACKOFF_WHILE(&b, __atomic_load_n(arrive, __ATOMIC_ACQUIRE) < (uint64_t)(members - 1));
    shoal_group_aux_add_host(g, g->rank, SHOAL_COLL_AUX_HOST_ARRIVE, (uint64_t)-(int64_t)(members - 1),
                             host_direct);
}

/* Writes result (bytes) into the dest of every member of this host, the
 * leader's own included, and releases the others. */
static void release_host(struct shoal_group *g, const struct shoal_coll_hosts *h, struct shoal_coll_buf dest,
                         const void *result, size_t bytes, uint64_t tag)
{
    const int first = h->start[h->host], end = h->start[h->host + 1];
    for (int q = first; q < end; q++) {
        char *to = shoal_coll_at(g, dest, h->order[q], 0);
        if (to != result) memcpy(to, result, bytes);
    }
    for (int q = first + 1; q < end; q++) shoal_group_aux_store(g, h->order[q], SHOAL_COLL_AUX_HOST_RELEASE, tag);
}

static int *host_leaders(const struct shoal_coll_hosts *h, int *small, int n_small)
{
    int *lead = h->hosts <= n_small ? small : malloc(sizeof *lead * (size_t)h->hosts);
    if (!lead) shoal_runtime_abort(1, "out of memory in a reduction");
    for (int k = 0; k < h->hosts; k++) lead[k] = h->order[h->start[k]];
    return lead;
}

/* Starts a call: its tag and line set; a member hands over its source and
 * waits for its release (returns 0, all done), the leader waits for its
 * host's members (returns 1, with *src now naming the members' published
 * sources). */
static int begin_call(struct shoal_group *g, struct shoal_coll_hosts *h, struct shoal_coll_buf *src, uint64_t *tag,
                      int *p)
{
    *tag = shoal_coll_lines_begin(g, p);
    if (shoal_coll_hosts_init(h, g) != SHOAL_OK) shoal_runtime_abort(1, "out of memory in a collective");
    const int first = h->start[h->host], leader = h->order[first];
    if (g->rank != leader) {
        member_call(g, h, *src, leader, *tag);
        shoal_coll_hosts_fini(h);
        return 0;
    }
    gather_host(g, h);
    src->published = 1;
    return 1;
}

shoal_status_t shoal_coll_reduce_hier(struct shoal_group *g, struct shoal_coll_buf dest, struct shoal_coll_buf src,
                                      size_t nelems, size_t es, shoal_coll_combine_fn combine)
{
    int p;
    uint64_t tag;
    struct shoal_coll_hosts h;
    if (!begin_call(g, &h, &src, &tag, &p)) return SHOAL_OK;
    const size_t bytes = nelems * es;
    const int first = h.start[h.host], members = h.start[h.host + 1] - first, leader = h.order[first];
    _Alignas(64) unsigned char acc[SHOAL_RD_BYTES];
    memcpy(acc, shoal_coll_at(g, src, leader, 0), bytes);
    /* Positions of a host are in rank order: acc is always the lower part. */
    for (int q = first + 1; q < first + members; q++) combine(acc, shoal_coll_at(g, src, h.order[q], 0), nelems);
    int small[SHOAL_COLL_HOSTS_SMALL];
    int *lead = host_leaders(&h, small, SHOAL_COLL_HOSTS_SMALL);
    shoal_status_t st = shoal_coll_rd_among(g, tag, p, lead, h.hosts, h.host, acc, bytes, es, combine);
    if (lead != small) free(lead);
    release_host(g, &h, dest, acc, bytes, tag);
    shoal_coll_hosts_fini(&h);
    return st;
}

shoal_status_t shoal_coll_fcollect_hier(struct shoal_group *g, struct shoal_coll_buf dest, struct shoal_coll_buf src,
                                        size_t bytes)
{
    int p;
    uint64_t tag;
    struct shoal_coll_hosts h;
    if (!begin_call(g, &h, &src, &tag, &p)) return SHOAL_OK;
    const int first = h.start[h.host], members = h.start[h.host + 1] - first, leader = h.order[first];
    /* The leader's dest is its workspace: nobody else reads or writes it
     * during the call (it is copied to the other members at the end). */
    char *out = shoal_coll_at(g, dest, leader, 0);
    _Alignas(64) unsigned char mine[SHOAL_RD_BYTES];
    for (int q = first; q < first + members; q++)
        memcpy(mine + (size_t)(q - first) * bytes, shoal_coll_at(g, src, h.order[q], 0), bytes);
    shoal_status_t st = SHOAL_OK;
    for (int k = 1; k < h.hosts; k++) {
        const int to = (h.host + k) % h.hosts;
        shoal_status_t s = shoal_coll_line_send(g, h.order[h.start[to]], p, h.host, tag, mine, (size_t)members * bytes);
        if (st == SHOAL_OK) st = s;
    }
    for (int q = first; q < first + members; q++)
        memcpy(out + (size_t)h.order[q] * bytes, mine + (size_t)(q - first) * bytes, bytes);
    for (int k = 1; k < h.hosts; k++) {
        const int from = (h.host + h.hosts - k) % h.hosts;
        const unsigned char *line =
            shoal_coll_line_receive(g, p, from, tag, (size_t)(h.start[from + 1] - h.start[from]) * bytes);
        for (int q = h.start[from]; q < h.start[from + 1]; q++)
            memcpy(out + (size_t)h.order[q] * bytes, line + (size_t)(q - h.start[from]) * bytes, bytes);
    }
    release_host(g, &h, dest, out, (size_t)g->size * bytes, tag);
    shoal_coll_hosts_fini(&h);
    return st;
}
