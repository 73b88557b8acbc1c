"""torch.distributed backend "shoal" against "gloo", in the same processes.

    oshrun -n 2 python3 bench_backend.py --csv docs/bench/torch_backend.csv
    oshrun -n 4 python3 bench_backend.py --csv docs/bench/torch_backend.csv
    python3 bench_backend.py --report docs/bench/torch_backend.csv   # .md and .png beside it

The default group is "shoal"; a gloo group on the same ranks comes from
new_group. For each op (all_reduce, broadcast, all_gather) and size (float32,
4 KiB to 64 MiB per rank) the two sides alternate, round after round (which
side goes first alternates too); a round times a batch of calls after a
barrier and keeps the slowest rank's time per call. The table gives the
median over rounds. Rows are appended to the CSV, one run per PE count.
"""
import argparse
import csv
import os
import statistics
import sys
import time

SIZES = [4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20]
OPS = ["all_reduce", "broadcast", "all_gather"]
FIELDS = ["pes", "op", "bytes", "shoal_us", "gloo_us", "ratio", "rounds", "calls_per_round"]


def run(args):
    import torch
    import torch.distributed as dist

    import shoal.torch  # noqa: F401

    torch.set_num_threads(1)  # the machine is shared; keep torch's own copies serial on both sides
    dist.init_process_group("shoal")
    groups = {"shoal": dist.group.WORLD, "gloo": dist.new_group(backend="gloo")}
    rank, world = dist.get_rank(), dist.get_world_size()
    rows = []
    for nbytes in SIZES:
        n = nbytes // 4
        x = torch.ones(n)
        outs = [torch.empty(n) for _ in range(world)]
        calls = max(1, min(50, (4 << 20) // nbytes))
        rounds = args.rounds if nbytes <= (4 << 20) else max(3, args.rounds // 2)
        for op in OPS:
            def one(group, op=op):
                if op == "all_reduce":
                    dist.all_reduce(x, group=group)
                elif op == "broadcast":
                    dist.broadcast(x, src=0, group=group)
                else:
                    dist.all_gather(outs, x, group=group)
                if op == "all_reduce":
                    x.fill_(1.0)  # keep values bounded; same cost on both sides

            times = {"shoal": [], "gloo": []}
            for side in ("shoal", "gloo"):  # warm-up
                one(groups[side])
            for r in range(args.rounds if rounds else 0):
                if r >= rounds:
                    break
                order = ("shoal", "gloo") if r % 2 == 0 else ("gloo", "shoal")
                for side in order:
                    dist.barrier()
                    t0 = time.perf_counter()
                    for _ in range(calls):
                        one(groups[side])
                    dt = torch.tensor([(time.perf_counter() - t0) / calls])
                    dist.all_reduce(dt, op=dist.ReduceOp.MAX)  # the slowest rank's time
                    times[side].append(dt.item())
            s, g = statistics.median(times["shoal"]), statistics.median(times["gloo"])
            rows.append({"pes": world, "op": op, "bytes": nbytes, "shoal_us": round(s * 1e6, 1),
                         "gloo_us": round(g * 1e6, 1), "ratio": round(s / g, 3), "rounds": rounds,
                         "calls_per_round": calls})
            if rank == 0:
                print(f"{world} PEs {op:10s} {nbytes:>9d} B  shoal {s*1e6:10.1f} us  gloo {g*1e6:10.1f} us  "
                      f"ratio {s/g:.3f}", flush=True)
    if rank == 0 and args.csv:
        new = not os.path.exists(args.csv)
        with open(args.csv, "a", newline="") as f:
            w = csv.DictWriter(f, fieldnames=FIELDS)
            if new:
                w.writeheader()
            w.writerows(rows)
    dist.barrier()
    dist.destroy_process_group()


def human(nbytes):
    return f"{nbytes >> 20} MiB" if nbytes >= 1 << 20 else f"{nbytes >> 10} KiB"


def report(path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(path) as f:
        rows = list(csv.DictReader(f))
    base = os.path.splitext(path)[0]
    pes = sorted({int(r["pes"]) for r in rows})
    lines = ["| PEs | op | size | shoal (us) | gloo (us) | shoal/gloo |", "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['pes']} | {r['op']} | {human(int(r['bytes']))} | {float(r['shoal_us']):.1f} | "
                     f"{float(r['gloo_us']):.1f} | {float(r['ratio']):.3f} |")
    at_1m = [r for r in rows if int(r["bytes"]) == 1 << 20]
    head = [
        "# torch.distributed: backend \"shoal\" against \"gloo\"",
        "",
        "Time per call (median over rounds; each round is a batch of calls after a barrier, the slowest",
        "rank's time) of all_reduce (SUM), broadcast and all_gather on float32 CPU tensors, 4 KiB to",
        "64 MiB per rank. Both backends run in the same processes: the default group is \"shoal\", the",
        "gloo group comes from `new_group(backend=\"gloo\")` (TCP over 127.0.0.1); the two sides",
        "alternate round by round and which goes first alternates too. One host; the PEs of Shoal",
        "share memory (broadcast and all_gather by load/store from the peers' symmetric buffers,",
        "all_reduce by Shoal's `shmem_float_sum_reduce` on a symmetric staging buffer).",
        "",
        "**The machine was loaded**: 2 CPU cores shared with other build and test jobs (load average",
        "about 4-5 during the run), 4 PEs oversubscribe the cores, torch at one thread per process.",
        "Numbers move by tens of percent between runs; the ratios are the point.",
        "",
        "Commands (libshoal Release build, python3 from Debian with python3-torch 1.13):",
        "",
        "```",
        "oshrun -n 2 python3 python/bench/bench_backend.py --csv docs/bench/torch_backend.csv",
        "oshrun -n 4 python3 python/bench/bench_backend.py --csv docs/bench/torch_backend.csv",
        "python3 python/bench/bench_backend.py --report docs/bench/torch_backend.csv",
        "```",
        "",
        "At 1 MiB (target: shoal at most 0.25x gloo): " + ", ".join(
            f"{r['op']} {r['pes']} PEs {float(r['ratio']):.3f}x" for r in at_1m) + ".",
        "",
        "![chart](torch_backend.png)",
        "",
    ]
    with open(base + ".md", "w") as f:
        f.write("\n".join(head + lines) + "\n")
    fig, axes = plt.subplots(len(pes), len(OPS), figsize=(4 * len(OPS), 3.2 * len(pes)), squeeze=False)
    for i, p in enumerate(pes):
        for j, op in enumerate(OPS):
            sel = [r for r in rows if int(r["pes"]) == p and r["op"] == op]
            xs = [int(r["bytes"]) for r in sel]
            ax = axes[i][j]
            ax.loglog(xs, [float(r["shoal_us"]) for r in sel], "o-", label="shoal")
            ax.loglog(xs, [float(r["gloo_us"]) for r in sel], "s--", label="gloo")
            ax.set_title(f"{op}, {p} PEs")
            ax.set_xlabel("bytes per rank (float32)")
            ax.set_ylabel("time per call (us, median)")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend()
    fig.tight_layout()
    fig.savefig(base + ".png", dpi=90)
    print(f"wrote {base}.md and {base}.png")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", help="append the results to this CSV (rank 0)")
    ap.add_argument("--rounds", type=int, default=7, help="rounds per op and size (halved above 4 MiB, at least 3)")
    ap.add_argument("--report", metavar="CSV", help="no benchmark: write CSV's report (.md) and chart (.png) beside it")
    args = ap.parse_args()
    if args.report:
        report(args.report)
    else:
        run(args)


if __name__ == "__main__":
    sys.exit(main())
