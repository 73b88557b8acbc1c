/* init_query.c: set-up and query calls. my_pe/n_pes are in range and
 * unique (every PE reports to PE 0), init_thread grants MULTIPLE, version
 * and name, pe_accessible/addr_accessible for in- and out-of-range PEs and
 * for heap, static and stack addresses, shmem_ptr to every PE (a store
 * through it is seen by that PE), and finalize. Run without oshrun it must
 * behave as a job of one PE. */
#include <shmem.h>
#include <string.h>

#include "harness.h"

#define MAX_PES 1024

static int reported_pe[MAX_PES]; /* on PE 0: slot p holds p + 1 once PE p reported */
static int reported_n[MAX_PES];  /* on PE 0: slot p holds the n_pes PE p saw */
static long global_word = 42;
static long via_ptr_global[MAX_PES];

int main(void)
{
    CHECK(shmem_query_initialized() == 0);
    int provided = -1;
    CHECK(shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided) == 0);
    CHECK(provided == SHMEM_THREAD_MULTIPLE);
    CHECK(shmem_query_initialized() != 0);

    const int me = shmem_my_pe(), n = shmem_n_pes();
    test_pe = me;
    CHECK(n >= 1 && n <= MAX_PES);
    CHECK(me >= 0 && me < n);
    if (n < 1 || n > MAX_PES || me < 0 || me >= n) return test_finish();

    int q = -1;
    shmem_query_thread(&q);
    CHECK(q == SHMEM_THREAD_MULTIPLE);

    int major = -1, minor = -1;
    shmem_info_get_version(&major, &minor);
    CHECK(major == 1);
    CHECK(minor >= 0);
    CHECK(major == SHMEM_MAJOR_VERSION && minor == SHMEM_MINOR_VERSION);
    char name[SHMEM_MAX_NAME_LEN + 8];
    memset(name, 'X', sizeof name);
    shmem_info_get_name(name);
    size_t len = strnlen(name, SHMEM_MAX_NAME_LEN);
    CHECK(len > 0);
    CHECK(len < SHMEM_MAX_NAME_LEN);
    for (size_t i = SHMEM_MAX_NAME_LEN; i < sizeof name; i++) CHECK(name[i] == 'X');

    /* Uniqueness: each PE writes its slot on PE 0. */
    shmem_int_p(&reported_pe[me], me + 1, 0);
    shmem_int_p(&reported_n[me], n, 0);
    shmem_barrier_all();
    if (me == 0) {
        for (int p = 0; p < n; p++) {
            CHECK_MSG(reported_pe[p] == p + 1, "slot %d holds %d", p, reported_pe[p]);
            CHECK_MSG(reported_n[p] == n, "PE %d saw n_pes %d, PE 0 saw %d", p, reported_n[p], n);
        }
        for (int p = n; p < MAX_PES; p++) CHECK(reported_pe[p] == 0 && reported_n[p] == 0);
    }

    /* pe_accessible. */
    for (int p = 0; p < n; p++) CHECK_MSG(shmem_pe_accessible(p) == 1, "pe %d", p);
    CHECK(shmem_pe_accessible(-1) == 0);
    CHECK(shmem_pe_accessible(n) == 0);
    CHECK(shmem_pe_accessible(n + 100) == 0);

    /* addr_accessible: heap and static data yes, stack no. */
    long *heap = shmem_malloc(MAX_PES * sizeof(long));
    CHECK(heap != NULL);
    if (!heap) return test_finish();
    long stack_word = 7;
    for (int p = 0; p < n; p++) {
        CHECK_MSG(shmem_addr_accessible(heap, p) == 1, "heap, pe %d", p);
        CHECK_MSG(shmem_addr_accessible(&heap[MAX_PES - 1], p) == 1, "heap end, pe %d", p);
        CHECK_MSG(shmem_addr_accessible(&global_word, p) == 1, "global, pe %d", p);
        CHECK_MSG(shmem_addr_accessible(&reported_pe[3], p) == 1, "bss, pe %d", p);
        CHECK_MSG(shmem_addr_accessible(&stack_word, p) == 0, "stack, pe %d", p);
    }
    CHECK(shmem_addr_accessible(heap, -1) == 0);
    CHECK(shmem_addr_accessible(heap, n) == 0);
    CHECK(shmem_addr_accessible(&global_word, n) == 0);

    /* shmem_ptr: non-NULL exactly for the PEs of SHMEM_TEAM_SHARED (every
     * PE on one host with the default transport); a store through it is
     * seen by that PE after a barrier. */
    for (int i = 0; i < MAX_PES; i++) heap[i] = -1, via_ptr_global[i] = -1;
    shmem_barrier_all();
    const char *transport = getenv("SHMEM_TRANSPORT");
    const int one_host = !getenv("SHOAL_NODE_RANK") && (!transport || (strcmp(transport, "ofi") && strcmp(transport, "tls")));
    int reached[MAX_PES] = {0};
    for (int p = 0; p < n; p++) {
        long *rh = shmem_ptr(heap, p);
        long *rg = shmem_ptr(via_ptr_global, p);
        const int shared = shmem_team_translate_pe(SHMEM_TEAM_WORLD, p, SHMEM_TEAM_SHARED) >= 0;
        reached[p] = shared;
        CHECK_MSG((rh != NULL) == shared, "shmem_ptr(heap, %d) %p, in SHARED %d", p, (void *)rh, shared);
        CHECK_MSG((rg != NULL) == shared, "shmem_ptr(global, %d) %p, in SHARED %d", p, (void *)rg, shared);
        CHECK_MSG(shared || !one_host, "PE %d is not in SHMEM_TEAM_SHARED on one host", p);
        if (p == me) CHECK(rh == heap && rg == via_ptr_global);
        if (rh) rh[me] = 1000L * me + p;
        if (rg) rg[me] = 2000L * me + p;
    }
    CHECK(shmem_ptr(&stack_word, me) == NULL);
    CHECK(shmem_ptr(heap, n) == NULL);
    CHECK(shmem_ptr(heap, -1) == NULL);
    shmem_barrier_all();
    /* Reaching is mutual: p stored here exactly when this PE reaches p. */
    for (int p = 0; p < n; p++) {
        CHECK_MSG(heap[p] == (reached[p] ? 1000L * p + me : -1), "heap[%d] = %ld", p, heap[p]);
        CHECK_MSG(via_ptr_global[p] == (reached[p] ? 2000L * p + me : -1), "global[%d] = %ld", p, via_ptr_global[p]);
    }
    for (int p = n; p < MAX_PES; p++) CHECK(heap[p] == -1 && via_ptr_global[p] == -1);
    CHECK(global_word == 42);
    shmem_free(heap);

    shmem_finalize();
    CHECK(shmem_query_initialized() == 0);
    return test_finish();
}
