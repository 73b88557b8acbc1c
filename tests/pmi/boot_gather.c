/* boot_gather.c: drives the bootstrap alone (src/boot) under a standard
 * launcher: allgathers of sizes that need one, two and hundreds of PMI
 * values, a barrier, and allgather_fds with memfds whose contents each PE
 * checks through the descriptors it received.
 *
 *   pmi_boot_gather NAME    NAME is the bootstrap expected: pmi or pmix */
#include "boot/boot.h"
#include "harness.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define NFDS 2

static void gather(shoal_boot_t *boot, size_t len, unsigned salt)
{
    unsigned char *send = malloc(len ? len : 1), *recv = malloc(len * (size_t)boot->size + 1);
    if (!send || !recv) exit(TEST_FAIL);
    for (size_t i = 0; i < len; i++) send[i] = test_pattern(boot->rank, i, salt);
    shoal_status_t st = boot->ops->allgather(boot, send, len, recv);
    CHECK_MSG(st == SHOAL_OK, "allgather of %zu bytes: %s", len, shoal_status_str(st));
    if (st == SHOAL_OK)
        for (int pe = 0; pe < boot->size; pe++) {
            size_t bad = 0;
            for (size_t i = 0; i < len; i++) bad += recv[(size_t)pe * len + i] != test_pattern(pe, i, salt);
            CHECK_MSG(bad == 0, "allgather of %zu bytes: %zu wrong bytes from PE %d", len, bad, pe);
        }
    free(send);
    free(recv);
}

static void gather_fds(shoal_boot_t *boot)
{
    int mine[NFDS], *got = calloc((size_t)boot->size * NFDS, sizeof *got);
    char text[64], back[64];
    if (!got) exit(TEST_FAIL);
    for (int i = 0; i < NFDS; i++) {
        mine[i] = memfd_create("pmi_boot_gather", MFD_CLOEXEC);
        int n = snprintf(text, sizeof text, "PE %d fd %d", boot->rank, i);
        if (mine[i] < 0 || write(mine[i], text, (size_t)n) != n) exit(TEST_FAIL);
    }
    shoal_status_t st = boot->ops->allgather_fds(boot, mine, NFDS, got);
    CHECK_MSG(st == SHOAL_OK, "allgather_fds: %s", shoal_status_str(st));
    /* The owners may close theirs now: every PE holds its own reference. */
    for (int i = 0; i < NFDS; i++) close(mine[i]);
    if (st == SHOAL_OK)
        /* One host: every PE is local, in rank order. */
        for (int pe = 0; pe < boot->size; pe++)
            for (int i = 0; i < NFDS; i++) {
                int fd = got[pe * NFDS + i];
                int n = snprintf(text, sizeof text, "PE %d fd %d", pe, i);
                ssize_t r = pread(fd, back, (size_t)n, 0); /* peers append past it */
                CHECK_MSG(r == n && memcmp(back, text, (size_t)n) == 0, "descriptor %d of PE %d reads '%.*s'", i,
                          pe, r > 0 ? (int)r : 0, back);
                /* Writable too: the heap is mapped read-write through it. */
                CHECK_MSG(pwrite(fd, "x", 1, 100) == 1, "descriptor %d of PE %d is not writable", i, pe);
                close(fd);
            }
    free(got);
}

int main(int argc, char **argv)
{
    shoal_boot_t *boot;
    if (argc != 2) {
        fprintf(stderr, "usage: pmi_boot_gather pmi|pmix\n");
        return 2;
    }
    shoal_status_t st = shoal_boot_open(&boot);
    if (st != SHOAL_OK) {
        fprintf(stderr, "bootstrap failed to open: %s\n", shoal_status_str(st));
        return TEST_FAIL;
    }
    test_pe = boot->rank;
    CHECK_MSG(strcmp(boot->ops->name, argv[1]) == 0, "bootstrap is %s, expected %s", boot->ops->name, argv[1]);
    CHECK(boot->node_key[0] != 0);
    static const size_t sizes[] = {0, 1, 7, 64, 465, 466, 1000, 4096, 70000};
    for (unsigned round = 0; round < 2; round++)
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) gather(boot, sizes[k], round * 16 + (unsigned)k);
    CHECK(boot->ops->barrier(boot) == SHOAL_OK);
    gather_fds(boot);
    gather(boot, 24, 99); /* the bootstrap still works after the descriptors */
    CHECK(boot->ops->finalize(boot) == SHOAL_OK);
    boot->ops->close(boot);
    if (test_failures == 0 && test_pe == 0) printf("boot_gather ok\n");
    return test_failures ? TEST_FAIL : TEST_PASS;
}
