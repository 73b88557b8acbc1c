/* word.h: 64-bit synchronisation words (barrier rounds, collective flags
 * and counters) on any member, direct or not. A direct word is a CPU
 * atomic; any other goes through the transport. Read-modify-writes follow
 * the atomics rule of route.h (through the fabric when it applies atomics),
 * while stores and loads of a word with a single writer may stay on the
 * CPU: nothing else updates it at the same time.
 *
 * A transport failure inside a barrier or collective cannot be handed back
 * to the program usefully, so it ends the job with the reason. */
#ifndef SHOAL_SYNC_WORD_H
#define SHOAL_SYNC_WORD_H

#include <stdint.h>
#include <string.h>

#include "core/route.h"
#include "sync/wake.h"

void shoal_word_fail(const char *what, int pe, shoal_status_t st) __attribute__((noreturn));

/* Stores v with release ordering: earlier puts of this PE to pe are
 * visible at pe before the word. */
static inline void shoal_word_store(int seg, size_t off, int pe, uint64_t v)
{
    uint64_t *p = shoal_route_direct(seg, off, pe);
    if (p) {
        __atomic_store_n(p, v, __ATOMIC_RELEASE);
        shoal_wake(pe);
        return;
    }
    shoal_rt.transport->fence(NULL);
    shoal_status_t st = shoal_rt.transport->amo(NULL, pe, (enum shoal_segment_id)seg, off, 8, SHOAL_AMO_SET, v, 0, NULL);
    if (st != SHOAL_OK) shoal_word_fail("storing a synchronisation word", pe, st);
}

/* Sends a flag only pe waits for through the transport (transport.h,
 * signal; amo where the transport has no such op). No fence of its own. */
static inline shoal_status_t shoal_word_send_signal(int seg, size_t off, int pe, enum shoal_amo_op op, uint64_t v)
{
    const struct shoal_transport_ops *t = shoal_rt.transport;
    return t->signal ? t->signal(pe, (enum shoal_segment_id)seg, off, op, v)
                     : t->amo(NULL, pe, (enum shoal_segment_id)seg, off, 8, op, v, 0, NULL);
}

/* A flag only pe waits for (a barrier round, a collective's line tag or
 * release word): stores v (SHOAL_AMO_SET) or adds it (SHOAL_AMO_ADD),
 * ordered after this PE's earlier puts to pe like shoal_word_store; through
 * a transport, no later quiet waits for it (transport.h, signal).
 * With fenced, only the first signal through the transport that *fenced
 * has not recorded fences: in a barrier every later signal is caused by
 * the first, so members learn of this PE's puts through the chain, and a
 * fence per round would wait out the previous round's signal for nothing. */
static inline void shoal_word_signal_fenced(int seg, size_t off, int pe, enum shoal_amo_op op, uint64_t v,
                                            int *fenced)
{
    uint64_t *p = shoal_route_direct(seg, off, pe);
    if (p && (op == SHOAL_AMO_SET || !shoal_rt.amo_fabric)) {
        if (op == SHOAL_AMO_SET)
            __atomic_store_n(p, v, __ATOMIC_RELEASE);
        else
            __atomic_fetch_add(p, v, __ATOMIC_RELEASE);
        shoal_wake(pe);
        return;
    }
    if (!fenced || !*fenced) shoal_rt.transport->fence(NULL);
    if (fenced) *fenced = 1;
    shoal_status_t st = shoal_word_send_signal(seg, off, pe, op, v);
    if (st != SHOAL_OK) shoal_word_fail("signalling a synchronisation word", pe, st);
}

/* Past this many bytes a direct flag's copy is fenced in full. */
#define SHOAL_WORD_FLAG_FENCE_FROM 4096

/* Stores v into a flag only pe waits for, comparing for exactly v, which
 * is not written again before pe saw it (a barrier round of one parity, a
 * line's tag, a tree edge's one write in a call): with len, the len bytes
 * at src go to data_off of data_seg first, and src may be reused on
 * return. Ordered after this PE's earlier puts to pe, and through a
 * transport completed by no quiet, like shoal_word_signal_fenced (fenced
 * likewise). Over a fabric
 * that keeps writes in order it is a plain write the target need not
 * answer (transport.h, flag); an exact compare is what makes that safe: the
 * write may land in pieces, and shows v only once all of it landed. */
