"""A one-shot all-reduce written with symmetric tensors and shoal.torch.peer,
in the style of PyTorch's SymmetricMemory:

    oshrun -n 4 python3 oneshot_allreduce.py

Every PE writes its input into its own symmetric buffer, a barrier makes all
of them visible, and each PE then sums the peers' buffers straight out of
their memory (load/store views from shmem_ptr, one host); a second barrier
keeps the buffers until everyone has read them. The result is checked
against torch.distributed.all_reduce on the "shoal" backend.
"""
import torch
import torch.distributed as dist

import shoal
import shoal.torch as st


def oneshot_all_reduce(x, buf, peers):
    """Sum of x over all PEs. buf is a symmetric tensor like x; peers its views."""
    buf.copy_(x)
    shoal.barrier_all()  # every input is in place
    out = peers[0].clone()
    for view in peers[1:]:
        out += view
    shoal.barrier_all()  # nobody overwrites buf before all have read it
    return out


def main():
    dist.init_process_group("shoal")
    me, n = dist.get_rank(), dist.get_world_size()
    ok = True
    for numel in (1, 1000, 1 << 20):
        buf = st.empty((numel,), dtype=torch.float32)
        peers = [st.peer(buf, p) for p in range(n)]  # raises if a PE is on another host
        x = torch.arange(numel, dtype=torch.float32) % 97 * (me + 1)
        got = oneshot_all_reduce(x, buf, peers)
        want = x.clone()
        dist.all_reduce(want)
        exact = torch.arange(numel, dtype=torch.float32) % 97 * (n * (n + 1) / 2)
        ok &= torch.allclose(got, want) and torch.allclose(got, exact)
        del peers
        st.free(buf)
    if me == 0:
        print(f"oneshot_allreduce on {n} PEs: {'matches all_reduce' if ok else 'MISMATCH'}")
    dist.destroy_process_group()
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
