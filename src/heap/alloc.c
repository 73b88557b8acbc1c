/* alloc.c: deterministic address-ordered first-fit allocator over [0, size).
 *
 * Invariants (shoal_alloc_check verifies all of them):
 *  - [0, size) is partitioned exactly into free blocks and live blocks; every
 *    block starts at a multiple of SHOAL_ALLOC_GRANULE and its size is a
 *    non-zero multiple of it. size itself is a granule multiple.
 *  - Free blocks are coalesced: no two are adjacent. They sit in a treap
 *    keyed by offset (each node also holds the largest size in its subtree,
 *    for first-fit search in O(log n)) and in a doubly linked list in the
 *    same address order (neighbours for coalescing, walks).
 *  - Live blocks are in an open-addressing hash table (offset -> size), so
 *    free and resize find them in O(1) and reject offsets never returned.
 *  - Placement depends only on the sequence of calls: an allocation takes
 *    the lowest-addressed free block that fits at the requested alignment,
 *    at the lowest aligned offset in it. Tree shape, hash layout and
 *    priorities never influence an offset, so PEs agree.
 *  - All bookkeeping is private malloc memory, never inside the heap. Every
 *    private allocation a call may need is made before the state changes,
 *    so a failing call leaves the allocator as it was. */
#include "heap/alloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"

#define G ((size_t)SHOAL_ALLOC_GRANULE)
#define EMPTY SIZE_MAX /* free hash slot; never a valid (granule) offset */
#define NONE SIZE_MAX
#define POOL_CHUNK 256

struct fnode {
    size_t off, size;
    size_t max; /* largest size in this subtree */
    uint32_t prio;
    struct fnode *left, *right; /* treap by off */
    struct fnode *prev, *next;  /* address order */
};

struct pool_chunk {
    struct pool_chunk *next;
    struct fnode nodes[POOL_CHUNK];
};

struct live_slot {
    size_t off; /* EMPTY if unused */
    size_t size;
};

struct shoal_alloc {
    size_t size;
    size_t free_bytes;
    size_t n_free, n_live;
    struct fnode *root, *head;
    struct fnode *spare; /* unused nodes, linked through next */
    struct pool_chunk *chunks;
    uint64_t rng;
    struct live_slot *slots;
    size_t cap; /* power of two */
    unsigned shift;
};

/* ---- node pool ---- */

static int node_reserve(shoal_alloc_t *a)
{
    if (a->spare) return 0;
    struct pool_chunk *c = malloc(sizeof *c);
    if (!c) return -1;
    c->next = a->chunks;
    a->chunks = c;
    for (size_t i = 0; i < POOL_CHUNK; i++) {
        c->nodes[i].next = a->spare;
        a->spare = &c->nodes[i];
    }
    return 0;
}

static struct fnode *node_get(shoal_alloc_t *a, size_t off, size_t size)
{
    struct fnode *n = a->spare; /* node_reserve ran first */
    a->spare = n->next;
    memset(n, 0, sizeof *n);
    n->off = off;
    n->size = n->max = size;
    /* xorshift: priorities only balance the tree, never choose offsets */
    a->rng ^= a->rng << 13;
    a->rng ^= a->rng >> 7;
    a->rng ^= a->rng << 17;
    n->prio = (uint32_t)(a->rng >> 32);
    return n;
}

static void node_put(shoal_alloc_t *a, struct fnode *n)
{
    n->next = a->spare;
    a->spare = n;
}

/* ---- treap keyed by offset, augmented with subtree max size ---- */

static size_t nmax(const struct fnode *n) { return n ? n->max : 0; }

static void pull(struct fnode *n)
{
    size_t m = n->size;
    if (nmax(n->left) > m) m = n->left->max;
    if (nmax(n->right) > m) m = n->right->max;
    n->max = m;
}

static struct fnode *rot_right(struct fnode *n)
{
    struct fnode *l = n->left;
    n->left = l->right;
    l->right = n;
    pull(n);
    pull(l);
    return l;
}

static struct fnode *rot_left(struct fnode *n)
{
    struct fnode *r = n->right;
    n->right = r->left;
    r->left = n;
    pull(n);
    pull(r);
    return r;
}

