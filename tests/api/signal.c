/* signal.c: put-with-signal and the signal routines.
 * 1. Every PE sends 1 MiB with putmem_signal(SHMEM_SIGNAL_ADD, 1) into its
 *    own slice on one root PE; the root waits only with
 *    shmem_signal_wait_until(sig, SHMEM_CMP_EQ, npes) (no barrier before it
 *    reads) and then checks every byte of every slice; signal_fetch agrees.
 *    Repeated for each root of a few, with the nbi form (+ quiet on the
 *    sender), the ctx forms, typed and sized forms and the C11 generic;
 *    and once more with an idle root (it only waits, EQ npes - 1) so that
 *    a signal that overtook its data would be seen.
 *    Then a stream of 64 x 16 KiB put_signals around the ring, each
 *    message's end checked as soon as its signal is seen.
 * 2. SHMEM_SIGNAL_SET: each PE sends a slice with its own signal word set
 *    to a per-PE value; the root waits on each word and checks the slice.
 * 3. Typed put_signal on several types, sized put{8,16,32,64,128}_signal,
 *    0-element puts still deliver the signal, unaligned and odd sizes.
 * 4. shmem_signal_add / shmem_signal_set (and their ctx forms) without data,
 *    and signal_fetch. */
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"

#define MIB (1u << 20)

static int me, npes, right, left;
static uint64_t static_sig;         /* a static signal word */
static uint64_t static_sigs[64];    /* per-PE static signal words */

enum form { F_MEM, F_MEM_NBI, F_CTX_MEM, F_CTX_MEM_NBI, F_LONG, F_SIZED64, F_GENERIC, F_GENERIC_CTX_NBI, F_COUNT };
static const char *form_name[F_COUNT] = {"putmem_signal",      "putmem_signal_nbi", "ctx_putmem_signal",
                                         "ctx_putmem_signal_nbi", "long_put_signal",   "put64_signal",
                                         "generic put_signal",  "generic ctx put_signal_nbi"};

/* Sends bytes (a multiple of 8) of src to dest on pe with the given form. */
static void send(enum form f, unsigned char *dest, const unsigned char *src, size_t bytes, uint64_t *sig,
                 uint64_t value, int op, int pe)
{
    const shmem_ctx_t ctx = SHMEM_CTX_DEFAULT;
    switch (f) {
    case F_MEM: shmem_putmem_signal(dest, src, bytes, sig, value, op, pe); break;
    case F_MEM_NBI:
        shmem_putmem_signal_nbi(dest, src, bytes, sig, value, op, pe);
        shmem_quiet();
        break;
    case F_CTX_MEM: shmem_ctx_putmem_signal(ctx, dest, src, bytes, sig, value, op, pe); break;
    case F_CTX_MEM_NBI:
        shmem_ctx_putmem_signal_nbi(ctx, dest, src, bytes, sig, value, op, pe);
        shmem_ctx_quiet(ctx);
        break;
    case F_LONG: shmem_long_put_signal((long *)dest, (const long *)src, bytes / 8, sig, value, op, pe); break;
    case F_SIZED64: shmem_put64_signal(dest, src, bytes / 8, sig, value, op, pe); break;
    case F_GENERIC: shmem_put_signal((long *)dest, (const long *)src, bytes / 8, sig, value, op, pe); break;
    case F_GENERIC_CTX_NBI:
        shmem_put_signal_nbi(ctx, (unsigned long long *)dest, (const unsigned long long *)src, bytes / 8, sig, value,
                             op, pe);
        shmem_quiet();
        break;
    default: break;
    }
}

/* Part 1: all to one with SHMEM_SIGNAL_ADD. With root_sends == 0 the root
 * only waits, so it sees the signal as early as possible: a signal that
 * overtook its data would be caught. */
