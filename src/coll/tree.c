/* tree.c: broadcast and all-reduce over a binomial tree, for teams whose
 * members are reached through RMA (other hosts, or SHMEM_TRANSPORT=ofi).
 *
 * Members are placed in host order (hosts.h) and the tree is the binomial
 * tree of those positions counted from the root's: position v (relative)
 * has parent v - lowbit(v) and children v + 2^k for 2^k < lowbit(v). In
 * host order a host's members are contiguous, so most edges stay on a host
 * and the long ones join hosts (exactly one edge per host when hosts hold
 * equal powers of two and the root is a host's first member).
 *
 * broadcast: each member tells its parent it has entered (UP word), the
 *   parent puts each chunk of the data into the child's dest and then
 *   raises the child's word for it (a team's CHUNK words, an active set's
 *   DOWN word); a child forwards each chunk as it arrives (pipelined: a
 *   large vector costs a member about one send of it per child, and the
 *   last member waits log2(n) chunks behind). The
 *   root's child at distance 1 forwards nothing, so it gets the whole
 *   vector in one put, after the other children's chunks.
 * reduce: up the tree, each member combines its source with its
 *   children's partial results chunk by chunk in its own dest (it reads a
 *   child's dest once the child's UP word says that chunk is final there),
 *   and tells its parent; the root then holds the result, which goes down
 *   the tree as in broadcast. The result is computed once, at the root, so
 *   every member gets the same bits.
 *
 * Words: UP + k on a member is written only by the member 2^k positions
 * after it, DOWN + k only by the one 2^k positions before it, whatever the
 * root, so every word has one writer. Writers store (call tag << 24) |
 * chunks done, the call tag being the team's epoch (shared with the
 * barriers, raised alike on every member by every call): values only grow,
 * so a word never needs resetting and a signal of a later call satisfies
 * any wait of an earlier one on the same word.
 * Flags: a word written once in a call is a flag (word.h), its data ahead
 * of it, and its owner waits for its exact value: a broadcast's UP words; a
 * team's broadcast, whose parent flags chunk c in the child's word CHUNK +
 * c (at most SHOAL_COLL_TREE_CHUNKS chunks, so larger ones past that), the
 * root's child at distance 1 getting the whole vector on the last chunk's
 * word; a reduction of one chunk. Such a word's writer writes it again only
 * in a later call, and gets there only after the owner saw the value: a
 * parent writes DOWN or CHUNK once the child said it entered, and a child
 * leaves a call, to write UP in the next, only after its parent's last
 * write, which follows the parent's wait for UP. Over a fabric that keeps
 * writes in order, a flag and its data are writes the target need not
 * answer, where a put waited for the target's answer and a fence before
 * each signal for it again (2 PEs over ofi, 8 B to 32 KiB: 81-121 -> 39-66
 * us; docs/design.md). A reduction's chunked words keep atomic signals and
 * waits for at least the value: a writer may be chunks ahead of the
 * owner's wait on the same word.
 *
 * The coll.h invariant without barriers: a member's dest is written by
 * another member only after the owner said it entered this call (UP), and
 * read by its parent only after the owner said the chunk is final there;
 * sources are read only by their owner, so they may sit at different
 * offsets and be reused on return. A member returns once its parent has
 * written its last chunk (DOWN) and its own puts to its children are done
 * with its buffers, and no other member touches its dest after that: the
 * parent read it before writing the result into it, the children only
 * receive. Back-to-back calls are therefore safe, in place too (a member
 * combines into its own dest, which is its source, chunk by chunk, after
 * reading that chunk of the source).
 *
 * Active sets (counting mode, user pSync) run the same steps with counted
 * signals instead of tagged ones: each word gets exactly the signals its
 * owner consumes in the call, so pSync is back at zero on return. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "coll/hosts.h"
#include "coll/peer.h"
#include "core/internal.h"
#include "core/runtime.h"
#include "sync/backoff.h"
#include "sync/word.h"

_Static_assert(SHOAL_COLL_AUX_UP + SHOAL_COLL_TREE_LEVELS <= SHOAL_SYNC_AUX, "tree words must fit a team slot");
_Static_assert((int)SHOAL_COLL_AUX_DOWN + SHOAL_COLL_TREE_LEVELS <= (int)SHOAL_COLL_AUX_UP, "tree words overlap");
_Static_assert((int)SHOAL_COLL_AUX_DOWN >= (int)SHOAL_COLL_AUX_DEBUG_END, "tree words overlap the debug records");
_Static_assert(SHOAL_COLL_SET_TREE_LEVELS <= SHOAL_GROUP_SET_ROUNDS, "UP words must fit a pSync's rounds");
_Static_assert((int)SHOAL_COLL_AUX_CHUNK > (int)SHOAL_COLL_AUX_RING &&
                   (int)SHOAL_COLL_AUX_CHUNK + SHOAL_COLL_TREE_CHUNKS <= (int)SHOAL_COLL_AUX_DEBUG,
               "chunk words overlap");

int shoal_coll_tree_fits(const struct shoal_group *g, enum shoal_coll_kind kind)
{
    if (kind != SHOAL_COLL_BROADCAST && kind != SHOAL_COLL_REDUCE) return 0; /* the tree's only forms */
    if (g->epoch) return 1;
    /* An active set's broadcast keeps off the tree (broadcast.c pushes it
     * after a barrier instead): with counted signals and a tree that moves
     * with the root, a member two calls ahead (the user alternating two
     * pSyncs) could signal one still in the call before. The reduction's tree is fixed and every member enters it
     * before any leaves, so neighbours are never more than a call apart. */
    return kind == SHOAL_COLL_REDUCE && g->size <= 1 << SHOAL_COLL_SET_TREE_LEVELS;
}

