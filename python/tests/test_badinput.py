"""Bad input raises a shoal.Error subclass naming the call and the value,
and the job goes on: each test ends with a working put and barrier."""
import numpy as np
import pytest

import shoal
from conftest import ring


@pytest.fixture
def heap(me, npes):
    a = shoal.zeros(8, np.int64)
    yield a
    # The job still works after the error.
    shoal.put(a, np.full(8, me, np.int64), ring(me, npes))
    shoal.barrier_all()
    assert (a == (me - 1) % npes).all()
    shoal.barrier_all()
    shoal.free(a)


@pytest.mark.parametrize("pe", [-1, "n", "n+5", 2**31])
def test_bad_pe(heap, npes, pe):
    pe = {"n": npes, "n+5": npes + 5}.get(pe, pe)
    src = np.zeros(8, np.int64)
    for call in (shoal.put, shoal.get, shoal.put_nbi, shoal.get_nbi):
        with pytest.raises(shoal.PEError) as e:
            call(heap, src, pe) if call in (shoal.put, shoal.put_nbi) else call(src, heap, pe)
        assert isinstance(e.value, ValueError) and isinstance(e.value, shoal.Error)
        assert "PE %d is out of range (0..%d)" % (pe, npes - 1) in str(e.value)
    with pytest.raises(shoal.PEError):
        shoal.atomic_fetch_add(heap, 1, pe)
    with pytest.raises(shoal.PEError):
        shoal.put_signal(heap, src, shoal.zeros(1, np.uint64), 1, shoal.SIGNAL_SET, pe)
    with pytest.raises(shoal.PEError):
        shoal.ptr(heap, pe)


def test_bad_pe_in_a_context_team(heap, me, npes):
    # The context's team is one PE wide: PE 1 is out of range there.
    solo = shoal.TEAM_WORLD.split_strided(me, 1, 1) if npes == 1 else None
    teams = [shoal.TEAM_WORLD.split_strided(p, 1, 1) for p in range(npes)]
    mine = teams[me]
    ctx = mine.create_ctx()
    with pytest.raises(shoal.PEError, match=r"PE 1 is out of range \(0\.\.0\)"):
        shoal.put(heap, np.zeros(8, np.int64), 1, ctx=ctx)
    ctx.destroy()
    for t in teams + [solo]:
        if t is not None:
            t.destroy()


def test_not_symmetric(heap, me):
    local = np.zeros(8, np.int64)
    with pytest.raises(shoal.NotSymmetricError, match="shoal.put: dest .* is not on the symmetric heap"):
        shoal.put(local, np.zeros(8, np.int64), me)
    with pytest.raises(shoal.NotSymmetricError, match="shoal.get: source"):
        shoal.get(np.zeros(8, np.int64), local, me)
    with pytest.raises(shoal.NotSymmetricError):
        shoal.atomic_inc(local, me)
    with pytest.raises(shoal.NotSymmetricError):
        shoal.wait_until(np.zeros(1, np.int64), shoal.CMP_EQ, 0)
    with pytest.raises(shoal.NotSymmetricError):
        shoal.broadcast(heap, local, 0)
    with pytest.raises(shoal.NotSymmetricError):
        shoal.sum_reduce(local, heap)
    with pytest.raises(shoal.NotSymmetricError):
        shoal.free(local)


def test_not_contiguous(heap, me):
    strided = heap[::2]
    with pytest.raises(shoal.NotContiguousError, match="shoal.put: dest is not contiguous"):
        shoal.put(strided, np.zeros(4, np.int64), me)
    with pytest.raises(shoal.NotContiguousError, match="source is not contiguous"):
        shoal.put(heap[:4], np.zeros(8, np.int64)[::2], me)
    two_d = shoal.zeros((4, 4), np.int32)
    with pytest.raises(shoal.NotContiguousError):
        shoal.get(np.zeros(4, np.int32), two_d[:, 1], me)
    with pytest.raises(shoal.NotContiguousError):
        shoal.fcollect(two_d.T, two_d[0])
    shoal.free(two_d)


