/* tls_transport_test.c: the encrypted transport on its own, below the
 * runtime: bootstrap, two segments, shoal_transport_tls with every PE (this
 * one included) reached over TLS streams on loopback. Checks the data of
 * puts and gets of 1 byte to 4 MiB to every PE, every atomic on 4 and 8
 * bytes, quiet on a second context, and the target's own checks, which
 * the library's API otherwise keeps anyone from reaching: a put and an
 * atomic past the end of a segment, and a put into the read-only span (a
 * page made read-only with mprotect, as RELRO is), are refused by the
 * target, which does not fault and keeps its memory; the initiator ends the
 * "job" with one line naming the PE (setup.fatal, caught here); a get from
 * the read-only span works. Signals and puts with a signal land without a
 * quiet. With an argument, "signal" or "put-signal", 2 PEs check instead
 * that a refused signal ends the job at its target, PE 1, which would
 * otherwise wait for it forever (the test's output holds the line; its
 * timeout catches a hang). Default-context streams
 * share one connection per pair (tls_pair.c), after a stranger's openings
 * claiming PE numbers were refused or failed; PE 1 opens its own streams
 * unpaired (pairing off there), as on a host with the kernel's tls module,
 * and still answers the others' openings. Run under oshrun. */
#include <errno.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <time.h>

#include "boot/boot.h"
#include "harness.h"
#include "transport_fatal.h"
#include "heap/segment.h"
#include "transport/tls/tls.h"
#include "transport/transport.h"
#include "util/log.h"

#define MiB ((size_t)1 << 20)
#define PAGE ((size_t)4096)
#define DATA_SIZE (4 * PAGE)
#define SLOT (4 * MiB)          /* one source PE's area in a put target */
#define AMO_OFF ((size_t)96 * MiB) /* atomics, after the put slots */
#define SIG_OFF ((size_t)97 * MiB) /* signals: PE p's flag words at SIG_OFF + 64 p, its data past them */

static const struct shoal_transport_ops *const T = &shoal_transport_tls;
static shoal_boot_t *boot;
static shoal_segment_t heap, data;
static int me, npes;

static void must(shoal_status_t st, const char *what)
{
    if (st == SHOAL_OK) return;
    fprintf(stderr, "PE %d: %s failed: %s\n", me, what, shoal_status_str(st));
    exit(1);
}

static void barrier(void)
{
    must(boot->ops->barrier(boot), "barrier");
}

static unsigned char pattern(int pe, size_t i)
{
    return (unsigned char)(pe * 31 + i * 7 + (i >> 12));
}

/* Every PE puts size bytes into its slot of every PE, quiets, then every PE
 * reads every other's copy back. */
static void test_put_get(shoal_tctx_t *ctx, size_t size)
{
    unsigned char *src = malloc(size), *back = malloc(size);
    for (size_t i = 0; i < size; i++) src[i] = pattern(me, i);
    for (int pe = 0; pe < npes; pe++) must(T->put(ctx, pe, SHOAL_SEG_HEAP, (size_t)me * SLOT, src, size), "put");
    T->quiet(ctx);
    barrier();
    for (int from = 0; from < npes; from++) {
        unsigned char *got = (unsigned char *)heap.base + (size_t)from * SLOT;
        size_t bad = 0;
        for (size_t i = 0; i < size; i++) bad += got[i] != pattern(from, i);
        CHECK_MSG(bad == 0, "%zu-byte put from PE %d: %zu bytes wrong", size, from, bad);
    }
    for (int pe = 0; pe < npes; pe++) {
        memset(back, 0, size);
        must(T->get(ctx, pe, SHOAL_SEG_HEAP, (size_t)me * SLOT, back, size), "get");
        CHECK_MSG(memcmp(back, src, size) == 0, "%zu-byte get of my slot at PE %d differs", size, pe);
    }
    barrier();
    free(back);
    free(src);
}

/* PE 0 runs each atomic on every PE's word; the old values and the results
 * are checked on both widths. */
