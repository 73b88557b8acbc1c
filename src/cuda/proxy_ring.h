/* proxy_ring.h: the ring through which producers (kernels, or CPU threads in
 * the host-only tests) hand RMA requests to the proxy thread. Many
 * producers, one consumer, fixed slots (shmemx_proxy_request_t, laid out in
 * include/shmemx_cuda.h so kernels share it). Plain C11 atomics: the ring
 * may live in pinned host memory that a GPU writes over PCIe.
 *
 * A producer takes a ticket t, waits until slot t % capacity is free
 * (seq == t), fills it and publishes seq = t + 1 with release order. The
 * consumer serves tickets strictly in order, then frees the slot
 * (seq = t + capacity) and publishes served = t + 1. A fetching request
 * (FETCH_ADD, CSWAP, SWAP, FETCH, GET_INLINE) gets its result in the slot's operand
 * and its slot is freed by the producer once it has read it, so no later
 * request can overwrite a result before it is read. */
#ifndef SHOAL_CUDA_PROXY_RING_H
#define SHOAL_CUDA_PROXY_RING_H

#include <shmemx_cuda.h>
#include <stddef.h>
#include <stdint.h>

#include "util/status.h"

/* Bytes a ring of capacity slots takes (header included). */
size_t shoal_proxy_ring_bytes(uint64_t capacity);
/* Lays out a ring in mem (shoal_proxy_ring_bytes(capacity) bytes, 64-byte
 * aligned); capacity is a power of two, at least 2. */
shoal_status_t shoal_proxy_ring_init(void *mem, uint64_t capacity, shmemx_proxy_ring_t **out);

/* CPU producer: posts *req (its seq is ignored) and returns its ticket.
 * Waits while the ring is full. Thread-safe. */
uint64_t shoal_proxy_ring_post(shmemx_proxy_ring_t *ring, const shmemx_proxy_request_t *req);
/* CPU producer: waits until the request with ticket t has been executed. */
void shoal_proxy_ring_wait(shmemx_proxy_ring_t *ring, uint64_t ticket);
/* CPU producer: posts a fetching request, waits for it and returns its result. */
uint64_t shoal_proxy_ring_fetch(shmemx_proxy_ring_t *ring, const shmemx_proxy_request_t *req);
/* 1 for the ops whose slot the producer frees (they return a value). */
int shoal_proxy_op_fetches(uint32_t op);

/* Consumer: copies the next request into *req if one is ready (returns 1,
 * its ticket in *ticket), else returns 0. */
int shoal_proxy_ring_peek(shmemx_proxy_ring_t *ring, shmemx_proxy_request_t *req, uint64_t *ticket);
/* Consumer: the request peeked as ticket has been executed (result: the
 * value of a fetching op): frees its slot unless the producer must read
 * the result first, and publishes served. */
void shoal_proxy_ring_done(shmemx_proxy_ring_t *ring, uint64_t ticket, uint64_t result);

#endif
