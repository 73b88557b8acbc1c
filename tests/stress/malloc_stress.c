/* malloc_stress.c: 100,000 (argv[1]) symmetric heap calls of mixed sizes:
 * shmem_malloc, shmem_calloc, shmem_align (64 B to 1 MiB alignments),
 * shmem_realloc (grow and shrink) and shmem_free over up to 512 live blocks,
 * sizes log-uniform from 1 byte to 1 MiB, from a generator seeded alike on
 * every PE (the calls are collective). Checks:
 *  - each block's head and tail carry a tag written when it was made; a
 *    block overlapping another, or realloc losing content, breaks a tag;
 *    calloc'd memory is zero, shmem_align'ed blocks are aligned;
 *  - the offsets from the heap's first block are identical on every PE: a
 *    running hash of them is compared every 1,000 calls, and a put into
 *    the peer's newest block lands where the peer reads it;
 *  - after freeing everything the heap coalesced back: the first malloc
 *    returns the heap's first address again, and a malloc of the whole
 *    heap less 1 MiB succeeds.
 * The live bytes stay under a quarter of SHMEM_SYMMETRIC_SIZE so no call
 * fails for want of space. Prints the time per call. */
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"

#define SLOTS 512
#define TAG 64

struct blk {
    unsigned char *p;
    size_t size, align;
    unsigned tag;
};