/* When each chunk paid a put, a fence and an atomic signal per edge, 64
 * KiB chunks made a 1 MiB broadcast over loopback TCP at 4 PEs 2.6x slower
 * than the direct pull and 256 KiB ones a little faster. Larger vectors
 * still pipeline. */
#define TREE_CHUNK ((size_t)256 * 1024)
#define TAG_SHIFT 24

struct tree {
    const struct shoal_group *g;
    struct shoal_coll_hosts h;
    long v;      /* this member's position relative to the root's */
    long low;    /* lowest set bit of v; past n for the root */
    int parent;  /* group rank, -1 for the root */
    int level;   /* log2(low): the index of this member's words its parent writes */
    uint64_t base;
};

static shoal_status_t tree_init(struct tree *t, const struct shoal_group *g, int root_rank, uint64_t tag)
{
    t->g = g;
    shoal_status_t st = shoal_coll_hosts_init(&t->h, g);
    if (st != SHOAL_OK) return st;
    const long n = g->size, root = shoal_coll_hosts_pos(&t->h, root_rank);
    t->v = ((long)t->h.pos - root + n) % n;
    t->low = 1;
    t->level = 0;
    if (t->v) {
        while (!(t->v & t->low)) t->low <<= 1, t->level++;
        t->parent = t->h.order[((long)t->h.pos - t->low + n) % n];
    } else {
        while (t->low < n) t->low <<= 1;
        t->parent = -1;
    }
    t->base = tag << TAG_SHIFT;
    return SHOAL_OK;
}

/* The child at distance 2^k, or -1 when there is none. */
static int child_of(const struct tree *t, int k)
{
    const long d = 1l << k, n = t->g->size;
    if (d >= t->low || t->v + d >= n) return -1;
    return t->h.order[((long)t->h.pos + d) % n];
}

static int levels(const struct tree *t)
{
    int k = 0;
    while (k < SHOAL_COLL_TREE_LEVELS && (1l << k) < t->low && t->v + (1l << k) < t->g->size) k++;
    return k;
}

/* Where the words live: a team's in its aux words; an active set's in its
 * pSync, UP in the round words (no barrier runs inside these calls) and
 * DOWN in aux words. */
static size_t up_word(const struct shoal_group *g, int k)
{
    if (g->epoch) return g->aux_offset + (SHOAL_COLL_AUX_UP + (size_t)k) * sizeof(uint64_t);
    return g->sync_offset + (size_t)k * g->round_stride;
}

static size_t down_word(const struct shoal_group *g, int k)
{
    return g->aux_offset + ((g->epoch ? SHOAL_COLL_AUX_DOWN : SHOAL_COLL_AUX_SET_DOWN) + (size_t)k) * sizeof(uint64_t);
}

/* Epoch mode stores the value (once: as a flag); counting mode (pSync)
 * adds one signal per value, and the owner takes each back as it consumes
 * it, so every word is back at zero when its owner returns. The full fence
 * first: a large memcpy into a direct member may use non-temporal stores,
 * which a release store alone does not order. */
static void signal_word(const struct shoal_group *g, int rank, size_t word, uint64_t value, int once)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (g->epoch && once)
        shoal_word_flag_fenced(g->seg, 0, NULL, 0, g->seg, word, shoal_group_pe(g, rank), value, NULL);
    else if (g->epoch)
        shoal_word_signal(g->seg, word, shoal_group_pe(g, rank), SHOAL_AMO_SET, value);
    else
        shoal_word_add(g->seg, word, shoal_group_pe(g, rank), 1);
}

