/* proxy_ring.c: the producer and consumer sides of the proxy ring
 * (proxy_ring.h). The fields are plain uint64_t because kernels share the
 * layout; every access here goes through the __atomic builtins, which C11
 * allows on any suitably aligned integer. */
#include "cuda/proxy_ring.h"

#include <sched.h>
#include <string.h>

size_t shoal_proxy_ring_bytes(uint64_t capacity)
{
    return sizeof(shmemx_proxy_ring_t) + capacity * sizeof(shmemx_proxy_request_t);
}

shoal_status_t shoal_proxy_ring_init(void *mem, uint64_t capacity, shmemx_proxy_ring_t **out)
{
    if (!mem || capacity < 2 || (capacity & (capacity - 1)) || ((uintptr_t)mem & 63)) return SHOAL_ERR_INVAL;
    shmemx_proxy_ring_t *ring = mem;
    memset(ring, 0, shoal_proxy_ring_bytes(capacity));
    ring->capacity = capacity;
    for (uint64_t i = 0; i < capacity; i++) ring->slots[i].seq = i;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    *out = ring;
    return SHOAL_OK;
}

/* Spins a little, then yields: producers and the proxy may outnumber cores. */
static void relax(unsigned *spins)
{
    if (++*spins > 256) sched_yield();
}

uint64_t shoal_proxy_ring_post(shmemx_proxy_ring_t *ring, const shmemx_proxy_request_t *req)
{
    uint64_t t = __atomic_fetch_add(&ring->head, 1, __ATOMIC_RELAXED);
    shmemx_proxy_request_t *slot = &ring->slots[t & (ring->capacity - 1)];
    unsigned spins = 0;
    while (__atomic_load_n(&slot->seq, __ATOMIC_ACQUIRE) != t) relax(&spins);
    /* Every field but seq, then seq with release: the proxy that sees the
     * new seq sees the request. */
    memcpy((char *)slot + sizeof slot->seq, (const char *)req + sizeof req->seq,
           sizeof *req - sizeof req->seq);
    __atomic_store_n(&slot->seq, t + 1, __ATOMIC_RELEASE);
    return t;
}

int shoal_proxy_op_fetches(uint32_t op)
{
    return op == SHMEMX_PROXY_FETCH_ADD || op == SHMEMX_PROXY_CSWAP || op == SHMEMX_PROXY_SWAP ||
           op == SHMEMX_PROXY_FETCH || op == SHMEMX_PROXY_GET_INLINE;
}

void shoal_proxy_ring_wait(shmemx_proxy_ring_t *ring, uint64_t ticket)
{
    unsigned spins = 0;
    while (__atomic_load_n(&ring->served, __ATOMIC_ACQUIRE) <= ticket) relax(&spins);
}

uint64_t shoal_proxy_ring_fetch(shmemx_proxy_ring_t *ring, const shmemx_proxy_request_t *req)
{
    uint64_t t = shoal_proxy_ring_post(ring, req);
    shoal_proxy_ring_wait(ring, t);
    shmemx_proxy_request_t *slot = &ring->slots[t & (ring->capacity - 1)];
    uint64_t result = __atomic_load_n(&slot->operand, __ATOMIC_ACQUIRE);
    __atomic_store_n(&slot->seq, t + ring->capacity, __ATOMIC_RELEASE);
    return result;
}

int shoal_proxy_ring_peek(shmemx_proxy_ring_t *ring, shmemx_proxy_request_t *req, uint64_t *ticket)
{
    uint64_t t = __atomic_load_n(&ring->served, __ATOMIC_RELAXED);
    shmemx_proxy_request_t *slot = &ring->slots[t & (ring->capacity - 1)];
    if (__atomic_load_n(&slot->seq, __ATOMIC_ACQUIRE) != t + 1) return 0;
    memcpy(req, slot, sizeof *req);
    *ticket = t;
    return 1;
}

void shoal_proxy_ring_done(shmemx_proxy_ring_t *ring, uint64_t ticket, uint64_t result)
{
    shmemx_proxy_request_t *slot = &ring->slots[ticket & (ring->capacity - 1)];
    if (shoal_proxy_op_fetches(slot->op))
        __atomic_store_n(&slot->operand, result, __ATOMIC_RELAXED);
    else
        __atomic_store_n(&slot->seq, ticket + ring->capacity, __ATOMIC_RELEASE);
    __atomic_store_n(&ring->served, ticket + 1, __ATOMIC_RELEASE);
}
