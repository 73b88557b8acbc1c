/* proxy_serve.c: executes proxy ring requests with the host API
 * (proxy_serve.h). One thread serves one ring strictly in ticket order, so
 * requests are issued to Shoal in the order their tickets were taken;
 * docs/cuda.md says what ordering the peers then see. */
#include "cuda/proxy_serve.h"

#include <sched.h>
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void proxy_fail(const shmemx_proxy_request_t *r, const char *why)
{
    fprintf(stderr, "shmemx_cuda proxy: PE %d: request op %u to PE %d (dest %#llx, %llu bytes): %s\n",
            shmem_my_pe(), (unsigned)r->op, (int)r->pe, (unsigned long long)r->dest,
            (unsigned long long)r->size, why);
    fflush(stderr);
    shmem_global_exit(1);
}

/* The staging buffer, at least n bytes. */
static char *bounce(struct shoal_proxy *p, const shmemx_proxy_request_t *r, size_t n)
{
    if (n > p->bounce_size) {
        char *b = realloc(p->bounce, n);
        if (!b) proxy_fail(r, "out of memory for the staging buffer");
        p->bounce = b;
        p->bounce_size = n;
    }
    return p->bounce;
}

/* Host memory holding the bytes at src, which may be GPU memory. */
static const void *stage_in(struct shoal_proxy *p, const shmemx_proxy_request_t *r, const void *src, size_t n)
{
    if (!p->copy || n == 0) return src;
    char *b = bounce(p, r, n);
    if (p->copy(b, src, n) != 0) proxy_fail(r, "copy out of GPU memory failed");
    return b;
}

static void do_get(struct shoal_proxy *p, const shmemx_proxy_request_t *r)
{
    void *dst = (void *)(uintptr_t)r->src;
    const void *from = (const void *)(uintptr_t)r->dest;
    if (!p->copy || r->size == 0) {
        shmem_getmem(dst, from, r->size, r->pe);
        return;
    }
    char *b = bounce(p, r, r->size);
    shmem_getmem(b, from, r->size, r->pe);
    if (p->copy(dst, b, r->size) != 0) proxy_fail(r, "copy into GPU memory failed");
}

/* p and g of 1, 2, 4 or 8 bytes are stored and loaded whole (shmem_*_p/g),
 * so a PE polling the word never sees it torn; other sizes up to 8 are
 * copied. Little-endian: the value is in operand's low bytes. */
static void put_inline(const shmemx_proxy_request_t *r, void *dest)
{
    switch (r->size) {
    case 1: shmem_uint8_p(dest, (uint8_t)r->operand, r->pe); break;
    case 2: shmem_uint16_p(dest, (uint16_t)r->operand, r->pe); break;
    case 4: shmem_uint32_p(dest, (uint32_t)r->operand, r->pe); break;
    case 8: shmem_uint64_p(dest, r->operand, r->pe); break;
    default:
        if (r->size == 0 || r->size > 8) proxy_fail(r, "inline put of more than 8 bytes");
        shmem_putmem(dest, &r->operand, r->size, r->pe);
    }
}

static uint64_t get_inline(const shmemx_proxy_request_t *r, const void *src)
{
    uint64_t v = 0;
    switch (r->size) {
    case 1: return shmem_uint8_g(src, r->pe);
    case 2: return shmem_uint16_g(src, r->pe);
    case 4: return shmem_uint32_g(src, r->pe);
    case 8: return shmem_uint64_g(src, r->pe);
    default:
        if (r->size == 0 || r->size > 8) proxy_fail(r, "inline get of more than 8 bytes");
        shmem_getmem(&v, src, r->size, r->pe);
        return v;
    }
}

