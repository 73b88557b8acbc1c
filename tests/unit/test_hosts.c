/* test_hosts.c: members ordered by host (src/coll/hosts.c). A team's order
 * is made once and kept, and so are the first 16 active sets'; each must be
 * the order it should be, member by member, for block and cyclic
 * placements, strided groups, members not reached directly and several
 * members' points of view, and equal to the order made per call for the
 * sets past those 16. Prints what one call costs made each time and kept,
 * at 65,536 members (1,024 hosts x 64): figures, not checks. One process,
 * made-up peer tables. */
#include "coll/hosts.h"
#include "core/runtime.h"
#include "harness.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* holes: every holes-th PE of this host is not direct (its mapping failed,
 * or the fabric is forced for it); 0 for none. */
static void make_peers(int n_pes, int hosts, int cyclic, int my_pe, int holes)
{
    /* Each table at an address of its own: the active sets' kept orders
     * belong to the table they were made from (a new table drops them), and
     * a freed table's address may come back. Kept reachable until the end. */
    static struct shoal_peer *tables[256];
    static int n_tables;
    if (n_tables == (int)(sizeof tables / sizeof tables[0])) {
        fprintf(stderr, "test_hosts: more than %d peer tables\n", n_tables);
        exit(TEST_FAIL);
    }
    shoal_rt.peers = tables[n_tables++] = calloc((size_t)n_pes, sizeof *shoal_rt.peers);
    if (!shoal_rt.peers) exit(TEST_FAIL);
    shoal_rt.n_pes = n_pes;
    shoal_rt.my_pe = my_pe;
    const int per_host = (n_pes + hosts - 1) / hosts;
    for (int pe = 0; pe < n_pes; pe++) shoal_rt.peers[pe].node = cyclic ? pe % hosts : pe / per_host;
    for (int pe = 0; pe < n_pes; pe++)
        shoal_rt.peers[pe].direct =
            shoal_rt.peers[pe].node == shoal_rt.peers[my_pe].node && (!holes || pe == my_pe || pe % holes);
}

static void same(const struct shoal_coll_hosts *a, const struct shoal_coll_hosts *b)
{
    CHECK(a->n == b->n && a->hosts == b->hosts && a->pos == b->pos && a->host == b->host);
    CHECK(a->in_order == b->in_order && a->host_direct == b->host_direct && a->all_direct == b->all_direct);
    CHECK(memcmp(a->order, b->order, (size_t)a->n * sizeof(int)) == 0);
    CHECK(memcmp(a->start, b->start, ((size_t)a->hosts + 1) * sizeof(int)) == 0);
}

/* The group of start/stride/size as this PE sees it, once as an active set
 * (kept, or made per call past 16 sets) and once as a team, checked against
 * each other and against what the order must be. */
static void check_group(int start, int stride, int size)
{
    const int rank = (shoal_rt.my_pe - start) / stride;
    struct shoal_group set, team;
    shoal_group_from_active_set(&set, start, stride, size, rank, 0, 0);
    void *kept = NULL;
    team = set;
    team.layout = &kept;
    struct shoal_coll_hosts a, b, c;
    CHECK(shoal_coll_hosts_init(&a, &set) == SHOAL_OK);
    CHECK(shoal_coll_hosts_init(&b, &team) == SHOAL_OK);
    CHECK(kept != NULL);
    same(&a, &b);
    CHECK(shoal_coll_hosts_init(&c, &team) == SHOAL_OK);
    CHECK(c.order == b.order); /* kept, not made again */
    CHECK(shoal_coll_group_hosts(&set) == a.hosts && shoal_coll_group_hosts(&team) == a.hosts);
    CHECK(shoal_coll_all_direct(&set) == a.all_direct && shoal_coll_all_direct(&team) == a.all_direct);
    int host_direct = 1, all_direct = 1;
    for (int r = 0; r < size; r++) {
        const struct shoal_peer *p = &shoal_rt.peers[start + r * stride];
        all_direct &= p->direct;
        if (p->node == shoal_rt.peers[shoal_rt.my_pe].node) host_direct &= p->direct;
    }
    CHECK(a.host_direct == host_direct && a.all_direct == all_direct);
    /* Hosts in node order, members of a host in rank order, every member
     * once, this member where pos says. */
    CHECK(a.order[a.pos] == rank && a.start[0] == 0 && a.start[a.hosts] == size);
    int *seen = calloc((size_t)size, sizeof *seen);
    if (!seen) exit(TEST_FAIL);
    for (int h = 0; h < a.hosts; h++)
        for (int p = a.start[h]; p < a.start[h + 1]; p++) {
            const int r = a.order[p], node = shoal_rt.peers[start + r * stride].node;
            CHECK(r >= 0 && r < size && !seen[r]++);
            CHECK(shoal_coll_hosts_pos(&a, r) == p && shoal_coll_hosts_pos(&b, r) == p);
            if (p > a.start[h]) {
                CHECK(node == shoal_rt.peers[start + a.order[p - 1] * stride].node && r > a.order[p - 1]);
            } else if (h > 0) {
                CHECK(node > shoal_rt.peers[start + a.order[p - 1] * stride].node);
            }
        }
    free(seen);
    shoal_coll_hosts_fini(&a);
    shoal_coll_hosts_fini(&b);
    shoal_coll_hosts_fini(&c);
    free(kept);
}

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