static inline shoal_status_t shoal_word_flag_fenced(int data_seg, size_t data_off, const void *src, size_t len,
                                                    int seg, size_t off, int pe, uint64_t v, int *fenced)
{
    uint64_t *p = shoal_route_direct(seg, off, pe);
    if (p) {
        if (len) {
            char *to = shoal_route_direct(data_seg, data_off, pe);
            if (to != src) memcpy(to, src, len);
        }
        /* A large memcpy may use non-temporal stores, which a release
         * store alone does not order; lines stay far below that size. */
        if (len > SHOAL_WORD_FLAG_FENCE_FROM) __atomic_thread_fence(__ATOMIC_SEQ_CST);
        __atomic_store_n(p, v, __ATOMIC_RELEASE);
        shoal_wake(pe);
        return SHOAL_OK;
    }
    const struct shoal_transport_ops *t = shoal_rt.transport;
    if (!fenced || !*fenced) t->fence(NULL);
    if (fenced) *fenced = 1;
    shoal_status_t st;
    if (t->flag)
        st = t->flag(pe, (enum shoal_segment_id)data_seg, data_off, src, len, (enum shoal_segment_id)seg, off, v);
    else if (len && t->put_signal)
        st = t->put_signal(NULL, 0, pe, (enum shoal_segment_id)data_seg, data_off, src, len,
                           (enum shoal_segment_id)seg, off, SHOAL_AMO_SET, v);
    else {
        st = len ? t->put(NULL, pe, (enum shoal_segment_id)data_seg, data_off, src, len) : SHOAL_OK;
        if (st == SHOAL_OK && len) t->fence(NULL);
        if (st == SHOAL_OK) st = shoal_word_send_signal(seg, off, pe, SHOAL_AMO_SET, v);
    }
    if (st != SHOAL_OK) shoal_word_fail("signalling a synchronisation word", pe, st);
    return st;
}

static inline void shoal_word_signal(int seg, size_t off, int pe, enum shoal_amo_op op, uint64_t v)
{
    shoal_word_signal_fenced(seg, off, pe, op, v, NULL);
}

static inline uint64_t shoal_word_load(int seg, size_t off, int pe)
{
    const uint64_t *p = shoal_route_direct(seg, off, pe);
    if (p) return __atomic_load_n(p, __ATOMIC_ACQUIRE);
    uint64_t v = 0;
    shoal_status_t st = shoal_rt.transport->amo(NULL, pe, (enum shoal_segment_id)seg, off, 8, SHOAL_AMO_FETCH, 0, 0, &v);
    if (st != SHOAL_OK) shoal_word_fail("reading a synchronisation word", pe, st);
    return v;
}

/* Adds v (two's complement: pass -n to subtract) and returns the old value;
 * orders like a release store. */
static inline uint64_t shoal_word_add(int seg, size_t off, int pe, uint64_t v)
{
    if (shoal_rt.amo_fabric || !shoal_rt.peers[pe].direct) shoal_rt.transport->fence(NULL);
    uint64_t old = 0;
    shoal_status_t st = shoal_route_amo(NULL, seg, off, pe, 8, SHOAL_AMO_ADD, v, 0, &old);
    if (st != SHOAL_OK) shoal_word_fail("updating a synchronisation word", pe, st);
    shoal_wake(pe);
    return old;
}

/* Adds v to a word that only PEs reaching pe directly ever update (a
 * host's arrival counter, with every member of the host direct): a CPU
 * atomic even where the fabric applies atomics (amo_fabric), since no
 * fabric atomic touches the word. Through the fabric, each member's
 * arrival was a fetching round trip to its own host's leader. */
static inline uint64_t shoal_word_add_direct(int seg, size_t off, int pe, uint64_t v)
{
    uint64_t *p = shoal_route_direct(seg, off, pe);
    if (!p) return shoal_word_add(seg, off, pe, v);
    const uint64_t old = __atomic_fetch_add(p, v, __ATOMIC_ACQ_REL);
    shoal_wake(pe);
    return old;
}

#endif
