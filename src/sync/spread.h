/* spread.h: PEs stacked on one CPU move themselves to one with fewer.
 *
 * Where PEs outnumber cores, the kernel may stack more of them on one CPU
 * than on another and leave them so: PEs that yield every microsecond or
 * two always look cache-hot to its load balancer, which then moves none.
 * A collective of such PEs needs a turn of every PE of the busiest CPU per
 * round, so the stacking decides its speed (4 PEs on 2 CPUs, each placed
 * with taskset, barrier: 3.6-5.4 us stacked 3 + 1, 1.8-2.7 spread 2 + 2;
 * unplaced runs stayed at 1.8-3.5 us or at 3.6-5.4, docs/design.md).
 *
 * So a PE waiting in a crowded collective (shoal_backoff_crowd_team) looks,
 * at most every SHOAL_SPREAD_LOOK_NS, at the CPUs its host's PEs last
 * published (shoal_backoff_note_cpu). If its own CPU holds 2 or more PEs
 * than another CPU it may use, the highest-numbered PE of its CPU moves:
 * it narrows its affinity to that CPU, which migrates it at once, and sets
 * its affinity back, which leaves it free to move again. Not a binding. */
#ifndef SHOAL_SYNC_SPREAD_H
#define SHOAL_SYNC_SPREAD_H

#define SHOAL_SPREAD_LOOK_NS 1000000LL  /* 1 ms between looks */
#define SHOAL_SPREAD_MOVE_NS 50000000LL /* 50 ms between moves of one PE */

/* Records the CPUs this PE may use: its affinity at start-up. */
void shoal_spread_configure(void);
/* Looks (when due) and moves this thread if it should; returns 1 when it
 * moved. Call only where shoal_backoff_cpu_aware holds. */
int shoal_spread_out(void);
/* Whether tasks other than the awake PEs of this host want a CPU now: the
 * kernel's count of runnable tasks (/proc/loadavg) is larger. PEs count
 * only PEs, so a move could land one behind another program's task for
 * whole time slices (4 PEs on 2 CPUs beside a busy loop on one of them,
 * without this: the first 500 barriers at 55-59 us, with it 5.6-6.7).
 * Unknown counts as yes: no move. */
int shoal_spread_others_running(int awake_pes);
/* Moves this thread to cpu and restores its mask, as shoal_spread_out does;
 * 0 on success, -1 where its mask (as it is now) holds one CPU or not cpu
 * (tests place PEs with it). */
int shoal_spread_move_to(int cpu);

#endif