static void all_to_one_add(unsigned char *buf, unsigned char *src, uint64_t *sig, const char *sigwhere, int root_sends)
{
    for (int f = 0; f < F_COUNT; f++) {
        const int root = (f * 3) % npes;
        const unsigned salt = 100u + (unsigned)f;
        fill_pattern(src, MIB, me, 0, salt);
        if (me == root) {
            memset(buf, 0, (size_t)npes * MIB);
            *sig = 0;
        }
        shmem_barrier_all();
        const uint64_t senders = (uint64_t)(root_sends ? npes : npes - 1);
        if (me != root || root_sends) send((enum form)f, buf + (size_t)me * MIB, src, MIB, sig, 1, SHMEM_SIGNAL_ADD, root);
        if (me == root) {
            uint64_t v = shmem_signal_wait_until(sig, SHMEM_CMP_EQ, senders);
            CHECK_MSG(v == senders, "%s (%s): signal_wait_until returned %llu", form_name[f], sigwhere,
                      (unsigned long long)v);
            CHECK_MSG(shmem_signal_fetch(sig) == senders, "%s (%s): signal_fetch", form_name[f], sigwhere);
            char what[96];
            /* The ends of the slices first: they are written last, so a
             * signal that overtook its data shows there. */
            for (int p = 0; p < npes; p++) {
                if (p == root && !root_sends) continue;
                snprintf(what, sizeof what, "%s (%s) end of slice of PE %d", form_name[f], sigwhere, p);
                check_pattern(buf + (size_t)p * MIB + MIB - 64, 64, p, MIB - 64, salt, what);
            }
            for (int p = 0; p < npes; p++) {
                if (p == root && !root_sends) continue;
                snprintf(what, sizeof what, "%s (%s) slice of PE %d", form_name[f], sigwhere, p);
                check_pattern(buf + (size_t)p * MIB, MIB, p, 0, salt, what);
            }
        }
        shmem_barrier_all();
    }
}

/* Part 1b: a stream of 64 messages of `bytes` each, the signal counting
 * them (ADD 1, forms rotating), from each even PE to the next odd one, then
 * back. The sender sends back to back; the receiver, as soon as the count
 * moves, checks the end of the newest message it covers (most likely still
 * being copied if the signal overtook its data) and of the others, so it
 * keeps up with the sender; the whole messages are checked at the end.
 * Sizes: 16 KiB, and small ones a transport may carry with the signal in
 * one way (over libfabric: atomics the provider applies in order), an odd
 * size among them. */
#define STREAM_MSGS 64
#define STREAM_MAX (16u << 10)
static void stream_check(const unsigned char *buf, size_t bytes, uint64_t j, int from, int first)
{
    char what[96];
    const size_t tail = bytes < 32 ? bytes : 32;
    if (first) {
        snprintf(what, sizeof what, "stream message %llu of %zu bytes of PE %d (%s) end", (unsigned long long)j,
                 bytes, from, form_name[j % F_COUNT]);
        check_pattern(buf + j * bytes + bytes - tail, tail, from, j * bytes + bytes - tail, 400u, what);
    } else {
        snprintf(what, sizeof what, "stream message %llu of %zu bytes of PE %d (%s)", (unsigned long long)j, bytes,
                 from, form_name[j % F_COUNT]);
        check_pattern(buf + j * bytes, bytes, from, j * bytes, 400u, what);
    }
}

static void stream(unsigned char *buf, unsigned char *src, uint64_t *sig, size_t bytes)
{
    for (int k = 0; k < STREAM_MSGS; k++)
        fill_pattern(src + (size_t)k * bytes, bytes, me, (size_t)k * bytes, 400u);
    for (int phase = 0; phase < 2; phase++) {
        /* phase 0: 2i -> 2i+1; phase 1: 2i+1 -> 2i. One PE: to itself. */
        const int partner = npes == 1 ? me : (me ^ 1);
        const int sender = npes == 1 || (me % 2) == phase;
        const int receiver = npes == 1 || (me % 2) != phase;
        memset(buf, 0, (size_t)STREAM_MSGS * bytes);
        *sig = 0;
        shmem_barrier_all();
        if (partner < npes && sender)
            for (int j = 0; j < STREAM_MSGS; j++)
                send((enum form)(j % F_COUNT), buf + (size_t)j * bytes, src + (size_t)j * bytes,
                     bytes, sig, 1, SHMEM_SIGNAL_ADD, partner);
        if (partner < npes && receiver) {
            uint64_t k = 0;
            while (k < STREAM_MSGS) {
                uint64_t v = shmem_signal_wait_until(sig, SHMEM_CMP_GT, k);
                CHECK_MSG(v > k && v <= STREAM_MSGS, "stream: signal %llu after %llu", (unsigned long long)v,
                          (unsigned long long)k);
                if (v > STREAM_MSGS || v <= k) break;
                stream_check(buf, bytes, v - 1, partner, 1);
                for (uint64_t j = k; j < v; j++) stream_check(buf, bytes, j, partner, 1);
                k = v;
            }
            /* The whole messages once the stream is over (checking them
             * inside the loop would let the sender run ahead). */
            for (uint64_t j = 0; j < STREAM_MSGS; j++) stream_check(buf, bytes, j, partner, 0);
            CHECK(shmem_signal_fetch(sig) == STREAM_MSGS);
        }
        shmem_barrier_all();
    }
}

