"""The "shoal" torch.distributed backend: every collective and op, every value
checked, at any number of PEs (oshrun -n 1, 2, 4). Bad input raises on every
PE alike, so the job goes on."""
import os

import pytest

torch = pytest.importorskip("torch")
dist = pytest.importorskip("torch.distributed")
import shoal.torch as st  # noqa: E402

INT_TYPES = [torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8]
FLOAT_TYPES = [torch.float32, torch.float64]


def forced_transport():
    """SHMEM_TRANSPORT=ofi|tls: PEs of one host talk over the fabric, shmem_ptr gives NULL."""
    return os.environ.get("SHMEM_TRANSPORT", "") not in ("", "auto", "shm")


@pytest.fixture(scope="module", autouse=True)
def group():
    if not dist.is_initialized():
        dist.init_process_group("shoal")
    assert dist.get_backend() == "shoal"
    assert dist.get_rank() == st.my_pe() and dist.get_world_size() == st.n_pes()
    yield


def contribution(rank, n, dtype):
    """A distinct small-valued tensor per rank (products stay in range)."""
    base = torch.arange(n) % 3 + 1
    if dtype == torch.bool:
        return (torch.arange(n) + rank) % 2 == 0
    return (base + (rank % 2)).to(dtype)


def expected(op, tensors):
    stacked = torch.stack([t.to(torch.int64) if not t.is_floating_point() else t.double() for t in tensors])
    if op == dist.ReduceOp.SUM:
        r = stacked.sum(0)
    elif op == dist.ReduceOp.PRODUCT:
        r = stacked.prod(0)
    elif op == dist.ReduceOp.MIN:
        r = stacked.min(0).values
    elif op == dist.ReduceOp.MAX:
        r = stacked.max(0).values
    elif op == dist.ReduceOp.AVG:
        r = stacked.sum(0) / len(tensors)
    else:
        r = stacked[0].clone()
        for t in stacked[1:]:
            r = {dist.ReduceOp.BAND: r & t, dist.ReduceOp.BOR: r | t, dist.ReduceOp.BXOR: r ^ t}[op]
    return r.to(tensors[0].dtype)


ARITH = [dist.ReduceOp.SUM, dist.ReduceOp.PRODUCT, dist.ReduceOp.MIN, dist.ReduceOp.MAX]
BITWISE = [dist.ReduceOp.BAND, dist.ReduceOp.BOR, dist.ReduceOp.BXOR]


@pytest.mark.parametrize("dtype", FLOAT_TYPES + INT_TYPES)
@pytest.mark.parametrize("op", ARITH + BITWISE + [dist.ReduceOp.AVG])
@pytest.mark.parametrize("n", [1, 1000])
def test_all_reduce(dtype, op, n):
    floating = dtype.is_floating_point
    if (op in BITWISE and floating) or (op == dist.ReduceOp.AVG and not floating):
        return  # rejected: see test_bad_reduce_op
    me, size = dist.get_rank(), dist.get_world_size()
    t = contribution(me, n, dtype)
    dist.all_reduce(t, op=op)
    want = expected(op, [contribution(r, n, dtype) for r in range(size)])
    assert torch.equal(t, want) if not floating else torch.allclose(t, want)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.bool])
def test_all_reduce_staged_types(dtype):
    me, size = dist.get_rank(), dist.get_world_size()
    for op in ([dist.ReduceOp.SUM, dist.ReduceOp.MAX, dist.ReduceOp.MIN] if dtype != torch.bool
               else [dist.ReduceOp.SUM, dist.ReduceOp.PRODUCT, dist.ReduceOp.BXOR]):
        t = contribution(me, 64, dtype)
        dist.all_reduce(t, op=op)
        parts = [contribution(r, 64, dtype) for r in range(size)]
        if dtype == torch.bool:
            s = torch.stack(parts)
            want = {dist.ReduceOp.SUM: s.any(0), dist.ReduceOp.PRODUCT: s.all(0),
                    dist.ReduceOp.BXOR: s.sum(0) % 2 == 1}[op]
        else:
            want = expected(op, parts)
        assert torch.equal(t, want), (dtype, op)


def test_all_reduce_large_chunked_and_strided():
    me, size = dist.get_rank(), dist.get_world_size()
    n = 3 * 1024 * 1024 + 7  # 12 MiB of float32: more than one staging step
    t = torch.full((n,), float(me + 1))
    dist.all_reduce(t)
    assert torch.all(t == size * (size + 1) / 2)
    m = torch.arange(24, dtype=torch.float64).reshape(4, 6) * (me + 1)
    col = m.t()  # not contiguous
    dist.all_reduce(col)
    assert torch.equal(m, torch.arange(24, dtype=torch.float64).reshape(4, 6) * (size * (size + 1) / 2))


