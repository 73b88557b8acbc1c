"""Halo exchange on numpy: a periodic 1-D heat equation split over the PEs.

Each step a PE puts its edge cells into its neighbours' ghost cells with
put_signal (the step number is the signal) and waits for its own ghosts
with signal_wait_until; no barrier per step. Ghosts are double-buffered by
step parity, so a fast PE cannot overwrite ghosts a slow one still reads.
At the end every PE checks the gathered field against the same stencil
computed on the whole field by numpy alone (bit for bit).

    oshrun -n 4 python3 python/examples/halo_numpy.py [cells_per_pe] [steps]
"""
import sys

import numpy as np

import shoal

shoal.init()
me, n = shoal.my_pe(), shoal.n_pes()
cells = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 200
alpha = 0.25
left, right = (me - 1) % n, (me + 1) % n

# ghosts[parity] = [from the left neighbour, from the right neighbour];
# signals[parity][side] counts the steps whose ghost has arrived.
ghosts = shoal.zeros((2, 2), np.float64)
signals = shoal.zeros((2, 2), np.uint64)

x = np.linspace(0.0, 1.0, cells * n, endpoint=False)
start = np.sin(2 * np.pi * x) + (x > 0.5)  # a smooth part and a step
u = start[me * cells:(me + 1) * cells].copy()

for step in range(steps):
    p = step % 2
    # My first cell is my left neighbour's right ghost, my last its left.
    shoal.put_signal(ghosts[p, 1:2], u[:1], signals[p], step + 1, shoal.SIGNAL_SET, left, index=1)
    shoal.put_signal(ghosts[p, 0:1], u[-1:], signals[p], step + 1, shoal.SIGNAL_SET, right, index=0)
    shoal.signal_wait_until(signals[p], shoal.CMP_GE, step + 1, index=0)
    shoal.signal_wait_until(signals[p], shoal.CMP_GE, step + 1, index=1)
    from_left = np.concatenate((ghosts[p, :1], u[:-1]))
    from_right = np.concatenate((u[1:], ghosts[p, 1:]))
    u = u + alpha * (from_left + from_right - 2 * u)

# Gather the field and check it against numpy on the whole domain.
mine = shoal.array(u)
field = shoal.zeros(cells * n)
shoal.fcollect(field, mine)
ref = start.copy()
for _ in range(steps):
    ref = ref + alpha * (np.roll(ref, 1) + np.roll(ref, -1) - 2 * ref)
if not np.array_equal(field, ref):
    bad = int(np.argmax(field != ref))
    print("halo_numpy: PE %d: cell %d is %r, numpy says %r" % (me, bad, field[bad], ref[bad]))
    sys.exit(1)
total = shoal.zeros(1)
shoal.sum_reduce(total, shoal.array([u.sum()]))
if me == 0:
    print("halo_numpy: %d PEs x %d cells, %d steps: field matches numpy exactly; heat %.6f (start %.6f)"
          % (n, cells, steps, total[0], start.sum()))
shoal.finalize()