/* What a barrier's bookkeeping costs per call (its choice of algorithm,
 * then the hierarchical barrier's order): the active set's way against a
 * team's kept order. */
static double per_call_us(struct shoal_group *g, int calls)
{
    const double t = now_us();
    for (int i = 0; i < calls; i++) {
        struct shoal_coll_hosts h;
        CHECK(!shoal_coll_all_direct(g));
        CHECK(shoal_coll_group_hosts(g) > 1);
        CHECK(shoal_coll_hosts_init(&h, g) == SHOAL_OK);
        shoal_coll_hosts_fini(&h);
    }
    return (now_us() - t) / calls;
}

int main(void)
{
    const int cases[][3] = {{8, 1, 0}, {8, 2, 0}, {8, 2, 1}, {12, 3, 1}, {64, 4, 0}, {200, 7, 1}, {1000, 10, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const int n = cases[i][0], hosts = cases[i][1], cyclic = cases[i][2];
        for (int me = 0; me < n; me += n > 16 ? n / 7 : 1)
            for (int holes = 0; holes <= 5; holes += 5) {
                make_peers(n, hosts, cyclic, me, holes);
                check_group(0, 1, n);
                if (me % 3 == 1) check_group(1, 3, (n - 2) / 3 + 1); /* a strided team holding this PE */
            }
    }
    /* Sets alike but for their stride, size or start are different sets. */
    make_peers(64, 4, 1, 6, 0);
    for (int stride = 1; stride <= 3; stride++) check_group(0, stride, 20);
    for (int start = 0; start <= 2; start++) check_group(start, 1, 18);
    /* More active sets than are kept (16): the later ones are made per
     * call, and must agree with their teams' kept orders all the same. */
    make_peers(200, 7, 1, 60, 5);
    for (int stride = 1; stride <= 30; stride++) check_group(60 % stride, stride, (200 - 1 - 60 % stride) / stride + 1);
    /* 1,024 hosts x 64 PEs, PE 0's view: an active set, kept (the
     * table is new: nothing kept yet); then, with 15 more kept, a 17th made
     * at each call as every call was before orders were kept; then a team. */
    make_peers(65536, 1024, 0, 0, 0);
    struct shoal_group g;
    shoal_group_from_active_set(&g, 0, 1, 65536, 0, 0, 0);
    const double set_once = per_call_us(&g, 1), set_after = per_call_us(&g, 2000);
    for (int stride = 2; stride < 17; stride++) {
        shoal_group_from_active_set(&g, 0, stride, 65536 / stride, 0, 0, 0);
        CHECK(shoal_coll_group_hosts(&g) > 1);
    }
    shoal_group_from_active_set(&g, 0, 1, 65535, 0, 0, 0);
    const double each = per_call_us(&g, 20);
    void *kept = NULL;
    g.layout = &kept;
    const double once = per_call_us(&g, 1), after = per_call_us(&g, 2000);
    printf("65,536 members on 1,024 hosts, a barrier's ordering per call: %.1f us made each time; "
           "a team %.1f us the first time, %.3f us after; an active set %.1f us the first time, %.3f us after\n",
           each, once, after, set_once, set_after);
    free(kept);
    return test_finish();
}
