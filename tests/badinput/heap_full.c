/* heap_full.c: with SHMEM_SYMMETRIC_SIZE=1M, shmem_malloc(2 MiB) returns
 * NULL on every PE (with a message) and the program carries on: exit 0
 * when it got NULL and a smaller allocation still works, 1 otherwise. */
#include <shmem.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    shmem_init();
    int status = 0;
    void *big = shmem_malloc((size_t)2 << 20);
    if (big != NULL) {
        fprintf(stderr, "heap_full: PE %d: shmem_malloc(2 MiB) returned %p, expected NULL\n", shmem_my_pe(), big);
        status = 1;
    }
    long *small = shmem_malloc(4096);
    if (small == NULL) {
        fprintf(stderr, "heap_full: PE %d: shmem_malloc(4096) failed after the failed large one\n", shmem_my_pe());
        status = 1;
    } else {
        shmem_long_p(small, 7, (shmem_my_pe() + 1) % shmem_n_pes());
        shmem_barrier_all();
        if (*small != 7) status = 1;
        shmem_free(small);
    }
    shmem_finalize();
    return status;
}