static void test_amo(void)
{
    for (size_t elem = 4; elem <= 8; elem *= 2) {
        uint64_t mask = elem == 4 ? 0xffffffffu : UINT64_MAX;
        memset(heap.base + AMO_OFF, 0, 64);
        barrier();
        if (me == 0)
            for (int pe = 0; pe < npes; pe++) {
                uint64_t old = 1;
                must(T->amo(NULL, pe, SHOAL_SEG_HEAP, AMO_OFF, elem, SHOAL_AMO_SET, 40, 0, NULL), "set");
                must(T->amo(NULL, pe, SHOAL_SEG_HEAP, AMO_OFF, elem, SHOAL_AMO_ADD, 2, 0, &old), "fadd");
                CHECK_MSG(old == 40, "fetch_add on PE %d fetched %llu", pe, (unsigned long long)old);
                must(T->amo(NULL, pe, SHOAL_SEG_HEAP, AMO_OFF, elem, SHOAL_AMO_CSWAP, 7, 42, &old), "cswap");
                CHECK(old == 42);
                must(T->amo(NULL, pe, SHOAL_SEG_HEAP, AMO_OFF, elem, SHOAL_AMO_XOR, mask, 0, &old), "fxor");
                CHECK(old == 7);
                must(T->amo(NULL, pe, SHOAL_SEG_HEAP, AMO_OFF, elem, SHOAL_AMO_FETCH, 0, 0, &old), "fetch");
                CHECK_MSG(old == (7 ^ mask), "fetch after xor on PE %d: %llx", pe, (unsigned long long)old);
            }
        T->quiet(NULL);
        barrier();
    }
}

/* Signals (transport.h): every PE sends every PE a put_signal (8 bytes,
 * then its flag set to 5) and two signal adds (3, then 4) on a second word,
 * with no quiet: each target sees its flags arrive by itself, and the data
 * before the flag. */
static void test_signals(void)
{
    memset(heap.base + SIG_OFF, 0, (size_t)(npes + 1) * 64);
    barrier();
    for (int pe = 0; pe < npes; pe++) {
        const size_t flags = SIG_OFF + (size_t)me * 64, text = SIG_OFF + (size_t)(npes + me) * 64;
        const uint64_t word = 0x5100000000000000ull | (uint64_t)me;
        must(T->put_signal(NULL, 0, pe, SHOAL_SEG_HEAP, text, &word, sizeof word, SHOAL_SEG_HEAP, flags,
                           SHOAL_AMO_SET, 5),
             "put_signal");
        must(T->signal(pe, SHOAL_SEG_HEAP, flags + 8, SHOAL_AMO_ADD, 3), "signal");
        must(T->signal(pe, SHOAL_SEG_HEAP, flags + 8, SHOAL_AMO_ADD, 4), "signal");
    }
    for (int from = 0; from < npes; from++) {
        const uint64_t *flag = (const uint64_t *)(heap.base + SIG_OFF + (size_t)from * 64);
        const uint64_t *text = (const uint64_t *)(heap.base + SIG_OFF + (size_t)(npes + from) * 64);
        long spins = 0;
        while (__atomic_load_n(&flag[0], __ATOMIC_ACQUIRE) != 5 && ++spins < 2000000000L) sched_yield();
        CHECK_MSG(flag[0] == 5, "put_signal from PE %d: flag %llu", from, (unsigned long long)flag[0]);
        CHECK_MSG(*text == (0x5100000000000000ull | (uint64_t)from), "put_signal from PE %d: data %llx before its flag",
                  from, (unsigned long long)*text);
        while (__atomic_load_n(&flag[1], __ATOMIC_ACQUIRE) != 7 && ++spins < 2000000000L) sched_yield();
        CHECK_MSG(flag[1] == 7, "signals from PE %d added up to %llu, not 7", from, (unsigned long long)flag[1]);
    }
    barrier();
}

/* shmem_put_signal's form: a counted put_signal on a context of its own,
 * 3 KiB of data and an ADD, to every PE. The quiet on that context alone
 * must cover it: right after it and a barrier, every target holds the data
 * and the summed flag, with no waiting. */
