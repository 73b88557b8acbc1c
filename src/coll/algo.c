/* algo.c: which algorithm runs each collective.
 *
 * Each kind of collective has a small table of algorithms (which exist,
 * under which names). SHMEM_COLL_ALGORITHM forces them for testing and
 * tuning: a comma list of NAME (every kind that has NAME uses it; kinds
 * without it keep choosing) or KIND:NAME (that kind only; an error if the
 * kind has no such algorithm); later items override earlier ones and
 * "auto" undoes everything before it. Otherwise the choice is by size and group:
 * every member must make the same choice for the same call, so it depends
 * only on arguments all members share (bytes, group size) and the setting.
 * The setting is parsed once, before the first collective (the public
 * layer calls shoal_coll_setup), and never changes afterwards. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "coll/coll.h"
#include "coll/hosts.h"
#include "coll/peer.h"
#include "core/runtime.h"
#include "observe/observe.h"
#include "sync/group.h"

/* Where the ring all-reduce of two members takes over from the tree
 * (see below). */
#define RING_MIN_BYTES ((size_t)256 * 1024)

static pthread_once_t setup_once = PTHREAD_ONCE_INIT;

static int forced[SHOAL_COLL_KINDS]; /* algorithm index, or -1: choose */
static shoal_status_t setup_status;
static char setup_error[320];

/* shmem_init has already refused a bad value (the configuration table
 * checks it with the same parser); this applies it. */
static void parse_setting(void)
{
    setup_status = shoal_coll_setting_parse(shoal_rt.config.coll_algorithm, forced, setup_error, sizeof setup_error);
}

shoal_status_t shoal_coll_setup(char *err, size_t errlen)
{
    pthread_once(&setup_once, parse_setting);
    if (setup_status != SHOAL_OK) snprintf(err, errlen, "%s", setup_error);
    return setup_status;
}

/* More PEs on this machine than CPUs online: the same on every member of
 * a group whose members are all direct (one machine). */
static int oversubscribed(void)
{
    static int cached = -1;
    if (cached < 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        cached = cpus > 0 && shoal_rt.machine_pes > cpus;
    }
    return cached;
}

int shoal_coll_islands(const struct shoal_group *g)
{
    return shoal_coll_group_hosts(g) == g->size || !shoal_rt.mapped_shm;
}