def test_size_and_type_mismatch(heap, me, npes):
    with pytest.raises(shoal.SizeError, match="sizes differ .64 bytes against 56 bytes"):
        shoal.put(heap, np.zeros(7, np.int64), me)
    with pytest.raises(shoal.DTypeError, match="element types differ"):
        shoal.put(heap, np.zeros(16, np.int32), me)
    with pytest.raises(shoal.DTypeError):
        shoal.put(heap, np.zeros(8, ">i8"), me)  # the other byte order
    with pytest.raises(shoal.DTypeError, match="must be an array"):
        shoal.put(heap, [1, 2, 3], me)
    with pytest.raises(shoal.SizeError, match="not %d PEs x 8 bytes" % npes):
        shoal.fcollect(heap[: npes + 1], heap[:1])
    if npes > 1:
        with pytest.raises(shoal.SizeError, match="do not split evenly"):
            shoal.alltoall(heap[: npes + 1], heap[npes - 1: 2 * npes])
    small = shoal.zeros(1, np.int64)
    with pytest.raises(shoal.SizeError, match="dest has 1 elements"):
        shoal.collect(small, heap[:2])
    shoal.free(small)


def test_bad_dtype_for_typed_calls(heap, me):
    f16 = shoal.zeros(4, np.float16)
    i16 = shoal.zeros(4, np.int16)
    with pytest.raises(shoal.DTypeError, match="atomics take"):
        shoal.atomic_fetch(i16, me)
    with pytest.raises(shoal.DTypeError, match="ivar must be"):
        shoal.wait_until(i16, shoal.CMP_EQ, 0)
    with pytest.raises(shoal.DTypeError, match="signal array must be uint64"):
        shoal.signal_wait_until(heap, shoal.CMP_EQ, 0)
    with pytest.raises(shoal.DTypeError, match="no 'sum' on other"):
        shoal.sum_reduce(f16, f16)
    with pytest.raises(shoal.DTypeError, match="no 'xor' on float64"):
        d = shoal.zeros(4)
        try:
            shoal.xor_reduce(d, d)
        finally:
            shoal.free(d)
    shoal.free(i16)
    shoal.free(f16)


def test_bad_values(heap, me):
    with pytest.raises(shoal.InvalidArgument, match="cmp 9"):
        shoal.wait_until(heap, 9, 0)
    with pytest.raises(shoal.InvalidArgument, match="sig_op 5"):
        shoal.put_signal(heap, heap.copy(), shoal.zeros(1, np.uint64), 1, 5, me)
    with pytest.raises(shoal.InvalidArgument, match="op 'mean'"):
        shoal.reduce(heap, heap, "mean")
    with pytest.raises(shoal.PEError, match="PE 99"):
        shoal.broadcast(heap, heap, 99)
    with pytest.raises(shoal.ElementIndexError, match="index 8 is out of range for 8"):
        shoal.atomic_inc(heap, me, index=8)
    with pytest.raises(IndexError):
        shoal.atomic_inc(heap, me, index=-9)
    with pytest.raises(shoal.InvalidArgument, match="start 0, stride 1, size 99"):
        shoal.TEAM_WORLD.split_strided(0, 1, 99)
    with pytest.raises(shoal.InvalidArgument, match="xrange 0"):
        shoal.TEAM_WORLD.split_2d(0)
    with pytest.raises(shoal.InvalidArgument, match="cannot be destroyed"):
        shoal.TEAM_WORLD.destroy()
    assert shoal.TEAM_WORLD.n_pes() == shoal.n_pes()
    readonly = heap.copy()
    readonly.flags.writeable = False
    with pytest.raises(shoal.InvalidArgument, match="read-only"):
        shoal.get(readonly, heap, me)
    with pytest.raises(shoal.StateError, match="destroyed"):
        shoal.sum_reduce(heap, heap, team=shoal.Team(None))
    with pytest.raises(shoal.DTypeError, match="expected a shoal.Team"):
        shoal.sum_reduce(heap, heap, team=3)
    with pytest.raises(MemoryError, match="SHMEM_SYMMETRIC_SIZE"):
        shoal.empty(1 << 50, np.uint8)
