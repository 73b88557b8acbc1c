/* ordering.c: a PE that sees a flag sees the data put before it.
 * Rounds of: put (1 byte to 4 MiB+1; the large ones take glibc's
 * non-temporal store path) then an ordering call then shmem_long_p of a
 * flag; the receiver waits on the flag with wait_until and checks every
 * byte, then acknowledges so the sender may write again. Variants:
 * put + shmem_fence, put_nbi + shmem_quiet, ctx put_nbi + shmem_ctx_fence,
 * and put + shmem_barrier_all with no flag. Ring: PE i to PE i+1. */
#include <shmem.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"

static const struct {
    size_t size;
    int rounds;
} cases[] = {{1, 60}, {8, 60}, {100, 60}, {4096, 40}, {65543, 12}, {((size_t)1 << 20) + 5, 5}, {((size_t)4 << 20) + 1, 3}};
#define NCASES (sizeof cases / sizeof cases[0])
#define NVARIANTS 4

static long ready[NVARIANTS]; /* written by the left neighbour: round whose data is complete */
static long done[NVARIANTS];  /* written by the right neighbour: round it has checked */

int main(void)
{
    shmem_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    const int right = (me + 1) % npes, left = (me - 1 + npes) % npes;
    test_pe = me;
    const size_t max = cases[NCASES - 1].size;
    unsigned char *buf = shmem_malloc(max);
    unsigned char *src = malloc(max);
    CHECK(buf && src);
    if (!buf || !src) return test_finish();
    char what[128];

    for (int v = 0; v < NVARIANTS; v++) {
        long seq = 0;
        for (size_t c = 0; c < NCASES; c++) {
            const size_t size = cases[c].size;
            for (int r = 0; r < cases[c].rounds; r++) {
                seq++;
                const unsigned salt = (unsigned)(seq * 8 + v);
                fill_pattern(src, size, me, 0, salt);
                if (v == 3) {
                    shmem_putmem(buf, src, size, right);
                    shmem_barrier_all();
                } else {
                    /* The right neighbour must have checked the previous round. */
                    if (seq > 1) shmem_long_wait_until(&done[v], SHMEM_CMP_GE, seq - 1);
                    switch (v) {
                    case 0:
                        shmem_putmem(buf, src, size, right);
                        shmem_fence();
                        shmem_long_p(&ready[v], seq, right);
                        break;
                    case 1:
                        shmem_putmem_nbi(buf, src, size, right);
                        shmem_quiet();
                        shmem_long_p(&ready[v], seq, right);
                        break;
                    default:
                        shmem_ctx_putmem_nbi(SHMEM_CTX_DEFAULT, buf, src, size, right);
                        shmem_ctx_fence(SHMEM_CTX_DEFAULT);
                        shmem_ctx_long_p(SHMEM_CTX_DEFAULT, &ready[v], seq, right);
                        break;
                    }
                    shmem_long_wait_until(&ready[v], SHMEM_CMP_GE, seq);
                    CHECK_MSG(ready[v] == seq, "flag %ld, expected %ld", ready[v], seq);
                }
                snprintf(what, sizeof what, "variant %d, size %zu, round %d, from PE %d", v, size, r, left);
                check_pattern(buf, size, left, 0, salt, what);
                if (v == 3)
                    shmem_barrier_all();
                else
                    shmem_long_p(&done[v], seq, left);
            }
        }
        /* The next variant reuses buf. */
        shmem_barrier_all();
    }
    free(src);
    shmem_free(buf);
    shmem_finalize();
    return test_finish();
}