static struct fnode *t_insert(struct fnode *t, struct fnode *x)
{
    if (!t) return x;
    if (x->off < t->off) {
        t->left = t_insert(t->left, x);
        if (t->left->prio > t->prio) return rot_right(t);
    } else {
        t->right = t_insert(t->right, x);
        if (t->right->prio > t->prio) return rot_left(t);
    }
    pull(t);
    return t;
}

static struct fnode *t_merge(struct fnode *l, struct fnode *r)
{
    if (!l) return r;
    if (!r) return l;
    if (l->prio > r->prio) {
        l->right = t_merge(l->right, r);
        pull(l);
        return l;
    }
    r->left = t_merge(l, r->left);
    pull(r);
    return r;
}

static struct fnode *t_erase(struct fnode *t, size_t off)
{
    if (t->off == off) return t_merge(t->left, t->right);
    if (off < t->off) t->left = t_erase(t->left, off);
    else t->right = t_erase(t->right, off);
    pull(t);
    return t;
}

/* Recomputes max on the path to the node keyed off, after its size (or its
 * key, within its neighbours) changed. */
static void t_refresh(struct fnode *t, size_t off)
{
    if (!t) return;
    if (off < t->off) t_refresh(t->left, off);
    else if (off > t->off) t_refresh(t->right, off);
    pull(t);
}

/* The free block with the largest offset below off, or NULL. */
static struct fnode *t_pred(struct fnode *t, size_t off)
{
    struct fnode *best = NULL;
    while (t) {
        if (t->off < off) {
            best = t;
            t = t->right;
        } else {
            t = t->left;
        }
    }
    return best;
}

static size_t pad_for(size_t off, size_t align) { return (align - (off & (align - 1))) & (align - 1); }

static int fits(const struct fnode *n, size_t need, size_t align)
{
    size_t pad = pad_for(n->off, align);
    return pad <= n->size && n->size - pad >= need;
}

/* Lowest-addressed block that fits. Subtrees whose max is too small are
 * skipped, so at granule alignment this is one root-to-leaf path. */
static struct fnode *t_first_fit(struct fnode *t, size_t need, size_t align)
{
    if (!t || t->max < need) return NULL;
    struct fnode *r = t_first_fit(t->left, need, align);
    if (r) return r;
    if (fits(t, need, align)) return t;
    return t_first_fit(t->right, need, align);
}

static void list_insert_after(shoal_alloc_t *a, struct fnode *p, struct fnode *n)
{
    n->prev = p;
    n->next = p ? p->next : a->head;
    if (n->next) n->next->prev = n;
    if (p) p->next = n;
    else a->head = n;
}

static void list_remove(shoal_alloc_t *a, struct fnode *n)
{
    if (n->prev) n->prev->next = n->next;
    else a->head = n->next;
    if (n->next) n->next->prev = n->prev;
}

static void remove_free_node(shoal_alloc_t *a, struct fnode *n)
{
    a->root = t_erase(a->root, n->off);
    list_remove(a, n);
    node_put(a, n);
    a->n_free--;
}

/* ---- live blocks: open addressing, linear probing ---- */

static size_t home(const shoal_alloc_t *a, size_t off)
{
    return (size_t)(((uint64_t)(off / G) * 0x9E3779B97F4A7C15ull) >> a->shift);
}

static size_t live_find(const shoal_alloc_t *a, size_t off)
{
    if (off % G) return NONE;
    for (size_t i = home(a, off);; i = (i + 1) & (a->cap - 1)) {
        if (a->slots[i].off == off) return i;
        if (a->slots[i].off == EMPTY) return NONE;
    }
}

static void live_put(shoal_alloc_t *a, size_t off, size_t size)
{
    size_t i = home(a, off);
    while (a->slots[i].off != EMPTY) i = (i + 1) & (a->cap - 1);
    a->slots[i].off = off;
    a->slots[i].size = size;
}

static int live_resize(shoal_alloc_t *a, size_t cap)
{
    struct live_slot *old = a->slots;
    size_t old_cap = a->cap;
    struct live_slot *s = malloc(cap * sizeof *s);
    if (!s) return -1;
    for (size_t i = 0; i < cap; i++) s[i].off = EMPTY;
    unsigned bits = 0;
    while (((size_t)1 << bits) < cap) bits++;
    a->slots = s;
    a->cap = cap;
    a->shift = 64 - bits;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].off != EMPTY) live_put(a, old[i].off, old[i].size);
    free(old);
    return 0;
}