/* once: the word is a flag of this call, which holds exactly value. */
static void await_own(const struct shoal_group *g, size_t word, uint64_t value, int once)
{
    const int pe = shoal_group_pe(g, g->rank);
    const uint64_t *w = shoal_route_direct(g->seg, word, pe);
    struct shoal_backoff b = {0};
    if (!g->epoch) value = 1;
    if (g->epoch && once)
        SHOAL_BACKOFF_WHILE(&b, __atomic_load_n(w, __ATOMIC_ACQUIRE) != value);
    else
        SHOAL_BACKOFF_WHILE(&b, __atomic_load_n(w, __ATOMIC_ACQUIRE) < value);
    if (!g->epoch) shoal_word_add(g->seg, word, pe, (uint64_t)-1);
}

static size_t chunk_word(const struct shoal_group *g, size_t c)
{
    return g->aux_offset + (SHOAL_COLL_AUX_CHUNK + c) * sizeof(uint64_t);
}

/* Bytes per chunk: whole elements, and few enough chunks for the count to
 * fit below the tag (a team's broadcast: for its chunk words). */
static size_t chunk_size(size_t bytes, size_t es, size_t most)
{
    size_t chunk = TREE_CHUNK / es * es;
    while ((bytes + chunk - 1) / chunk > most) chunk *= 2;
    return chunk;
}

/* How push_down raises a child's word: an atomic signal of its DOWN word,
 * or a flag behind the data, in its DOWN word (the call's only write of
 * it) or in its word for chunk c. */
enum push { PUSH_SIGNAL, PUSH_FLAG_DOWN, PUSH_FLAG_CHUNK };

/* Sends [off, off+len) of from to the children at distances 2^lo ..
 * 2^(nk-1), the largest subtree first, and raises their words to chunk
 * count c + 1; with await_entry, what starts at offset 0 only once the
 * child said it entered. */
static shoal_status_t push_down(const struct tree *t, int lo, int nk, struct shoal_coll_buf dest, const char *from,
                                size_t c, size_t off, size_t len, int await_entry, enum push how)
{
    const struct shoal_group *g = t->g;
    shoal_status_t st = SHOAL_OK;
    for (int k = nk - 1; k >= lo; k--) {
        const int child = child_of(t, k);
        if (off == 0 && await_entry) await_own(g, up_word(g, k), t->base, 1);
        if (g->epoch && how != PUSH_SIGNAL) {
            const struct shoal_coll_buf to = shoal_coll_member(g, dest, child);
            const size_t word = how == PUSH_FLAG_CHUNK ? chunk_word(g, c) : down_word(g, k);
            shoal_status_t s = shoal_word_flag_fenced(to.seg, to.off + off, from + off, len, g->seg, word,
                                                      shoal_group_pe(g, child), t->base | (c + 1), NULL);
            if (st == SHOAL_OK) st = s;
            continue;
        }
        shoal_status_t s = shoal_coll_put(g, dest, child, off, from + off, len);
        if (st == SHOAL_OK) st = s;
        signal_word(g, child, down_word(g, k), t->base | (c + 1), 0);
    }
    return st;
}

shoal_status_t shoal_coll_broadcast_tree(struct shoal_group *g, struct shoal_coll_buf dest, struct shoal_coll_buf src,
                                         size_t bytes, int root, int update_root)
{
    const uint64_t tag = g->epoch ? ++*g->epoch : 0;
    const int me = g->rank;
    char *mine = shoal_coll_at(g, dest, me, 0);
    const char *from = me == root ? shoal_coll_at(g, src, me, 0) : mine;
    if (me == root && update_root && bytes && mine != from) memmove(mine, from, bytes);
    if (g->size == 1 || !bytes) return SHOAL_OK;
    struct tree t;
    shoal_status_t st = tree_init(&t, g, root, tag);
    if (st != SHOAL_OK) shoal_runtime_abort(1, "out of memory in a broadcast");
    const int nk = levels(&t);
    if (t.parent >= 0) signal_word(g, t.parent, up_word(g, t.level), t.base, 1);
    const size_t most = g->epoch ? SHOAL_COLL_TREE_CHUNKS : ((size_t)1 << TAG_SHIFT) - 1;
    const size_t chunk = chunk_size(bytes, 1, most), chunks = (bytes + chunk - 1) / chunk;
    const enum push how = g->epoch ? PUSH_FLAG_CHUNK : PUSH_SIGNAL;
    /* The root holds the whole vector from the start, and its child at
     * distance 1 forwards nothing: there chunks only cost a wait each.
     * That child gets the whole vector in one flag, last as before, in the
     * last chunk's word. */
    const int whole = g->epoch && t.parent < 0 && nk > 0 && chunks > 1;
    const int whole_child = g->epoch && t.v == 1;
    for (size_t c = 0, off = 0; off < bytes; c++, off += chunk) {
        const size_t len = bytes - off < chunk ? bytes - off : chunk;
        if (t.parent >= 0 && !g->epoch)
            await_own(g, down_word(g, t.level), 0, 0);
        else if (t.parent >= 0 && (!whole_child || c == 0)) {
            const size_t awaited = whole_child ? chunks - 1 : c;
            await_own(g, chunk_word(g, awaited), t.base | (awaited + 1), 1);
        }
        shoal_status_t s = push_down(&t, whole, nk, dest, from, c, off, len, 1, how);
        if (st == SHOAL_OK) st = s;
    }
    if (whole) {
        shoal_status_t s = push_down(&t, 0, 1, dest, from, chunks - 1, 0, bytes, 1, PUSH_FLAG_CHUNK);
        if (st == SHOAL_OK) st = s;
    }
    shoal_coll_hosts_fini(&t.h);
    return st;
}

