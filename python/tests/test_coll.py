"""Teams and collectives on arrays, every value checked."""
import numpy as np
import pytest

import shoal


def test_team_shared_and_translate(me, npes):
    shared = shoal.TEAM_SHARED
    assert shared.n_pes() == npes and shared.my_pe() == me  # one host
    for pe in range(npes):
        assert shoal.TEAM_WORLD.translate(pe, shared) == pe


def test_split_strided(me, npes):
    # Heap arrays are made by every PE of the world, members or not.
    src = shoal.array([me], np.int32)
    out = shoal.zeros((npes + 1) // 2, np.int32)
    evens = shoal.TEAM_WORLD.split_strided(0, 2, (npes + 1) // 2)
    if me % 2 == 0:
        assert evens is not None
        assert evens.my_pe() == me // 2 and evens.n_pes() == (npes + 1) // 2
        for i in range(evens.n_pes()):
            assert evens.translate(i, shoal.TEAM_WORLD) == 2 * i
        shoal.fcollect(out, src, team=evens)
        assert list(out) == list(range(0, npes, 2))
        evens.sync()
    else:
        assert evens is None
        assert shoal.TEAM_WORLD.translate(me, evens or shoal.TEAM_WORLD) == me
    if evens is not None:
        evens.destroy()
        with pytest.raises(shoal.StateError):
            evens.my_pe()
    shoal.barrier_all()
    shoal.free(out)
    shoal.free(src)


def test_split_2d(me, npes):
    xrange = 2 if npes >= 2 else 1
    row, col = shoal.TEAM_WORLD.split_2d(xrange)
    assert row.my_pe() == me % xrange and row.n_pes() == min(xrange, npes - (me // xrange) * xrange)
    assert col.my_pe() == me // xrange
    assert col.n_pes() == len(range(me % xrange, npes, xrange))
    s = shoal.array([float(me)])
    d = shoal.zeros(1)
    shoal.sum_reduce(d, s, team=row)
    base = (me // xrange) * xrange
    assert d[0] == sum(range(base, min(base + xrange, npes)))
    shoal.sum_reduce(d, s, team=col)
    assert d[0] == sum(range(me % xrange, npes, xrange))
    row.destroy()
    col.destroy()
    shoal.free(d)
    shoal.free(s)


@pytest.mark.parametrize("root", [0, -1])
def test_broadcast(me, npes, root):
    root = root % npes
    src = shoal.array(np.arange(1000, dtype=np.float64) * (me + 1))
    dst = shoal.zeros(1000)
    shoal.broadcast(dst, src, root)
    assert np.array_equal(dst, np.arange(1000) * (root + 1.0))
    shoal.free(dst)
    shoal.free(src)


def test_fcollect_and_collect(me, npes):
    src = shoal.array(np.full(3, me, np.int16))
    dst = shoal.zeros((npes, 3), np.int16)
    shoal.fcollect(dst, src)
    assert dst.tolist() == [[p] * 3 for p in range(npes)]
    # collect: PE p gives p+1 elements.
    var = shoal.array(np.full(npes, 10 + me, np.int64))  # same size on every PE
    total = npes * (npes + 1) // 2
    out = shoal.zeros(total + 2, np.int64)
    out[:] = -1
    assert shoal.collect(out, var[: me + 1]) == total
    want = [10 + p for p in range(npes) for _ in range(p + 1)]
    assert out[:total].tolist() == want and out[total:].tolist() == [-1, -1]
    shoal.barrier_all()
    for a in (out, var, dst, src):
        shoal.free(a)


def test_alltoall(me, npes):
    src = shoal.array([[me * 100 + j] * 2 for j in range(npes)], np.int32)
    dst = shoal.zeros((npes, 2), np.int32)
    shoal.alltoall(dst, src)
    assert dst.tolist() == [[i * 100 + me] * 2 for i in range(npes)]
    shoal.free(dst)
    shoal.free(src)


INT_TYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


@pytest.mark.parametrize("dtype", INT_TYPES + ["float32", "float64"])
@pytest.mark.parametrize("op", ["sum", "prod", "min", "max"])
def test_reductions_arith(me, npes, dtype, op):
    vals = np.array([me + 1, 2, (me * 7) % 5 + 1, 3], dtype=dtype)
    allv = np.array([[p + 1, 2, (p * 7) % 5 + 1, 3] for p in range(npes)], dtype=dtype)
    want = {"sum": allv.sum(0), "prod": allv.prod(0), "min": allv.min(0), "max": allv.max(0)}[op].astype(dtype)
    src = shoal.array(vals)
    dst = shoal.zeros(4, dtype)
    shoal.reduce(dst, src, op)
    assert np.array_equal(dst, want), (dst, want)
    shoal.free(dst)
    shoal.free(src)


@pytest.mark.parametrize("dtype", INT_TYPES)
@pytest.mark.parametrize("op", ["and", "or", "xor"])
def test_reductions_bitwise(me, npes, dtype, op):
    vals = np.array([1 << me, 0x7F ^ (1 << me), me * 3], dtype=dtype)
    want = np.array([1 << 0, 0x7F ^ 1, 0], dtype=dtype)
    for p in range(1, npes):
        other = np.array([1 << p, 0x7F ^ (1 << p), p * 3], dtype=dtype)
        want = {"and": want & other, "or": want | other, "xor": want ^ other}[op]
    src = shoal.array(vals)
    dst = shoal.zeros(3, dtype)
    {"and": shoal.and_reduce, "or": shoal.or_reduce, "xor": shoal.xor_reduce}[op](dst, src)
    assert np.array_equal(dst, want)
    shoal.free(dst)
    shoal.free(src)


@pytest.mark.parametrize("dtype", ["int32", "uint64", "float64"])
def test_scans(me, npes, dtype):
    src = shoal.array(np.array([me + 1, 10 * (me + 1)], dtype=dtype))
    inc = shoal.zeros(2, dtype)
    exc = shoal.zeros(2, dtype)
    shoal.inscan(inc, src)
    shoal.exscan(exc, src)
    s = sum(range(1, me + 2))
    assert inc.tolist() == [s, 10 * s]
    assert exc.tolist() == [s - (me + 1), 10 * (s - (me + 1))]
    for a in (exc, inc, src):
        shoal.free(a)


def test_in_place_and_large_reduce(me, npes):
    a = shoal.array(np.full(1 << 20, me + 1, np.float32))  # 4 MiB
    shoal.sum_reduce(a, a)
    assert (a == npes * (npes + 1) / 2).all()
    shoal.free(a)
