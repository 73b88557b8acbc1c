/* signal_wait.c: wait_until_any / wait_until_some (and their _vector forms)
 * driven by signals from every PE. In each of 16 rounds every PE, after a
 * staggered delay, sets its own slot of a uint64_t array on PE 0 with
 * shmem_signal_set, putmem_signal (SET, with a payload), put_signal_nbi
 * (ADD, with a payload) or shmem_signal_add. PE 0 collects them with
 * wait_until_any or wait_until_some, excluding the slots already seen
 * through the status array, until every PE has arrived: each slot must be
 * reported exactly once, carry the round's value, and its payload (if any)
 * must be complete when its signal is seen. With every slot excluded, any
 * returns SIZE_MAX and some returns 0. */
#include <shmem.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api_util.h"

#define ROUNDS 16
#define PAYLOAD 4096 /* bytes per PE */

static int me, npes;

static void pause_us(long us)
{
    struct timespec ts = {0, us * 1000};
    nanosleep(&ts, NULL);
}

static void check_arrival(uint64_t *flags, unsigned char *data, int *status, size_t i, int r, int *left_to_see,
                          const char *how)
{
    const int method = r % 4;
    CHECK_MSG(i < (size_t)npes, "round %d (%s): index %zu returned", r, how, i);
    if (i >= (size_t)npes) return;
    CHECK_MSG(status[i] == 0, "round %d (%s): slot %zu reported again", r, how, i);
    const uint64_t want = (uint64_t)(r + 1) << 8 | (uint64_t)i;
    CHECK_MSG(flags[i] == want, "round %d (%s): slot %zu holds %llx, expected %llx", r, how, i,
              (unsigned long long)flags[i], (unsigned long long)want);
    if (method == 1 || method == 2) {
        char what[64];
        snprintf(what, sizeof what, "round %d payload of PE %zu", r, i);
        check_pattern(data + i * PAYLOAD, PAYLOAD, (int)i, 0, 500u + (unsigned)r, what);
    }
    if (!status[i]) --*left_to_see;
    status[i] = 1;
}

int main(void)
{
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    test_pe = me;
    uint64_t *flags = shmem_calloc((size_t)npes, sizeof(uint64_t));
    unsigned char *data = shmem_malloc((size_t)npes * PAYLOAD);
    unsigned char *src = malloc(PAYLOAD);
    int *status = malloc((size_t)npes * sizeof(int));
    size_t *idx = malloc((size_t)npes * sizeof(size_t));
    uint64_t *cmpv = malloc((size_t)npes * sizeof(uint64_t));
    if (!flags || !data || !src || !status || !idx || !cmpv) {
        CHECK(!"allocation failed");
        return test_finish();
    }
    long calls = 0;
    for (int r = 0; r < ROUNDS; r++) {
        const int method = r % 4, waiter = (r / 4) % 4; /* any, some, any_vector, some_vector */
        const uint64_t value = (uint64_t)(r + 1) << 8 | (uint64_t)me;
        fill_pattern(src, PAYLOAD, me, 0, 500u + (unsigned)r);
        if (me == 0) {
            memset(flags, 0, (size_t)npes * sizeof(uint64_t));
            memset(data, 0, (size_t)npes * PAYLOAD);
        }
        shmem_barrier_all();
        /* Staggered arrivals, in an order that changes from round to round. */
        pause_us(((me * 7 + r * 3) % npes) * 300);
        switch (method) {
        case 0: shmem_signal_set(&flags[me], value, 0); break;
        case 1: shmem_putmem_signal(data + (size_t)me * PAYLOAD, src, PAYLOAD, &flags[me], value, SHMEM_SIGNAL_SET, 0); break;
        case 2:
            shmem_putmem_signal_nbi(data + (size_t)me * PAYLOAD, src, PAYLOAD, &flags[me], value, SHMEM_SIGNAL_ADD, 0);
            shmem_quiet();
            break;
        default: shmem_signal_add(&flags[me], value, 0); break;
        }
        if (me == 0) {
            int left_to_see = npes;
            for (int p = 0; p < npes; p++) status[p] = 0, cmpv[p] = (uint64_t)(r + 1) << 8 | (uint64_t)p;
            for (int guard = 0; left_to_see > 0 && guard < 4 * npes; guard++) {
                size_t i, n;
                calls++;
                switch (waiter) {
                case 0:
                    i = shmem_uint64_wait_until_any(flags, (size_t)npes, status, SHMEM_CMP_NE, 0);
                    check_arrival(flags, data, status, i, r, &left_to_see, "any");
                    break;
                case 1:
                    n = shmem_uint64_wait_until_some(flags, (size_t)npes, idx, status, SHMEM_CMP_NE, 0);
                    CHECK_MSG(n >= 1 && n <= (size_t)left_to_see, "round %d: some returned %zu", r, n);
                    for (size_t j = 0; j < n && j < (size_t)npes; j++)
                        check_arrival(flags, data, status, idx[j], r, &left_to_see, "some");
                    break;
                case 2:
                    i = shmem_uint64_wait_until_any_vector(flags, (size_t)npes, status, SHMEM_CMP_EQ, cmpv);
                    check_arrival(flags, data, status, i, r, &left_to_see, "any_vector");
                    break;
                default:
                    n = shmem_wait_until_some_vector(flags, (size_t)npes, idx, status, SHMEM_CMP_EQ, cmpv);
                    CHECK_MSG(n >= 1 && n <= (size_t)left_to_see, "round %d: some_vector returned %zu", r, n);
                    for (size_t j = 0; j < n && j < (size_t)npes; j++)
                        check_arrival(flags, data, status, idx[j], r, &left_to_see, "some_vector");
                    break;
                }
            }
            CHECK_MSG(left_to_see == 0, "round %d: %d PEs never reported", r, left_to_see);
            /* Everything excluded now. */
            CHECK(shmem_uint64_wait_until_any(flags, (size_t)npes, status, SHMEM_CMP_NE, 0) == SIZE_MAX);
            CHECK(shmem_uint64_wait_until_some(flags, (size_t)npes, idx, status, SHMEM_CMP_NE, 0) == 0);
        }
        shmem_barrier_all();
        /* No signal was delivered twice. */
        if (me == 0)
            for (int p = 0; p < npes; p++)
                CHECK_MSG(flags[p] == ((uint64_t)(r + 1) << 8 | (uint64_t)p), "round %d: slot %d ends at %llx", r, p,
                          (unsigned long long)flags[p]);
        shmem_barrier_all();
    }
    if (me == 0) printf("PE 0: %d rounds of %d signals collected in %ld wait calls\n", ROUNDS, npes, calls);
    free(cmpv);
    free(idx);
    free(status);
    free(src);
    shmem_free(data);
    shmem_free(flags);
    shmem_finalize();
    return test_finish();
}
