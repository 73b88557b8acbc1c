/* bruck.c: Bruck's algorithms for fcollect, collect and alltoall, on teams
 * whose members are reached through RMA (alltoall: at the end).
 * fcollect by Bruck's allgather: member i holds blocks i .. i+d-1 (mod n)
 * before round r, d = 2^r; in the round it sends the first min(d, n - d)
 * of them to member i - d and receives as many from member i + d, which
 * are blocks i + d onwards. After ceil(log2 n) rounds of one put and one flag each it
 * holds all n blocks. Any n, no read-back: every wait is on this member's
 * own memory.
 *
 * Small blocks (ceil(n/2) of them fit a line, 256 B) travel through the
 *   tagged lines (lines.h): the member keeps its blocks in rotated order
 *   (block (i + k) mod n at position k), receives round r's into line r
 *   and unrotates them into its dest at the end. No barrier: each member
 *   reads only its own source and writes only its own dest. Round r's line
 *   of member i has one writer, member i + 2^r; every member's result needs
 *   every member's block (each block leaves its owner only once the owner
 *   is in the call), which is what lines.h needs for reuse.
 * Larger blocks go straight into the receiver's dest at their final place
 *   (the blocks sent are contiguous there but for one wrap), so an entry
 *   barrier first makes every dest free; line r's tag still says round r's
 *   data are there. No exit barrier: a member returns once its own dest is
 *   complete, having read only its own source and dest, and its puts were
 *   delivered before their flags. */
#include <string.h>

#include "coll/coll.h"
#include "coll/lines.h"

/* The most this member holds: n blocks with ceil(n/2) of them fitting a
 * line, so at most twice a line. */
#define BRUCK_HELD (2 * SHOAL_RD_BYTES)

int shoal_coll_bruck_fits(const struct shoal_group *g, size_t bytes)
{
    return bytes && shoal_coll_lines_fit(g, 0);
}

static int in_lines(const struct shoal_group *g, size_t bytes)
{
    const size_t half = ((size_t)g->size + 1) / 2;
    return bytes <= SHOAL_RD_BYTES && shoal_coll_lines_fit(g, bytes * half);
}

/* Where member r's block starts in dest: at[r], or r blocks of bytes. */
static size_t place(const size_t *at, size_t bytes, int r) { return at ? at[r] : (size_t)r * bytes; }

/* Bruck's rounds straight into the dests (every dest free, this member's
 * own block in place in out): one line call, a put and a flag per round. */
static shoal_status_t rounds_into_dests(struct shoal_group *g, struct shoal_coll_buf dest, char *out, const size_t *at,
                                        size_t bytes)
{
    const int n = g->size, me = g->rank;
    int p;
    const uint64_t tag = shoal_coll_lines_begin(g, &p);
    shoal_status_t st = SHOAL_OK;
    for (int r = 0, d = 1; d < n; r++, d <<= 1) {
        const int to = (me - d + n) % n, count = d < n - d ? d : n - d;
        const int head = me + count <= n ? count : n - me; /* blocks me .. before the wrap */
        const size_t from = place(at, bytes, me);
        shoal_status_t s = shoal_coll_put(g, dest, to, from, out + from, place(at, bytes, me + head) - from);
        if (s == SHOAL_OK && count > head) s = shoal_coll_put(g, dest, to, 0, out, place(at, bytes, count - head));
        if (st == SHOAL_OK) st = s;
        /* A full fence: a large memcpy into a direct member may use
         * non-temporal stores, which the flag's release store alone does
         * not order. */
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        s = shoal_coll_line_send(g, to, p, r, tag, NULL, 0);
        if (st == SHOAL_OK) st = s;
        (void)shoal_coll_line_receive(g, p, r, tag, 0);
    }
    return st;
}

static shoal_status_t bruck_into_dests(struct shoal_group *g, struct shoal_coll_buf dest, struct shoal_coll_buf src,
                                       size_t bytes)
{
    const int me = g->rank;
    char *out = shoal_coll_at(g, dest, me, 0);
    const char *in = shoal_coll_at(g, src, me, 0);
    if (in != out + (size_t)me * bytes) memcpy(out + (size_t)me * bytes, in, bytes);
    shoal_coll_barrier(g);
    return rounds_into_dests(g, dest, out, NULL, bytes);
}

/* One line call of Bruck's rounds on held, which starts with this
 * member's block of bytes and ends with every member's, rotated (block of
 * member (me + k) mod n at position k). */
static shoal_status_t bruck_in_lines(struct shoal_group *g, unsigned char *held, size_t bytes)
{
    const int n = g->size, me = g->rank;
    int p;
    const uint64_t tag = shoal_coll_lines_begin(g, &p);
    shoal_status_t st = SHOAL_OK;
    for (int r = 0, d = 1; d < n; r++, d <<= 1) {
        const size_t len = (size_t)(d < n - d ? d : n - d) * bytes;
        shoal_status_t s = shoal_coll_line_send(g, (me - d + n) % n, p, r, tag, held, len);
        if (st == SHOAL_OK) st = s;
        memcpy(held + (size_t)d * bytes, shoal_coll_line_receive(g, p, r, tag, len), len);
    }
    return st;
}

shoal_status_t shoal_coll_fcollect_bruck(struct shoal_group *g, struct shoal_coll_buf dest, struct shoal_coll_buf src,
                                         size_t bytes)
{
    if (!in_lines(g, bytes)) return bruck_into_dests(g, dest, src, bytes);
    const int n = g->size, me = g->rank;
    _Alignas(64) unsigned char held[BRUCK_HELD];
    memcpy(held, shoal_coll_at(g, src, me, 0), bytes);
    shoal_status_t st = bruck_in_lines(g, held, bytes);
    char *out = shoal_coll_at(g, dest, me, 0);
    const size_t head = (size_t)(n - me) * bytes; /* blocks me .. n-1 */
    memcpy(out + (size_t)me * bytes, held, head);
    memcpy(out, held + head, (size_t)me * bytes);
    return st;
}