static enum shoal_coll_algo choose(enum shoal_coll_kind kind, const struct shoal_group *g, size_t bytes)
{
    /* fcollect is judged by its block: bytes is every member's together. */
    const int oneshot_fits =
        kind == SHOAL_COLL_COLLECT
            ? shoal_coll_fcollect_oneshot_fits(g, g->size ? bytes / (size_t)g->size : 0)
            : (kind == SHOAL_COLL_REDUCE || kind == SHOAL_COLL_BROADCAST) && shoal_coll_oneshot_fits(g, bytes);
    if (forced[kind] >= 0) {
        /* A forced one-shot falls back to direct where it cannot run (active
         * sets, vectors past SHOAL_ONESHOT_BYTES, large teams); so does a
         * forced tree broadcast on an active set (tree.c says why); a
         * forced rd past its size or on an active set falls back to tree
         * (a scan, which has none, to direct). */
        if (forced[kind] == SHOAL_ALGO_ONESHOT && !oneshot_fits) return SHOAL_ALGO_DIRECT;
        if (forced[kind] == SHOAL_ALGO_RD && !shoal_coll_rd_fits(g, bytes))
            return shoal_coll_tree_fits(g, kind) ? SHOAL_ALGO_TREE : SHOAL_ALGO_DIRECT;
        if (forced[kind] == SHOAL_ALGO_TREE && !shoal_coll_tree_fits(g, kind)) return SHOAL_ALGO_DIRECT;
        /* A forced ring on an active set: tree (or direct). */
        if (forced[kind] == SHOAL_ALGO_RING && !shoal_coll_ring_fits(g))
            return shoal_coll_tree_fits(g, kind) ? SHOAL_ALGO_TREE : SHOAL_ALGO_DIRECT;
        /* A forced hier reduce or fcollect where it cannot run (one host,
         * an active set, vectors past a line): what auto would pick else. */
        if (forced[kind] == SHOAL_ALGO_HIER && kind == SHOAL_COLL_REDUCE && !shoal_coll_hier_reduce_fits(g, bytes))
            return shoal_coll_tree_fits(g, kind) ? SHOAL_ALGO_TREE : SHOAL_ALGO_DIRECT;
        if (forced[kind] == SHOAL_ALGO_HIER && kind == SHOAL_COLL_COLLECT &&
            !shoal_coll_hier_fcollect_fits(g, g->size ? bytes / (size_t)g->size : 0))
            return SHOAL_ALGO_DIRECT;
        /* Forced bruck on an active set (no lines), or of nothing, or an
         * alltoall whose blocks do not fit the lines: direct. alltoall's
         * bytes are one block, (f)collect's every member's together. */
        if (forced[kind] == SHOAL_ALGO_BRUCK &&
            !(kind == SHOAL_COLL_ALLTOALL ? shoal_coll_alltoall_bruck_fits(g, bytes)
                                          : shoal_coll_bruck_fits(g, g->size ? bytes / (size_t)g->size : 0)))
            return SHOAL_ALGO_DIRECT;
        /* A forced pairwise alltoall or (f)collect on an active set, a
         * team past its lines or of nothing: direct. */
        if (forced[kind] == SHOAL_ALGO_PAIRWISE && (!bytes || !shoal_coll_alltoall_pairwise_fits(g)))
            return SHOAL_ALGO_DIRECT;
        return (enum shoal_coll_algo)forced[kind];
    }
    /* Small reductions, broadcasts and fcollects (blocks of at most
     * SHOAL_ONESHOT_BYTES) on a team: one exchange of lines and no barrier
     * beat the two barriers of the direct algorithms (bench/bench_coll.c;
     * fcollect: scripts/bench_shared_cores.sh, where with PEs outnumbering
     * cores each member is scheduled once to write and once to read). */
    if (oneshot_fits) return SHOAL_ALGO_ONESHOT;
    /* Otherwise, on one host, the direct algorithms win at every size
     * measured (2-8 PEs, 8 B to 1 MiB): the work is spread over all members
     * and nothing is staged through a root; the dissemination barrier beats
     * the central counter even at 2 PEs. */
    if (shoal_coll_all_direct(g))
        /* ... except the barrier where this machine runs more PEs than it
         * has cores: the dissemination's log2(n) rounds each wait for one
         * peer, often a preempted one; the flat counter (sync.c) waits
         * once, for the last to arrive (docs/bench/shared_cores.md). */
        return kind == SHOAL_COLL_BARRIER && g->epoch && oversubscribed() ? SHOAL_ALGO_LINEAR : SHOAL_ALGO_DIRECT;
    /* Some member is reached only through RMA (another host, or
     * SHMEM_TRANSPORT=ofi). Every member sees that alike: a group spans
     * hosts for all of its members, and the setting is the job's. There
     * every remote access is a fabric round trip, so what counts is how
     * many a member waits for in a row:
     * - barrier: when hosts hold several members, the hierarchical barrier
     *   crosses the fabric in ceil(log2 hosts) rounds instead of
     *   ceil(log2 members), the rest is shared memory; else dissemination.
     * - broadcast: the binomial tree is log2(n) put+flag steps, pipelined
     *   in 256 KiB chunks, against two barriers plus every member pulling
     *   the whole vector from the root (n-1 transfers out of one PE).
     *   Measured over SHMEM_TRANSPORT=ofi at 4 PEs: 8 B to 64 KiB about
     *   3x faster, 1 MiB about even (64 KiB chunks lost there: each chunk
     *   then paid a fence), before a team's chunks became flags (tree.c).
     *   An active set's broadcast, which keeps off the tree (tree.c), is
     *   pushed by its root (broadcast.c, linear): one barrier and a put
     *   and a counted signal per member, against the direct pull's two
     *   barriers and a get per member.
     * - reduce: the tree is log2(n) steps up and log2(n) down with no
     *   barrier; direct needs two barriers and a get from every member per
     *   8 KiB chunk of every slice plus a put to every member, i.e. n^2
     *   small round trips per chunk row (same setting: 3x to 20x).
     *   Up to SHOAL_RD_BYTES (256 B) where hosts hold several members, the
     *   hierarchical reduce (hier_small.c): each host's members hand their
     *   vectors to its leader through shared memory, the leaders run recursive
     *   doubling, and each leader writes the result back: log2(hosts) fabric
     *   steps of one put and one flag. Measured at 2 namespace hosts x 2 PEs
     *   over the encrypted transport (scripts/bench_network.sh, QUICK=1), 8 B:
     *   142 us against the tree's 235 us.
     *   Up to SHOAL_RD_BYTES (256 B) on a team whose members are islands
     *   (each on a host of its own, or no PE maps another's memory:
     *   SHMEM_TRANSPORT forced), recursive doubling halves that again:
     *   log2(n) rounds of one put and one flag, all members busy at once.
     *   Where hosts hold several members it would send every member across
     *   the fabric in the later rounds, while the host-ordered tree crosses
     *   only between hosts' first members; measured on 2 simulated hosts
     *   of 2 PEs, the tree took 258 us for 8 B and rd 453 us. Past 256 B
     *   rd's per-round lines would cost too much of the internal area per
     *   team, and the tree pipelines.
     *   Large vectors on a team of two islands go round a ring (ring.c):
     *   after one barrier each member sends half the vector and gets the
     *   other half back reduced (2 steps of a put and a flag), where the
     *   tree's root reads the whole vector back and sends it all down.
     *   Measured over SHMEM_TRANSPORT=ofi at 2 PEs, median of 5
     *   alternating runs: ring 0.23x of the tree at 256 KiB, 0.15x at
     *   1 MiB; at 64 KiB one run gave 0.46x, another 1.4x, so the ring
     *   starts at 256 KiB. At 4 PEs the
     *   tree won (ring 1.4x-4.1x, 3 runs; its 2(n-1) dependent steps to the
     *   tree's 2 log2(n)), so larger teams keep the tree. Both runs on a
     *   loaded 2-core machine (4 PEs oversubscribed it).
     * - fcollect where hosts hold several members and each host's blocks fit
     *   a line (256 B), over at most SHOAL_RD_LINES hosts: hierarchical
     *   (hier_small.c), each leader puts its host's blocks to every other
     *   leader, one fabric step; same setting, 8 B: 115 us against the direct
     *   algorithm's 1106 us (two barriers and n-1 gets in a row).
     * - other fcollects (islands at every size, hosts of several members
     *   past the hierarchical one's line): Bruck's allgather, ceil(log2 n)
     *   rounds of one put and one flag; while ceil(n/2) blocks fit a line
     *   (256 B) through the lines with no barrier, past that into the
     *   dests after one entry barrier. The direct pull costs two barriers
     *   and n-1 gets (each a round trip) in a row (2 namespace hosts x 2
     *   PEs, 512 B to 64 KiB, forced direct against auto, 2 runs: ofi
     *   1.49-2.25 ms against 0.53-1.12, tls 1.53-1.94 against 0.50-1.18).
     * Active sets (pSync) get the tree for reduce only; their broadcast
     *   keeps the barriers (tree.c says why). An active set of every PE
     *   is the world team (api/coll_api.c), so it gets both.
     * collect across hosts (at most 64 members; shoal_coll_collect_by_bruck):
     *   Bruck's rounds (bruck.c), the sizes first, then the blocks; its
     *   direct pull cost two barriers and, for each member, a look-up of
     *   its size and its source and a get, each a round trip (2 PEs over
     *   ofi, 8 B: 191-284 us in 4 runs against 44-47 in 2 with Bruck; 4
     *   PEs on 2 cores, 8 B to 4 KiB, 5.6-6.2 ms against 0.7-1.9 ms; 2
     *   namespace hosts x 2 PEs, 8 B to 64 KiB, 2 runs: ofi 1.9-3.7 ms
     *   against 0.28-1.43, tls 1.7-2.6 against 0.14-1.04). On wider
     *   teams (shoal_coll_collect_by_pairwise): the offsets by two
     *   recursive doublings through the lines, then each member puts its
     *   block into every dest and counts (collect_pairwise.c; 66 PEs on
     *   2 cores over tls, 64 B and 4 KiB, 2 runs: 2.4-3.4 s against
     *   0.69-1.26); forced (collect:pairwise) it also runs fcollect.
     * alltoall across hosts (islands or not: every member has its own
     *   data for each other member, which crosses the fabric either way),
     *   where ceil(n/2) blocks fit a line (256 B): Bruck's rounds
     *   (bruck.c) through the lines, no barrier, against the direct
     *   pull's two barriers and a get per member (8 B to 256 B, 2 PEs over ofi on one host: 144-166 us against
     *   20-29, 3 alternations; over tls 78-119 against 13-14; 4 PEs on 2
     *   cores over ofi, 8 B to 128 B: 2.4-3.5 ms against 0.4-0.6; 2
     *   namespace hosts x 1 over ofi, 8 B: 168-193 us against 26-32).
     *   Larger blocks: pairwise (alltoall.c), one entry barrier and each
     *   block written with its flag (past SHOAL_RD_LINES + 1 members, all
     *   blocks, one fence, then a count per member: 20 PEs on 2 cores,
     *   512 B to 32 KiB, 2 runs, tls 60-74 ms against 20-48, ofi 136-173
     *   against 118-142), against the direct pull's second barrier and
     *   n - 1 gets in a row (same settings, forced alternately: ofi 512 B to
     *   32 KiB 145-166 us against 73-92, 256 KiB 223-249 against 172-181,
     *   1 MiB even; 4 PEs 1 MiB 5.5-7.0 ms against 3.9-4.5; tls 512 B to
     *   4 KiB 178-193 us against 37-41; 2 namespace hosts x 1 over ofi,
     *   4 KiB, 161-180 against 81-87). At 2 namespace hosts x 2 PEs,
     *   forced alternately, 2 runs each: ofi 8 B 1284-1425 us (direct)
     *   against 111-118 (bruck), 4 KiB 1256-1368 against 479-930
     *   (pairwise); tls 8 B 1020-1216 against 67-72, 4 KiB 1248-1331
     *   against 199-234.
     * scan of vectors that fit a line (256 B): recursive doubling through
     *   the lines (scan_rd.c), log2(n) rounds of one put and one flag and
     *   no barrier, against the direct pull's three barriers and a get from
     *   every lower member in a row (2 PEs on one host over ofi, 8-256 B:
     *   118-151 us against 19-30; 2 namespace hosts x 2 PEs over tls:
     *   0.52-0.75 ms against 74-105 us; docs/design.md). In the hypercube
     *   form every member's call needs every member's, which the lines'
     *   reuse relies on.
     *   Larger vectors: passed along the ring order (scan_ring.c), one
     *   entry barrier, then each member's prefix put into the next
     *   member's dest with a flag, in 64 KiB chunks that pipeline, against
     *   the direct pull's three barriers and every lower member's whole
     *   source read by each (n^2/2 vectors across the fabric). Forced
     *   alternately, bench_coll, 512 B to 1 MiB: 2 PEs on one host over ofi
     *   150-182 us -> 87-119 at 512 B, 9.6-10.1 ms -> 1.3-1.7 at 1 MiB; over
     *   tls 135-163 -> 41-56, 8.6-10.8 ms -> 1.0; 2 namespace hosts x 2 PEs
     *   over ofi 746-820 us -> 283-286, 87-96 ms -> 2.4-2.6; over tls
     *   703-797 us -> 125-142, 67-70 ms -> 1.1-1.5 (2 runs each). */
    const int islands = shoal_coll_islands(g);
    switch (kind) {
    case SHOAL_COLL_BARRIER:
        return shoal_coll_hier_useful(g) ? SHOAL_ALGO_HIER : SHOAL_ALGO_DIRECT;
    case SHOAL_COLL_REDUCE:
        if (shoal_coll_rd_fits(g, bytes) && islands) return SHOAL_ALGO_RD;
        if (shoal_coll_hier_reduce_fits(g, bytes)) return SHOAL_ALGO_HIER;
        if (islands && g->size == 2 && shoal_coll_ring_fits(g) && bytes >= RING_MIN_BYTES) return SHOAL_ALGO_RING;
        return shoal_coll_tree_fits(g, kind) ? SHOAL_ALGO_TREE : SHOAL_ALGO_DIRECT;
    case SHOAL_COLL_BROADCAST:
        /* Every team fits the tree: linear is for active sets. */
        return shoal_coll_tree_fits(g, kind) ? SHOAL_ALGO_TREE : SHOAL_ALGO_LINEAR;
    case SHOAL_COLL_ALLTOALL:
        if (!bytes) return SHOAL_ALGO_DIRECT;
        if (shoal_coll_alltoall_bruck_fits(g, bytes)) return SHOAL_ALGO_BRUCK;
        return shoal_coll_alltoall_pairwise_fits(g) ? SHOAL_ALGO_PAIRWISE : SHOAL_ALGO_DIRECT;
    case SHOAL_COLL_SCAN:
        if (shoal_coll_rd_fits(g, bytes)) return SHOAL_ALGO_RD;
        return shoal_coll_ring_fits(g) ? SHOAL_ALGO_RING : SHOAL_ALGO_DIRECT;
    case SHOAL_COLL_COLLECT:
        if (!islands && shoal_coll_hier_fcollect_fits(g, bytes / (size_t)g->size)) return SHOAL_ALGO_HIER;
        return shoal_coll_bruck_fits(g, bytes / (size_t)g->size) ? SHOAL_ALGO_BRUCK : SHOAL_ALGO_DIRECT;
    default:
        return SHOAL_ALGO_DIRECT;
    }
}