/* Keeps the load at or below one half after one more insertion. */
static int live_reserve(shoal_alloc_t *a)
{
    if ((a->n_live + 1) * 2 <= a->cap) return 0;
    return live_resize(a, a->cap * 2);
}

static void live_remove(shoal_alloc_t *a, size_t i)
{
    size_t mask = a->cap - 1;
    for (;;) {
        size_t j = i;
        for (;;) {
            j = (j + 1) & mask;
            if (a->slots[j].off == EMPTY) {
                a->slots[i].off = EMPTY;
                return;
            }
            size_t k = home(a, a->slots[j].off);
            /* The entry at j may fill the hole at i unless its home lies
             * cyclically in (i, j]. */
            if (i <= j ? (i < k && k <= j) : (i < k || k <= j)) continue;
            break;
        }
        a->slots[i] = a->slots[j];
        i = j;
    }
}

/* ---- public operations ---- */

shoal_status_t shoal_alloc_create(size_t size, shoal_alloc_t **out)
{
    size &= ~(G - 1);
    if (size == 0) {
        shoal_error("heap", "symmetric heap must hold at least %zu bytes", G);
        return SHOAL_ERR_INVAL;
    }
    shoal_alloc_t *a = calloc(1, sizeof *a);
    if (!a) return SHOAL_ERR_NOMEM;
    a->size = size;
    a->rng = 0x2545F4914F6CDD1Dull;
    if (live_resize(a, 64) != 0 || node_reserve(a) != 0) {
        shoal_alloc_destroy(a);
        return SHOAL_ERR_NOMEM;
    }
    struct fnode *n = node_get(a, 0, size);
    a->root = a->head = n;
    a->n_free = 1;
    a->free_bytes = size;
    *out = a;
    return SHOAL_OK;
}

void shoal_alloc_destroy(shoal_alloc_t *a)
{
    if (!a) return;
    while (a->chunks) {
        struct pool_chunk *c = a->chunks;
        a->chunks = c->next;
        free(c);
    }
    free(a->slots);
    free(a);
}

static int round_size(const shoal_alloc_t *a, size_t size, size_t *need)
{
    if (size > a->size) return -1;
    *need = (size + G - 1) & ~(G - 1);
    return 0;
}

shoal_status_t shoal_alloc_alloc(shoal_alloc_t *a, size_t size, size_t alignment, size_t *offset)
{
    size_t need;
    if (size == 0 || (alignment & (alignment - 1)) != 0) return SHOAL_ERR_INVAL;
    size_t align = alignment < G ? G : alignment;
    if (round_size(a, size, &need) != 0) {
        shoal_debug("heap", "heap of %zu bytes cannot hold %zu bytes", a->size, size);
        return SHOAL_ERR_NOMEM;
    }
    if (live_reserve(a) != 0 || node_reserve(a) != 0) return SHOAL_ERR_NOMEM;
    struct fnode *n = t_first_fit(a->root, need, align);
    if (!n) {
        shoal_debug("heap", "heap is full: %zu bytes (alignment %zu) requested, largest free block %zu",
                    size, align, nmax(a->root));
        return SHOAL_ERR_NOMEM;
    }
    size_t pad = pad_for(n->off, align);
    size_t start = n->off + pad;
    size_t tail = n->size - pad - need;
    if (pad && tail) {
        n->size = pad;
        t_refresh(a->root, n->off);
        struct fnode *t = node_get(a, start + need, tail);
        list_insert_after(a, n, t);
        a->root = t_insert(a->root, t);
        a->n_free++;
    } else if (pad) {
        n->size = pad;
        t_refresh(a->root, n->off);
    } else if (tail) {
        n->off = start + need; /* stays between its neighbours */
        n->size = tail;
        t_refresh(a->root, n->off);
    } else {
        remove_free_node(a, n);
    }
    a->free_bytes -= need;
    live_put(a, start, need);
    a->n_live++;
    *offset = start;
    return SHOAL_OK;
}

/* Returns [off, off + size) to the free blocks, coalescing. Needs one spare
 * node (node_reserve). */
