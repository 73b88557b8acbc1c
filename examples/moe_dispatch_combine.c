/* moe_dispatch_combine: the communication of a mixture-of-experts layer.
 * Each PE holds T tokens of H features; a router sends every token to its
 * top-2 experts (of E, expert e living on PE e % npes) with gate weights
 * g0 + g1 = 1. Dispatch moves each token to the PEs of its experts; each
 * expert computes y = softsign(W_e x); combine brings the two results home,
 * where out = g0 y0 + g1 y1.
 *
 * Dispatch: for each destination PE the sender packs records (slot, expert,
 * x) and sends them in chunks of C records with put_signal into its own
 * region of the receiver's buffer. The signal counts arrived records; the
 * last chunk also adds 2^32 ("no more"). The receiver does not wait for
 * whole batches: it waits with wait_until_any_vector for any signal to
 * change, runs the expert on the records that arrived, and sends each
 * result straight back with put_signal into the slot the token came from
 * (the signal counts results). Between its own chunks a sender serves its
 * experts too, so sending, expert compute and combine overlap. A PE is
 * done when all its senders said "no more" and 2T results are home.
 * The result is checked against a serial computation.
 *
 * Usage: oshrun -n 4 moe_dispatch_combine [T H E [C]]   (default 256 64 8 16) */
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LAST (1ull << 32) /* added by a sender's last chunk */

static int T, H, E, C, me, npes;

static uint32_t mix(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7FEB352Du;
    x ^= x >> 15;
    x *= 0x846CA68Bu;
    x ^= x >> 16;
    return x;
}

static float input(unsigned i, unsigned j, unsigned which)
{
    uint32_t x = mix(i * 2654435761u ^ mix(j + 0x9E3779B9u * which));
    return (float)(x & 0xFFFF) / 32768.0f - 1.0f;
}

/* Routing of global token g: two distinct experts and their gate weights. */
static void route(long g, int *e0, int *e1, float *g0, float *g1)
{
    uint32_t h = mix((uint32_t)g * 0x9E3779B1u + 12345u);
    *e0 = (int)(h % (uint32_t)E);
    *e1 = (*e0 + 1 + (int)((h >> 8) % (uint32_t)(E - 1))) % E;
    *g0 = 0.5f + (float)((h >> 20) & 1023) / 4096.0f;
    *g1 = 1.0f - *g0;
}

/* y = softsign(W_e x), W_e[j][k] = input(j, k, 100 + e) / 8. */
static void expert(int e, const float *x, float *y)
{
    for (int j = 0; j < H; j++) {
        float s = 0;
        for (int k = 0; k < H; k++) s += input((unsigned)j, (unsigned)k, 100u + (unsigned)e) * 0.125f * x[k];
        y[j] = s / (1.0f + (s < 0 ? -s : s));
    }
}

/* Symmetric state. */
static float *inbox;     /* [npes senders][2T records][2 + H]: slot, expert, x */
static uint64_t *insig;  /* [npes]: records arrived from each sender (+ LAST) */
static float *results;   /* [T][2][H]: expert outputs, home */
static uint64_t *homesig; /* results arrived */
static long *served;     /* [npes]: records of each sender processed */
static int *finished;    /* [npes]: sender said "no more" and all served */
static int senders_left;

/* Runs the experts on whatever has arrived; returns how many records. */
static long serve(int block)
{
    uint64_t seen[64];
    int status[64];
    for (int s = 0; s < npes; s++) {
        seen[s] = (uint64_t)served[s] | (finished[s] ? LAST : 0);
        status[s] = finished[s];
    }
    if (block && senders_left)
        shmem_uint64_wait_until_any_vector(insig, (size_t)npes, status, SHMEM_CMP_NE, seen);
    long n = 0;
    float *y = malloc((size_t)H * sizeof *y);
    for (int s = 0; s < npes; s++) {
        if (finished[s]) continue;
        const uint64_t v = shmem_signal_fetch(&insig[s]);
        const long arrived = (long)(v & (LAST - 1));
        for (; served[s] < arrived; served[s]++, n++) {
            const float *rec = inbox + ((size_t)s * 2 * T + (size_t)served[s]) * (size_t)(2 + H);
            const int slot = (int)rec[0], e = (int)rec[1];
            expert(e, rec + 2, y);
            shmem_putmem_signal(results + (size_t)slot * H, y, (size_t)H * sizeof *y, homesig, 1,
                                SHMEM_SIGNAL_ADD, s);
        }
        if (v & LAST) {
            finished[s] = 1;
            senders_left--;
        }
    }
    free(y);
    return n;
}