/* Part 2: SHMEM_SIGNAL_SET, one signal word per sender. */
static void all_to_one_set(unsigned char *buf, unsigned char *src, uint64_t *sigs, const char *sigwhere)
{
    const size_t bytes = MIB / 4 + 8;
    for (int f = 0; f < F_COUNT; f++) {
        const int root = npes - 1 - (f % npes);
        const unsigned salt = 200u + (unsigned)f;
        fill_pattern(src, bytes, me, 0, salt);
        if (me == root) {
            memset(buf, 0, (size_t)npes * bytes);
            for (int p = 0; p < npes; p++) sigs[p] = UINT64_MAX; /* SET must overwrite, not add */
        }
        shmem_barrier_all();
        const uint64_t value = ((uint64_t)(me + 1) << 40) | (uint64_t)f;
        send((enum form)f, buf + (size_t)me * bytes, src, bytes, &sigs[me], value, SHMEM_SIGNAL_SET, root);
        if (me == root) {
            char what[96];
            for (int p = 0; p < npes; p++) {
                const uint64_t want = ((uint64_t)(p + 1) << 40) | (uint64_t)f;
                uint64_t v = shmem_signal_wait_until(&sigs[p], SHMEM_CMP_EQ, want);
                CHECK_MSG(v == want, "%s SET (%s): signal of PE %d is %llx", form_name[f], sigwhere, p,
                          (unsigned long long)v);
                snprintf(what, sizeof what, "%s SET (%s) slice of PE %d", form_name[f], sigwhere, p);
                check_pattern(buf + (size_t)p * bytes, bytes, p, 0, salt, what);
            }
        }
        shmem_barrier_all();
    }
}