static void release_range(shoal_alloc_t *a, size_t off, size_t size)
{
    struct fnode *p = t_pred(a->root, off);
    struct fnode *s = p ? p->next : a->head;
    int join_prev = p && p->off + p->size == off;
    int join_next = s && off + size == s->off;
    if (join_prev && join_next) {
        p->size += size + s->size;
        remove_free_node(a, s);
        t_refresh(a->root, p->off);
    } else if (join_prev) {
        p->size += size;
        t_refresh(a->root, p->off);
    } else if (join_next) {
        s->off = off;
        s->size += size;
        t_refresh(a->root, s->off);
    } else {
        struct fnode *n = node_get(a, off, size);
        list_insert_after(a, p, n);
        a->root = t_insert(a->root, n);
        a->n_free++;
    }
    a->free_bytes += size;
}

shoal_status_t shoal_alloc_free(shoal_alloc_t *a, size_t offset)
{
    size_t i = live_find(a, offset);
    if (i == NONE) {
        shoal_debug("heap", "free of offset %zu: no live block starts there", offset);
        return SHOAL_ERR_INVAL;
    }
    if (node_reserve(a) != 0) return SHOAL_ERR_NOMEM;
    size_t size = a->slots[i].size;
    live_remove(a, i);
    a->n_live--;
    release_range(a, offset, size);
    return SHOAL_OK;
}

shoal_status_t shoal_alloc_resize(shoal_alloc_t *a, size_t offset, size_t new_size)
{
    size_t need;
    size_t i = live_find(a, offset);
    if (i == NONE || new_size == 0) return SHOAL_ERR_INVAL;
    if (round_size(a, new_size, &need) != 0) return SHOAL_ERR_NOMEM;
    size_t cur = a->slots[i].size;
    if (need < cur) {
        if (node_reserve(a) != 0) return SHOAL_ERR_NOMEM;
        release_range(a, offset + need, cur - need);
    } else if (need > cur) {
        size_t grow = need - cur;
        struct fnode *p = t_pred(a->root, offset + cur + 1);
        if (!p || p->off != offset + cur || p->size < grow) return SHOAL_ERR_NOMEM;
        if (p->size == grow) {
            remove_free_node(a, p);
        } else {
            p->off += grow;
            p->size -= grow;
            t_refresh(a->root, p->off);
        }
        a->free_bytes -= grow;
    }
    a->slots[i].size = need;
    return SHOAL_OK;
}

size_t shoal_alloc_block_size(const shoal_alloc_t *a, size_t offset)
{
    size_t i = live_find(a, offset);
    return i == NONE ? 0 : a->slots[i].size;
}

size_t shoal_alloc_free_bytes(const shoal_alloc_t *a) { return a->free_bytes; }
size_t shoal_alloc_largest_free(const shoal_alloc_t *a) { return nmax(a->root); }
size_t shoal_alloc_live_blocks(const shoal_alloc_t *a) { return a->n_live; }

/* ---- whole-structure walks ---- */

/* Calls visit for every block in address order; fails at the first block
 * that breaks the partition invariants. */
typedef void (*visit_fn)(void *ctx, int is_free, size_t off, size_t size);

