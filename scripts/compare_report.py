#!/usr/bin/env python3
"""compare_report.py: turns the CSV of scripts/compare.sh into a Markdown
table (every figure, Shoal next to the peer with the ratio Shoal/peer, and
the project's targets checked) and PNG charts (latency and bandwidth against
message size, both libraries on one chart, log scales).

Usage: compare_report.py results.csv outdir
The CSV columns are library,figure,size,pes,value,unit,rep with library
'shoal' or 'peer'; several reps of one figure are reduced to their median.
"""
import csv
import os
import statistics
import sys
from collections import defaultdict

LIB_NAMES = {"shoal": "Shoal", "peer": "Open MPI OSHMEM"}
HIGHER_IS_BETTER = {"GB/s", "Mmsg/s"}

# Order and description of every figure in the table.
FIGURES = [
    ("put_lat", "put + quiet latency"),
    ("put_nbi_lat", "put_nbi + quiet latency"),
    ("get_lat", "get latency"),
    ("get_nbi_lat", "get_nbi + quiet latency"),
    ("put_bw", "put_nbi bandwidth (windows of 64)"),
    ("put_rate", "put message rate (windows of 64)"),
    ("memcpy_bw", "memcpy bandwidth (host reference, same code both runs)"),
    ("pingpong", "p + wait_until ping-pong, half round trip"),
    ("put_signal", "put_signal + signal_wait_until ping-pong, half round trip"),
    ("put_fence_p", "put + fence + p ping-pong, half round trip (put_signal in 1.4 calls)"),
    ("hw_pingpong", "two threads bouncing a cache line with C11 atomics, half round trip: the host's floor for pingpong (no SHMEM, same code both runs)"),
    ("fetch_add", "long fetch_add latency"),
    ("compare_swap", "long compare_swap latency"),
    ("barrier_all", "barrier_all latency"),
    ("broadcast", "broadcast64 latency"),
    ("collect", "collect64 latency"),
    ("fcollect", "fcollect64 latency"),
    ("alltoall", "alltoall64 latency"),
    ("sum_reduce", "long_sum_to_all latency"),
]
COLLECTIVES = ["broadcast", "collect", "fcollect", "alltoall", "sum_reduce"]


def load(path):
    """{(figure, pes, size): {lib: median value}}, {figure: unit}"""
    raw = defaultdict(list)
    units = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            key = (row["figure"], int(row["pes"]), int(row["size"]))
            raw[key + (row["library"],)].append(float(row["value"]))
            units[row["figure"]] = row["unit"]
    data = defaultdict(dict)
    for (fig, pes, size, lib), vals in raw.items():
        data[(fig, pes, size)][lib] = statistics.median(vals)
    return data, units


def human_size(n):
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} B"


def fmt(v):
    if v is None:
        return "n/a"
    if v >= 100:
        return f"{v:.0f}"
    if v >= 10:
        return f"{v:.1f}"
    if v >= 1:
        return f"{v:.2f}"
    return f"{v:.3f}"


def speedup(unit, shoal, peer):
    """How many times better Shoal is (>1: Shoal better), or None."""
    if shoal is None or peer is None or shoal <= 0 or peer <= 0:
        return None
    return shoal / peer if unit in HIGHER_IS_BETTER else peer / shoal


