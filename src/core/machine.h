/* machine.h: which PEs of this machine are running, across the hosts that
 * share its cores (hosts made of network namespaces on one machine, as the
 * multi-host tests and benchmarks build them).
 *
 * The back-off (sync/backoff.c) stops spinning when more PEs are awake than
 * there are cores. It counts the PEs of its host by their sleepers flags
 * (sync/wake.h), which live in the host's shared segments; PEs of another
 * namespace host on the same cores do not share those segments, so the
 * count missed them and waits with writers behind a transport had to cap
 * their spin blindly. The board is a small POSIX shared-memory object with
 * one slot per PE of the machine: whether it joined, and how many of its
 * threads sleep in a wait right now. Its name is 64 random bits the
 * machine's lowest PE drew (find_hosts in runtime.c); that PE creates it
 * (O_EXCL, mode 0600) before the start-up barrier, the others open it after.
 * Where the hosts do not share /dev/shm the board never completes and waits
 * keep their host's count. */
#ifndef SHOAL_CORE_MACHINE_H
#define SHOAL_CORE_MACHINE_H

#include <stdint.h>

/* The lowest PE of the machine: creates the board (0 where it could not:
 * waits then keep their host's count). Before the start-up barrier. */
int shoal_machine_board_create(int pes, uint64_t name);
/* Every PE, after the start-up barrier: maps the board and takes its slot. */
void shoal_machine_board_join(int rank, int pes, uint64_t name, int creator);
/* PEs of the machine not asleep in a wait, this one included; -1 while
 * some PE of the machine has not joined the board (or there is none). */
int shoal_machine_running(void);
/* Around a sleeping system call of a wait (futex or timer). */
void shoal_machine_sleep_begin(void);
void shoal_machine_sleep_end(void);
/* This PE leaves: counted asleep from now on, the board unmapped. */
void shoal_machine_board_close(void);

#endif