/* collect (blocks of any size, each member its own) on the same teams, up
 * to SHOAL_BRUCK_COLLECT_MEMBERS members: first the sizes, one 8-byte
 * block each through the lines, so every member knows every block's place
 * in dest; then the blocks, padded to the largest, through the lines where
 * they fit, else straight into the dests like bruck_into_dests, without its
 * entry barrier: every member's size came, so every member is in the call
 * and every dest free. Two line calls of log2(n) rounds, where the direct
 * pull costs two barriers, a look-up of every member's size and source and
 * a get of its block, each a round trip (algo.c has the figures). */
int shoal_coll_collect_bruck_fits(const struct shoal_group *g)
{
    return g->size <= SHOAL_BRUCK_COLLECT_MEMBERS && shoal_coll_bruck_fits(g, 1) && in_lines(g, sizeof(uint64_t));
}

shoal_status_t shoal_coll_collect_bruck(struct shoal_group *g, struct shoal_coll_buf dest, struct shoal_coll_buf src,
                                        size_t bytes)
{
    const int n = g->size, me = g->rank;
    _Alignas(64) unsigned char held[BRUCK_HELD];
    uint64_t mine = bytes;
    memcpy(held, &mine, sizeof mine);
    shoal_status_t st = bruck_in_lines(g, held, sizeof mine);
    size_t at[SHOAL_BRUCK_COLLECT_MEMBERS + 1], largest = 0;
    at[0] = 0;
    for (int r = 0; r < n; r++) {
        uint64_t len;
        memcpy(&len, held + (size_t)((r - me + n) % n) * sizeof len, sizeof len);
        at[r + 1] = at[r] + len;
        if (len > largest) largest = len;
    }
    /* Every member sees the same sizes, so all of them fail together. */
    if (at[n] > shoal_rt.seg_size[dest.seg] - dest.off) return SHOAL_ERR_RANGE;
    if (st != SHOAL_OK || !at[n]) return st;
    char *out = shoal_coll_at(g, dest, me, 0);
    const char *in = shoal_coll_at(g, src, me, 0);
    if (in_lines(g, largest)) {
        memcpy(held, in, bytes);
        st = bruck_in_lines(g, held, largest);
        for (int k = 0; k < n; k++) {
            const int r = (me + k) % n;
            memcpy(out + at[r], held + (size_t)k * largest, at[r + 1] - at[r]);
        }
        return st;
    }
    if (in != out + at[me]) memmove(out + at[me], in, bytes);
    return rounds_into_dests(g, dest, out, at, 0);
}

/* alltoall by Bruck's algorithm, on teams that span hosts (islands or
 * not, algo.c says why) where ceil(n/2) blocks fit a line. Member i
 * holds, at position k, the block bound for member i + k (mod n). In the
 * round of distance d it sends the blocks at the positions with bit d set
 * to member i + d, and takes the same positions from member i - d: a block moves by the sum of the bits of its position,
 * which is how far it had to go. After ceil(log2 n) rounds position k
 * holds member i - k's block for i. At most ceil(n/2) blocks move per
 * round, through the lines, with no barrier: each member reads only its
 * own source and writes only its own dest, and every member's result needs
 * every member's blocks (lines.h). The direct pull costs two barriers and
 * a get per member, each a round trip (algo.c has the figures). */
int shoal_coll_alltoall_bruck_fits(const struct shoal_group *g, size_t block)
{
    return block && in_lines(g, block);
}

shoal_status_t shoal_coll_alltoall_bruck(struct shoal_group *g, struct shoal_coll_buf dest, struct shoal_coll_buf src,
                                         ptrdiff_t dst, ptrdiff_t sst, size_t nelems, size_t elem)
{
    const int n = g->size, me = g->rank;
    const size_t block = nelems * elem, sstep = (size_t)sst * elem, dstep = (size_t)dst * elem;
    _Alignas(64) unsigned char held[BRUCK_HELD], line[SHOAL_RD_BYTES];
    const char *in = shoal_coll_at(g, src, me, 0);
    for (int k = 0; k < n; k++)
        shoal_coll_copy_elems(held + (size_t)k * block, elem, in + (size_t)((me + k) % n) * nelems * sstep, sstep,
                              nelems, elem);
    int p;
    const uint64_t tag = shoal_coll_lines_begin(g, &p);
    shoal_status_t st = SHOAL_OK;
    for (int r = 0, d = 1; d < n; r++, d <<= 1) {
        size_t len = 0;
        for (int k = d; k < n; k++) {
            if (!(k & d)) continue;
            memcpy(line + len, held + (size_t)k * block, block);
            len += block;
        }
        shoal_status_t s = shoal_coll_line_send(g, (me + d) % n, p, r, tag, line, len);
        if (st == SHOAL_OK) st = s;
        const unsigned char *got = shoal_coll_line_receive(g, p, r, tag, len);
        len = 0;
        for (int k = d; k < n; k++) {
            if (!(k & d)) continue;
            memcpy(held + (size_t)k * block, got + len, block);
            len += block;
        }
    }
    char *out = shoal_coll_at(g, dest, me, 0);
    for (int j = 0; j < n; j++)
        shoal_coll_copy_elems(out + (size_t)j * nelems * dstep, dstep, held + (size_t)((me - j + n) % n) * block, elem,
                              nelems, elem);
    return st;
}
