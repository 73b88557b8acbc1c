/* static_private.c: SHMEM_SYMMETRIC_STATIC=0 (what the Python package sets)
 * leaves globals private: not accessible, no shmem_ptr, while the heap
 * works as ever. Run without the variable, globals are symmetric. */
#include <shmem.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"

long global_word = 7;
static int bss_ints[16];

int main(void)
{
    const char *setting = getenv("SHMEM_SYMMETRIC_STATIC");
    int private_globals = setting != NULL && strcmp(setting, "0") == 0;
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes(), right = (me + 1) % npes;
    test_pe = me;
    CHECK(shmem_addr_accessible(&global_word, right) == !private_globals);
    CHECK(shmem_addr_accessible(&bss_ints[3], me) == !private_globals);
    CHECK((shmem_ptr(&global_word, me) != NULL) == !private_globals);
    long *heap = shmem_malloc(4 * sizeof(long));
    CHECK(heap != NULL && shmem_addr_accessible(heap, right));
    long mine[4] = {me, me + 1, me + 2, -me};
    shmem_putmem(heap, mine, sizeof mine, right);
    if (!private_globals) shmem_long_p(&global_word, 100 + me, right);
    shmem_barrier_all();
    int left = (me - 1 + npes) % npes;
    CHECK_MSG(heap[0] == left && heap[1] == left + 1 && heap[2] == left + 2 && heap[3] == -left,
              "heap %ld %ld %ld %ld from PE %d", heap[0], heap[1], heap[2], heap[3], left);
    CHECK_MSG(global_word == (private_globals ? 7 : 100 + left), "global_word %ld", global_word);
    shmem_free(heap);
    shmem_finalize();
    return test_finish();
}