/* Part 3: typed and sized forms, small and odd sizes, 0 elements; ring. */
#define TYPED_ROUND(T, NAME, N, SALT)                                                                             \
    do {                                                                                                          \
        T *d_ = (T *)dst, *s_ = (T *)src;                                                                         \
        fill_pattern((unsigned char *)s_, (N) * sizeof(T), me, 0, SALT);                                          \
        memset(d_, 0, (N) * sizeof(T) + 64);                                                                      \
        *sig = 0;                                                                                                 \
        shmem_barrier_all();                                                                                      \
        switch ((SALT) % 4) {                                                                                     \
        case 0: shmem_##NAME##_put_signal(d_, s_, N, sig, 5, SHMEM_SIGNAL_ADD, right); break;                     \
        case 1: shmem_ctx_##NAME##_put_signal(SHMEM_CTX_DEFAULT, d_, s_, N, sig, 5, SHMEM_SIGNAL_SET, right); break; \
        case 2:                                                                                                   \
            shmem_##NAME##_put_signal_nbi(d_, s_, N, sig, 5, SHMEM_SIGNAL_ADD, right);                            \
            shmem_quiet();                                                                                        \
            break;                                                                                                \
        default:                                                                                                  \
            shmem_ctx_##NAME##_put_signal_nbi(SHMEM_CTX_DEFAULT, d_, s_, N, sig, 5, SHMEM_SIGNAL_SET, right);     \
            shmem_ctx_quiet(SHMEM_CTX_DEFAULT);                                                                   \
            break;                                                                                                \
        }                                                                                                         \
        CHECK_MSG(shmem_signal_wait_until(sig, SHMEM_CMP_EQ, 5) == 5, #NAME " typed signal");                     \
        check_pattern((unsigned char *)d_, (N) * sizeof(T), left, 0, SALT, #NAME " put_signal data");            \
        check_fill((unsigned char *)d_ + (N) * sizeof(T), 64, 0, #NAME " put_signal overrun");                   \
        shmem_barrier_all();                                                                                      \
    } while (0)

#define SIZED_ROUND(BITS, N, SALT)                                                                                \
    do {                                                                                                          \
        const size_t bytes_ = (size_t)(N) * (BITS) / 8;                                                           \
        fill_pattern(src, bytes_, me, 0, SALT);                                                                   \
        memset(dst, 0, bytes_ + 64);                                                                              \
        *sig = 0;                                                                                                 \
        shmem_barrier_all();                                                                                      \
        if ((SALT) % 2) {                                                                                         \
            shmem_put##BITS##_signal_nbi(dst, src, N, sig, 1, SHMEM_SIGNAL_ADD, right);                           \
            shmem_quiet();                                                                                        \
        } else {                                                                                                  \
            shmem_ctx_put##BITS##_signal(SHMEM_CTX_DEFAULT, dst, src, N, sig, 1, SHMEM_SIGNAL_ADD, right);        \
        }                                                                                                         \
        shmem_put##BITS##_signal(dst + bytes_, src, 0, sig, 1, SHMEM_SIGNAL_ADD, right); /* 0 elements */          \
        CHECK_MSG(shmem_signal_wait_until(sig, SHMEM_CMP_GE, 2) == 2, "put" #BITS "_signal signal");              \
        check_pattern(dst, bytes_, left, 0, SALT, "put" #BITS "_signal data");                                   \
        check_fill(dst + bytes_, 64, 0, "put" #BITS "_signal overrun");                                          \
        shmem_barrier_all();                                                                                      \
    } while (0)

static void typed_and_sized(unsigned char *dst, unsigned char *src, uint64_t *sig)
{
    TYPED_ROUND(char, char, 1001, 300u);
    TYPED_ROUND(short, short, 77, 301u);
    TYPED_ROUND(int, int, 4099, 302u);
    TYPED_ROUND(long, long, 1, 303u);
    TYPED_ROUND(float, float, 513, 304u);
    TYPED_ROUND(double, double, 20000, 305u);
    TYPED_ROUND(long double, longdouble, 33, 306u);
    TYPED_ROUND(uint8_t, uint8, 3, 307u);
    TYPED_ROUND(int64_t, int64, 1000, 308u);
    TYPED_ROUND(uint32_t, uint32, 5, 309u);
    TYPED_ROUND(size_t, size, 66, 310u);
    TYPED_ROUND(ptrdiff_t, ptrdiff, 67, 311u);
    TYPED_ROUND(unsigned long long, ulonglong, 68, 312u);
    TYPED_ROUND(signed char, schar, 69, 313u);
    SIZED_ROUND(8, 12345, 320u);
    SIZED_ROUND(16, 999, 321u);
    SIZED_ROUND(32, 4097, 322u);
    SIZED_ROUND(64, 1, 323u);
    SIZED_ROUND(128, 300, 324u);
    /* putmem at an odd offset and odd size. */
    fill_pattern(src, 70001, me, 0, 330u);
    memset(dst, 0, 70001 + 64);
    *sig = 0;
    shmem_barrier_all();
    shmem_putmem_signal(dst + 3, src, 70001 - 3, sig, 9, SHMEM_SIGNAL_SET, right);
    shmem_signal_wait_until(sig, SHMEM_CMP_NE, 0);
    CHECK_MSG(shmem_signal_fetch(sig) == 9, "odd putmem_signal: signal %llu", (unsigned long long)shmem_signal_fetch(sig));
    check_fill(dst, 3, 0, "odd putmem_signal head");
    check_pattern(dst + 3, 70001 - 3, left, 0, 330u, "odd putmem_signal data");
    check_fill(dst + 70001, 64, 0, "odd putmem_signal tail");
    shmem_barrier_all();
}

/* Part 4: signal_add / signal_set without data. */
static void signal_ops(uint64_t *sig, uint64_t *sigs)
{
    const int root = npes / 2;
    if (me == root) {
        *sig = 0;
        for (int p = 0; p < npes; p++) sigs[p] = 0;
    }
    shmem_barrier_all();
    shmem_signal_add(sig, (uint64_t)me + 1, root);
    shmem_ctx_signal_add(SHMEM_CTX_DEFAULT, sig, UINT64_C(1) << 40, root);
    shmem_signal_set(&sigs[me], UINT64_MAX - (uint64_t)me, root);
    if (me == root) {
        const uint64_t want = (uint64_t)npes * (npes + 1) / 2 + ((uint64_t)npes << 40);
        uint64_t v = shmem_signal_wait_until(sig, SHMEM_CMP_EQ, want);
        CHECK_MSG(v == want, "signal_add: %llx, expected %llx", (unsigned long long)v, (unsigned long long)want);
        for (int p = 0; p < npes; p++) {
            v = shmem_signal_wait_until(&sigs[p], SHMEM_CMP_EQ, UINT64_MAX - (uint64_t)p);
            CHECK_MSG(shmem_signal_fetch(&sigs[p]) == UINT64_MAX - (uint64_t)p, "signal_set of PE %d", p);
        }
    }
    shmem_barrier_all();
    /* ctx signal_set overwrites; signal_add wraps modulo 2^64. */
    if (me == 0) shmem_ctx_signal_set(SHMEM_CTX_DEFAULT, sig, UINT64_MAX, root);
    shmem_barrier_all();
    if (me == root) CHECK(shmem_signal_fetch(sig) == UINT64_MAX);
    shmem_barrier_all();
    if (me == 0) shmem_signal_add(sig, 2, root);
    if (me == root) {
        uint64_t v = shmem_signal_wait_until(sig, SHMEM_CMP_LT, UINT64_MAX);
        CHECK_MSG(v == 1, "UINT64_MAX + 2 = %llu", (unsigned long long)v);
    }
    shmem_barrier_all();
    /* Signals on every PE at once: each adds to every PE's word. */
    *sig = 0;
    shmem_barrier_all();
    for (int k = 0; k < npes; k++) shmem_signal_add(sig, (uint64_t)(me + 1) * 1000, (me + k) % npes);
    const uint64_t want = (uint64_t)npes * (npes + 1) / 2 * 1000;
    CHECK(shmem_signal_wait_until(sig, SHMEM_CMP_EQ, want) == want);
    shmem_barrier_all();
}

int main(void)
{
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    test_pe = me;
    right = (me + 1) % npes;
    left = (me - 1 + npes) % npes;
    if (npes > 64) {
        shmem_finalize();
        return TEST_SKIP;
    }
    unsigned char *buf = shmem_malloc((size_t)npes * MIB);
    unsigned char *src = malloc(MIB);
    uint64_t *sig = shmem_calloc(1, sizeof(uint64_t));
    uint64_t *sigs = shmem_calloc((size_t)npes, sizeof(uint64_t));
    if (!buf || !src || !sig || !sigs) {
        CHECK(!"allocation failed");
        return test_finish();
    }
    all_to_one_add(buf, src, sig, "heap signal", 1);
    all_to_one_add(buf, src, &static_sig, "static signal", 1);
    all_to_one_add(buf, src, sig, "heap signal, root idle", 0);
    static const size_t stream_sizes[] = {STREAM_MAX, 8, 200, 256};
    for (size_t i = 0; i < sizeof stream_sizes / sizeof *stream_sizes; i++) {
        stream(buf, src, sig, stream_sizes[i]);
        stream(buf, src, &static_sig, stream_sizes[i]);
    }
    all_to_one_set(buf, src, sigs, "heap signals");
    all_to_one_set(buf, src, static_sigs, "static signals");
    typed_and_sized(buf, src, sig);
    signal_ops(sig, sigs);
    signal_ops(&static_sig, static_sigs);

    shmem_free(sigs);
    shmem_free(sig);
    free(src);
    shmem_free(buf);
    shmem_finalize();
    return test_finish();
}
