"""Symmetric tensors: shoal.torch.empty/zeros/peer/free/collect, values
checked, bad input raising (oshrun -n 1, 2, 4)."""
import gc
import os

import pytest

torch = pytest.importorskip("torch")
import shoal  # noqa: E402
import shoal.torch as st  # noqa: E402


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.int8, torch.bfloat16, torch.bool])
def test_empty_is_symmetric_and_writable(dtype):
    t = st.empty((3, 5), dtype=dtype)
    assert t.shape == (3, 5) and t.dtype == dtype and t.device.type == "cpu" and t.is_contiguous()
    assert st.is_symmetric(t) and st.is_symmetric(t[1])
    t.fill_(1)
    assert torch.all(t == 1)
    assert not st.is_symmetric(torch.empty(3))
    st.free(t)
    assert t.numel() == 0


def test_peer_views_every_local_pe():
    me, n = st.my_pe(), st.n_pes()
    x = st.zeros((n, 4), torch.int32)
    if os.environ.get("SHMEM_TRANSPORT", "") not in ("", "auto", "shm") and n > 1:  # forced fabric: no load/store
        with pytest.raises(ValueError, match="not reachable"):
            st.peer(x, (me + 1) % n)
        st.free(x)
        return
    for p in range(n):  # write my row into everyone's copy, by load/store
        st.peer(x, p)[me] = torch.arange(4, dtype=torch.int32) + 10 * me
    shoal.barrier_all()
    assert torch.equal(x, torch.arange(4, dtype=torch.int32) + 10 * torch.arange(n, dtype=torch.int32)[:, None])
    # A view of a slice maps to the same slice on the peer.
    v = st.peer(x[:, 1:3], (me + 1) % n)
    assert v.shape == (n, 2) and torch.equal(v, x[:, 1:3])
    shoal.barrier_all()
    st.free(x)


def test_dropped_tensors_return_at_the_next_collective_point():
    before = st.collect()  # settle whatever earlier tests left
    base = shoal.torch._ext.live_allocations()
    ts = [st.empty(1024) for _ in range(3)]
    assert shoal.torch._ext.live_allocations() == base + 3
    if st.n_pes() > 1:
        if st.my_pe() == 0:
            del ts[:]  # only PE 0 drops them: not freed anywhere yet
        gc.collect()
        assert st.collect() == 0
        assert shoal.torch._ext.live_allocations() == base + 3
    del ts
    gc.collect()
    assert st.collect() == 3  # dead everywhere now
    assert shoal.torch._ext.live_allocations() == base
    assert before >= 0


def test_heap_space_is_reused():
    # 64 x 32 MiB = 2 GiB, more than the default 1 GiB heap: only works
    # because each dropped tensor goes back at the next empty().
    for i in range(64):
        t = st.empty(8 * 1024 * 1024)
        t[0] = i
        del t


def test_bad_input():
    n = st.n_pes()
    with pytest.raises(ValueError, match="negative"):
        st.empty((2, -1))
    with pytest.raises(TypeError):
        st.empty(4, dtype="float32")
    with pytest.raises(TypeError):
        st.empty("abc")
    with pytest.raises(ValueError, match="not supported"):
        st.empty(4, dtype=torch.complex64)
    with pytest.raises(RuntimeError, match="symmetric heap"):
        st.empty(1 << 40)  # 4 TiB of float32
    x = st.empty(4)
    with pytest.raises(ValueError, match="is not in 0"):
        st.peer(x, n)
    with pytest.raises(ValueError, match="is not in 0"):
        st.peer(x, -1)
    with pytest.raises(ValueError, match="not on the symmetric heap"):
        st.peer(torch.empty(4), 0)
    with pytest.raises(ValueError, match="not made by shoal.torch.empty"):
        st.free(torch.empty(4))
    with pytest.raises(TypeError):
        st.peer([1, 2], 0)
    st.free(x)
    with pytest.raises(ValueError):
        st.free(x)  # already freed (and empty now)
