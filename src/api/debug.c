/* debug.c: heap and collective agreement across PEs (debug.h). Records are
 * written with relaxed stores before a barrier and read after it; the
 * barrier's release/acquire orders them. Peers not reached directly (no
 * shared mapping) are skipped: these checks never add traffic. */
#include "api/debug.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "api/check.h"
#include "core/internal.h"
#include "core/team.h"
#include "observe/blocked.h"
#include "sync/group.h"
#include "sync/word.h"

#define HEAP_AUX 32 /* two records of HEAP_WORDS */
#define HEAP_WORDS 8
#define COLL_AUX 48 /* one record of COLL_WORDS */
#define COLL_NAME_WORDS 8
#define COLL_WORDS (4 + COLL_NAME_WORDS)
_Static_assert(HEAP_AUX + 2 * HEAP_WORDS <= COLL_AUX && COLL_AUX + COLL_WORDS <= SHOAL_SYNC_AUX,
               "debug records exceed the auxiliary words");

enum { H_SEQ, H_KIND, H_SIZE, H_EXTRA, H_PRINT, H_HAS_PRINT };
enum { C_SEQ, C_NELEMS, C_ROOT, C_BYTES, C_NAME };

static uint64_t heap_seq; /* heap calls this PE has made */

static const char *heap_call_name(uint64_t kind)
{
    switch (kind) {
    case SHOAL_HEAP_MALLOC: return "shmem_malloc";
    case SHOAL_HEAP_CALLOC: return "shmem_calloc";
    case SHOAL_HEAP_ALIGN: return "shmem_align";
    case SHOAL_HEAP_REALLOC: return "shmem_realloc";
    case SHOAL_HEAP_FREE: return "shmem_free";
    case SHOAL_HEAP_MALLOC_HINTS: return "shmem_malloc_with_hints";
    }
    return "no heap call";
}

/* Heap offset of word i of the heap record for call number seq. */
static size_t heap_word(uint64_t seq, int i)
{
    size_t field = offsetof(struct shoal_internal_area, team_sync) + offsetof(struct shoal_team_sync, aux) +
                   (HEAP_AUX + (seq & 1) * HEAP_WORDS + (size_t)i) * sizeof(uint64_t);
    return shoal_internal_offset_of(field);
}

void shoal_debug_heap_publish(enum shoal_heap_call kind, size_t size, size_t extra)
{
    const uint64_t seq = ++heap_seq;
    const int me = shoal_rt.my_pe, debug = shoal_rt.config.debug;
    uint64_t rec[HEAP_WORDS] = {[H_SEQ] = seq, [H_KIND] = kind, [H_SIZE] = size, [H_EXTRA] = extra,
                                [H_HAS_PRINT] = (uint64_t)debug};
    if (debug) {
        pthread_mutex_lock(&shoal_rt.heap_lock);
        rec[H_PRINT] = shoal_alloc_fingerprint(shoal_rt.alloc);
        pthread_mutex_unlock(&shoal_rt.heap_lock);
    }
    for (int i = 0; i < HEAP_WORDS; i++)
        __atomic_store_n((uint64_t *)shoal_route_direct(SHOAL_SEG_HEAP, heap_word(seq, i), me), rec[i],
                         __ATOMIC_RELAXED);
}

static void read_heap_record(int pe, uint64_t seq, uint64_t rec[HEAP_WORDS])
{
    for (int i = 0; i < HEAP_WORDS; i++) {
        rec[i] = shoal_word_load(SHOAL_SEG_HEAP, heap_word(seq, i), pe);
    }
}

static int heap_records_differ(const uint64_t *a, const uint64_t *b)
{
    return a[H_SEQ] != b[H_SEQ] || a[H_KIND] != b[H_KIND] || a[H_SIZE] != b[H_SIZE] || a[H_EXTRA] != b[H_EXTRA] ||
           (a[H_HAS_PRINT] && b[H_HAS_PRINT] && a[H_PRINT] != b[H_PRINT]);
}

