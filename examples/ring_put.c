/* ring_put: each PE puts a message into the next PE's symmetric buffer,
 * fences, then raises a flag there; each PE waits for its own flag and
 * prints what arrived. The one-sided basics: put, fence, p, wait_until. */
#include <shmem.h>
#include <stdio.h>
#include <string.h>

static char inbox[64];   /* static data is symmetric too */
static int arrived;

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int next = (me + 1) % npes;
    char msg[64];
    snprintf(msg, sizeof msg, "greetings from PE %d", me);
    shmem_putmem(inbox, msg, sizeof msg, next);
    shmem_fence();                  /* the message lands before the flag */
    shmem_int_p(&arrived, 1, next);
    shmem_int_wait_until(&arrived, SHMEM_CMP_EQ, 1);
    printf("PE %d received \"%s\"\n", me, inbox);
    int ok = strncmp(inbox, "greetings from PE ", 18) == 0;
    shmem_barrier_all();
    shmem_finalize();
    return ok ? 0 : 1;
}
