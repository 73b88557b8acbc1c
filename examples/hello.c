/* hello: every PE says who it is and where its symmetric heap lives. */
#include <shmem.h>
#include <stdio.h>

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    char name[SHMEM_MAX_NAME_LEN];
    int major, minor;
    shmem_info_get_name(name);
    shmem_info_get_version(&major, &minor);
    long *x = shmem_malloc(sizeof *x);
    printf("hello from PE %d of %d (%s, OpenSHMEM %d.%d); my symmetric block is at %p\n", me, npes, name, major,
           minor, (void *)x);
    shmem_free(x);
    shmem_finalize();
    return 0;
}
