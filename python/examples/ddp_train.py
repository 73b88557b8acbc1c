"""DistributedDataParallel training of a small model over Shoal, and the same
run over gloo for comparison.

    oshrun -n 4 python3 ddp_train.py              # shoal and gloo side by side
    oshrun -n 4 python3 ddp_train.py --backend shoal
    oshrun -n 4 python3 ddp_train.py --backend gloo

"both" (the default) makes the default group with backend "shoal" (no
MASTER_ADDR, RANK or WORLD_SIZE needed under oshrun) and a gloo group on the
same ranks, trains two identical models, one per group, and checks that
their losses agree within float tolerance at every step and that every PE
ends with the same parameters. "gloo" alone shows what gloo needs: the
example sets MASTER_ADDR, MASTER_PORT, RANK and WORLD_SIZE from Shoal.
"""
import argparse
import os
import socket
import sys

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import shoal
import shoal.torch  # noqa: F401  (registers the "shoal" backend)

FEATURES, HIDDEN, CLASSES, BATCH = 16, 64, 4, 32


def make_model():
    torch.manual_seed(1234)  # the same start on every rank and for every backend
    return torch.nn.Sequential(torch.nn.Linear(FEATURES, HIDDEN), torch.nn.Tanh(), torch.nn.Linear(HIDDEN, CLASSES))


def batch(step, rank):
    """Rank's share of step's data: fixed by (step, rank) so runs can be compared."""
    g = torch.Generator().manual_seed(step * 1000 + rank)
    x = torch.randn(BATCH, FEATURES, generator=g)
    y = (x[:, :CLASSES].argmax(1) + (x[:, -1] > 0).long()) % CLASSES
    return x, y


def train(group, steps, lr=0.1):
    """DDP over `group`; returns (mean loss across ranks per step, final flat parameters)."""
    model = DDP(make_model(), process_group=group)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    rank, world = dist.get_rank(), dist.get_world_size()
    losses = []
    for step in range(steps):
        x, y = batch(step, rank)
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()  # DDP averages the gradients over the group here
        opt.step()
        mean = loss.detach().clone()
        dist.all_reduce(mean, group=group)
        losses.append(mean.item() / world)
    return losses, torch.cat([p.detach().reshape(-1) for p in model.parameters()])


def same_on_every_rank(flat, group):
    gathered = [torch.empty_like(flat) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, flat, group=group)
    return max((g - gathered[0]).abs().max().item() for g in gathered)


def gloo_env_from_shoal():
    """What gloo needs, taken from Shoal: PE 0 picks a free port and tells everyone."""
    port = np.zeros(1, np.int64)
    if shoal.my_pe() == 0:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port[0] = s.getsockname()[1]
    out = shoal.zeros(1, np.int64)
    src = shoal.array(port)
    shoal.broadcast(out, src, 0)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(int(out[0] if shoal.my_pe() else port[0])),
                      RANK=str(shoal.my_pe()), WORLD_SIZE=str(shoal.n_pes()))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", choices=["both", "shoal", "gloo"], default="both")
    ap.add_argument("--steps", type=int, default=30)
    args = ap.parse_args()
    shoal.init()
    if args.backend == "gloo":
        gloo_env_from_shoal()
        dist.init_process_group("gloo")
    else:
        dist.init_process_group("shoal")
    rank, world = dist.get_rank(), dist.get_world_size()
    runs = {}
    if args.backend in ("both", "shoal"):
        runs["shoal"] = train(dist.group.WORLD, args.steps)
    if args.backend in ("both", "gloo"):
        group = dist.new_group(backend="gloo") if args.backend == "both" else dist.group.WORLD
        runs["gloo"] = train(group, args.steps)
    ok = True
    for name, (losses, flat) in runs.items():
        spread = same_on_every_rank(flat, dist.group.WORLD)
        ok &= spread <= 1e-6
        if rank == 0:
            print(f"{name}: {world} ranks, loss {losses[0]:.6f} -> {losses[-1]:.6f}, "
                  f"parameters differ across ranks by at most {spread:.2e}")
    if len(runs) == 2:
        (ls, ps), (lg, pg) = runs["shoal"], runs["gloo"]
        worst = max(abs(a - b) / max(abs(b), 1e-12) for a, b in zip(ls, lg))
        pdiff = (ps - pg).abs().max().item()
        ok &= worst <= 1e-5 and pdiff <= 1e-5
        if rank == 0:
            print(f"shoal vs gloo: losses agree to {worst:.2e} (relative) at every step, parameters to {pdiff:.2e}")
    if rank == 0:
        print("ddp_train: OK" if ok else "ddp_train: MISMATCH")
    dist.barrier()
    dist.destroy_process_group()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
