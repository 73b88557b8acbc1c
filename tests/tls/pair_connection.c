/* pair_connection.c: over the encrypted transport, two PEs' default
 * context streams share one TCP connection (tls_pair.c), also when every PE
 * opens its streams to every other at the same moment; data is whole both
 * ways, with large puts crossing on one connection at once, and with large
 * gets crossing small puts.
 * Expects PAIR_CONNECTIONS_PER_PEER (default 1) TCP connections per peer
 * after every pair has talked: 2 with SHMEM_TLS_PAIR=off. One host only. */
#include <dirent.h>
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#define BIG ((size_t)4 << 20)

static long inbox[256];

/* Established TCP connections of this process: its sockets' inodes found
 * in /proc/self/net/tcp with state 01. */
static int established(void)
{
    unsigned long inodes[512];
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    while (d && (e = readdir(d)) && n < 512) {
        char path[300], link[64];
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        const ssize_t k = readlink(path, link, sizeof link - 1);
        if (k <= 0) continue;
        link[k] = 0;
        unsigned long inode;
        if (sscanf(link, "socket:[%lu]", &inode) == 1) inodes[n++] = inode;
    }
    if (d) closedir(d);
    FILE *f = fopen("/proc/self/net/tcp", "r");
    char line[512];
    int count = 0;
    while (f && fgets(line, sizeof line, f)) {
        unsigned state;
        unsigned long inode;
        if (sscanf(line, " %*d: %*s %*s %x %*s %*s %*s %*s %*s %lu", &state, &inode) != 2) continue;
        for (int i = 0; i < n; i++)
            if (inodes[i] == inode) {
                if (getenv("PAIR_SHOW")) fprintf(stderr, "PE %d: %s", test_pe, line);
                count += state == 1;
            }
    }
    if (f) fclose(f);
    return count;
}

int main(void)
{
    shmem_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    test_pe = me;
    if (npes > 256) shmem_global_exit(TEST_SKIP);
    const char *per = getenv("PAIR_CONNECTIONS_PER_PEER");
    const int expect = (per ? atoi(per) : 1) * (npes - 1);
    shmem_barrier_all();
    /* Every PE to every other at once: both ends of each pair dial. */
    for (int k = 1; k < npes; k++) shmem_long_p(&inbox[me], 1000L * me + (me + k) % npes, (me + k) % npes);
    shmem_barrier_all();
    for (int pe = 0; pe < npes; pe++)
        if (pe != me) CHECK_MSG(inbox[pe] == 1000L * pe + me, "from PE %d: %ld", pe, inbox[pe]);
    /* On one host a PE has no other TCP connection (its launcher's is a
     * local socket); counting them all spares a baseline that peers
     * running ahead would already have raised. */
    const int opened = established();
    CHECK_MSG(opened == expect, "%d connections opened for %d peers, expected %d", opened, npes - 1, expect);

    /* Large puts crossing: each PE to the next and the previous at once. */
    unsigned char *big = shmem_malloc(2 * BIG), *mine = malloc(BIG);
    CHECK(big && mine);
    if (big && mine) {
        for (size_t i = 0; i < BIG; i++) mine[i] = (unsigned char)(i * 7 + (size_t)me);
        const int next = (me + 1) % npes, prev = (me + npes - 1) % npes;
        shmem_barrier_all();
        shmem_putmem_nbi(big, mine, BIG, next);
        shmem_putmem_nbi(big + BIG, mine, BIG, prev);
        shmem_quiet();
        shmem_barrier_all();
        size_t wrong = 0;
        for (size_t i = 0; i < BIG; i++) {
            wrong += big[i] != (unsigned char)(i * 7 + (size_t)prev);
            wrong += big[BIG + i] != (unsigned char)(i * 7 + (size_t)next);
        }
        CHECK_MSG(wrong == 0, "%zu bytes wrong after crossing puts", wrong);

        /* Large gets crossing small puts: while a PE reads through the
         * answer to its get (its reader takes in the peer's requests for
         * the PE's serving thread), the peer puts to it. */
        unsigned char *got = malloc(BIG);
        CHECK(got != NULL);
        shmem_barrier_all();
        for (int round = 0; got && round < 4; round++) {
            if (me % 2 == round % 2) {
                shmem_getmem(got, big, BIG, next);
                wrong = 0;
                for (size_t i = 0; i < BIG; i++) wrong += got[i] != (unsigned char)(i * 7 + (size_t)me);
                CHECK_MSG(wrong == 0, "round %d: %zu bytes wrong in a large get", round, wrong);
            } else {
                for (long i = 0; i < 256; i++) shmem_long_p(&inbox[i], 100000L * round + i, prev);
                shmem_quiet();
            }
            shmem_barrier_all();
            if (me % 2 == round % 2 && npes % 2 == 0)
                for (long i = 0; i < 256; i++)
                    CHECK_MSG(inbox[i] == 100000L * round + i, "round %d: inbox[%ld] = %ld", round, i, inbox[i]);
            shmem_barrier_all();
        }
        free(got);
    }
    shmem_barrier_all();
    shmem_free(big);
    free(mine);
    const int failed = test_failures != 0;
    if (!me && !failed) printf("pair_connection: %d PEs, %d connections per PE\n", npes, opened);
    shmem_finalize();
    return failed ? TEST_FAIL : TEST_PASS;
}
