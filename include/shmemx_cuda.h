/* shmemx_cuda.h: Shoal's CUDA extensions (docs/cuda.md).
 *
 * Host part (C or C++): a symmetric heap in GPU memory, one per PE
 * (shmemx_gpu_malloc/free, collective), host RMA on it, and stream-ordered
 * forms. Device part (nvcc only, __CUDACC__): put, get, p, g in thread,
 * warp and block forms with _nbi variants, atomics, put_signal,
 * signal_wait_until, fence, quiet and a block-level barrier, all callable
 * from inside kernels.
 *
 * A peer on this host is reached by loads and stores through its GPU heap,
 * mapped here by CUDA IPC. The host symmetric heap (shmem_malloc memory) of
 * any PE, and PEs on other hosts, are reached through the proxy: the kernel
 * posts a request into a ring in pinned host memory and a thread of this PE
 * serves it with the host API (the ring's layout is below; its ordering is
 * described in docs/cuda.md). The proxy runs when the program initialised
 * with SHMEM_THREAD_MULTIPLE; the GPU heap of a PE on another host is not
 * reachable (the proxy refuses it in one line).
 *
 * Each .cu file that calls the device API holds its own copy of the device
 * state: call shmemx_cuda_bind() once in that file after the first
 * shmemx_gpu_malloc and before launching its kernels. */
#ifndef SHMEMX_CUDA_H
#define SHMEMX_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include <shmemx.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- The proxy ring (pinned host memory, shared with the host runtime) ---- */

enum shmemx_proxy_op {
    SHMEMX_PROXY_NOP = 0,
    SHMEMX_PROXY_PUT,        /* size bytes from src to dest on pe */
    SHMEMX_PROXY_PUT_INLINE, /* size (1..8) bytes of operand to dest on pe */
    SHMEMX_PROXY_GET,        /* size bytes from dest on pe into src */
    SHMEMX_PROXY_ADD,        /* 64-bit: dest += operand */
    SHMEMX_PROXY_FETCH_ADD,  /* 64-bit: *result = dest, dest += operand */
    SHMEMX_PROXY_CSWAP,      /* 64-bit: *result = dest, dest = operand if it was operand2 */
    SHMEMX_PROXY_SWAP,       /* 64-bit: *result = dest, dest = operand */
    SHMEMX_PROXY_FETCH,      /* 64-bit: *result = dest */
    SHMEMX_PROXY_PUT_SIGNAL, /* PUT, then signal word sig_addr set (operand2 = 0) or added (1) with operand */
    SHMEMX_PROXY_FENCE,      /* orders earlier puts to each PE before later ones */
    SHMEMX_PROXY_QUIET,      /* completes every earlier request */
    SHMEMX_PROXY_GET_INLINE, /* size (1..8) bytes from dest on pe, returned like a fetching op's result */
    SHMEMX_PROXY_OP_COUNT
};

/* One request: 64 bytes, one slot of the ring. seq is written last (after a
 * system-wide fence) by the producer: ticket + 1 means "full"; the proxy
 * hands the slot back by setting ticket + capacity. */
typedef struct shmemx_proxy_request {
    uint64_t seq;
    uint32_t op;
    int32_t pe;
    uint64_t dest;     /* symmetric address, as the producer sees it */
    uint64_t src;      /* local buffer (put: read, get: written) */
    uint64_t size;     /* bytes (put, get), or the value of PUT_INLINE */
    uint64_t operand;  /* atomics, PUT_SIGNAL's signal value; a fetching op's result on return */
    uint64_t operand2; /* CSWAP's compare value, PUT_SIGNAL's operation */
    uint64_t aux;      /* PUT_SIGNAL: the signal word (symmetric address) */
} shmemx_proxy_request_t;

/* The ring header. Counters sit on lines of their own: producers bump head
 * (CPU producers only; a GPU keeps its ticket counter in device memory),
 * the proxy alone writes served. */
typedef struct shmemx_proxy_ring {
    uint64_t capacity; /* slots, a power of two */
    uint64_t pad0[7];
    uint64_t head;     /* next ticket */
    uint64_t pad1[7];
    uint64_t served;   /* every ticket below it has been executed */
    uint64_t error;    /* nonzero: the proxy met a request it cannot serve (the op) */
    uint64_t pad2[6];
    shmemx_proxy_request_t slots[];
} shmemx_proxy_ring_t;

/* ---- Host API ---- */

