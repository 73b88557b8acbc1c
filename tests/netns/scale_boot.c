/* scale_boot.c: the bootstrap alone (src/boot, through oshrun and its
 * allgather tree), for tests/netns/scale_*.sh. Usage:
 *
 *   scale_boot time     times, after one warm-up barrier, 20 barriers
 *                       (zero-length allgathers), 5 allgathers of 376 bytes
 *                       per PE (the libfabric transport's record) and 3 of
 *                       64 KiB per PE, checking every byte; PE 0 prints one
 *                       line of key=value pairs (the slowest PE's times)
 *   scale_boot early R  PE R finalizes and exits at once while the others
 *                       wait in a barrier: the job must end with the line
 *                       naming the stuck allgather */
#include "boot/boot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static shoal_boot_t *boot;

static void must(shoal_status_t st, const char *what)
{
    if (st != SHOAL_OK) {
        fprintf(stderr, "scale_boot: PE %d: %s failed: %s\n", boot ? boot->rank : -1, what, shoal_status_str(st));
        exit(1);
    }
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static unsigned char pattern(int pe, size_t i, int round) { return (unsigned char)(pe * 131 + (int)i * 7 + round); }

/* rounds allgathers of len bytes per PE; seconds per allgather (mean). */
static double gathers(size_t len, int rounds, long *bad)
{
    const int size = boot->size, me = boot->rank;
    unsigned char *send = malloc(len ? len : 1), *recv = malloc(len * (size_t)size + 1);
    double spent = 0;
    if (!send || !recv) {
        fprintf(stderr, "scale_boot: PE %d: out of memory\n", me);
        exit(1);
    }
    for (int round = 0; round < rounds; round++) {
        for (size_t i = 0; i < len; i++) send[i] = pattern(me, i, round);
        memset(recv, 0xee, len * (size_t)size);
        double t = now();
        must(boot->ops->allgather(boot, send, len, recv), "allgather");
        spent += now() - t;
        for (int p = 0; p < size; p++)
            for (size_t i = 0; i < len; i++)
                if (recv[(size_t)p * len + i] != pattern(p, i, round) && (*bad)++ == 0)
                    fprintf(stderr, "scale_boot: PE %d: byte %zu of PE %d wrong in round %d\n", me, i, p, round);
    }
    free(send);
    free(recv);
    return spent / rounds;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    must(shoal_boot_open(&boot), "opening the bootstrap");
    if (!strcmp(mode, "early") && argc > 2) {
        if (boot->rank == atoi(argv[2])) {
            must(boot->ops->finalize(boot), "finalize");
            return 0;
        }
        boot->ops->barrier(boot); /* never answered: the launcher ends the job */
        fprintf(stderr, "scale_boot: PE %d: the barrier returned although PE %s had finished\n", boot->rank, argv[2]);
        return 1;
    }
    if (strcmp(mode, "time")) {
        fprintf(stderr, "usage: scale_boot time | scale_boot early RANK\n");
        return 2;
    }
    long bad = 0;
    must(boot->ops->barrier(boot), "barrier");
    double mine[3] = {gathers(0, 20, &bad), gathers(376, 5, &bad), gathers(65536, 3, &bad)};
    /* The slowest PE's figures, through one more allgather. */
    double *all = malloc(sizeof mine * (size_t)boot->size);
    if (!all) return 1;
    must(boot->ops->allgather(boot, mine, sizeof mine, all), "allgather of the times");
    double worst[3] = {0, 0, 0};
    for (int p = 0; p < boot->size; p++)
        for (int k = 0; k < 3; k++)
            if (all[p * 3 + k] > worst[k]) worst[k] = all[p * 3 + k];
    if (boot->rank == 0)
        printf("scale_boot: pes=%d bad=%ld barrier_ms=%.3f gather376_ms=%.3f gather64k_ms=%.3f gather64k_result_mb=%.2f\n",
               boot->size, bad, worst[0] * 1e3, worst[1] * 1e3, worst[2] * 1e3, 65536.0 * boot->size / 1e6);
    fflush(stdout);
    free(all);
    must(boot->ops->finalize(boot), "finalize");
    boot->ops->close(boot);
    return bad ? 1 : 0;
}
