"""Per-call overhead of shoal.put against the C call, in one process.

Each round times ITERS calls of shoal.put(dest, src, pe) on an 8-byte
(one int64) array, then ITERS calls of shmem_putmem on the same buffers
from C (shoal._core._time_putmem), alternating the order each round.
PE 0 prints the medians over ROUNDS rounds and their ratio.

    oshrun -n 2 python3 python/bench/put_overhead.py [iters] [rounds]
"""
import statistics
import sys
import time

import numpy as np

import shoal

shoal.init()
me, n = shoal.my_pe(), shoal.n_pes()
iters = int(sys.argv[1]) if len(sys.argv) > 1 else 200000
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 7
pe = (me + 1) % n
dest = shoal.zeros(1, np.int64)
src = np.ones(1, np.int64)
put = shoal.put


def time_python():
    t0 = time.perf_counter_ns()
    for _ in range(iters):
        put(dest, src, pe)
    return (time.perf_counter_ns() - t0) / iters


def time_loop():
    # The bare Python for-loop, to separate it from the call.
    t0 = time.perf_counter_ns()
    for _ in range(iters):
        pass
    return (time.perf_counter_ns() - t0) / iters


py_ns, c_ns, loop_ns = [], [], []
time_python()  # warm-up
for r in range(rounds):
    if r % 2 == 0:
        py_ns.append(time_python())
        c_ns.append(shoal._core._time_putmem(dest, src, pe, iters))
    else:
        c_ns.append(shoal._core._time_putmem(dest, src, pe, iters))
        py_ns.append(time_python())
    loop_ns.append(time_loop())
shoal.barrier_all()
if me == 0:
    p, c, lp = statistics.median(py_ns), statistics.median(c_ns), statistics.median(loop_ns)
    print("put_overhead: %d PEs, 8-byte put to PE %d, %d calls x %d rounds (medians)" % (n, pe, iters, rounds))
    print("  shoal.put      %8.1f ns/call  (the loop alone: %.1f ns)" % (p, lp))
    print("  shmem_putmem   %8.1f ns/call  (C, same buffers, same process)" % c)
    print("  overhead       %8.1f ns/call  (%.1fx the C call)" % (p - c, p / c))
shoal.finalize()