def targets(data):
    """(description, measured text, met) for each target of the project."""
    def get(fig, pes, size, lib):
        return data.get((fig, pes, size), {}).get(lib)

    out = []

    def check(desc, fig, pes, size, need):
        s, p = get(fig, pes, size, "shoal"), get(fig, pes, size, "peer")
        unit = "us"
        x = speedup(unit, s, p)
        if x is None:
            out.append((desc, "not measured", None))
            return
        out.append((desc, f"Shoal {fmt(s)} us, peer {fmt(p)} us: {x:.2f}x", x >= need))

    check("8 B put no slower than the peer", "put_lat", 2, 8, 1.0)
    check("8 B get no slower than the peer", "get_lat", 2, 8, 1.0)
    check("ping-pong at least 10x faster", "pingpong", 2, 8, 10.0)
    check("fetch_add at least 10x faster", "fetch_add", 2, 8, 10.0)
    for pes in (2, 4, 8):
        check(f"barrier_all at least 2x faster, {pes} PEs", "barrier_all", pes, 0, 2.0)
    for pes in (2, 4, 8):
        check(f"8 B sum reduction at least 2x faster, {pes} PEs", "sum_reduce", pes, 8, 2.0)
    check("1 MiB broadcast at least 1.5x faster, 2 PEs", "broadcast", 2, 1 << 20, 1.5)
    check("1 MiB sum reduction at least 1.5x faster, 2 PEs", "sum_reduce", 2, 1 << 20, 1.5)
    bw, mc = get("put_bw", 2, 1 << 20, "shoal"), get("memcpy_bw", 2, 1 << 20, "shoal")
    if bw and mc:
        out.append(("1 MiB put bandwidth at least 85% of memcpy",
                    f"put {fmt(bw)} GB/s, memcpy {fmt(mc)} GB/s: {100 * bw / mc:.0f}%", bw / mc >= 0.85))
    else:
        out.append(("1 MiB put bandwidth at least 85% of memcpy", "not measured", None))
    return out


def markdown(data, units, env_lines):
    lines = ["# Shoal and Open MPI's OSHMEM on this host", ""]
    lines += ["Written by `scripts/compare.sh` (see `docs/benchmarks.md`). Each value is the",
              "median over the runs of one launch (and over `REPS` launches) of the mean",
              "time or rate per operation. Latencies in microseconds (lower is better),",
              "bandwidth in GB/s and rates in million messages/s (higher is better).",
              "*Shoal/peer* is the plain ratio of the two values; *Shoal better* says",
              "how many times better Shoal is whatever the unit (below 1: the peer is",
              "better). n/a: the figure does not exist for that library.", ""]
    if env_lines:
        lines += ["```"] + env_lines + ["```", ""]
    lines += ["## Targets", "", "| Target | Measured | Met |", "|---|---|---|"]
    for desc, text, met in targets(data):
        lines.append(f"| {desc} | {text} | {'n/a' if met is None else ('yes' if met else '**no**')} |")
    lines += ["", "## All figures", "",
              "| Figure | PEs | Size | Unit | Shoal | Open MPI | Shoal/peer | Shoal better |",
              "|---|---:|---:|---|---:|---:|---:|---:|"]
    keys = sorted(data)
    for fig, desc in FIGURES:
        for (f, pes, size) in [k for k in keys if k[0] == fig]:
            vals = data[(f, pes, size)]
            s, p = vals.get("shoal"), vals.get("peer")
            unit = units.get(fig, "")
            ratio = f"{s / p:.3g}" if s and p else "n/a"
            x = speedup(unit, s, p)
            lines.append(f"| {fig} | {pes} | {human_size(size) if size else '-'} | {unit} | {fmt(s)} | "
                         f"{fmt(p)} | {ratio} | {'n/a' if x is None else f'{x:.2f}x'} |")
    lines += ["", "Figures:", ""]
    for fig, desc in FIGURES:
        lines.append(f"- `{fig}`: {desc}")
    lines.append("")
    return "\n".join(lines)


def series(data, fig, pes, lib):
    pts = sorted((size, v[lib]) for (f, p, size), v in data.items() if f == fig and p == pes and lib in v)
    return [s for s, _ in pts], [v for _, v in pts]


