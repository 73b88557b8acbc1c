"""shoal: OpenSHMEM for Python on Shoal.

Run under ``oshrun -n N python3 prog.py``::

    import shoal
    shoal.init()
    a = shoal.zeros(4, dtype="int64")          # on the symmetric heap
    shoal.put(a, numpy.arange(4), (shoal.my_pe() + 1) % shoal.n_pes())
    shoal.barrier_all()

Bad input (a PE out of range, a dest that is not symmetric, a strided
array, mismatched sizes or types) raises a shoal.Error subclass before
libshoal is called, so the job goes on. See python/README.md.
"""
import atexit

import numpy as _np

from . import _core
from ._objects import Ctx, Team
from .errors import (DTypeError, ElementIndexError, Error, InvalidArgument, NotContiguousError,
                     NotSymmetricError, PEError, SizeError, StateError)

_core._set_errors(InvalidArgument, PEError, NotSymmetricError, NotContiguousError, DTypeError, SizeError,
                  StateError, ElementIndexError)

__version__ = "0.1.0"

CMP_EQ, CMP_NE, CMP_GT, CMP_GE, CMP_LT, CMP_LE = (_core.CMP_EQ, _core.CMP_NE, _core.CMP_GT, _core.CMP_GE,
                                                  _core.CMP_LT, _core.CMP_LE)
SIGNAL_SET, SIGNAL_ADD = _core.SIGNAL_SET, _core.SIGNAL_ADD
CTX_SERIALIZED, CTX_PRIVATE, CTX_NOSTORE = _core.CTX_SERIALIZED, _core.CTX_PRIVATE, _core.CTX_NOSTORE

TEAM_WORLD = Team(_core.team_world(), "TEAM_WORLD")
TEAM_SHARED = Team(_core.team_shared(), "TEAM_SHARED")

# The calls that go straight to the extension (the per-call fast path).
my_pe = _core.my_pe
n_pes = _core.n_pes
put, get, put_nbi, get_nbi = _core.put, _core.get, _core.put_nbi, _core.get_nbi
put_signal, put_signal_nbi = _core.put_signal, _core.put_signal_nbi
signal_wait_until, signal_fetch = _core.signal_wait_until, _core.signal_fetch
wait_until, test = _core.wait_until, _core.test
fence, quiet, barrier_all, sync_all = _core.fence, _core.quiet, _core.barrier_all, _core.sync_all
atomic_fetch, atomic_set, atomic_swap = _core.atomic_fetch, _core.atomic_set, _core.atomic_swap
atomic_compare_swap = _core.atomic_compare_swap
atomic_fetch_add, atomic_add = _core.atomic_fetch_add, _core.atomic_add
atomic_inc, atomic_fetch_inc = _core.atomic_inc, _core.atomic_fetch_inc
atomic_fetch_and, atomic_and = _core.atomic_fetch_and, _core.atomic_and
atomic_fetch_or, atomic_or = _core.atomic_fetch_or, _core.atomic_or
atomic_fetch_xor, atomic_xor = _core.atomic_fetch_xor, _core.atomic_xor
initialized = _core.initialized

_collect_sizes = None  # (one int64, n_pes int64): symmetric scratch for collect


def init():
    """Starts Shoal (shmem_init). Idempotent; finalize runs at exit."""
    global _collect_sizes
    if _core.initialized():
        return
    _core.init()
    atexit.register(finalize)
    _collect_sizes = (zeros(1, _np.int64), zeros(n_pes(), _np.int64))


def finalize():
    """Ends Shoal (shmem_finalize); arrays on the heap must not be used after."""
    _core.finalize()


def _heap_array(shape, dtype, zero):
    dtype = _np.dtype(dtype)
    shape = (shape,) if _np.isscalar(shape) else tuple(shape)
    count = int(_np.prod(shape, dtype=_np.int64)) if shape else 1
    if count < 0 or any(int(d) < 0 for d in shape):
        raise SizeError("shoal.empty: negative dimension in shape %r" % (shape,))
    block = _core.alloc(count * dtype.itemsize, zero)
    return _np.frombuffer(block, dtype=dtype, count=count).reshape(shape)


def empty(shape, dtype=_np.float64):
    """A numpy array on the symmetric heap, not cleared. Collective: every PE
    calls it with the same shape and dtype, in the same order."""
    return _heap_array(shape, dtype, False)