static void test_counted_put_signal(shoal_tctx_t *ctx)
{
    enum { BYTES = 3072 };
    const size_t flags = SIG_OFF, text = SIG_OFF + 64;
    memset(heap.base + SIG_OFF, 0, 64 + (size_t)npes * BYTES);
    barrier();
    unsigned char src[BYTES];
    for (size_t i = 0; i < BYTES; i++) src[i] = pattern(me, i);
    for (int pe = 0; pe < npes; pe++)
        must(T->put_signal(ctx, 1, pe, SHOAL_SEG_HEAP, text + (size_t)me * BYTES, src, BYTES, SHOAL_SEG_HEAP, flags,
                           SHOAL_AMO_ADD, (uint64_t)me + 1),
             "counted put_signal");
    T->quiet(ctx);
    barrier();
    const uint64_t flag = __atomic_load_n((const uint64_t *)(heap.base + flags), __ATOMIC_ACQUIRE);
    CHECK_MSG(flag == (uint64_t)npes * (uint64_t)(npes + 1) / 2, "counted put_signals added up to %llu after quiet",
              (unsigned long long)flag);
    for (int from = 0; from < npes; from++) {
        const unsigned char *got = (const unsigned char *)heap.base + text + (size_t)from * BYTES;
        size_t bad = 0;
        for (size_t i = 0; i < BYTES; i++) bad += got[i] != pattern(from, i);
        CHECK_MSG(bad == 0, "counted put_signal from PE %d: %zu bytes wrong after quiet", from, bad);
    }
    barrier();
}

/* PE 0 sends what the API would never let through; PE 1 must refuse it,
 * with a line naming it and PE 1. kind: 0 an atomic, 1 a put, 2 a counted
 * put_signal whose flag is at (seg, off). */
static void expect_refused(int kind, enum shoal_segment_id seg, size_t off, const char *want)
{
    uint64_t word = 0xa5a5a5a5a5a5a5a5ull, old;
    shoal_tctx_t *ctx = NULL; /* abandoned: the fatal leaves its stream locked */
    must(T->ctx_create(&ctx), "ctx_create");
    if (kind == 2)
        EXPECT_FATAL((T->put_signal(ctx, 1, 1, SHOAL_SEG_HEAP, AMO_OFF, &word, sizeof word, seg, off, SHOAL_AMO_SET, 1),
                      T->quiet(ctx)),
                     want, 1);
    else if (kind == 1)
        EXPECT_FATAL((T->put(ctx, 1, seg, off, &word, sizeof word), T->quiet(ctx)), want, 1);
    else
        EXPECT_FATAL(T->amo(ctx, 1, seg, off, 8, SHOAL_AMO_ADD, 1, 0, &old), want, 1);
}

static void test_refusals(void)
{
    if (me == 0) {
        expect_refused(1, SHOAL_SEG_DATA, PAGE + 8, "read-only");        /* into the read-only span */
        expect_refused(1, SHOAL_SEG_HEAP, heap.size - 4, "outside");      /* past the heap's end */
        expect_refused(0, SHOAL_SEG_DATA, DATA_SIZE, "outside");          /* past the data's end */
        expect_refused(2, SHOAL_SEG_DATA, PAGE + 8, "read-only");        /* a counted put_signal's flag */
        unsigned char back[64];
        must(T->get(NULL, 1, SHOAL_SEG_DATA, PAGE, back, sizeof back), "get from the read-only span");
        size_t bad = 0;
        for (size_t i = 0; i < sizeof back; i++) bad += back[i] != pattern(1, PAGE + i);
        CHECK_MSG(bad == 0, "get from PE 1's read-only span: %zu bytes wrong", bad);
    }
    barrier();
    size_t bad = 0;
    for (size_t i = 0; i < DATA_SIZE; i++) bad += (unsigned char)data.base[i] != pattern(me, i);
    CHECK_MSG(bad == 0, "my static stand-in changed in %zu bytes", bad);
}

