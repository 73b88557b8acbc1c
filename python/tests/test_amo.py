"""Atomics on elements, every operation and type, checked by value."""
import numpy as np
import pytest

import shoal
from conftest import ring

INTS = ["int32", "int64", "uint32", "uint64"]


@pytest.mark.parametrize("dtype", INTS)
def test_fetch_add_counts_every_pe(me, npes, dtype):
    ctr = shoal.zeros(3, dtype)
    olds = [shoal.atomic_fetch_add(ctr, pe + 1, 0, index=1) for pe in range(5)]
    shoal.atomic_add(ctr, 2, 0, index=2)
    shoal.atomic_inc(ctr, 0)
    shoal.barrier_all()
    if me == 0:
        assert ctr[1] == npes * 15 and ctr[2] == npes * 2 and ctr[0] == npes
    assert all(isinstance(o, int) for o in olds) and olds == sorted(olds)
    assert shoal.atomic_fetch(ctr, 0, index=1) == npes * 15
    shoal.barrier_all()
    # fetch_inc hands out distinct tickets.
    tickets = shoal.zeros(1, dtype)
    mine = [shoal.atomic_fetch_inc(tickets, 0) for _ in range(10)]
    all_tickets = shoal.zeros(10 * npes, np.int64)
    shoal.fcollect(all_tickets, shoal.array(mine, np.int64))
    assert sorted(all_tickets) == list(range(10 * npes))
    shoal.barrier_all()
    for a in (all_tickets, tickets, ctr):
        shoal.free(a)


@pytest.mark.parametrize("dtype", INTS)
def test_set_swap_compare_swap(me, npes, dtype):
    x = shoal.zeros(2, dtype)
    right = ring(me, npes)
    shoal.atomic_set(x, 40 + me, right, index=1)
    shoal.barrier_all()
    left = (me - 1) % npes
    assert x[1] == 40 + left
    shoal.barrier_all()
    assert shoal.atomic_swap(x, 7, right, index=1) == 40 + me
    shoal.barrier_all()
    assert x[1] == 7
    shoal.barrier_all()
    # compare_swap: only a matching cond writes.
    assert shoal.atomic_compare_swap(x, 8, 100, right, index=1) == 7
    shoal.barrier_all()
    assert x[1] == 7
    shoal.barrier_all()
    assert shoal.atomic_compare_swap(x, 7, 100 + me, right, index=1) == 7
    shoal.barrier_all()
    assert x[1] == 100 + left
    shoal.barrier_all()
    shoal.free(x)


@pytest.mark.parametrize("dtype", INTS)
def test_bitwise(me, npes, dtype):
    bits = shoal.zeros(3, dtype)
    bits[0] = 0xFF
    bits[2] = 0x0F
    shoal.barrier_all()
    # Every PE sets its own bit on PE 0, clears one high bit, flips one.
    shoal.atomic_or(bits, 1 << (me + 8), 0, index=1)
    mask = np.array(~(1 << me)).astype(dtype).item()  # all ones but bit me, in the type
    old = shoal.atomic_fetch_and(bits, mask, 0, index=0)
    shoal.atomic_xor(bits, 1 << (me + 4), 0, index=2)
    shoal.barrier_all()
    if me == 0:
        assert bits[1] == sum(1 << (p + 8) for p in range(npes))
        assert bits[0] == 0xFF & ~sum(1 << p for p in range(npes))
        assert bits[2] == 0x0F ^ sum(1 << (p + 4) for p in range(npes))
    assert old & 0xF0 == 0xF0
    shoal.barrier_all()
    assert shoal.atomic_fetch_or(bits, 0, 0, index=1) == sum(1 << (p + 8) for p in range(npes))
    assert shoal.atomic_fetch_xor(bits, 0, 0, index=2) == 0x0F ^ sum(1 << (p + 4) for p in range(npes))
    shoal.barrier_all()
    shoal.atomic_and(bits, 0, 0, index=1)
    shoal.barrier_all()
    assert shoal.atomic_fetch(bits, 0, index=1) == 0
    shoal.barrier_all()
    shoal.free(bits)


def test_limits_of_the_type(me, npes):
    x = shoal.zeros(1, np.uint64)
    shoal.atomic_set(x, 2**64 - 1, me)
    assert shoal.atomic_fetch(x, me) == 2**64 - 1
    y = shoal.zeros(1, np.int32)
    shoal.atomic_set(y, -2**31, me)
    assert shoal.atomic_fetch_add(y, -1 + 2**31, me) == -2**31
    assert y[0] == -1
    with pytest.raises(shoal.InvalidArgument):
        shoal.atomic_set(y, 2**31, me)
    with pytest.raises(shoal.InvalidArgument):
        shoal.atomic_set(x, -1, me)
    shoal.barrier_all()
    shoal.free(y)
    shoal.free(x)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float_fetch_set_swap(me, npes, dtype):
    f = shoal.zeros(2, dtype)
    shoal.atomic_set(f, me + 0.25, ring(me, npes), index=1)
    shoal.barrier_all()
    assert f[1] == (me - 1) % npes + 0.25
    assert shoal.atomic_fetch(f, ring(me, npes), index=1) == me + 0.25
    shoal.barrier_all()
    assert shoal.atomic_swap(f, -2.5, me, index=1) == (me - 1) % npes + 0.25
    assert f[1] == -2.5
    with pytest.raises(shoal.DTypeError):
        shoal.atomic_fetch_add(f, 1.0, me)
    shoal.barrier_all()
    shoal.free(f)