def zeros(shape, dtype=_np.float64):
    """A numpy array on the symmetric heap, all zeros on every PE before any
    PE returns (shmem_calloc). Collective."""
    return _heap_array(shape, dtype, True)


def array(data, dtype=None):
    """A copy of data on the symmetric heap. Collective (same shape on every
    PE); ends with a barrier, so every PE's copy is filled on return."""
    src = _np.asarray(data, dtype=dtype)
    a = empty(src.shape, src.dtype)
    a[...] = src
    barrier_all()  # no PE reads or writes a peer's copy before it is filled
    return a


def _block_of(a):
    base = a
    while base is not None and not isinstance(base, _core.HeapBlock):
        base = getattr(base, "base", None)
        if isinstance(base, memoryview):
            base = base.obj
    return base


def free(a):
    """Returns an array's memory to the symmetric heap (collective, like
    shmem_free). Views of it must not be used afterwards."""
    block = _block_of(a)
    if block is None:
        raise NotSymmetricError("shoal.free: the array was not made by shoal.zeros/shoal.empty")
    _core.release(block)


def is_symmetric(a):
    """True if the whole array lies on the symmetric heap."""
    return _block_of(a) is not None


def ptr(a, pe):
    """The address of a's bytes on PE pe when load/store reaches it (same
    host), else None (shmem_ptr)."""
    return _core.ptr(a, pe)


def info():
    """(major, minor, vendor) of the OpenSHMEM library."""
    return _core.info()


def sync(team=None):
    """shmem_team_sync on team (TEAM_WORLD when None)."""
    _core.team_sync(team)


def broadcast(dest, source, root, team=None):
    """dest on every member = source on root (team PE number)."""
    _core.broadcast(team, dest, source, root)


def fcollect(dest, source, team=None):
    """dest = the sources of every member in order; dest has n_pes x source's size."""
    _core.fcollect(team, dest, source)


def collect(dest, source, team=None):
    """Like fcollect with sizes that may differ by PE; returns the number of
    elements gathered. dest must hold the total on every PE."""
    sizes_src, sizes = _collect_sizes
    members = _core.team_n_pes(team)
    if not isinstance(dest, _np.ndarray) or not isinstance(source, _np.ndarray):
        raise DTypeError("shoal.collect: dest and source must be numpy arrays")
    sizes_src[0] = source.size
    _core.fcollect(team, sizes[:members], sizes_src)
    total = int(sizes[:members].sum())
    if dest.size < total:
        raise SizeError("shoal.collect: dest has %d elements, the team's sources %d" % (dest.size, total))
    _core.collect(team, dest.reshape(-1)[:total] if dest.flags.c_contiguous else dest, source)
    return total


def alltoall(dest, source, team=None):
    """Block j of source goes to member j; block i of dest comes from member i."""
    _core.alltoall(team, dest, source)


def reduce(dest, source, op="sum", team=None):
    """Element-wise reduction over the team: op is sum, prod, min, max (any
    type) or and, or, xor (integers)."""
    if op in ("inscan", "exscan"):
        raise InvalidArgument("shoal.reduce: op %r: use shoal.inscan/shoal.exscan" % (op,))
    _core.reduce(team, dest, source, op)


def sum_reduce(dest, source, team=None):
    _core.reduce(team, dest, source, "sum")


def prod_reduce(dest, source, team=None):
    _core.reduce(team, dest, source, "prod")


def min_reduce(dest, source, team=None):
    _core.reduce(team, dest, source, "min")


def max_reduce(dest, source, team=None):
    _core.reduce(team, dest, source, "max")


def and_reduce(dest, source, team=None):
    _core.reduce(team, dest, source, "and")


def or_reduce(dest, source, team=None):
    _core.reduce(team, dest, source, "or")


def xor_reduce(dest, source, team=None):
    _core.reduce(team, dest, source, "xor")


def inscan(dest, source, team=None):
    """Inclusive sum scan: member k gets the sum of members 0..k."""
    _core.reduce(team, dest, source, "inscan")


def exscan(dest, source, team=None):
    """Exclusive sum scan: member k gets the sum of members 0..k-1 (member 0: zeros)."""
    _core.reduce(team, dest, source, "exscan")