/* Collective over every PE, like shmem_malloc: the same size on every PE
 * yields the same offset in each PE's GPU heap. The GPU heap
 * (SHMEM_GPU_SYMMETRIC_SIZE) is made at the first call. NULL when no GPU
 * is present (or the CUDA part is not built) or the heap is full. */
void *shmemx_gpu_malloc(size_t size);
void shmemx_gpu_free(void *ptr);
/* 1 when this PE has a GPU heap that kernels and the host API can use. */
int shmemx_gpu_available(void);
/* The address of symmetric GPU memory dest on pe as this PE may load and
 * store it (from kernels or cudaMemcpy), or NULL if pe is not on this host. */
void *shmemx_gpu_ptr(const void *dest, int pe);

/* Stream-ordered RMA on the GPU heap (stream is a cudaStream_t; NULL is the
 * default stream): the copy is queued on stream and done when it is. */
void shmemx_putmem_on_stream(void *dest, const void *source, size_t bytes, int pe, void *stream);
void shmemx_getmem_on_stream(void *dest, const void *source, size_t bytes, int pe, void *stream);
/* Completes every host-side GPU-heap copy this PE queued (all streams). */
void shmemx_quiet_on_stream(void *stream);

/* What a kernel needs to reach the peers; filled by shmemx_gpu_state. */
#define SHMEMX_CUDA_MAX_PES 1024
typedef struct shmemx_cuda_state {
    int my_pe, n_pes;
    char *heap_base;            /* this PE's GPU heap, device address */
    size_t heap_size;
    char *const *peer_base;     /* device array: each PE's heap mapped here, NULL if not on this host */
    shmemx_proxy_ring_t *ring;  /* device view of the proxy ring (NULL: every PE is on this host) */
    unsigned long long *ticket; /* device counter handing out ring tickets */
    uint64_t *barrier_words;    /* the block barrier's arrival counter, in the GPU heap */
    uint64_t *barrier_epoch;    /* device word: barriers this PE's kernels have done */
} shmemx_cuda_state_t;
/* 0 on success; -1 when there is no GPU heap. */
int shmemx_gpu_state(shmemx_cuda_state_t *out);

#ifdef __cplusplus
}
#endif

#ifdef __CUDACC__
/* ---- Device API (CUDA C++) ---- */

/* This file's copy of the state; shmemx_cuda_bind fills it. */
static __constant__ shmemx_cuda_state_t shmemx_cuda_dev;

/* Copies the library's state into this .cu file's device copy. 0 on
 * success, -1 without a GPU heap (or if the copy fails). */
static inline int shmemx_cuda_bind(void)
{
    shmemx_cuda_state_t st;
    if (shmemx_gpu_state(&st) != 0) return -1;
    return cudaMemcpyToSymbol(shmemx_cuda_dev, &st, sizeof st) == cudaSuccess ? 0 : -1;
}

__device__ __forceinline__ int shmemx_cuda_my_pe(void) { return shmemx_cuda_dev.my_pe; }
__device__ __forceinline__ int shmemx_cuda_n_pes(void) { return shmemx_cuda_dev.n_pes; }

/* pe's copy of GPU heap address dest as this GPU reaches it; NULL when pe is
 * on another host or dest is not in the GPU heap (a host symmetric address:
 * the proxy serves both). */
__device__ __forceinline__ void *shmemx_cuda_ptr(const void *dest, int pe)
{
    size_t off = (size_t)((const char *)dest - shmemx_cuda_dev.heap_base);
    if (off >= shmemx_cuda_dev.heap_size) return NULL;
    char *b = shmemx_cuda_dev.peer_base[pe];
    return b ? b + off : NULL;
}

/* -- The proxy ring, producer side: a ticket from device memory, the slot
 * written with volatile stores, a system fence, then seq. -- */
__device__ __forceinline__ unsigned long long shoal_cuda_post(uint32_t op, int pe, const void *dest, const void *src,
                                                              uint64_t size, uint64_t operand, uint64_t operand2,
                                                              const void *aux)
{
    shmemx_proxy_ring_t *ring = shmemx_cuda_dev.ring;
    if (!ring) __trap(); /* every PE is on this host: nothing is posted */
    unsigned long long t = atomicAdd(shmemx_cuda_dev.ticket, 1ull);
    volatile shmemx_proxy_request_t *slot = &ring->slots[t & (ring->capacity - 1)];
    while (slot->seq != t) { }
    slot->op = op;
    slot->pe = pe;
    slot->dest = (uint64_t)(uintptr_t)dest;
    slot->src = (uint64_t)(uintptr_t)src;
    slot->size = size;
    slot->operand = operand;
    slot->operand2 = operand2;
    slot->aux = (uint64_t)(uintptr_t)aux;
    __threadfence_system();
    slot->seq = t + 1;
    return t;
}