@pytest.mark.parametrize("root", [0, "last"])
def test_broadcast(root):
    me, size = dist.get_rank(), dist.get_world_size()
    root = size - 1 if root == "last" else root
    for n in (1, 1000, 5 * 1024 * 1024 + 3):
        t = torch.arange(n, dtype=torch.float32) if me == root else torch.full((n,), -1.0)
        dist.broadcast(t, src=root)
        assert torch.equal(t, torch.arange(n, dtype=torch.float32)), n


def test_all_gather():
    me, size = dist.get_rank(), dist.get_world_size()
    for n in (1, 777, 3 * 1024 * 1024 // size + 5):
        mine = torch.arange(n, dtype=torch.int64) + 1000 * me
        out = [torch.empty(n, dtype=torch.int64) for _ in range(size)]
        dist.all_gather(out, mine)
        for r in range(size):
            assert torch.equal(out[r], torch.arange(n, dtype=torch.int64) + 1000 * r)
    flat = torch.empty(size * 5, dtype=torch.float32)
    dist._all_gather_base(flat, torch.full((5,), float(me)))
    assert torch.equal(flat, torch.arange(size, dtype=torch.float32).repeat_interleave(5))


def test_reduce_scatter():
    me, size = dist.get_rank(), dist.get_world_size()
    inputs = [torch.full((10,), float(me * size + r)) for r in range(size)]
    out = torch.empty(10)
    dist.reduce_scatter(out, inputs, op=dist.ReduceOp.SUM)
    assert torch.equal(out, torch.full((10,), float(sum(p * size + me for p in range(size)))))
    out = torch.empty(3, dtype=torch.int32)
    big = torch.arange(3 * size, dtype=torch.int32) * (me + 1)
    dist._reduce_scatter_base(out, big, op=dist.ReduceOp.MAX)
    assert torch.equal(out, torch.arange(3 * me, 3 * me + 3, dtype=torch.int32) * size)


def test_all_to_all():
    me, size = dist.get_rank(), dist.get_world_size()
    inp = torch.arange(size * 4, dtype=torch.float32) + 100 * me
    out = torch.empty(size * 4)
    dist.all_to_all_single(out, inp)
    want = torch.cat([torch.arange(me * 4, me * 4 + 4, dtype=torch.float32) + 100 * r for r in range(size)])
    assert torch.equal(out, want)
    # Uneven: rank r sends r+1+d rows to rank d.
    in_splits = [me + 1 + d for d in range(size)]
    out_splits = [r + 1 + me for r in range(size)]
    inp = torch.cat([torch.full((in_splits[d], 2), float(10 * me + d)) for d in range(size)])
    out = torch.empty(sum(out_splits), 2)
    dist.all_to_all_single(out, inp, out_splits, in_splits)
    want = torch.cat([torch.full((out_splits[r], 2), float(10 * r + me)) for r in range(size)])
    assert torch.equal(out, want)
    ins = [torch.full((d + 1,), me * 1.0 + d / 10) for d in range(size)]
    outs = [torch.empty(me + 1) for _ in range(size)]
    dist.all_to_all(outs, ins)
    for r in range(size):
        assert torch.allclose(outs[r], torch.full((me + 1,), r * 1.0 + me / 10))


def test_reduce_to_root():
    me, size = dist.get_rank(), dist.get_world_size()
    t = torch.full((8,), float(me + 1))
    dist.reduce(t, dst=size - 1, op=dist.ReduceOp.SUM)
    want = size * (size + 1) / 2 if me == size - 1 else me + 1
    assert torch.all(t == want)


def test_barrier_orders_symmetric_writes():
    me, size = dist.get_rank(), dist.get_world_size()
    x = st.zeros((size,), torch.int64)
    if forced_transport() and size > 1:  # no load/store between PEs then
        with pytest.raises(ValueError, match="not reachable"):
            st.peer(x, (me + 1) % size)
        st.free(x)
        return
    for p in range(size):
        st.peer(x, p)[me] = me + 1  # same-host peers: one-sided stores
    dist.barrier()
    assert torch.equal(x, torch.arange(1, size + 1))
    st.free(x)


def test_send_recv():
    me, size = dist.get_rank(), dist.get_world_size()
    if size == 1:
        return
    small = 100
    big = 600 * 1024  # 2.4 MB of float32: several slot-sized pieces
    if me == 0:
        for r in range(1, size):
            dist.send(torch.arange(small, dtype=torch.float64) + r, dst=r, tag=7)
            dist.send(torch.arange(big, dtype=torch.float32) * r, dst=r)
        for r in range(1, size):
            got = torch.empty(3, dtype=torch.int64)
            dist.recv(got, src=r, tag=9)
            assert torch.equal(got, torch.tensor([r, r * r, -r]))
    else:
        a = torch.empty(small, dtype=torch.float64)
        dist.recv(a, src=0, tag=7)
        assert torch.equal(a, torch.arange(small, dtype=torch.float64) + me)
        b = torch.empty(big, dtype=torch.float32)
        dist.recv(b, src=0)
        assert torch.equal(b, torch.arange(big, dtype=torch.float32) * me)
        dist.send(torch.tensor([me, me * me, -me]), dst=0, tag=9)
    # isend/irecv around a ring, one slot-sized message each way.
    nxt, prv = (me + 1) % size, (me - 1) % size
    got = torch.empty(1000, dtype=torch.int32)
    reqs = [dist.isend(torch.full((1000,), me, dtype=torch.int32), nxt), dist.irecv(got, prv)]
    for q in reqs:
        q.wait()
    assert torch.all(got == prv)


# --- bad input: the same on every PE, so each raises and the job goes on ---


def test_bad_reduce_op():
    with pytest.raises(ValueError, match="bitwise ReduceOp on floating"):
        dist.all_reduce(torch.ones(4), op=dist.ReduceOp.BAND)
    with pytest.raises(ValueError, match="AVG needs a floating dtype"):
        dist.all_reduce(torch.ones(4, dtype=torch.int32), op=dist.ReduceOp.AVG)
    c = torch.full((4,), complex(1, -2), dtype=torch.complex64)
    dist.all_reduce(c)  # torch hands it over as float32 pairs
    assert torch.equal(c, torch.full((4,), complex(dist.get_world_size(), -2 * dist.get_world_size()),
                                     dtype=torch.complex64))
    t = torch.ones(3)
    dist.all_reduce(t)  # the group still works
    assert torch.all(t == dist.get_world_size())


def test_bad_shapes_and_ranks():
    size = dist.get_world_size()
    with pytest.raises(ValueError, match="output tensors for"):
        dist.all_gather([torch.empty(4)] * (size + 1), torch.ones(4))
    with pytest.raises(ValueError, match="does not match the input"):
        dist.all_gather([torch.empty(5) for _ in range(size)], torch.ones(4))
    with pytest.raises(ValueError, match="split sizes for"):
        dist.all_to_all_single(torch.empty(size + 1), torch.empty(size + 1), [1] * (size + 1), [1] * (size + 1))
    if size > 1:
        with pytest.raises(ValueError, match="not a multiple of"):
            dist.all_to_all_single(torch.empty(size * 2 + 1), torch.empty(size * 2 + 1))
    with pytest.raises((ValueError, RuntimeError)):
        dist.broadcast(torch.ones(2), src=size)
    with pytest.raises((ValueError, RuntimeError)):
        dist.send(torch.ones(2), dst=size)
    with pytest.raises(ValueError, match="is this rank"):
        dist.send(torch.ones(2), dst=dist.get_rank())
    with pytest.raises(ValueError, match="only dense"):
        dist.all_reduce(torch.ones(2).to_sparse())
    t = torch.arange(4.0)
    dist.broadcast(t, src=0)
    assert torch.equal(t, torch.arange(4.0))


def test_alltoall_larger_than_staging_raises_everywhere():
    size = dist.get_world_size()
    n = (64 << 20) // 4 // size * size  # 64 MiB: more than the 8 MiB staging buffer
    with pytest.raises(ValueError, match="more than the staging buffer"):
        dist.all_to_all_single(torch.empty(n), torch.zeros(n))
    out = torch.empty(size)
    dist.all_to_all_single(out, torch.full((size,), float(dist.get_rank())))
    assert torch.equal(out, torch.arange(size, dtype=torch.float32))


def test_subgroups_run_on_gloo():
    """new_group of a subset is made by its members only, so it cannot be a
    Shoal team: it runs on gloo over the same store, values checked;
    non-members go on, and the world group stays Shoal's. The C++ creator
    itself refuses such a group."""
    import datetime
    me, n = dist.get_rank(), dist.get_world_size()
    low = dist.new_group(list(range(min(2, n))))
    rev = dist.new_group(list(range(n))[::-1])
    # torch sorts new_group's ranks, so rev is the world in PE order again,
    # and [0, 1] of 2 PEs is too: Shoal's own groups.
    assert type(rev).__name__ != "ProcessGroupGloo"
    if me < 2:
        assert (type(low).__name__ == "ProcessGroupGloo") == (n > 2)
        t = torch.tensor([float(me + 1)])
        dist.all_reduce(t, group=low)
        assert t.item() == sum(range(1, min(2, n) + 1)), t
    t = torch.tensor([float(me)])
    dist.all_reduce(t, group=rev)
    assert t.item() == n * (n - 1) / 2, t
    t = torch.ones(3)
    dist.all_reduce(t)
    assert torch.equal(t, torch.full((3,), float(n))), t
    with pytest.raises(ValueError, match="subgroups are not supported"):
        st._ext.create_process_group(dist.HashStore(), 0, n + 1, datetime.timedelta(seconds=5))
