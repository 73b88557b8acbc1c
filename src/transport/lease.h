/* lease.h: the lease a spinning wait holds on its transport's incoming
 * operations (tls_server.c, ofi_progress.c). A wait that spins applies
 * peers' operations itself; meanwhile the transport's threads park rather
 * than sleep where each operation would wake them for nothing. Each call
 * of the spinning wait renews the lease (stores the time in served_ns); a
 * wait about to yield or sleep ends it at once (stores 0).
 *
 * A parked thread sleeps until the lease lapses, park_ns after the
 * waiter's last call. That bounds how long an operation waits once the
 * waiter has lost its core or left its wait to compute. Each lapse the
 * thread finds renewed doubles its next park (shoal_lease_longer), up to
 * SHOAL_LEASE_MAX_NS: a PE in a loop of barriers then costs its threads
 * 200 wake-ups a second, not 20,000, each of which can preempt a
 * spinning PE (tls on one host, 2 PEs: barrier 19 us with a fixed 200 us
 * lease, 10-17 us with 500 us, alternating runs; 500 us against 5 ms, 4
 * alternations: tls barrier 21.7 -> 19.1 us, get 21.1 -> 18.7, put + quiet
 * 24.2 -> 21.5; ofi, with the thread's own-wait change of ofi_progress.c,
 * lock contended 86.3 -> 74.7, fetch_add 38.3 -> 34.5). The price: a PE
 * that leaves a long wait to compute is served again by its threads up to
 * that long after. */
#ifndef SHOAL_TRANSPORT_LEASE_H
#define SHOAL_TRANSPORT_LEASE_H

#include <stdatomic.h>

#include "util/clock.h"

#define SHOAL_LEASE_MIN_NS 50000LL
#define SHOAL_LEASE_MAX_NS 5000000LL
/* A lease held this long wakes threads asleep where the waiter's
 * operations would wake them, so that they park. Not sooner: where PEs
 * outnumber cores, waits spin a few polls and then yield (ending the
 * lease), and waking every thread at each short spin cost more than it
 * saved (api_coll at 8 PEs over tls: 26 s became 68 s). */
#define SHOAL_LEASE_SETTLED_NS 50000LL

/* Nanoseconds left of the lease for a thread that tolerates park_ns since
 * the waiter's last call (0: none). Sequentially consistent: a thread
 * raises its parked (or sleeping) flag before it looks, and whoever ends
 * or renews the lease stores served_ns before it looks at the flag, so one
 * of the two sees the other and no thread sleeps through a change. */
static inline long long shoal_lease_left(atomic_llong *served_ns, long long park_ns)
{
    const long long t = atomic_load(served_ns);
    if (!t) return 0;
    const long long left = t + park_ns - shoal_now_ns();
    return left > 0 ? left : 0;
}

/* The next park after a lapse found renewed. */
static inline long long shoal_lease_longer(long long park_ns)
{
    return park_ns * 2 < SHOAL_LEASE_MAX_NS ? park_ns * 2 : SHOAL_LEASE_MAX_NS;
}

#endif
