"""Start-up, the heap, put/get (blocking, _nbi, on contexts), signals, waits."""
import numpy as np
import pytest

import shoal
from conftest import ring

DTYPES = ["int8", "uint8", "int16", "int32", "int64", "uint64", "float32", "float64", "complex128", "bool"]


def test_pes(me, npes):
    assert shoal.initialized()
    assert 0 <= me < npes
    # Every PE reports its number; the sum shows each is there once.
    src = shoal.array([me], dtype=np.int64)
    dst = shoal.zeros(npes, dtype=np.int64)
    shoal.fcollect(dst, src)
    assert list(dst) == list(range(npes))
    shoal.free(dst)
    shoal.free(src)


def test_zeros_empty_array_free(npes):
    a = shoal.zeros((3, 5), dtype=np.float32)
    assert a.shape == (3, 5) and a.dtype == np.float32 and not a.any()
    assert a.flags.c_contiguous and a.flags.writeable
    assert shoal.is_symmetric(a) and shoal.is_symmetric(a[1])
    b = shoal.empty(7, "int16")
    assert b.shape == (7,) and b.dtype == np.int16
    c = shoal.array(np.arange(6).reshape(2, 3))
    assert c.tolist() == [[0, 1, 2], [3, 4, 5]] and shoal.is_symmetric(c)
    z = shoal.zeros(0, np.int32)
    assert z.size == 0
    assert not shoal.is_symmetric(np.zeros(3))
    for x in (z, c, b, a):
        shoal.free(x)
    with pytest.raises(shoal.StateError):
        shoal.free(a)
    # Memory given back is reused: the heap does not run out over a loop.
    for _ in range(200):
        shoal.free(shoal.zeros(1 << 16, np.uint8))


@pytest.mark.parametrize("dtype", DTYPES)
def test_put_get_ring(me, npes, dtype):
    n = 1000
    dst = shoal.zeros(n, dtype)
    src = (np.arange(n) * 3 + me).astype(dtype)
    shoal.put(dst, src, ring(me, npes))
    shoal.barrier_all()
    left = (me - 1) % npes
    assert np.array_equal(dst, (np.arange(n) * 3 + left).astype(dtype))
    # get reads the right neighbour's dst, which holds this PE's src.
    back = np.zeros(n, dtype)
    shoal.get(back, dst, ring(me, npes))
    assert np.array_equal(back, src)
    shoal.barrier_all()
    shoal.free(dst)


def test_put_get_large_and_2d(me, npes):
    # 4 MiB: the path that runs without the GIL.
    dst = shoal.zeros((1024, 1024), np.float32)
    src = np.full((1024, 1024), me + 0.5, np.float32)
    src[me % 1024, :] = -1
    shoal.put(dst, src, ring(me, npes))
    shoal.barrier_all()
    left = (me - 1) % npes
    assert (dst[left % 1024] == -1).all()
    assert np.count_nonzero(dst == left + 0.5) == 1024 * 1023
    # A contiguous slice: only those rows travel.
    shoal.barrier_all()
    dst[...] = 0
    shoal.barrier_all()
    shoal.put(dst[10:12], np.full((2, 1024), 7, np.float32), ring(me, npes))
    shoal.barrier_all()
    assert (dst[10:12] == 7).all() and np.count_nonzero(dst) == 2048
    shoal.barrier_all()
    shoal.free(dst)


def test_nbi_and_quiet(me, npes):
    dst = shoal.zeros((npes, 64), np.int64)
    for pe in range(npes):
        shoal.put_nbi(dst[me], np.full(64, me * 100 + pe, np.int64), pe)
    shoal.quiet()
    shoal.barrier_all()
    for pe in range(npes):
        assert (dst[pe] == pe * 100 + me).all()
    got = np.zeros((npes, 64), np.int64)
    for pe in range(npes):
        shoal.get_nbi(got[pe], dst[me], pe)
    shoal.quiet()
    for pe in range(npes):
        assert (got[pe] == me * 100 + pe).all()
    shoal.barrier_all()
    shoal.free(dst)


