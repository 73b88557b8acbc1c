/* debug.c: heap and collective agreement across PEs (debug.h). Records are
 * written with relaxed stores before a barrier and read after it; the
 * barrier's release/acquire orders them. Peers not reached directly (no
 * shared mapping) are skipped: these checks never add traffic. */
#include "api/debug.h"

#include <stdint.h>
#include <string.h>

#include "api/check.h"
#include "core/internal.h"
#include "core/team.h"
#include "sync/group.h"
#include "sync/word.h"

#define HEAP_AUX 32 /* two records of HEAP_WORDS */
#define HEAP_WORDS 8
#define COLL_AUX 48 /* one record of COLL_WORDS */
#define COLL_NAME_WORDS 8
#define COLL_WORDS (3 + COLL_NAME_WORDS)
_Static_assert(HEAP_AUX + 2 * HEAP_WORDS <= COLL_AUX && COLL_AUX + COLL_WORDS <= SHOAL_SYNC_AUX,
               "debug records exceed the auxiliary words");

enum { H_SEQ, H_KIND, H_SIZE, H_EXTRA, H_PRINT, H_HAS_PRINT };
enum { C_SEQ, C_NELEMS, C_ROOT, C_NAME };

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

/* Checked collectives per team slot on this PE; members count alike. */
static uint64_t coll_seq[SHOAL_TEAM_SLOTS_MAX];

static void read_coll_record(const struct shoal_group *g, int rank, uint64_t rec[COLL_WORDS])
{
    for (int i = 0; i < COLL_WORDS; i++) {
        rec[i] = shoal_group_aux_load(g, rank, COLL_AUX + (size_t)i);
    }
}

void shoal_debug_coll_agree(const char *call, shmem_team_t team, size_t nelems, int root)
{
    struct shoal_team *t = team;
    struct shoal_group g;
    shoal_group_from_team(&g, t);
    /* A new team starts with cleared words: count from there. */
    uint64_t *seq_slot = &coll_seq[t->slot];
    if (__atomic_load_n(shoal_group_aux(&g, COLL_AUX + C_SEQ), __ATOMIC_RELAXED) == 0) *seq_slot = 0;
    uint64_t rec[COLL_WORDS] = {[C_SEQ] = ++*seq_slot, [C_NELEMS] = nelems, [C_ROOT] = (uint64_t)(int64_t)root};
    strncpy((char *)&rec[C_NAME], call, COLL_NAME_WORDS * sizeof(uint64_t) - 1);
    for (int i = 0; i < COLL_WORDS; i++)
        __atomic_store_n(shoal_group_aux(&g, COLL_AUX + (size_t)i), rec[i], __ATOMIC_RELAXED);
    shoal_group_sync(&g);
    uint64_t ref[COLL_WORDS], r[COLL_WORDS];
    read_coll_record(&g, 0, ref);
    for (int k = 1; k < g.size; k++) {
        read_coll_record(&g, k, r);
        const int pe = shoal_group_pe(&g, k), pe0 = shoal_group_pe(&g, 0);
        char name[COLL_NAME_WORDS * 8], name0[COLL_NAME_WORDS * 8];
        memcpy(name, &r[C_NAME], sizeof name);
        memcpy(name0, &ref[C_NAME], sizeof name0);
        name[sizeof name - 1] = name0[sizeof name0 - 1] = '\0';
        static const char *rule = "every member of the team must make the same call with the same arguments";
        if (r[C_SEQ] != ref[C_SEQ])
            shoal_api_fail(call, "team member %d (PE %d) is at its collective #%llu on this team, member 0 (PE %d) "
                           "at #%llu: %s (SHMEM_DEBUG)", k, pe, (unsigned long long)r[C_SEQ], pe0,
                           (unsigned long long)ref[C_SEQ], rule);
        if (strcmp(name, name0) != 0)
            shoal_api_fail(call, "team member %d (PE %d) called %s, member 0 (PE %d) %s: %s (SHMEM_DEBUG)", k, pe,
                           name, pe0, name0, rule);
        if (r[C_NELEMS] != ref[C_NELEMS])
            shoal_api_fail(call, "team member %d (PE %d) passed %llu elements, member 0 (PE %d) %llu: %s "
                           "(SHMEM_DEBUG)", k, pe, (unsigned long long)r[C_NELEMS], pe0,
                           (unsigned long long)ref[C_NELEMS], rule);
        if (r[C_ROOT] != ref[C_ROOT])
            shoal_api_fail(call, "team member %d (PE %d) passed root %d, member 0 (PE %d) root %d: %s (SHMEM_DEBUG)",
                           k, pe, (int)(int64_t)r[C_ROOT], pe0, (int)(int64_t)ref[C_ROOT], rule);
    }
    /* Nobody overwrites its record before every member has read it. */
    shoal_group_sync(&g);
}