def charts(data, units, outdir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    style = {"shoal": dict(color="tab:blue", marker="o", linestyle="-"),
             "peer": dict(color="tab:red", marker="s", linestyle="--")}
    written = []

    def panel(ax, fig, pes, title, ylabel):
        for lib in ("shoal", "peer"):
            xs, ys = series(data, fig, pes, lib)
            if xs:
                ax.plot(xs, ys, label=LIB_NAMES[lib], markersize=3, **style[lib])
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("message size (bytes)", fontsize=8)
        ax.set_ylabel(ylabel, fontsize=8)
        ax.grid(True, which="both", alpha=0.3)
        ax.tick_params(labelsize=7)

    def save(fig_obj, name):
        path = os.path.join(outdir, name)
        fig_obj.tight_layout()
        fig_obj.savefig(path, dpi=110)
        plt.close(fig_obj)
        written.append(path)

    # RMA latency.
    f, axes = plt.subplots(2, 2, figsize=(10, 7))
    for ax, fig in zip(axes.flat, ("put_lat", "get_lat", "put_nbi_lat", "get_nbi_lat")):
        panel(ax, fig, 2, f"{fig} (2 PEs)", "latency (us)")
    axes.flat[0].legend(fontsize=8)
    save(f, "rma_latency.png")

    # Bandwidth and message rate.
    f, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    panel(axes[0], "put_bw", 2, "put_nbi bandwidth (2 PEs)", "GB/s")
    xs, ys = series(data, "memcpy_bw", 2, "shoal")
    if xs:
        axes[0].plot(xs, ys, label="memcpy (host)", color="gray", linestyle=":", marker=".")
    axes[0].legend(fontsize=8)
    panel(axes[1], "put_rate", 2, "put message rate (2 PEs)", "million messages/s")
    axes[1].legend(fontsize=8)
    save(f, "rma_bandwidth.png")

    # Collectives, one chart per PE count.
    for pes in sorted({p for (fig, p, _) in data if fig in COLLECTIVES}):
        f, axes = plt.subplots(2, 3, figsize=(13, 7))
        for ax, fig in zip(axes.flat, COLLECTIVES):
            panel(ax, fig, pes, f"{fig} ({pes} PEs)", "latency (us)")
        axes.flat[0].legend(fontsize=8)
        ax = axes.flat[5]
        small = [("barrier_all", p, 0) for p in (2, 4, 8)]
        _bars(ax, data, small, [f"barrier {p} PEs" for p in (2, 4, 8)], "barrier_all latency")
        save(f, f"coll_{pes}pes.png")

    # Point-to-point and atomics.
    f, ax = plt.subplots(figsize=(8, 4))
    p2p = ["pingpong", "put_signal", "put_fence_p", "fetch_add", "compare_swap"]
    keys = [(fig, 2, 8) for fig in p2p] + [("hw_pingpong", 1, 8)]
    _bars(ax, data, keys, p2p + ["hw floor"], "8 B synchronisation and atomics (2 PEs)")
    save(f, "p2p_latency.png")
    return written


def _bars(ax, data, keys, labels, title):
    import numpy as np
    x = np.arange(len(keys))
    for i, lib in enumerate(("shoal", "peer")):
        vals = [data.get(k, {}).get(lib, 0) or 0 for k in keys]
        ax.bar(x + (i - 0.5) * 0.38, vals, 0.38, label=LIB_NAMES[lib],
               color="tab:blue" if lib == "shoal" else "tab:red")
    ax.set_xticks(x)
    ax.set_xticklabels(labels, fontsize=7, rotation=20)
    ax.set_yscale("log")
    ax.set_ylabel("latency (us)", fontsize=8)
    ax.set_title(title, fontsize=9)
    ax.grid(True, axis="y", which="both", alpha=0.3)
    ax.legend(fontsize=7)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: compare_report.py results.csv outdir")
    path, outdir = sys.argv[1], sys.argv[2]
    data, units = load(path)
    env_path = os.path.join(os.path.dirname(path), "environment.txt")
    env_lines = open(env_path).read().splitlines() if os.path.exists(env_path) else []
    os.makedirs(outdir, exist_ok=True)
    md = markdown(data, units, env_lines)
    with open(os.path.join(outdir, "results.md"), "w") as f:
        f.write(md)
    try:
        written = charts(data, units, outdir)
    except ImportError as e:
        print(f"compare_report.py: no charts ({e}); install python3-matplotlib", file=sys.stderr)
        written = []
    print("compare_report.py: wrote", ", ".join([os.path.join(outdir, "results.md")] + written))


if __name__ == "__main__":
    main()
