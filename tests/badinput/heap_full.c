/* heap_full.c: allocations that cannot be made return NULL on every PE
 * (with one line each, checked by cases.sh) and the program carries on.
 * Modes:
 *   full       SHMEM_SYMMETRIC_SIZE=1M, shmem_malloc(2 MiB): more than the heap
 *   exhausted  SHMEM_SYMMETRIC_SIZE=1M, 640 KiB twice: the second does not fit
 *   huge       shmem_malloc(1 TiB) with the default heap
 *   align      shmem_align with alignment 0, 48 and 2^31
 * Exit 0 when every failing call gave NULL and a smaller allocation after
 * it still works (data moved through it checked), 1 otherwise. */
#include <shmem.h>
#include <stdio.h>
#include <string.h>

static int status;

static void expect_null(void *p, const char *what)
{
    if (p == NULL) return;
    fprintf(stderr, "heap_full: PE %d: %s returned %p, expected NULL\n", shmem_my_pe(), what, p);
    status = 1;
}

/* A block allocated after the failure holds what the left neighbour put. */
static void still_works(void)
{
    const int me = shmem_my_pe(), n = shmem_n_pes();
    long *small = shmem_align(64, 4096);
    if (small == NULL || ((size_t)small & 63)) {
        fprintf(stderr, "heap_full: PE %d: shmem_align(64, 4096) gave %p after the failed call\n", me,
                (void *)small);
        status = 1;
        return;
    }
    shmem_long_p(small, 7000 + me, (me + 1) % n);
    shmem_barrier_all();
    if (*small != 7000 + (me + n - 1) % n) {
        fprintf(stderr, "heap_full: PE %d: read %ld, expected %d\n", me, *small, 7000 + (me + n - 1) % n);
        status = 1;
    }
    shmem_free(small);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "full";
    shmem_init();
    if (strcmp(mode, "full") == 0) {
        expect_null(shmem_malloc((size_t)2 << 20), "shmem_malloc(2 MiB)");
    } else if (strcmp(mode, "exhausted") == 0) {
        void *first = shmem_malloc((size_t)640 << 10);
        if (!first) {
            fprintf(stderr, "heap_full: PE %d: the first shmem_malloc(640 KiB) failed\n", shmem_my_pe());
            status = 1;
        }
        expect_null(shmem_malloc((size_t)640 << 10), "the second shmem_malloc(640 KiB)");
        shmem_free(first);
    } else if (strcmp(mode, "huge") == 0) {
        expect_null(shmem_malloc((size_t)1 << 40), "shmem_malloc(1 TiB)");
    } else if (strcmp(mode, "align") == 0) {
        expect_null(shmem_align(0, 64), "shmem_align(0, 64)");
        expect_null(shmem_align(48, 64), "shmem_align(48, 64)");
        expect_null(shmem_align((size_t)1 << 31, 64), "shmem_align(2^31, 64)");
    } else {
        fprintf(stderr, "heap_full: unknown mode %s\n", mode);
        return 2;
    }
    still_works();
    shmem_finalize();
    return status;
}