int main(int argc, char **argv)
{
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    T = argc > 1 ? atoi(argv[1]) : 256;
    H = argc > 2 ? atoi(argv[2]) : 64;
    E = argc > 3 ? atoi(argv[3]) : 8;
    C = argc > 4 ? atoi(argv[4]) : 16;
    if (T <= 0 || H <= 0 || E < 2 || C <= 0 || npes > 64 || 2L * T >= (1L << 24)) {
        if (me == 0) fprintf(stderr, "usage: moe_dispatch_combine [T H E [C]] with E >= 2, at most 64 PEs\n");
        shmem_finalize();
        return 2;
    }
    const size_t rec = (size_t)(2 + H);
    inbox = shmem_malloc((size_t)npes * 2 * T * rec * sizeof *inbox);
    insig = shmem_calloc((size_t)npes, sizeof *insig);
    results = shmem_malloc((size_t)T * 2 * H * sizeof *results);
    homesig = shmem_calloc(1, sizeof *homesig);
    served = calloc((size_t)npes, sizeof *served);
    finished = calloc((size_t)npes, sizeof *finished);
    senders_left = npes;

    /* Tokens of this PE, and the records for each destination PE. */
    float *x = malloc((size_t)T * H * sizeof *x);
    for (int t = 0; t < T; t++)
        for (int k = 0; k < H; k++) x[(size_t)t * H + k] = input((unsigned)(me * T + t), (unsigned)k, 7);
    float *out_pack = malloc((size_t)npes * 2 * T * rec * sizeof *out_pack);
    int *count = calloc((size_t)npes, sizeof *count);
    for (int t = 0; t < T; t++) {
        int e[2];
        float g[2];
        route((long)me * T + t, &e[0], &e[1], &g[0], &g[1]);
        for (int k = 0; k < 2; k++) {
            const int d = e[k] % npes;
            float *r = out_pack + ((size_t)d * 2 * T + (size_t)count[d]++) * rec;
            r[0] = (float)(2 * t + k); /* where the result goes home: results[t][k] */
            r[1] = (float)e[k];
            memcpy(r + 2, x + (size_t)t * H, (size_t)H * sizeof *x);
        }
    }
    shmem_barrier_all();

    /* Dispatch chunk by chunk, round-robin over destinations (me+1 first),
     * serving arrived records between chunks. */
    int *sent = calloc((size_t)npes, sizeof *sent), more = 1;
    long served_total = 0;
    while (more) {
        more = 0;
        for (int q = 1; q <= npes; q++) {
            const int d = (me + q) % npes;
            if (sent[d] > count[d]) continue; /* "no more" already sent */
            const int n = count[d] - sent[d] < C ? count[d] - sent[d] : C;
            const int last = sent[d] + n == count[d];
            shmem_putmem_signal(inbox + ((size_t)me * 2 * T + (size_t)sent[d]) * rec,
                                out_pack + ((size_t)d * 2 * T + (size_t)sent[d]) * rec, (size_t)n * rec * sizeof(float),
                                &insig[me], (uint64_t)n + (last ? LAST : 0), SHMEM_SIGNAL_ADD, d);
            sent[d] += n + last; /* past count[d] once "no more" is sent */
            more |= !last;
        }
        served_total += serve(0);
    }
    while (senders_left) served_total += serve(1);
    shmem_signal_wait_until(homesig, SHMEM_CMP_EQ, (uint64_t)2 * T);

    /* Combine and check against a serial computation. */
    long bad = 0;
    float *y0 = malloc((size_t)H * sizeof *y0), *y1 = malloc((size_t)H * sizeof *y1);
    for (int t = 0; t < T; t++) {
        int e0, e1;
        float g0, g1;
        route((long)me * T + t, &e0, &e1, &g0, &g1);
        expert(e0, x + (size_t)t * H, y0);
        expert(e1, x + (size_t)t * H, y1);
        const float *r0 = results + (size_t)(2 * t) * H, *r1 = r0 + H;
        for (int j = 0; j < H; j++) {
            const float got = g0 * r0[j] + g1 * r1[j], want = g0 * y0[j] + g1 * y1[j];
            const float diff = got - want;
            if ((diff < 0 ? -diff : diff) > 1e-6f) {
                if (bad++ < 5)
                    fprintf(stderr, "PE %d: token %d feature %d: %.7g, serial %.7g (experts %d, %d)\n", me, t, j, got,
                            want, e0, e1);
            }
        }
    }
    long my_load = served_total, total = 0;
    for (int d = 0; d < npes; d++) total += count[d];
    printf("moe_dispatch_combine: PE %d sent %ld token copies, its experts served %ld; %s\n", me, total, my_load,
           bad ? "MISMATCH" : "combined output matches the serial computation");

    shmem_barrier_all();
    free(y1);
    free(y0);
    free(sent);
    free(count);
    free(out_pack);
    free(x);
    free(finished);
    free(served);
    shmem_free(homesig);
    shmem_free(results);
    shmem_free(insig);
    shmem_free(inbox);
    shmem_finalize();
    return bad ? 1 : 0;
}