static void __attribute__((noreturn)) heap_mismatch(const char *call, int pe, const uint64_t *r, int ref_pe,
                                                    const uint64_t *ref)
{
    static const char *rule = "every PE must make the same symmetric allocations";
    if (r[H_SEQ] != ref[H_SEQ])
        shoal_api_fail(call, "PE %d is at its symmetric heap call #%llu, PE %d at #%llu (a heap call not made on "
                       "every PE, or made where a peer called a barrier): %s", pe, (unsigned long long)r[H_SEQ],
                       ref_pe, (unsigned long long)ref[H_SEQ], rule);
    if (r[H_KIND] != ref[H_KIND])
        shoal_api_fail(call, "PE %d called %s, PE %d %s: %s", pe, heap_call_name(r[H_KIND]), ref_pe,
                       heap_call_name(ref[H_KIND]), rule);
    if (r[H_KIND] == SHOAL_HEAP_FREE && r[H_SIZE] != ref[H_SIZE])
        shoal_api_fail(call, "PE %d freed the block at heap offset 0x%llx, PE %d the one at 0x%llx: %s", pe,
                       (unsigned long long)r[H_SIZE], ref_pe, (unsigned long long)ref[H_SIZE], rule);
    if (r[H_KIND] == SHOAL_HEAP_REALLOC && r[H_EXTRA] != ref[H_EXTRA])
        shoal_api_fail(call, "PE %d resized the block at heap offset 0x%llx, PE %d the one at 0x%llx: %s", pe,
                       (unsigned long long)r[H_EXTRA], ref_pe, (unsigned long long)ref[H_EXTRA], rule);
    if (r[H_SIZE] != ref[H_SIZE])
        shoal_api_fail(call, "PE %d asked for %llu bytes, PE %d for %llu: %s", pe, (unsigned long long)r[H_SIZE],
                       ref_pe, (unsigned long long)ref[H_SIZE], rule);
    if (r[H_EXTRA] != ref[H_EXTRA])
        shoal_api_fail(call, "PE %d asked for alignment %llu, PE %d for %llu: %s", pe, (unsigned long long)r[H_EXTRA],
                       ref_pe, (unsigned long long)ref[H_EXTRA], rule);
    shoal_api_fail(call, "PE %d's symmetric heap differs from PE %d's (allocator fingerprint 0x%016llx, 0x%016llx): "
                   "an earlier allocation or free was not the same on every PE", pe, ref_pe,
                   (unsigned long long)r[H_PRINT], (unsigned long long)ref[H_PRINT]);
}

void shoal_debug_heap_compare(const char *call)
{
    const uint64_t seq = heap_seq;
    const int me = shoal_rt.my_pe;
    uint64_t ref[HEAP_WORDS], r[HEAP_WORDS];
    read_heap_record(0, seq, ref);
    if (!shoal_rt.config.debug) {
        /* Cheap: this PE against PE 0. */
        if (me == 0) return;
        read_heap_record(me, seq, r);
        if (heap_records_differ(r, ref)) heap_mismatch(call, me, r, 0, ref);
        return;
    }
    /* Every PE names the same, first, PE that differs from PE 0. */
    for (int pe = 1; pe < shoal_rt.n_pes; pe++) {
        read_heap_record(pe, seq, r);
        if (heap_records_differ(r, ref)) heap_mismatch(call, pe, r, 0, ref);
    }
}

void shoal_debug_heap_check(const char *call)
{
    if (!shoal_rt.config.debug) return;
    pthread_mutex_lock(&shoal_rt.heap_lock);
    shoal_status_t st = shoal_alloc_check(shoal_rt.alloc);
    pthread_mutex_unlock(&shoal_rt.heap_lock);
    if (st != SHOAL_OK)
        shoal_api_fail(call, "the symmetric heap's allocator is inconsistent after this call: %s (SHMEM_DEBUG)",
                       shoal_status_str(st));
}

/* ---- Collective agreement ---- */

/* "world", "shared" or "team <slot>", for messages. */
static void team_name(const struct shoal_team *t, char *buf, size_t len)
{
    if (t == SHMEM_TEAM_WORLD) snprintf(buf, len, "world");
    else if (t == SHMEM_TEAM_SHARED) snprintf(buf, len, "shared");
    else snprintf(buf, len, "team %d (PEs %d, stride %d, %d PEs)", t->slot, t->start, t->stride, t->size);
}

