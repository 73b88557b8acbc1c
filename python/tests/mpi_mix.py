"""mpi4py and shoal in one program, under Open MPI's mpirun (PMIx):
ranks are PEs, and MPI and SHMEM calls on heap arrays agree.
    mpirun -n 2 python3 python/tests/mpi_mix.py"""
import sys

import numpy as np
from mpi4py import MPI

import shoal

shoal.init()
comm = MPI.COMM_WORLD
me, n = shoal.my_pe(), shoal.n_pes()
assert (comm.Get_rank(), comm.Get_size()) == (me, n), ((comm.Get_rank(), comm.Get_size()), (me, n))

# The same sum through both libraries.
src = shoal.array(np.arange(16, dtype=np.float64) + me)
dst = shoal.zeros(16)
shoal.sum_reduce(dst, src)
by_mpi = np.zeros(16)
comm.Allreduce(src, by_mpi, op=MPI.SUM)
want = np.arange(16) * n + n * (n - 1) / 2
assert np.array_equal(dst, want) and np.array_equal(by_mpi, want), (dst, by_mpi)

# A shoal put, then MPI's barrier orders it (quiet first), then MPI moves
# a heap array and shoal reads it back.
ring = shoal.zeros(4, np.int64)
shoal.put(ring, np.full(4, me, np.int64), (me + 1) % n)
shoal.quiet()
comm.Barrier()
shoal.barrier_all()
assert (ring == (me - 1) % n).all(), ring
out = np.empty(4, np.int64)
comm.Sendrecv(ring, dest=(me - 1) % n, recvbuf=out, source=(me + 1) % n)
assert (out == me).all(), out
counts = comm.allgather(int(ring[0]))
assert counts == [(p - 1) % n for p in range(n)], counts
shoal.barrier_all()
for a in (ring, dst, src):
    shoal.free(a)
shoal.finalize()
if me == 0:
    print("mpi4py + shoal ok on %d PEs" % n)
sys.stdout.flush()
