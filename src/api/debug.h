/* debug.h: checks that span PEs. Two tiers, as in check.h:
 *
 * Heap agreement (always on, cheap): every symmetric heap call publishes
 * what it asked for (call, size or block, its number among this PE's heap
 * calls) in the world team's auxiliary words, and after the barrier the
 * call makes anyway each PE compares its record with PE 0's. A PE whose
 * call differs ends the job with one line naming both PEs and both values.
 * With SHMEM_DEBUG=1 each PE also publishes the allocator fingerprint
 * before the call, compares every PE's record (so all name the first PE
 * that differs) and walks its own allocator (shoal_alloc_check) after
 * each call.
 *
 * Collective agreement (SHMEM_DEBUG=1 only): before a team collective or
 * barrier each member publishes its call name, its number among the
 * team's collectives, element count, bytes and root in its team
 * slot's auxiliary words; after a team sync the members compare with
 * rank 0's record, and a second sync keeps the words until all have read.
 *
 * Auxiliary words used (struct shoal_team_sync.aux; the collectives use
 * 0 to 3): world slot words 32-47 for the heap records (two alternating
 * records of 8 words, by the parity of the heap call number: a peer can be
 * at most one heap call ahead, as each call has a barrier), any team
 * slot's words 48-63 for the collective record. */
#ifndef SHOAL_API_DEBUG_H
#define SHOAL_API_DEBUG_H

#include <stddef.h>

#include <shmem.h>

enum shoal_heap_call {
    SHOAL_HEAP_MALLOC = 1, SHOAL_HEAP_CALLOC, SHOAL_HEAP_ALIGN, SHOAL_HEAP_REALLOC, SHOAL_HEAP_FREE,
    SHOAL_HEAP_MALLOC_HINTS
};

/* Before the call's first barrier: what this PE is about to do. size is
 * the bytes asked for (for free, the block's heap offset); extra is the
 * alignment (align) or the old block's offset (realloc), else 0. */
void shoal_debug_heap_publish(enum shoal_heap_call kind, size_t size, size_t extra);
/* After that barrier: compares with the other PEs; ends the job on a
 * difference. */
void shoal_debug_heap_compare(const char *call);
/* After the call's last change to the allocator (SHMEM_DEBUG: walks it). */
void shoal_debug_heap_check(const char *call);

/* Team collectives and barriers with SHMEM_DEBUG=1: the members agree on
 * the call, its number among the team's collectives, nelems, bytes and
 * root (root -1 where there is none; nelems and bytes 0 where members
 * pass their own). Collective over the team. */
void shoal_debug_coll_agree(const char *call, shmem_team_t team, size_t nelems, size_t bytes, int root);

#endif