/* PE 0 sends PE 1 a signal (kind "signal") or a put with a signal (any
 * other kind) whose word lies in PE 1's read-only span, which the API
 * never lets through; PE 1 must end the job (test_fatal, fatal_ends_job)
 * while both wait, since nothing answers a signal and PE 0 never quiets.
 * Returns only if nothing ended it within 30 s: the test fails. */
static void expect_signal_ends_job(const char *kind)
{
    fatal_ends_job = 1;
    barrier();
    if (me == 0) {
        const uint64_t word = 7;
        if (!strcmp(kind, "signal"))
            must(T->signal(1, SHOAL_SEG_DATA, PAGE + 8, SHOAL_AMO_SET, 1), "signal");
        else
            must(T->put_signal(NULL, 0, 1, SHOAL_SEG_HEAP, 0, &word, sizeof word, SHOAL_SEG_DATA, PAGE + 8,
                               SHOAL_AMO_SET, 1),
                 "put_signal");
    }
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        T->progress(); /* both wait, as in a barrier */
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while (t.tv_sec - t0.tv_sec < 30);
    CHECK_MSG(0, "a refused %s did not end the job within 30 s", kind);
}

/* A stranger's pair openings (tls_pair.c) at PE 1, before PEs 0 and 1
 * talk: one claiming PE 0 is answered, then closed once its junk on
 * channel 0 fails the handshake; ones claiming PE 1 itself or no PE of the
 * job get no answer; a last one claiming PE 0 stays open and silent while
 * the job's own default streams open and pair (the tests after this one):
 * no claim keeps them from it. Returns that last connection (PE 0). */
static int test_stranger_openings(void)
{
    int idle = -1;
    if (me == 0) {
        const struct sockaddr_in *to = &shoal_tls.peer[1].sin;
        const uint32_t claims[] = {0, 1, 9999, 0};
        for (size_t i = 0; i < sizeof claims / sizeof claims[0]; i++) {
            int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
            CHECK(fd >= 0 && connect(fd, (const struct sockaddr *)to, sizeof *to) == 0);
            const struct timeval limit = {10, 0};
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
            const uint32_t c = claims[i];
            const unsigned char opening[8] = {SHOAL_TLS_PAIR_FIRST, 'H', 'P', '1', (unsigned char)c,
                                              (unsigned char)(c >> 8), (unsigned char)(c >> 16), (unsigned char)(c >> 24)};
            CHECK(write(fd, opening, sizeof opening) == (ssize_t)sizeof opening);
            char answer = 0;
            const ssize_t n = read(fd, &answer, 1);
            if (c != 0) {
                CHECK_MSG(n == 0, "an opening claiming PE %u was answered (%zd, %c)", c, n, answer);
            } else if (i == 3) {
                CHECK_MSG(n == 1 && answer == 'A', "a second opening claiming PE 0 got %zd, %c", n, answer);
                idle = fd;
                continue;
            } else {
                CHECK_MSG(n == 1 && answer == 'A', "an opening claiming PE 0 got %zd, %c", n, answer);
                /* A frame of channel 0 that is no TLS record. */
                unsigned char junk[4 + 64] = {64, 0, 0, 0};
                CHECK(write(fd, junk, sizeof junk) == (ssize_t)sizeof junk);
                unsigned char rest[256];
                ssize_t k;
                while ((k = read(fd, rest, sizeof rest)) > 0) {}
                CHECK_MSG(k == 0, "the stranger's connection was not closed: %s", strerror(errno));
            }
            close(fd);
        }
    }
    barrier();
    return idle;
}

/* Every PE holds the same job key, and not the zeros the PEs other than 0
 * contribute; PE 0 prints it, so that two jobs can be compared (a key
 * fixed or guessable across jobs would grant any job's streams). */