static shoal_status_t walk(const shoal_alloc_t *a, visit_fn visit, void *ctx)
{
    size_t pos = 0, live_seen = 0, free_seen = 0, free_sum = 0;
    for (const struct fnode *f = a->head;; f = f->next) {
        size_t stop = f ? f->off : a->size;
        if (stop > a->size || stop < pos) {
            shoal_error("heap", "check: free block at %zu overlaps the block before it (ends %zu)", stop, pos);
            return SHOAL_ERR_RANGE;
        }
        while (pos < stop) {
            size_t i = live_find(a, pos);
            if (i == NONE) {
                shoal_error("heap", "check: offset %zu is neither free nor a live block", pos);
                return SHOAL_ERR_RANGE;
            }
            size_t sz = a->slots[i].size;
            if (sz == 0 || sz % G || sz > stop - pos) {
                shoal_error("heap", "check: live block at %zu of %zu bytes overruns %zu", pos, sz, stop);
                return SHOAL_ERR_RANGE;
            }
            visit(ctx, 0, pos, sz);
            pos += sz;
            live_seen++;
        }
        if (!f) break;
        if (f->size == 0 || f->size % G || f->off % G || f->size > a->size - f->off) {
            shoal_error("heap", "check: bad free block at %zu of %zu bytes", f->off, f->size);
            return SHOAL_ERR_RANGE;
        }
        if (f->next && f->next->prev != f) {
            shoal_error("heap", "check: free list links broken after %zu", f->off);
            return SHOAL_ERR_RANGE;
        }
        if (f->next && f->off + f->size >= f->next->off) {
            shoal_error("heap", "check: free blocks at %zu and %zu are %s", f->off, f->next->off,
                        f->off + f->size == f->next->off ? "not coalesced" : "overlapping");
            return SHOAL_ERR_RANGE;
        }
        visit(ctx, 1, f->off, f->size);
        pos += f->size;
        free_sum += f->size;
        free_seen++;
    }
    size_t used = 0;
    for (size_t i = 0; i < a->cap; i++) used += a->slots[i].off != EMPTY;
    if (live_seen != a->n_live || used != a->n_live || free_seen != a->n_free ||
        free_sum != a->free_bytes) {
        shoal_error("heap", "check: counts disagree: live %zu walked, %zu in table, %zu counted; "
                    "free %zu walked, %zu counted; free bytes %zu walked, %zu counted",
                    live_seen, used, a->n_live, free_seen, a->n_free, free_sum, a->free_bytes);
        return SHOAL_ERR_RANGE;
    }
    return SHOAL_OK;
}

struct tree_check {
    const struct fnode *cursor; /* next list node expected in order */
    size_t count;
    int bad;
};

/* Key order within (lo, hi), heap order, max fields, and the in-order
 * sequence equal to the list. */
static void check_tree(const struct fnode *t, size_t lo, size_t hi, int has_lo, int has_hi,
                       struct tree_check *c)
{
    if (!t || c->bad) return;
    size_t m = t->size;
    if (nmax(t->left) > m) m = t->left->max;
    if (nmax(t->right) > m) m = t->right->max;
    if ((has_lo && t->off <= lo) || (has_hi && t->off >= hi) || t->max != m ||
        (t->left && t->left->prio > t->prio) || (t->right && t->right->prio > t->prio)) {
        shoal_error("heap", "check: free tree broken at block %zu", t->off);
        c->bad = 1;
        return;
    }
    check_tree(t->left, lo, t->off, has_lo, 1, c);
    if (c->bad) return;
    if (c->cursor != t) {
        shoal_error("heap", "check: free tree and free list disagree at block %zu", t->off);
        c->bad = 1;
        return;
    }
    c->cursor = t->next;
    c->count++;
    check_tree(t->right, t->off, hi, 1, has_hi, c);
}

static void visit_none(void *ctx, int is_free, size_t off, size_t size)
{
    (void)ctx;
    (void)is_free;
    (void)off;
    (void)size;
}

shoal_status_t shoal_alloc_check(const shoal_alloc_t *a)
{
    if (a->size == 0 || a->size % G || a->free_bytes > a->size) {
        shoal_error("heap", "check: heap size %zu / free bytes %zu invalid", a->size, a->free_bytes);
        return SHOAL_ERR_RANGE;
    }
    if (a->head && a->head->prev) {
        shoal_error("heap", "check: first free block has a predecessor");
        return SHOAL_ERR_RANGE;
    }
    struct tree_check c = {a->head, 0, 0};
    check_tree(a->root, 0, 0, 0, 0, &c);
    if (c.bad) return SHOAL_ERR_RANGE;
    if (c.cursor != NULL || c.count != a->n_free) {
        shoal_error("heap", "check: free tree holds %zu blocks, %zu counted", c.count, a->n_free);
        return SHOAL_ERR_RANGE;
    }
    return walk(a, visit_none, NULL);
}

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static void visit_hash(void *ctx, int is_free, size_t off, size_t size)
{
    uint64_t *h = ctx;
    *h = mix64(*h ^ mix64((uint64_t)off * 2 + (uint64_t)is_free) ^ ((uint64_t)size << 1));
}

unsigned long long shoal_alloc_fingerprint(const shoal_alloc_t *a)
{
    uint64_t h = mix64(a->size);
    if (walk(a, visit_hash, &h) != SHOAL_OK) h = mix64(h ^ 0xBADull); /* differs from any sane heap */
    return h;
}
