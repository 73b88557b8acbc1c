/* own_wait.h: what the transports tell the layers above as a thread of the
 * PE begins waiting for an operation of its own (a get's answer, a fetch,
 * a quiet). The waiting policy sets the hook to publish the CPU the PE runs
 * on where PEs outnumber cores (sync/backoff.h, shoal_backoff_note_cpu):
 * a PE that waits for this one's store then sees whether it shares this
 * one's core. The transports sit below that policy, hence the hook. */
#ifndef SHOAL_UTIL_OWN_WAIT_H
#define SHOAL_UTIL_OWN_WAIT_H

/* NULL: nobody listens. Set with the waiting policy (shoal_backoff_configure,
 * at start-up), while no operation is in flight. */
extern int (*shoal_own_wait_hook)(void);

static inline void shoal_own_wait_begins(void)
{
    int (*hook)(void) = shoal_own_wait_hook;
    if (hook) (void)hook();
}

#endif
