/* bad_free.c: shmem_free of a pointer the heap did not give. "private":
 * PE 0 frees a malloc'd pointer; "double": every PE frees a block twice. */
#include <shmem.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    shmem_init();
    const int twice = argc > 1 && strcmp(argv[1], "double") == 0;
    if (twice) {
        void *p = shmem_malloc(64);
        shmem_free(p);
        shmem_free(p);
    } else if (shmem_my_pe() == 0) {
        void *priv = malloc(64);
        shmem_free(priv);
    }
    shmem_barrier_all();
    shmem_finalize();
    return 0;
}