def test_ctx(me, npes):
    dst = shoal.zeros(16, np.int32)
    with shoal.Ctx() as ctx:
        ctx.put(dst, np.full(16, me + 1, np.int32), ring(me, npes))
        ctx.quiet()
        shoal.barrier_all()
        assert (dst == (me - 1) % npes + 1).all()
        out = np.zeros(16, np.int32)
        shoal.get(out, dst, ring(me, npes), ctx=ctx)
        assert (out == me + 1).all()
        ctx.fence()
    assert ctx._handle is None
    with pytest.raises(shoal.StateError):
        shoal.put(dst, np.zeros(16, np.int32), 0, ctx)
    # A context on a team: PE numbers are the team's.
    team = shoal.TEAM_WORLD.split_strided(0, 1, npes)
    tctx = team.create_ctx()
    tctx.put_nbi(dst, np.full(16, 9, np.int32), team.my_pe())
    tctx.quiet()
    assert (dst == 9).all()
    tctx.destroy()
    team.destroy()
    shoal.barrier_all()
    shoal.free(dst)


def test_put_signal(me, npes):
    dst = shoal.zeros(256, np.float64)
    sig = shoal.zeros(2, np.uint64)
    right = ring(me, npes)
    shoal.put_signal(dst, np.full(256, me * 1.5), sig, me + 1, shoal.SIGNAL_SET, right)
    left = (me - 1) % npes
    assert shoal.signal_wait_until(sig, shoal.CMP_EQ, left + 1) == left + 1
    assert (dst == left * 1.5).all()
    shoal.barrier_all()
    # SIGNAL_ADD from every PE on element 1, non-blocking.
    for pe in range(npes):
        shoal.put_signal_nbi(dst[:1], np.array([2.0]), sig, 10, shoal.SIGNAL_ADD, pe, index=1)
    shoal.quiet()
    assert shoal.signal_wait_until(sig, shoal.CMP_GE, 10 * npes, index=1) == 10 * npes
    assert shoal.signal_fetch(sig, 1) == 10 * npes
    shoal.barrier_all()
    shoal.free(sig)
    shoal.free(dst)


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint32", "uint64"])
def test_wait_until_and_test(me, npes, dtype):
    flags = shoal.zeros(4, dtype)
    assert shoal.test(flags, shoal.CMP_EQ, 0, index=3)
    assert not shoal.test(flags, shoal.CMP_NE, 0, index=3)
    shoal.barrier_all()
    shoal.atomic_set(flags, me + 5, ring(me, npes), index=2)
    shoal.wait_until(flags, shoal.CMP_EQ, (me - 1) % npes + 5, index=2)
    assert flags[2] == (me - 1) % npes + 5
    assert shoal.test(flags, shoal.CMP_GT, 4, index=-2)
    shoal.barrier_all()
    shoal.free(flags)


def test_fence_orders_puts(me, npes):
    data = shoal.zeros(8, np.int64)
    flag = shoal.zeros(1, np.int64)
    shoal.put(data, np.arange(8, dtype=np.int64) + me, ring(me, npes))
    shoal.fence()
    shoal.atomic_set(flag, 1, ring(me, npes))
    shoal.wait_until(flag, shoal.CMP_EQ, 1)
    assert list(data) == list(np.arange(8) + (me - 1) % npes)
    shoal.barrier_all()
    shoal.free(flag)
    shoal.free(data)


def test_ptr_on_this_host(me, npes):
    a = shoal.zeros(4, np.int64)
    a[:] = me
    shoal.barrier_all()
    # Every PE of a one-host job is reachable by load/store.
    for pe in range(npes):
        addr = shoal.ptr(a, pe)
        assert addr is not None
        peer = np.ctypeslib.as_array((np.ctypeslib.ctypes.c_int64 * 4).from_address(addr))
        assert list(peer) == [pe] * 4
    assert shoal.ptr(a, me) == a.ctypes.data
    shoal.barrier_all()
    shoal.free(a)


def test_info_and_teams_exist():
    major, minor, name = shoal.info()
    assert (major, minor) == (1, 6) and name.startswith("Shoal")
    assert shoal.TEAM_WORLD.n_pes() == shoal.n_pes()
    assert shoal.TEAM_WORLD.my_pe() == shoal.my_pe()