static uint64_t rs = 0x5EED5EEDull;
static uint64_t rnd(void)
{
    uint64_t x = (rs += 0x9E3779B97F4A7C15ull);
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static size_t rnd_size(void)
{
    const unsigned bits = (unsigned)(rnd() % 21); /* 1 B .. 1 MiB */
    return 1 + (size_t)(rnd() % ((size_t)1 << bits));
}

/* Head bytes [0, min(size, TAG)) and tail bytes [max(TAG, size - TAG), size)
 * carry the block's tag; they never overlap. */
static unsigned char head_byte(const struct blk *b, size_t i) { return (unsigned char)(b->tag + i); }
static unsigned char tail_byte(const struct blk *b, size_t j) { return (unsigned char)(b->tag * 3 + (b->size - j)); }
static size_t head_len(const struct blk *b) { return b->size < TAG ? b->size : TAG; }
static size_t tail_from(const struct blk *b) { return b->size < 2 * TAG ? head_len(b) : b->size - TAG; }

static void tag(struct blk *b)
{
    for (size_t i = 0; i < head_len(b); i++) b->p[i] = head_byte(b, i);
    for (size_t j = tail_from(b); j < b->size; j++) b->p[j] = tail_byte(b, j);
}

/* Checks the tag bytes below upto (what a realloc to upto bytes keeps). */
static int tag_ok(const struct blk *b, size_t upto)
{
    for (size_t i = 0; i < head_len(b) && i < upto; i++)
        if (b->p[i] != head_byte(b, i)) return 0;
    for (size_t j = tail_from(b); j < b->size && j < upto; j++)
        if (b->p[j] != tail_byte(b, j)) return 0;
    return 1;
}

static size_t heap_size(void)
{
    const char *e = getenv("SHMEM_SYMMETRIC_SIZE");
    if (!e) return (size_t)1 << 30;
    char *end;
    double v = strtod(e, &end);
    switch (*end) {
    case 'k': case 'K': v *= 1024; break;
    case 'm': case 'M': v *= 1024 * 1024; break;
    case 'g': case 'G': v *= 1024.0 * 1024 * 1024; break;
    case 't': case 'T': v *= 1024.0 * 1024 * 1024 * 1024; break;
    default: break;
    }
    return (size_t)v;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    const long calls = argc > 1 ? atol(argv[1]) : 100000;
    shmem_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes(), right = (me + 1) % npes;
    test_pe = me;
    const size_t heap = heap_size(), budget = heap / 4;
    uint64_t *hashes = shmem_calloc((size_t)npes, sizeof(uint64_t));
    uint64_t *mine = shmem_calloc(1, sizeof(uint64_t));
    long *probe = shmem_calloc(1, sizeof(long)); /* bookkeeping blocks come first */
    CHECK(hashes && mine && probe);
    if (!(hashes && mine && probe)) return test_finish();
    unsigned char *base = (unsigned char *)probe;
    shmem_free(probe);
    /* The first block of an empty heap region: where everything ends up again. */
    unsigned char *first = shmem_malloc(1);
    shmem_free(first);

    struct blk b[SLOTS] = {{0}};
    size_t live = 0, live_bytes = 0, max_live = 0;
    uint64_t h = 0;
    long n_malloc = 0, n_calloc = 0, n_align = 0, n_realloc = 0, n_free = 0;
    unsigned next_tag = 1;
    shmem_barrier_all();
    const double t0 = now();
    long c = 0;
    for (long done = 0; done < calls; c++) {
        struct blk *x = &b[rnd() % SLOTS];
        const unsigned what = (unsigned)(rnd() % 10);
        size_t size = rnd_size();
        if (x->p && (what < 4 || live_bytes + size > budget)) { /* free */
            CHECK_MSG(tag_ok(x, SIZE_MAX), "call %ld: block of %zu bytes lost its tag before free", c, x->size);
            shmem_free(x->p);
            live--, live_bytes -= x->size, n_free++;
            x->p = NULL;
        } else if (x->p) { /* realloc: grow or shrink, content kept up to the smaller size */
            if (live_bytes - x->size + size > budget) size = x->size / 2 + 1;
            CHECK_MSG(tag_ok(x, SIZE_MAX), "call %ld: block lost its tag before realloc", c);
            unsigned char *p = shmem_realloc(x->p, size);
            CHECK_MSG(p != NULL, "call %ld: realloc %zu -> %zu failed", c, x->size, size);
            if (!p) break;
            const size_t keep = size < x->size ? size : x->size;
            struct blk old = *x;
            old.p = p;
            CHECK_MSG(tag_ok(&old, keep), "call %ld: realloc %zu -> %zu lost content", c, old.size, size);
            live_bytes += size - x->size;
            x->p = p, x->size = size, x->tag = next_tag++, x->align = 0;
            tag(x);
            n_realloc++;
        } else if (live_bytes + size <= budget) { /* allocate */
            x->tag = next_tag++;
            x->align = 0;
            if (what < 6) {
                x->p = shmem_malloc(size), n_malloc++;
            } else if (what < 8) {
                x->p = shmem_calloc(1, size), n_calloc++;
                if (x->p)
                    for (size_t i = 0; i < size; i += 997)
                        if (x->p[i]) {
                            CHECK_MSG(0, "call %ld: calloc(%zu) byte %zu is %u", c, size, i, x->p[i]);
                            break;
                        }
            } else {
                x->align = (size_t)64 << (rnd() % 15); /* 64 B .. 1 MiB */
                x->p = shmem_align(x->align, size), n_align++;
                if (x->p) CHECK_MSG((uintptr_t)x->p % x->align == 0, "call %ld: shmem_align(%zu) gave %p", c, x->align, (void *)x->p);
            }
            CHECK_MSG(x->p != NULL, "call %ld: allocation of %zu bytes failed with %zu live", c, size, live_bytes);
            if (!x->p) break;
            x->size = size;
            tag(x);
            live++, live_bytes += size;
            if (live_bytes > max_live) max_live = live_bytes;
            /* A put into the right neighbour's copy of this block. */
            if (c % 97 == 0) {
                shmem_barrier_all();
                const unsigned char v = (unsigned char)(0x80 | me);
                shmem_putmem(x->p + size / 2, &v, 1, right);
                shmem_barrier_all();
                const unsigned char want = (unsigned char)(0x80 | ((me - 1 + npes) % npes));
                CHECK_MSG(x->p[size / 2] == want, "call %ld: the peer's put into block offset %zu missed", c, size / 2);
                tag(x); /* the middle byte may have been a tag byte */
            }
        } else {
            continue;
        }
        done++;
        if (x->p) h = h * 1000003u + (uint64_t)(x->p - base) + x->size;
        if (done % 1000 == 0 || done == calls) {
            *mine = h;
            shmem_barrier_all();
            shmem_uint64_fcollect(SHMEM_TEAM_WORLD, hashes, mine, 1);
            int differ = 0; /* the same verdict on every PE */
            for (int p = 0; p < npes; p++) differ |= hashes[p] != hashes[0];
            CHECK_MSG(!differ, "call %ld: the offsets differ between PEs (PE 0 hash %llx, PE %d hash %llx)", done,
                      (unsigned long long)hashes[0], me, (unsigned long long)h);
            if (differ) break;
        }
    }
    const double dt = now() - t0;
    for (int i = 0; i < SLOTS; i++)
        if (b[i].p) {
            CHECK_MSG(tag_ok(&b[i], SIZE_MAX), "slot %d: tag lost at the end", i);
            shmem_free(b[i].p);
            n_free++;
        }
    /* Coalesced back: the lowest block again, then nearly the whole heap. */
    unsigned char *again = shmem_malloc(1);
    CHECK_MSG(again == first, "after freeing everything the first block is %p, was %p", (void *)again, (void *)first);
    shmem_free(again);
    const size_t big = heap - ((size_t)1 << 20);
    unsigned char *all = shmem_malloc(big);
    CHECK_MSG(all != NULL, "malloc of the heap less 1 MiB (%zu bytes) failed after freeing everything", big);
    if (all) {
        all[0] = 1, all[big - 1] = 2;
        shmem_free(all);
    }
    const long total = n_malloc + n_calloc + n_align + n_realloc + n_free;
    if (me == 0) {
        printf("malloc_stress: %d PEs, %ld calls (malloc %ld, calloc %ld, align %ld, realloc %ld, free %ld) in %.3f s, "
               "%.2f us per call; most live %.1f MiB of a %.0f MiB heap; coalesced back: %s\n",
               npes, total, n_malloc, n_calloc, n_align, n_realloc, n_free, dt, dt * 1e6 / (double)total,
               (double)max_live / 1048576.0, (double)heap / 1048576.0, test_failures ? "no" : "yes");
        fflush(stdout);
    }
    shmem_free(mine);
    shmem_free(hashes);
    shmem_finalize();
    return test_finish();
}
