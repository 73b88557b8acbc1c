"""PyTorch on Shoal: symmetric tensors and the "shoal" torch.distributed backend.

Importing this module starts Shoal (shmem_init, unless the program already
did) and registers the backend, so under ``oshrun -n N``::

    import torch.distributed as dist
    import shoal.torch
    dist.init_process_group("shoal")   # no MASTER_ADDR, RANK or WORLD_SIZE

Symmetric tensors (CPU, on Shoal's symmetric heap)::

    t = shoal.torch.empty((1024,), dtype=torch.float32)   # collective
    v = shoal.torch.peer(t, pe)        # PE pe's t, by load/store (same host)
    shoal.torch.free(t)                # collective

Freeing. shmem_free is collective, while a tensor's destructor runs when
Python's garbage collector reaches it, at a different moment on each PE.
So dropping the last reference only marks the memory dead; it returns to
the heap at the next collective point (``empty``, ``zeros``, ``free`` or
``collect``), and only once it is dead on every PE. ``free(t)`` releases t
at once (every PE must call it for its t, in the same order), and leaves t
empty; any other view of that memory must not be used afterwards.
"""

import atexit
import importlib
import datetime
import ipaddress
import numbers
import os
import socket
from urllib.parse import parse_qs, urlparse

import torch
import torch.distributed as dist

from .. import _torch as _ext

# The module, not the function torch.distributed re-exports under that name.
_rdzv = importlib.import_module("torch.distributed.rendezvous")

__all__ = ["empty", "zeros", "peer", "free", "collect", "is_symmetric", "my_pe", "n_pes", "BACKEND"]

BACKEND = "shoal"

import shoal as _shoal  # noqa: E402  (the parent package: shoal.init owns start-up and the exit)

_shoal.init()
if _ext.start():
    # Only if the core did not start Shoal: then this module ends it too
    # (shmem_finalize is collective: every PE reaches it at exit).
    atexit.register(_ext.stop)


def my_pe():
    return _ext.my_pe()


def n_pes():
    return _ext.n_pes()


def _shape(shape):
    if isinstance(shape, numbers.Integral):
        return [int(shape)]
    if isinstance(shape, (str, bytes)) or not all(isinstance(d, numbers.Integral) for d in shape):
        raise TypeError(f"shoal.torch: shape must be an int or a sequence of ints, got {shape!r}")
    return [int(d) for d in shape]


def empty(shape, dtype=torch.float32):
    """A CPU tensor on the symmetric heap (collective: every PE, same shape and dtype)."""
    if not isinstance(dtype, torch.dtype):
        raise TypeError(f"shoal.torch.empty: dtype must be a torch.dtype, got {dtype!r}")
    if dtype.is_complex or dtype in (torch.qint8, torch.quint8, torch.qint32):
        raise ValueError(f"shoal.torch.empty: dtype {dtype} is not supported")
    return _ext.empty(_shape(shape), dtype)


def zeros(shape, dtype=torch.float32):
    """empty() filled with zeros; returns after every PE has zeroed its copy."""
    t = empty(shape, dtype)
    t.zero_()
    _ext.barrier_all()
    return t


def peer(tensor, pe):
    """A view of PE pe's copy of a symmetric tensor (pe on this host; ValueError if not reachable)."""
    if not isinstance(tensor, torch.Tensor):
        raise TypeError("shoal.torch.peer: expects a torch.Tensor")
    return _ext.peer(tensor, int(pe))


def free(tensor):
    """Return tensor's symmetric memory now (collective); tensor becomes empty."""
    if not isinstance(tensor, torch.Tensor):
        raise TypeError("shoal.torch.free: expects a torch.Tensor")
    _ext.free(tensor)
    tensor.set_()


def collect():
    """Return the memory of symmetric tensors dropped on every PE (collective); how many were freed."""
    return _ext.collect()


def is_symmetric(tensor):
    return _ext.is_symmetric(tensor)


# --- the torch.distributed backend ------------------------------------------


def _create_process_group(store, rank, size, timeout):
    # Shoal's staging buffers and collectives span every PE in PE order. A
    # subset (new_group(ranks)) is made only by its members, so it cannot be
    # a Shoal team (split is collective over all PEs); it runs on gloo over
    # the same store instead, so the job neither stops nor hangs.
    if rank != _ext.my_pe() or size != _ext.n_pes():
        return dist.ProcessGroupGloo(store, rank, size, timeout)
    return _ext.create_process_group(store, rank, size, timeout)


if BACKEND.upper() not in dist.Backend._plugins:
    dist.Backend.register_backend(BACKEND, _create_process_group)


def _master_addr():
    """127.0.0.1 when every PE is on this host, else PE 0's address."""
    if _ext.local_pes() == _ext.n_pes():
        return "127.0.0.1"
    packed = 0
    if _ext.my_pe() == 0:
        packed = int(ipaddress.IPv4Address(socket.gethostbyname(socket.gethostname())))
    return str(ipaddress.IPv4Address(_ext.world_broadcast_i64(packed, 0)))


def _shoal_store(timeout):
    """A TCPStore hosted by PE 0 on a free port that Shoal tells the others."""
    addr = _master_addr()
    if _ext.my_pe() == 0:
        store = dist.TCPStore(addr, 0, None, True, timeout, wait_for_workers=False)
        _ext.world_broadcast_i64(store.port, 0)
    else:
        port = _ext.world_broadcast_i64(0, 0)
        store = dist.TCPStore(addr, port, None, False, timeout)
    return store


_env_handler = _rdzv._rendezvous_handlers["env"]


def _env_or_shoal_handler(url, timeout=datetime.timedelta(minutes=30), **kwargs):
    """env:// as torch does it when MASTER_ADDR is set; otherwise Shoal's PEs are the ranks."""
    if os.environ.get("MASTER_ADDR"):
        yield from _env_handler(url, timeout=timeout, **kwargs)
        return
    query = parse_qs(urlparse(url).query)
    rank = int(query["rank"][0]) if "rank" in query else _ext.my_pe()
    world = int(query["world_size"][0]) if "world_size" in query else _ext.n_pes()
    if rank != _ext.my_pe() or world != _ext.n_pes():
        raise ValueError(f"shoal.torch: rank {rank} of {world} asked, but this is PE {_ext.my_pe()} "
                         f"of {_ext.n_pes()} (set MASTER_ADDR/MASTER_PORT to rendezvous otherwise)")
    yield (_shoal_store(timeout), rank, world)
    raise RuntimeError("Unable to perform re-rendezvous using env:// under Shoal")


_rdzv._rendezvous_handlers["env"] = _env_or_shoal_handler