/* "shmem_broadcastmem(root 0, 64 B)", from a record. */
static void describe(const uint64_t *rec, char *buf, size_t len)
{
    char name[COLL_NAME_WORDS * 8];
    memcpy(name, &rec[C_NAME], sizeof name);
    name[sizeof name - 1] = '\0';
    const int root = (int)(int64_t)rec[C_ROOT];
    int n = snprintf(buf, len, "%s", name);
    if (n < 0 || (size_t)n >= len) return;
    if (root >= 0 && rec[C_BYTES])
        snprintf(buf + n, len - (size_t)n, "(root %d, %llu B)", root, (unsigned long long)rec[C_BYTES]);
    else if (root >= 0)
        snprintf(buf + n, len - (size_t)n, "(root %d)", root);
    else if (rec[C_BYTES])
        snprintf(buf + n, len - (size_t)n, "(%llu B)", (unsigned long long)rec[C_BYTES]);
}

static void read_coll_record(const struct shoal_group *g, int rank, uint64_t rec[COLL_WORDS])
{
    for (int i = 0; i < COLL_WORDS; i++) {
        rec[i] = shoal_group_aux_load(g, rank, COLL_AUX + (size_t)i);
    }
}

static int coll_records_differ(const uint64_t *a, const uint64_t *b)
{
    return memcmp(a, b, COLL_WORDS * sizeof *a) != 0;
}

void shoal_debug_coll_agree(const char *call, shmem_team_t team, size_t nelems, size_t bytes, int root)
{
    struct shoal_team *t = team;
    struct shoal_group g;
    shoal_group_from_team(&g, t);
    /* The team's collective number, as hang reports count it (blocked.h). */
    const uint64_t seq = shoal_blocked_coll_seq(t);
    uint64_t rec[COLL_WORDS] = {[C_SEQ] = seq, [C_NELEMS] = nelems, [C_ROOT] = (uint64_t)(int64_t)root,
                                [C_BYTES] = bytes};
    strncpy((char *)&rec[C_NAME], call, COLL_NAME_WORDS * sizeof(uint64_t) - 1);
    for (int i = 0; i < COLL_WORDS; i++)
        __atomic_store_n(shoal_group_aux(&g, COLL_AUX + (size_t)i), rec[i], __ATOMIC_RELAXED);
    shoal_group_sync(&g);
    uint64_t ref[COLL_WORDS], r[COLL_WORDS];
    read_coll_record(&g, 0, ref);
    for (int k = 1; k < g.size; k++) {
        read_coll_record(&g, k, r);
        if (!coll_records_differ(r, ref)) continue;
        const int pe = shoal_group_pe(&g, k), pe0 = shoal_group_pe(&g, 0);
        char tname[96], what0[128], what[128];
        team_name(t, tname, sizeof tname);
        describe(ref, what0, sizeof what0);
        describe(r, what, sizeof what);
        /* Different numbers: one of them made a collective on this team
         * that the other did not, earlier on. */
        if (r[C_SEQ] != ref[C_SEQ])
            shoal_api_fail(call, "collective mismatch on team %s: PE %d called %s as its collective #%llu on it, "
                           "PE %d called %s as its #%llu: a PE made a collective the other did not (SHMEM_DEBUG)",
                           tname, pe0, what0, (unsigned long long)ref[C_SEQ], pe, what,
                           (unsigned long long)r[C_SEQ]);
        if (strcmp(what, what0) == 0) /* differ in nelems only (same bytes) */
            snprintf(what + strlen(what), sizeof what - strlen(what), " with %llu elements",
                     (unsigned long long)r[C_NELEMS]);
        shoal_api_fail(call, "collective mismatch on team %s #%llu: PE %d called %s, PE %d called %s (SHMEM_DEBUG)",
                       tname, (unsigned long long)seq, pe0, what0, pe, what);
    }
    /* Nobody overwrites its record before every member has read it. */
    shoal_group_sync(&g);
}
