/* deprecated.c: the set-up names of old programs: start_pes(0), _my_pe,
 * _num_pes, shmalloc, shfree (and shmemalign, shrealloc). Like old
 * programs, it never calls shmem_finalize: leaving main must still end the
 * PE cleanly. */
#include <shmem.h>
#include <stdint.h>
#include <stdlib.h>

#include "api_util.h"

int main(void)
{
    start_pes(0);
    CHECK(shmem_query_initialized() != 0);
    const int me = _my_pe(), npes = _num_pes();
    test_pe = me;
    CHECK(me == shmem_my_pe());
    CHECK(npes == shmem_n_pes());
    CHECK(me >= 0 && me < npes);
    const int right = (me + 1) % npes, left = (me - 1 + npes) % npes;

    unsigned char *a = shmalloc(10000);
    long *b = shmemalign(256, 40 * sizeof(long));
    CHECK(a != NULL && b != NULL);
    if (!a || !b) return test_finish();
    CHECK((uintptr_t)b % 256 == 0);
    unsigned char src[10000];
    fill_pattern(src, sizeof src, me, 0, 3);
    shmem_putmem(a, src, sizeof src, right);
    for (int i = 0; i < 40; i++) shmem_long_p(&b[i], 100L * me + i, right);
    shmem_barrier_all();
    check_pattern(a, 10000, left, 0, 3, "shmalloc block");
    for (int i = 0; i < 40; i++) CHECK_MSG(b[i] == 100L * left + i, "shmemalign block element %d", i);

    a = shrealloc(a, 20000);
    CHECK(a != NULL);
    if (a) check_pattern(a, 10000, left, 0, 3, "shrealloc kept the content");
    shmem_barrier_all();
    shfree(b);
    shfree(a);
    /* No shmem_finalize, as in programs written for start_pes. */
    return test_finish();
}
