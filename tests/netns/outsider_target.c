/* outsider_target.c: the job an outsider attacks (outsider_test.sh).
 *
 *   netns_outsider_target READY_FILE DONE_FILE SECONDS
 *
 * Every PE fills the first 2 MiB of its heap and a 2 MiB global with a
 * pattern (never the outsider's 0xA5 bytes) and hashes the program's whole
 * writable static range (globals, and the read-only RELRO part in it); PE 0
 * then creates READY_FILE. Every PE waits (at most SECONDS) for DONE_FILE,
 * then checks its pattern and hash are unchanged and its right neighbour's
 * pattern still reads back through the fabric. Prints one line per PE;
 * exits 0 when all intact, 1 otherwise. */
#include <link.h>
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define AREA ((size_t)2 << 20)

static unsigned char global_area[AREA];
/* In .data.rel.ro of a PIE: the RELRO span the static segment keeps read-only. */
static const char *const relro_table[] = {"outsider", "target", "relro"};
const char *const *volatile relro_use = relro_table;

static unsigned char pattern(int pe, size_t i, unsigned salt)
{
    unsigned char v = (unsigned char)((i * 131u + (unsigned)pe * 17u + salt) % 251u);
    return v == 0xA5 ? 0x5A : v;
}

/* FNV-1a of the executable's writable PT_LOAD range, page-rounded as the
 * static segment is. */
struct range {
    uintptr_t lo, hi;
};

static int find_rw(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct range *r = arg;
    if (info->dlpi_name && info->dlpi_name[0]) return 0; /* the executable comes first, unnamed */
    long page = sysconf(_SC_PAGESIZE);
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W)) continue;
        uintptr_t lo = (info->dlpi_addr + ph->p_vaddr) & ~(uintptr_t)(page - 1);
        uintptr_t hi = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz + (uintptr_t)page - 1) & ~(uintptr_t)(page - 1);
        if (!r->lo || lo < r->lo) r->lo = lo;
        if (hi > r->hi) r->hi = hi;
    }
    return 1;
}

static uint64_t hash_static(void)
{
    struct range r = {0, 0};
    dl_iterate_phdr(find_rw, &r);
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const unsigned char *p = (const unsigned char *)r.lo; p < (const unsigned char *)r.hi; p++)
        h = (h ^ *p) * 0x100000001b3ULL;
    return h;
}

static size_t first_bad(const unsigned char *p, int pe, unsigned salt)
{
    for (size_t i = 0; i < AREA; i++)
        if (p[i] != pattern(pe, i, salt)) return i;
    return AREA;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s READY_FILE DONE_FILE SECONDS\n", argv[0]);
        return 2;
    }
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    unsigned char *heap = shmem_malloc(AREA);
    if (!heap) {
        fprintf(stderr, "PE %d: shmem_malloc(%zu) failed\n", me, AREA);
        shmem_global_exit(1);
    }
    for (size_t i = 0; i < AREA; i++) heap[i] = pattern(me, i, 1), global_area[i] = pattern(me, i, 2);
    shmem_barrier_all();
    uint64_t before = hash_static();
    shmem_barrier_all();
    if (me == 0) {
        FILE *f = fopen(argv[1], "w");
        if (!f || fclose(f) != 0) {
            perror("outsider_target: READY_FILE");
            shmem_global_exit(1);
        }
    }
    /* Wait for the outsider, then check what it may have touched. */
    time_t end = time(NULL) + atol(argv[3]);
    int done = 0;
    while (!done && time(NULL) < end) {
        done = access(argv[2], F_OK) == 0;
        if (!done) usleep(100000);
    }
    shmem_barrier_all();
    int bad = 0;
    size_t at;
    if (!done) {
        printf("PE %d: the outsider did not finish within %s s\n", me, argv[3]);
        bad = 1;
    }
    if ((at = first_bad(heap, me, 1)) != AREA) printf("PE %d: heap byte %zu changed\n", me, at), bad = 1;
    if ((at = first_bad(global_area, me, 2)) != AREA) printf("PE %d: global byte %zu changed\n", me, at), bad = 1;
    if (hash_static() != before) printf("PE %d: the static data (globals or RELRO) changed\n", me), bad = 1;
    if (strcmp(relro_use[2], "relro") != 0) printf("PE %d: the RELRO table changed\n", me), bad = 1;
    /* The fabric between the PEs still works after the attack. */
    int right = (me + 1) % n;
    unsigned char *back = malloc(AREA);
    shmem_getmem(back, heap, AREA, right);
    if (!back || (at = first_bad(back, right, 1)) != AREA)
        printf("PE %d: reading PE %d's heap back failed at byte %zu\n", me, right, at), bad = 1;
    shmem_getmem(back, global_area, AREA, right);
    if ((at = first_bad(back, right, 2)) != AREA)
        printf("PE %d: reading PE %d's global back failed at byte %zu\n", me, right, at), bad = 1;
    free(back);
    if (!bad) printf("PE %d: heap, globals and static data intact\n", me);
    fflush(stdout);
    shmem_barrier_all();
    shmem_finalize();
    return bad;
}