static void check_job_key(void)
{
    static const unsigned char zeros[SHOAL_TLS_KEY_LEN];
    unsigned char *all = malloc((size_t)npes * SHOAL_TLS_KEY_LEN);
    CHECK(all);
    must(boot->ops->allgather(boot, shoal_tls.key, SHOAL_TLS_KEY_LEN, all), "allgather of the keys");
    CHECK_MSG(memcmp(shoal_tls.key, zeros, SHOAL_TLS_KEY_LEN) != 0, "PE %d's job key is all zeros", me);
    for (int pe = 1; pe < npes; pe++)
        CHECK_MSG(memcmp(all, all + (size_t)pe * SHOAL_TLS_KEY_LEN, SHOAL_TLS_KEY_LEN) == 0,
                  "PE %d's job key differs from PE 0's", pe);
    if (me == 0) {
        printf("job key ");
        for (int i = 0; i < SHOAL_TLS_KEY_LEN; i++) printf("%02x", shoal_tls.key[i]);
        printf("\n");
        fflush(stdout);
    }
    free(all);
}

int main(int argc, char **argv)
{
    const char *refused_kind = argc > 1 ? argv[1] : NULL;
    must(shoal_boot_open(&boot), "boot open");
    me = test_pe = boot->rank;
    npes = boot->size;
    shoal_log_set_pe(me);
    must(shoal_segment_create_heap(128 * MiB, &heap), "heap");
    must(shoal_segment_create_heap(DATA_SIZE, &data), "data");
    for (size_t i = 0; i < DATA_SIZE; i++) data.base[i] = (char)pattern(me, i);
    data.ro_offset = PAGE;
    data.ro_len = PAGE;
    CHECK(mprotect(data.base + PAGE, PAGE, PROT_READ) == 0);
    struct shoal_peer *peers = calloc((size_t)npes, sizeof *peers);
    struct shoal_transport_setup setup = {.boot = boot, .my_pe = me, .n_pes = npes, .n_nodes = 1,
                                          .fabric_all = 1, .local = {&heap, &data}, .peers = peers,
                                          .fatal = test_fatal, .tls_pair = me != 1};
    must(T->init(&setup), "tls init");
    CHECK_MSG(strncmp(setup.listen, "tls 127.0.0.1:", 14) == 0, "listens on '%s', not loopback", setup.listen);
    check_job_key();
    if (refused_kind && !strcmp(refused_kind, "key")) {
        barrier();
        T->fini(&setup);
        must(boot->ops->finalize(boot), "finalize");
        return test_finish();
    }
    if (refused_kind && npes == 2) {
        expect_signal_ends_job(refused_kind);
        return test_finish();
    }
    shoal_tctx_t *ctx2 = NULL;
    const int idle_stranger = npes >= 2 ? test_stranger_openings() : -1;
    must(T->ctx_create(&ctx2), "ctx_create");
    for (size_t size = 1; size <= 4 * MiB; size *= 16) test_put_get(ctx2, size);
    if (idle_stranger >= 0) {
        /* PE 0's default stream to PE 1 opens while PE 1 opens none (it
         * waits in the bootstrap's barrier) and the idle stranger claiming
         * PE 0 is still pending there: it must not wait out the stranger's
         * 10 s handshake deadline. */
        struct timespec t0, t1;
        const uint64_t word = 42;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        must(T->put(NULL, 1, SHOAL_SEG_HEAP, 0, &word, sizeof word), "put");
        T->quiet(NULL);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        const double took = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
        CHECK_MSG(took < 5.0, "PE 0's first put to PE 1 took %.1f s beside a stranger's claim", took);
    }
    barrier();
    test_put_get(NULL, 4 * MiB);
    test_amo();
    test_signals();
    test_counted_put_signal(ctx2);
    if (npes >= 2) test_refusals();
    T->ctx_destroy(ctx2);
    if (idle_stranger >= 0) close(idle_stranger);
    barrier();
    T->fini(&setup);
    free(peers);
    mprotect(data.base + PAGE, PAGE, PROT_READ | PROT_WRITE);
    shoal_segment_destroy_heap(&data);
    shoal_segment_destroy_heap(&heap);
    must(boot->ops->finalize(boot), "finalize");
    boot->ops->close(boot);
    return test_finish();
}