/* Executes r; returns the value of a fetching op (else 0). */
static uint64_t execute(struct shoal_proxy *p, const shmemx_proxy_request_t *r)
{
    if (r->op != SHMEMX_PROXY_FENCE && r->op != SHMEMX_PROXY_QUIET && r->op != SHMEMX_PROXY_NOP) {
        if (r->pe < 0 || r->pe >= shmem_n_pes()) proxy_fail(r, "no such PE");
        if (p->in_gpu_heap && p->in_gpu_heap((const void *)(uintptr_t)r->dest))
            proxy_fail(r, "the GPU heap of a PE on another host is not reachable (docs/cuda.md)");
    }
    uint64_t *word = (uint64_t *)(uintptr_t)r->dest;
    switch (r->op) {
    case SHMEMX_PROXY_NOP: return 0;
    case SHMEMX_PROXY_PUT:
        shmem_putmem(word, stage_in(p, r, (const void *)(uintptr_t)r->src, r->size), r->size, r->pe);
        return 0;
    case SHMEMX_PROXY_PUT_INLINE: put_inline(r, word); return 0;
    case SHMEMX_PROXY_GET: do_get(p, r); return 0;
    case SHMEMX_PROXY_ADD: shmem_uint64_atomic_add(word, r->operand, r->pe); return 0;
    case SHMEMX_PROXY_FETCH_ADD: return shmem_uint64_atomic_fetch_add(word, r->operand, r->pe);
    case SHMEMX_PROXY_CSWAP: return shmem_uint64_atomic_compare_swap(word, r->operand2, r->operand, r->pe);
    case SHMEMX_PROXY_SWAP: return shmem_uint64_atomic_swap(word, r->operand, r->pe);
    case SHMEMX_PROXY_FETCH: return shmem_uint64_atomic_fetch(word, r->pe);
    case SHMEMX_PROXY_PUT_SIGNAL:
        if (r->operand2 != SHMEM_SIGNAL_SET && r->operand2 != SHMEM_SIGNAL_ADD) proxy_fail(r, "bad signal operation");
        shmem_putmem_signal(word, stage_in(p, r, (const void *)(uintptr_t)r->src, r->size), r->size,
                            (uint64_t *)(uintptr_t)r->aux, r->operand, (int)r->operand2, r->pe);
        return 0;
    case SHMEMX_PROXY_GET_INLINE: return get_inline(r, word);
    case SHMEMX_PROXY_FENCE: shmem_fence(); return 0;
    case SHMEMX_PROXY_QUIET: shmem_quiet(); return 0;
    default: proxy_fail(r, "unknown operation");
    }
    return 0;
}

int shoal_proxy_serve_one(struct shoal_proxy *p)
{
    shmemx_proxy_request_t r;
    uint64_t ticket;
    if (!shoal_proxy_ring_peek(p->ring, &r, &ticket)) return 0;
    uint64_t result = execute(p, &r);
    shoal_proxy_ring_done(p->ring, ticket, result);
    return 1;
}

static void *proxy_main(void *arg)
{
    struct shoal_proxy *p = arg;
    unsigned idle = 0;
    for (;;) {
        if (shoal_proxy_serve_one(p)) {
            idle = 0;
            continue;
        }
        /* Nothing ready: stop only when asked and the ring is drained. */
        if (__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE) &&
            __atomic_load_n(&p->ring->head, __ATOMIC_ACQUIRE) <= __atomic_load_n(&p->ring->served, __ATOMIC_RELAXED))
            break;
        /* Spin, then yield, then nap: an idle proxy must not take a core
         * from PEs that outnumber them. */
        if (++idle > 64) sched_yield();
        if (idle > 4096) nanosleep(&(struct timespec){.tv_nsec = 20000}, NULL);
    }
    return NULL;
}

shoal_status_t shoal_proxy_start(struct shoal_proxy *p)
{
    if (p->running) return SHOAL_OK;
    p->stop = 0;
    if (pthread_create(&p->thread, NULL, proxy_main, p) != 0) return SHOAL_ERR_NOMEM;
    p->running = 1;
    return SHOAL_OK;
}

void shoal_proxy_stop(struct shoal_proxy *p)
{
    if (!p->running) return;
    __atomic_store_n(&p->stop, 1, __ATOMIC_RELEASE);
    pthread_join(p->thread, NULL);
    p->running = 0;
    free(p->bounce);
    p->bounce = NULL;
    p->bounce_size = 0;
}
