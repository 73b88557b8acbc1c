/* wait_untyped: the deprecated untyped shmem_wait and shmem_wait_until.
 * Built with -std=c99 they are the library's real functions on a long;
 * built with -std=c11 they are the generic macros, which also take an int. */
#include <shmem.h>
#include <stdio.h>

static long arrived;
static long go;
#if __STDC_VERSION__ >= 201112L
static int arrived_int;
#endif

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int next = (me + 1) % npes, prev = (me + npes - 1) % npes;
    int bad = 0;

    shmem_long_atomic_set(&arrived, 100 + me, next);
    shmem_wait_until(&arrived, SHMEM_CMP_EQ, 100 + prev);
    bad += arrived != 100 + prev;
    shmem_long_atomic_set(&go, 1 + me, next);
    shmem_wait(&go, 0);
    bad += go != 1 + prev;
#if __STDC_VERSION__ >= 201112L
    shmem_int_atomic_set(&arrived_int, 200 + me, next);
    shmem_wait_until(&arrived_int, SHMEM_CMP_GE, 200);
    bad += arrived_int != 200 + prev;
    const char *form = "C11 generic";
#else
    const char *form = "C99 function";
#endif
    if (bad) printf("PE %d: %d wrong values\n", me, bad);
    static long failures;
    shmem_long_atomic_add(&failures, bad, 0);
    shmem_barrier_all();
    if (me == 0 && failures == 0) printf("wait_untyped (%s) ok on %d PEs\n", form, npes);
    shmem_finalize();
    return bad != 0;
}
