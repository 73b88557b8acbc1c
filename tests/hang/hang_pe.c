/* hang_pe: programs that hang (or mismatch collectives) on purpose, for
 * the hang report and SHMEM_DEBUG collective-checking tests (cases.sh).
 *   barrier_vs_wait   PE 0 in shmem_barrier_all (after 2 barriers), the
 *                     others in shmem_long_wait_until(&flag, EQ, 1); each
 *                     prints "ready" before
 *   lost_wait         PE 1 waits for flag == 7 (it holds 3); the others finalize
 *   poll              PE 1 polls shmem_long_test(&flag, EQ, 5) in a loop; the others finalize
 *   lock              PE 0 takes the lock, then waits in a barrier; PE 1 sets the lock
 *   two_colls         PE 0 in a world sum reduction, the others in a sync of the shared team
 *   live              PE 0 waits on a heap variable until SIGTERM; prints "ready"
 *   root, size        SHMEM_DEBUG mismatches: broadcast root differs / size differs
 *   routine           SHMEM_DEBUG mismatch: PE 0 broadcasts, the others barrier */
#include <shmem.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

long flag;
long lock;
long dest[8], src[8];

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    shmem_init();
    const int me = shmem_my_pe();
    if (strcmp(mode, "barrier_vs_wait") == 0) {
        shmem_barrier_all();
        shmem_barrier_all();
        printf("ready\n");
        fflush(stdout);
        if (me == 0) shmem_barrier_all();
        else shmem_long_wait_until(&flag, SHMEM_CMP_EQ, 1);
    } else if (strcmp(mode, "lost_wait") == 0) {
        if (me == 1) {
            flag = 3;
            shmem_long_wait_until(&flag, SHMEM_CMP_EQ, 7);
        }
    } else if (strcmp(mode, "poll") == 0) {
        if (me == 1)
            while (!shmem_long_test(&flag, SHMEM_CMP_EQ, 5)) {
            }
    } else if (strcmp(mode, "lock") == 0) {
        if (me == 0) shmem_set_lock(&lock);
        shmem_sync_all();
        if (me == 0) shmem_barrier_all();
        else shmem_set_lock(&lock);
    } else if (strcmp(mode, "two_colls") == 0) {
        if (me == 0) shmem_long_sum_reduce(SHMEM_TEAM_WORLD, dest, src, 1);
        else shmem_team_sync(SHMEM_TEAM_SHARED);
    } else if (strcmp(mode, "routine") == 0) {
        if (me == 0) shmem_broadcastmem(SHMEM_TEAM_WORLD, dest, src, 64, 0);
        else shmem_barrier_all();
    } else if (strcmp(mode, "root") == 0) {
        shmem_broadcastmem(SHMEM_TEAM_WORLD, dest, src, 64, me == 1 ? 1 : 0);
    } else if (strcmp(mode, "size") == 0) {
        shmem_barrier_all();
        shmem_broadcastmem(SHMEM_TEAM_WORLD, dest, src, me == 1 ? 32 : 64, 0);
    } else if (strcmp(mode, "live") == 0) {
        long *heap_flag = shmem_calloc(1, sizeof(long));
        if (me == 0) {
            printf("ready\n");
            fflush(stdout);
            shmem_long_wait_until(heap_flag, SHMEM_CMP_GT, 41);
        }
    }
    shmem_finalize();
    return 0;
}
