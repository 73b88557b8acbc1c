/* bad_stack_dest.c: PE 0 puts to a stack array, which is not symmetric. */
#include <shmem.h>

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    shmem_init();
    int on_stack[4] = {0, 0, 0, 0};
    int src[4] = {1, 2, 3, 4};
    if (shmem_my_pe() == 0) shmem_int_put(on_stack, src, 4, shmem_n_pes() - 1);
    shmem_barrier_all();
    shmem_finalize();
    return on_stack[0];
}