int shoal_coll_collect_by_bruck(const struct shoal_group *g)
{
    if (!shoal_coll_collect_bruck_fits(g)) return 0;
    const int chosen = forced[SHOAL_COLL_COLLECT] >= 0 ? forced[SHOAL_COLL_COLLECT] == SHOAL_ALGO_BRUCK
                                                       : !shoal_coll_all_direct(g);
    if (chosen) SHOAL_OBS_ALGO(shoal_coll_algo_name(SHOAL_COLL_COLLECT, SHOAL_ALGO_BRUCK));
    return chosen;
}

int shoal_coll_collect_by_pairwise(const struct shoal_group *g)
{
    if (!shoal_coll_collect_pairwise_fits(g)) return 0;
    const int chosen = forced[SHOAL_COLL_COLLECT] >= 0 ? forced[SHOAL_COLL_COLLECT] == SHOAL_ALGO_PAIRWISE
                                                       : !shoal_coll_all_direct(g) && !shoal_coll_collect_bruck_fits(g);
    if (chosen) SHOAL_OBS_ALGO(shoal_coll_algo_name(SHOAL_COLL_COLLECT, SHOAL_ALGO_PAIRWISE));
    return chosen;
}

enum shoal_coll_algo shoal_coll_choose(enum shoal_coll_kind kind, const struct shoal_group *g, size_t bytes)
{
    enum shoal_coll_algo algo = choose(kind, g, bytes);
    SHOAL_OBS_ALGO(shoal_coll_algo_name(kind, algo)); /* the trace shows what ran */
    return algo;
}