__device__ __forceinline__ void shoal_cuda_wait_served(unsigned long long t)
{
    volatile uint64_t *served = &shmemx_cuda_dev.ring->served;
    while (*served <= t) { }
    __threadfence_system();
}

/* A fetching request: its result is in its slot, which this thread frees. */
__device__ __forceinline__ uint64_t shoal_cuda_fetch(uint32_t op, int pe, const void *dest, uint64_t operand,
                                                     uint64_t operand2, uint64_t size = 8)
{
    unsigned long long t = shoal_cuda_post(op, pe, dest, NULL, size, operand, operand2, NULL);
    shoal_cuda_wait_served(t);
    shmemx_proxy_ring_t *ring = shmemx_cuda_dev.ring;
    volatile shmemx_proxy_request_t *slot = &ring->slots[t & (ring->capacity - 1)];
    uint64_t v = slot->operand;
    __threadfence_system();
    slot->seq = t + ring->capacity;
    return v;
}

/* Lane lane of lanes copies its share: 16 bytes at a time when both sides
 * allow it, bytes otherwise. */
__device__ __forceinline__ void shoal_cuda_copy(void *dst, const void *src, size_t n, unsigned lane, unsigned lanes)
{
    char *d = (char *)dst;
    const char *s = (const char *)src;
    size_t i = 0;
    if ((((uintptr_t)d | (uintptr_t)s) & 15) == 0) {
        size_t v = n / 16;
        for (size_t k = lane; k < v; k += lanes) ((uint4 *)d)[k] = ((const uint4 *)s)[k];
        i = v * 16;
    }
    for (size_t k = i + lane; k < n; k += lanes) d[k] = s[k];
}

/* -- RMA: thread, warp and block forms. A warp (block) form is called by
 * every thread of the warp (block) with the same arguments. On the proxy
 * path one thread posts; the blocking forms return once the proxy has
 * executed the request (the source may be reused); _nbi forms complete at
 * shmemx_cuda_quiet. -- */
__device__ __forceinline__ void shoal_cuda_put(void *dest, const void *src, size_t n, int pe, unsigned lane,
                                               unsigned lanes, int nbi)
{
    char *p = (char *)shmemx_cuda_ptr(dest, pe);
    if (p) {
        shoal_cuda_copy(p, src, n, lane, lanes);
        return;
    }
    if (lane == 0) {
        unsigned long long t = shoal_cuda_post(SHMEMX_PROXY_PUT, pe, dest, src, n, 0, 0, NULL);
        if (!nbi) shoal_cuda_wait_served(t);
    }
}

__device__ __forceinline__ void shoal_cuda_get(void *dest, const void *src, size_t n, int pe, unsigned lane,
                                               unsigned lanes, int nbi)
{
    const char *p = (const char *)shmemx_cuda_ptr(src, pe);
    if (p) {
        shoal_cuda_copy(dest, p, n, lane, lanes);
        return;
    }
    if (lane == 0) {
        unsigned long long t = shoal_cuda_post(SHMEMX_PROXY_GET, pe, src, dest, n, 0, 0, NULL);
        if (!nbi) shoal_cuda_wait_served(t);
    }
}

