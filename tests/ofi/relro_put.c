/* relro_put.c: PE 0 puts into PE 1's copy of a RELRO global (a const
 * pointer table, which a PIE keeps in .data.rel.ro: writable at load, then
 * read-only) over the fabric. The put must end the job with one line that
 * names the put, PE 1 and the read-only part; PE 1 must not fault
 * (relro_put_test.sh checks both). Exits 77 when the table is not in the
 * program's RELRO span (a non-PIE build or a linker without RELRO). A
 * zero-length put there comes first and must just work. */
#include <link.h>
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *const table[4] = {"alpha", "beta", "gamma", "delta"};
const char *const *volatile table_use = table;

static int in_relro(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    if (info->dlpi_name && info->dlpi_name[0]) return 0; /* the executable first */
    uintptr_t p = (uintptr_t)arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_GNU_RELRO && p >= info->dlpi_addr + ph->p_vaddr &&
            p < info->dlpi_addr + ph->p_vaddr + ph->p_memsz)
            return 1;
    }
    return 2;
}

int main(void)
{
    if (dl_iterate_phdr(in_relro, (void *)&table[1]) != 1) {
        printf("SKIP: the const table is not in this program's RELRO span\n");
        return 77;
    }
    shmem_init();
    int me = shmem_my_pe();
    if (shmem_n_pes() != 2) {
        if (me == 0) fprintf(stderr, "relro_put: run with 2 PEs\n");
        shmem_global_exit(1);
    }
    shmem_barrier_all();
    if (me == 0) {
        const char *fake = "overwritten";
        /* Zero bytes touch nothing: supported anywhere, RELRO included. */
        shmem_putmem((void *)&table[1], &fake, 0, 1);
        shmem_quiet();
        printf("PE 0: the zero-length put returned\n");
        fflush(stdout);
        shmem_putmem((void *)&table[1], &fake, sizeof fake, 1);
        shmem_quiet();
        printf("PE 0: the put into PE 1's RELRO returned\n");
        fflush(stdout);
    } else {
        /* Stays in the library (serving the fabric) until the job ends. */
        printf("PE 1: waiting\n");
        fflush(stdout);
    }
    shmem_barrier_all();
    printf("PE %d: table[1] is %s\n", me, table_use[1]);
    shmem_finalize();
    return 0;
}
