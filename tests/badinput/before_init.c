/* before_init.c: shmem_int_put before shmem_init. */
#include <shmem.h>

static int target;

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    int one = 1;
    shmem_int_put(&target, &one, 1, 0);
    shmem_init();
    shmem_finalize();
    return 0;
}