/* mine[0, len) op= the child's dest at off, in pieces of the scratch. */
static shoal_status_t combine_child(const struct tree *t, struct shoal_coll_buf dest, int child, size_t off,
                                   size_t len, size_t es, shoal_coll_combine_fn combine, char *mine,
                                   unsigned char *scratch, size_t cap)
{
    const char *p = shoal_coll_at(t->g, dest, child, off);
    if (p) {
        combine(mine, p, len / es);
        return SHOAL_OK;
    }
    for (size_t at = 0; at < len; at += cap) {
        const size_t piece = len - at < cap ? len - at : cap;
        shoal_status_t st = shoal_coll_get(t->g, scratch, dest, child, off + at, piece);
        if (st != SHOAL_OK) return st;
        combine(mine + at, scratch, piece / es);
    }
    return SHOAL_OK;
}

shoal_status_t shoal_coll_reduce_tree(struct shoal_group *g, struct shoal_coll_buf dest, struct shoal_coll_buf src,
                                      size_t nelems, size_t es, shoal_coll_combine_fn combine)
{
    const uint64_t tag = g->epoch ? ++*g->epoch : 0;
    const size_t bytes = nelems * es;
    char *mine = shoal_coll_at(g, dest, g->rank, 0);
    const char *own = shoal_coll_at(g, src, g->rank, 0);
    if (g->size == 1 || !bytes) {
        if (bytes && mine != own) memmove(mine, own, bytes);
        return SHOAL_OK;
    }
    struct tree t;
    shoal_status_t st = tree_init(&t, g, 0, tag);
    if (st != SHOAL_OK) shoal_runtime_abort(1, "out of memory in a reduction");
    const int nk = levels(&t);
    const size_t chunk = chunk_size(bytes, es, ((size_t)1 << TAG_SHIFT) - 1);
    const int once = bytes <= chunk; /* one write of each word */
    /* Pieces of a child's chunk travel through scratch: a whole chunk when
     * the heap allows, else the stack's smaller buffer. */
    _Alignas(64) unsigned char small[SHOAL_COLL_CHUNK];
    unsigned char *heap = nk ? malloc(chunk) : NULL, *scratch = heap ? heap : small;
    const size_t cap = heap ? chunk : SHOAL_COLL_CHUNK / es * es;
    for (size_t c = 0, off = 0; off < bytes; c++, off += chunk) {
        const size_t len = bytes - off < chunk ? bytes - off : chunk;
        if (mine != own) memmove(mine + off, own + off, len);
        for (int k = 0; k < nk; k++) {
            await_own(g, up_word(g, k), t.base | (c + 1), once);
            shoal_status_t s = combine_child(&t, dest, child_of(&t, k), off, len, es, combine, mine + off, scratch, cap);
            if (st == SHOAL_OK) st = s;
        }
        if (t.parent >= 0) signal_word(g, t.parent, up_word(g, t.level), t.base | (c + 1), once);
    }
    for (size_t c = 0, off = 0; off < bytes; c++, off += chunk) {
        const size_t len = bytes - off < chunk ? bytes - off : chunk;
        if (t.parent >= 0) await_own(g, down_word(g, t.level), t.base | (c + 1), once);
        shoal_status_t s = push_down(&t, 0, nk, dest, mine, c, off, len, 0, once ? PUSH_FLAG_DOWN : PUSH_SIGNAL);
        if (st == SHOAL_OK) st = s;
    }
    free(heap);
    shoal_coll_hosts_fini(&t.h);
    return st;
}