__device__ __forceinline__ unsigned shoal_cuda_lane(void) { return threadIdx.x & 31u; }
__device__ __forceinline__ unsigned shoal_cuda_block_rank(void)
{
    return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
__device__ __forceinline__ unsigned shoal_cuda_block_size(void) { return blockDim.x * blockDim.y * blockDim.z; }

__device__ __forceinline__ void shmemx_cuda_putmem(void *dest, const void *src, size_t n, int pe)
{ shoal_cuda_put(dest, src, n, pe, 0, 1, 0); }
__device__ __forceinline__ void shmemx_cuda_putmem_nbi(void *dest, const void *src, size_t n, int pe)
{ shoal_cuda_put(dest, src, n, pe, 0, 1, 1); }
__device__ __forceinline__ void shmemx_cuda_getmem(void *dest, const void *src, size_t n, int pe)
{ shoal_cuda_get(dest, src, n, pe, 0, 1, 0); }
__device__ __forceinline__ void shmemx_cuda_getmem_nbi(void *dest, const void *src, size_t n, int pe)
{ shoal_cuda_get(dest, src, n, pe, 0, 1, 1); }

/* Warp forms: the whole warp (32 threads, converged) calls them. */
__device__ __forceinline__ void shmemx_cuda_putmem_warp(void *dest, const void *src, size_t n, int pe)
{ shoal_cuda_put(dest, src, n, pe, shoal_cuda_lane(), 32, 0); __syncwarp(); }
__device__ __forceinline__ void shmemx_cuda_putmem_nbi_warp(void *dest, const void *src, size_t n, int pe)
{ shoal_cuda_put(dest, src, n, pe, shoal_cuda_lane(), 32, 1); __syncwarp(); }
__device__ __forceinline__ void shmemx_cuda_getmem_warp(void *dest, const void *src, size_t n, int pe)
{ shoal_cuda_get(dest, src, n, pe, shoal_cuda_lane(), 32, 0); __syncwarp(); }
__device__ __forceinline__ void shmemx_cuda_getmem_nbi_warp(void *dest, const void *src, size_t n, int pe)
{ shoal_cuda_get(dest, src, n, pe, shoal_cuda_lane(), 32, 1); __syncwarp(); }

/* Block forms: every thread of the block calls them. */
__device__ __forceinline__ void shmemx_cuda_putmem_block(void *dest, const void *src, size_t n, int pe)
{ shoal_cuda_put(dest, src, n, pe, shoal_cuda_block_rank(), shoal_cuda_block_size(), 0); __syncthreads(); }
__device__ __forceinline__ void shmemx_cuda_putmem_nbi_block(void *dest, const void *src, size_t n, int pe)
{ shoal_cuda_put(dest, src, n, pe, shoal_cuda_block_rank(), shoal_cuda_block_size(), 1); __syncthreads(); }
__device__ __forceinline__ void shmemx_cuda_getmem_block(void *dest, const void *src, size_t n, int pe)
{ shoal_cuda_get(dest, src, n, pe, shoal_cuda_block_rank(), shoal_cuda_block_size(), 0); __syncthreads(); }
__device__ __forceinline__ void shmemx_cuda_getmem_nbi_block(void *dest, const void *src, size_t n, int pe)
{ shoal_cuda_get(dest, src, n, pe, shoal_cuda_block_rank(), shoal_cuda_block_size(), 1); __syncthreads(); }

/* Typed forms: nelems elements of T. */
template <typename T> __device__ __forceinline__ void shmemx_cuda_put(T *dest, const T *src, size_t nelems, int pe)
{ shmemx_cuda_putmem(dest, src, nelems * sizeof(T), pe); }
template <typename T> __device__ __forceinline__ void shmemx_cuda_put_nbi(T *dest, const T *src, size_t nelems, int pe)
{ shmemx_cuda_putmem_nbi(dest, src, nelems * sizeof(T), pe); }
template <typename T> __device__ __forceinline__ void shmemx_cuda_get(T *dest, const T *src, size_t nelems, int pe)
{ shmemx_cuda_getmem(dest, src, nelems * sizeof(T), pe); }
template <typename T> __device__ __forceinline__ void shmemx_cuda_get_nbi(T *dest, const T *src, size_t nelems, int pe)
{ shmemx_cuda_getmem_nbi(dest, src, nelems * sizeof(T), pe); }

/* p and g: one element of 1, 2, 4 or 8 bytes, stored and loaded whole. */
template <typename T> __device__ __forceinline__ void shmemx_cuda_p(T *dest, T value, int pe)
{
    static_assert(sizeof(T) <= 8, "shmemx_cuda_p: elements of at most 8 bytes");
    T *p = (T *)shmemx_cuda_ptr(dest, pe);
    if (p) {
        *(volatile T *)p = value;
        return;
    }
    uint64_t bits = 0;
    memcpy(&bits, &value, sizeof(T));
    shoal_cuda_post(SHMEMX_PROXY_PUT_INLINE, pe, dest, NULL, sizeof(T), bits, 0, NULL);
}
template <typename T> __device__ __forceinline__ T shmemx_cuda_g(const T *src, int pe)
{
    static_assert(sizeof(T) <= 8, "shmemx_cuda_g: elements of at most 8 bytes");
    const T *p = (const T *)shmemx_cuda_ptr(src, pe);
    if (p) return *(const volatile T *)p;
    /* The proxy cannot write this thread's registers: the value comes back
     * in the request's slot. */
    uint64_t word = shoal_cuda_fetch(SHMEMX_PROXY_GET_INLINE, pe, src, 0, 0, sizeof(T));
    T v;
    memcpy(&v, &word, sizeof(T));
    return v;
}

/* -- Atomics on 64-bit words (unsigned long long; the proxy path is 64-bit
 * only). Same host: system-scope atomics through the mapped heap. -- */
typedef unsigned long long shmemx_cuda_u64;
__device__ __forceinline__ shmemx_cuda_u64 shmemx_cuda_atomic_fetch_add(shmemx_cuda_u64 *dest, shmemx_cuda_u64 v, int pe)
{
    shmemx_cuda_u64 *p = (shmemx_cuda_u64 *)shmemx_cuda_ptr(dest, pe);
    return p ? atomicAdd_system(p, v) : shoal_cuda_fetch(SHMEMX_PROXY_FETCH_ADD, pe, dest, v, 0);
}
__device__ __forceinline__ void shmemx_cuda_atomic_add(shmemx_cuda_u64 *dest, shmemx_cuda_u64 v, int pe)
{
    shmemx_cuda_u64 *p = (shmemx_cuda_u64 *)shmemx_cuda_ptr(dest, pe);
    if (p)
        atomicAdd_system(p, v);
    else
        shoal_cuda_post(SHMEMX_PROXY_ADD, pe, dest, NULL, 8, v, 0, NULL);
}
__device__ __forceinline__ shmemx_cuda_u64 shmemx_cuda_atomic_compare_swap(shmemx_cuda_u64 *dest, shmemx_cuda_u64 cond,
                                                                          shmemx_cuda_u64 v, int pe)
{
    shmemx_cuda_u64 *p = (shmemx_cuda_u64 *)shmemx_cuda_ptr(dest, pe);
    return p ? atomicCAS_system(p, cond, v) : shoal_cuda_fetch(SHMEMX_PROXY_CSWAP, pe, dest, v, cond);
}
__device__ __forceinline__ shmemx_cuda_u64 shmemx_cuda_atomic_swap(shmemx_cuda_u64 *dest, shmemx_cuda_u64 v, int pe)
{
    shmemx_cuda_u64 *p = (shmemx_cuda_u64 *)shmemx_cuda_ptr(dest, pe);
    return p ? atomicExch_system(p, v) : shoal_cuda_fetch(SHMEMX_PROXY_SWAP, pe, dest, v, 0);
}
__device__ __forceinline__ shmemx_cuda_u64 shmemx_cuda_atomic_fetch(const shmemx_cuda_u64 *dest, int pe)
{
    const shmemx_cuda_u64 *p = (const shmemx_cuda_u64 *)shmemx_cuda_ptr(dest, pe);
    return p ? atomicAdd_system((shmemx_cuda_u64 *)p, 0ull) : shoal_cuda_fetch(SHMEMX_PROXY_FETCH, pe, dest, 0, 0);
}

/* -- Ordering. fence: puts to each PE before it arrive before puts after it;
 * quiet: every put, get and atomic issued before it is complete. -- */
__device__ __forceinline__ void shmemx_cuda_fence(void)
{
    __threadfence_system();
    if (shmemx_cuda_dev.ring) shoal_cuda_post(SHMEMX_PROXY_FENCE, 0, NULL, NULL, 0, 0, 0, NULL);
}
__device__ __forceinline__ void shmemx_cuda_quiet(void)
{
    __threadfence_system();
    if (shmemx_cuda_dev.ring) shoal_cuda_wait_served(shoal_cuda_post(SHMEMX_PROXY_QUIET, 0, NULL, NULL, 0, 0, 0, NULL));
}

/* -- Signals: the data, then (with release order) the signal word, so a PE
 * that sees the signal sees the data. sig_op is SHMEM_SIGNAL_SET or
 * SHMEM_SIGNAL_ADD. -- */
__device__ __forceinline__ void shoal_cuda_signal(uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)
{
    shmemx_cuda_u64 *s = (shmemx_cuda_u64 *)shmemx_cuda_ptr(sig_addr, pe);
    if (sig_op == SHMEM_SIGNAL_ADD)
        atomicAdd_system(s, (shmemx_cuda_u64)signal);
    else
        atomicExch_system(s, (shmemx_cuda_u64)signal);
}
__device__ __forceinline__ void shoal_cuda_put_signal(void *dest, const void *src, size_t n, uint64_t *sig_addr,
                                                      uint64_t signal, int sig_op, int pe, unsigned lane,
                                                      unsigned lanes, int nbi)
{
    char *p = (char *)shmemx_cuda_ptr(dest, pe);
    if (p) {
        shoal_cuda_copy(p, src, n, lane, lanes);
        __threadfence_system();
        if (lanes > 1) {
            /* Every lane's data is out before the one signal. */
            if (lanes == 32) __syncwarp(); else __syncthreads();
        }
        if (lane == 0) shoal_cuda_signal(sig_addr, signal, sig_op, pe);
        return;
    }
    if (lane == 0) {
        unsigned long long t = shoal_cuda_post(SHMEMX_PROXY_PUT_SIGNAL, pe, dest, src, n, signal, (uint64_t)sig_op, sig_addr);
        if (!nbi) shoal_cuda_wait_served(t);
    }
}
__device__ __forceinline__ void shmemx_cuda_putmem_signal(void *dest, const void *src, size_t n, uint64_t *sig_addr,
                                                          uint64_t signal, int sig_op, int pe)
{ shoal_cuda_put_signal(dest, src, n, sig_addr, signal, sig_op, pe, 0, 1, 0); }
__device__ __forceinline__ void shmemx_cuda_putmem_signal_nbi(void *dest, const void *src, size_t n, uint64_t *sig_addr,
                                                              uint64_t signal, int sig_op, int pe)
{ shoal_cuda_put_signal(dest, src, n, sig_addr, signal, sig_op, pe, 0, 1, 1); }
__device__ __forceinline__ void shmemx_cuda_putmem_signal_warp(void *dest, const void *src, size_t n, uint64_t *sig_addr,
                                                               uint64_t signal, int sig_op, int pe)
{ shoal_cuda_put_signal(dest, src, n, sig_addr, signal, sig_op, pe, shoal_cuda_lane(), 32, 0); __syncwarp(); }
__device__ __forceinline__ void shmemx_cuda_putmem_signal_block(void *dest, const void *src, size_t n, uint64_t *sig_addr,
                                                                uint64_t signal, int sig_op, int pe)
{
    shoal_cuda_put_signal(dest, src, n, sig_addr, signal, sig_op, pe, shoal_cuda_block_rank(), shoal_cuda_block_size(), 0);
    __syncthreads();
}

/* Waits until the local signal word compares true against value (cmp is
 * SHMEM_CMP_EQ, _NE, _GT, _GE, _LT or _LE); returns the word. Reads after
 * it see the data of the put that set it. */
__device__ __forceinline__ uint64_t shmemx_cuda_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t value)
{
    volatile uint64_t *w = sig_addr;
    for (;;) {
        uint64_t v = *w;
        int ok = cmp == SHMEM_CMP_EQ ? v == value : cmp == SHMEM_CMP_NE ? v != value : cmp == SHMEM_CMP_GT ? v > value
               : cmp == SHMEM_CMP_GE ? v >= value : cmp == SHMEM_CMP_LT ? v < value : v <= value;
        if (ok) {
            __threadfence_system();
            return v;
        }
    }
}

/* A barrier across every PE, called by all threads of one block per PE (the
 * same block index on each, at most one such block at a time): the block's
 * earlier puts are complete and visible everywhere when it returns. Every
 * PE must be on this host (the proxy cannot reach another host's GPU heap). */
__device__ __forceinline__ void shmemx_cuda_barrier_all_block(void)
{
    __syncthreads();
    if (shoal_cuda_block_rank() == 0) {
        shmemx_cuda_quiet();
        const int n = shmemx_cuda_dev.n_pes;
        uint64_t epoch = ++*(volatile uint64_t *)shmemx_cuda_dev.barrier_epoch;
        for (int pe = 0; pe < n; pe++) {
            shmemx_cuda_u64 *w = (shmemx_cuda_u64 *)shmemx_cuda_ptr(shmemx_cuda_dev.barrier_words, pe);
            if (!w) __trap();
            atomicAdd_system(w, 1ull);
        }
        shmemx_cuda_signal_wait_until(shmemx_cuda_dev.barrier_words, SHMEM_CMP_GE, epoch * (uint64_t)n);
    }
    __syncthreads();
}
#endif /* __CUDACC__ */

#endif
