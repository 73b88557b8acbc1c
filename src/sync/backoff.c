/* backoff.c: the spin budget of waits. */
#include "sync/backoff.h"

#include <sys/prctl.h>
#include <unistd.h>

unsigned long shoal_backoff_spin = 65536;
int shoal_backoff_oversubscribed;
void (*shoal_backoff_progress)(void);
uint64_t *shoal_backoff_naps;

void shoal_backoff_configure(long configured_spin, int local_pes)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (configured_spin < 0) configured_spin = 0;
    /* With more PEs than cores the peer we wait for may need our core:
     * spinning only delays it. */
    shoal_backoff_oversubscribed = cores > 0 && local_pes > cores;
    if (shoal_backoff_oversubscribed && configured_spin > 64) configured_spin = 64;
    shoal_backoff_spin = (unsigned long)configured_spin;
    /* The default 50 us timer slack would stretch the shortest back-off
     * sleeps (1 us) fifty-fold; waits need them short. */
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
}
