#!/usr/bin/python3
"""network_report.py: the table and the chart of scripts/bench_network.sh.

    network_report.py network.csv environment OUT_DIR

network.csv: setup,library,figure,size,pes,value,unit,rep (one line per
figure per launch); environment: key=value lines the runner wrote. Writes
OUT_DIR/network.md and OUT_DIR/network.png. Every value is the median over
the runs (reps) of the figure the program printed (itself a median)."""
import csv
import os
import statistics
import sys

PEER = "openmpi"
SHOAL = ["shoal-tls", "shoal-ofi"]
SETUPS = [
    ("lo", "1 host, 2 PEs, fabric forced"),
    ("2x1", "2 hosts x 1 PE (network namespaces)"),
    ("2x2", "2 hosts x 2 PEs (network namespaces)"),
]
# figure, size, label, kind: "lat" (time, target <= 1.0x), "sync" (time,
# target <= 0.5x), "bw" (bandwidth, target >= 2x), "rt" (Shoal's own count
# of round trips, target < 3: not a ratio to the peer, left off the chart).
FIGURES = [
    ("put_lat", 8, "put 8 B + quiet", "lat"),
    ("get_lat", 8, "get 8 B", "lat"),
    ("fetch_add", 8, "fetch_add 64-bit", "lat"),
    ("pingpong", 8, "ping-pong (p + wait_until)", "lat"),
    ("lock_uncontended", 8, "set_lock + clear_lock, uncontended", "lat"),
    ("lock_round_trips", 8, "set_lock + clear_lock, uncontended, in round trips", "rt"),
    ("lock_contended", 8, "set_lock + clear_lock, contended", "lat"),
    ("barrier_all", 0, "barrier_all", "sync"),
    ("sum_reduce", 8, "sum_to_all 8 B", "sync"),
    ("fcollect", 8, "fcollect64 8 B", "sync"),
    ("alltoall", 8, "alltoall64 8 B", "lat"),
    ("broadcast", 1 << 20, "broadcast64 1 MiB", "lat"),
    ("put_bw", 1 << 20, "put bandwidth 1 MiB", "bw"),
    ("get_bw", 1 << 20, "get bandwidth 1 MiB", "bw"),
]
LOCK_NOTE = {
    "bench_p2p": "- Lock figures (bench_p2p): uncontended is the mean of PE 0 alone and its partner alone"
    " (one of them is remote from wherever the library keeps the lock); contended is PE 0 and its"
    " partner looping on set + clear, the job's time per acquisition.",
    "bench_lock": "- Lock figures (bench_lock): uncontended by the last PE alone (remote from PE 0, the"
    " lock's home on Shoal); contended by every PE looping on set + clear (4 PEs at 2x2), the job's"
    " time per acquisition.",
}
TARGET = {"lat": ("<=", 1.0), "sync": ("<=", 0.5), "bw": (">=", 2.0), "rt": ("<", 3.0)}
CHARTED = [f for f in FIGURES if f[3] != "rt"]


def load(path):
    vals, units, reps = {}, {}, {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            try:
                key = (row["setup"], row["library"], row["figure"], int(row["size"]))
                vals.setdefault(key, []).append(float(row["value"]))
            except (KeyError, ValueError):
                continue
            units[row["figure"]] = row["unit"]
            reps.setdefault(key, set()).add(row["rep"])
    return {k: statistics.median(v) for k, v in vals.items()}, units, reps


def fmt(v):
    if v is None:
        return "-"
    return f"{v:.3g}" if v < 1000 else f"{v:.0f}"


def ratio(med, setup, lib, fig, size):
    a, b = med.get((setup, lib, fig, size)), med.get((setup, PEER, fig, size))
    return a / b if a is not None and b else None


def judged(med, setup, lib, fig, size, kind):
    """What the target applies to: the ratio to the peer, or for "rt"
    Shoal's own value."""
    return med.get((setup, lib, fig, size)) if kind == "rt" else ratio(med, setup, lib, fig, size)


def met(kind, r):
    if r is None:
        return "-"
    op, t = TARGET[kind]
    ok = r < t if op == "<" else r <= t if op == "<=" else r >= t
    return "yes" if ok else "no"


def table(med, units, setup):
    lines = [
        "| figure | unit | Shoal tls | Shoal ofi | Open MPI | tls/peer | ofi/peer | target | met (tls, ofi) |",
        "|---|---|---:|---:|---:|---:|---:|---|---|",
    ]
    for fig, size, label, kind in FIGURES:
        cells = [fmt(med.get((setup, lib, fig, size))) for lib in SHOAL + [PEER]]
        rs = [ratio(med, setup, lib, fig, size) for lib in SHOAL]
        js = [judged(med, setup, lib, fig, size, kind) for lib in SHOAL]
        op, t = TARGET[kind]
        lines.append(
            f"| {label} | {units.get(fig, '')} | {' | '.join(cells)} | "
            + " | ".join("-" if r is None else f"{r:.3g}" for r in rs)
            + f" | {op} {t:g}{'' if kind == 'rt' else 'x'} | {met(kind, js[0])}, {met(kind, js[1])} |"
        )
    return lines


def tcp_figures(med, setup, prefix):
    """tcp_floor's ping-pong and exchange of one kind, or None."""
    f = {k: med.get((setup, "floor", prefix + k, 64)) for k in ("pingpong", "exchange")}
    return None if None in f.values() else f


def floor_line(med, setup):
    """The same run's exchanges over plain TCP (bench/tcp_floor.c), set
    against the barrier target: below the floor, no library can meet it."""
    f = tcp_figures(med, setup, "tcp_")
    if f is None:
        return []
    line = (f"Floor of this run over plain TCP, no library and no encryption (bench/tcp_floor.c, 64-byte"
            f" messages, the receiver spinning on a non-blocking recv): ping-pong {fmt(f['pingpong'])} us"
            f" (half a round trip; a get or fetch_add waits at least twice that), exchange"
            f" {fmt(f['exchange'])} us (both send, then receive: the least one round of a 2-member"
            f" barrier costs).")
    # At 2x2 the barrier's floor is tcp_floor's own 2 x 2 barrier.
    hier = med.get((setup, "floor", "tcp_hier_barrier", 0))
    floor = f["exchange"]
    if hier is not None:
        floor = hier
        line += (f" Its barrier of 2 hosts x 2 processes (each member adds one to its leader's word, the leaders"
                 f" exchange 64 bytes, then release their members; every wait yields, as 4 processes share"
                 f" 2 cores): {fmt(hier)} us")
        shoal = med.get((setup, "shoal-tls", "barrier_all", 0))
        line += f", Shoal tls {shoal / hier:.2f}x that." if shoal else "."
    peer = med.get((setup, PEER, "barrier_all", 0))
    if peer:
        half = peer * TARGET["sync"][1]
        where = "below" if half < floor else "above"
        line += f" The barrier target, {TARGET['sync'][1]:g}x Open MPI's {fmt(peer)} us, is {fmt(half)} us: {where} the floor."
    return ([line, ""] + oneway_floor_lines(med, setup, f) + sealed_floor_lines(med, setup)
            + stream_floor_lines(med, setup) + provider_floor_lines(med, setup))


def oneway_floor_lines(med, setup, one_conn):
    """tcp_floor's ping-pong and exchange again over two connections that
    each carry one direction, as Shoal tls's streams carry signals with a
    connection per stream (SHMEM_TLS_PAIR=off): what that layout costs a
    message here, set beside Shoal tls's ping-pong and barrier (two PEs'
    streams sharing one connection, the default) and the barrier target."""
    f = tcp_figures(med, setup, "tcp_oneway_")
    if f is None:
        return []
    line = (f"The same exchanges over two connections, each carrying one direction only, as Shoal tls's streams"
            f" carry signals with a connection per stream (SHMEM_TLS_PAIR=off; with no data going back, the"
            f" receiving kernel sends each ACK by itself): ping-pong {fmt(f['pingpong'])} us ({f['pingpong'] / one_conn['pingpong']:.2f}x one"
            f" connection), exchange {fmt(f['exchange'])} us ({f['exchange'] / one_conn['exchange']:.2f}x).")
    shoal_pp = med.get((setup, "shoal-tls", "pingpong", 8))
    if shoal_pp:
        line += (f" Shoal tls ping-pong (two PEs' streams on one connection) {fmt(shoal_pp)} us,"
                 f" {shoal_pp / f['pingpong']:.2f}x the one-way ping-pong.")
    peer = med.get((setup, PEER, "barrier_all", 0))
    shoal_bar = med.get((setup, "shoal-tls", "barrier_all", 0))
    if peer and med.get((setup, "floor", "tcp_hier_barrier", 0)) is None:
        half = peer * TARGET["sync"][1]
        where = "below" if half < f["exchange"] else "above"
        line += f" The barrier target ({fmt(half)} us) lies {where} the one-way exchange"
        line += f"; Shoal tls's barrier {fmt(shoal_bar)} us." if shoal_bar else "."
    return [line, ""]


def trip_floor_lines(med, setup, figure, size, lib, what, text):
    """A floor probe's one-way time in the same run: its round trip is the
    least a get or fetch_add over Shoal's transport (lib) waits. Sets
    Shoal's figures against it and names Open MPI's that lie below it."""
    one_way = med.get((setup, "floor", figure, size))
    if one_way is None:
        return []
    trip = 2 * one_way
    line = text + (f": {fmt(one_way)} us a message one way, so a round trip of {fmt(trip)} us, which a get or"
                   f" fetch_add over {what} waits at least.")
    mine, below = [], []
    for fig, label in (("get_lat", "get"), ("fetch_add", "fetch_add")):
        shoal = med.get((setup, lib, fig, 8))
        peer = med.get((setup, PEER, fig, 8))
        if shoal is not None:
            mine.append(f"{label} {fmt(shoal)} us, {shoal / trip:.2f}x it")
        if peer is not None and peer < trip:
            below.append(f"{label} ({fmt(peer)} us)")
    if mine:
        line += f" Shoal {what}: {'; '.join(mine)}."
    if below:
        verb = "lies" if len(below) == 1 else "lie"
        line += f" Open MPI's {' and '.join(below)} {verb} below it: over {what} those targets cannot be met."
    return [line, ""]


def sealed_floor_lines(med, setup):
    """tcp_floor's ping-pong with each message a TLS 1.3 record, sealed and
    opened with no library around the cipher."""
    return trip_floor_lines(
        med, setup, "tcp_sealed_pingpong", 64, "shoal-tls", "tls",
        "Floor of an encrypted exchange in this run (bench/tcp_floor.c, the same ping-pong with each 64-byte"
        " message sealed into a TLS 1.3 record with AES-128-GCM and opened at the other end, no TLS library)")


def stream_floor_lines(med, setup):
    """bench/stream_floor.c in the same run: 1 MiB messages over one TCP
    connection sealed as user-space TLS 1.3 with no library, the most a tls
    stream carries here; set against the tls bandwidth targets and the time
    a 1 MiB broadcast takes at least (one 1 MiB transfer)."""
    sealed = med.get((setup, "floor", "stream_sealed", 1 << 20))
    clear = med.get((setup, "floor", "stream_clear", 1 << 20))
    if sealed is None:
        return []
    line = (f"Floor of an encrypted stream in this run (bench/stream_floor.c: 1 MiB messages over one TCP"
            f" connection sealed into 16 KiB TLS 1.3 records, the fewest copies, no TLS library): {fmt(sealed)} GB/s"
            + (f" against {fmt(clear)} in the clear." if clear is not None else "."))
    for fig, label in (("put_bw", "put"), ("get_bw", "get")):
        peer = med.get((setup, PEER, fig, 1 << 20))
        tls = med.get((setup, "shoal-tls", fig, 1 << 20))
        if peer is None or tls is None:
            continue
        goal = peer * TARGET["bw"][1]
        where = "above" if goal > sealed else "below"
        line += (f" {label} bandwidth: the target, {TARGET['bw'][1]:g}x Open MPI's {fmt(peer)}, is {fmt(goal)} GB/s,"
                 f" {where} it; Shoal tls {fmt(tls)}, {tls / sealed:.2f}x it.")
    peer = med.get((setup, PEER, "broadcast", 1 << 20))
    tls = med.get((setup, "shoal-tls", "broadcast", 1 << 20))
    if peer is not None and tls is not None:
        least = (1 << 20) / (sealed * 1e3)
        where = "below" if peer < least else "above"
        line += (f" A 1 MiB broadcast moves 1 MiB at least once through such a stream, {fmt(least)} us:"
                 f" Open MPI's {fmt(peer)} us in the clear is {where} that, Shoal tls {fmt(tls)} us.")
    return [line, ""]


def provider_floor_lines(med, setup):
    """libfabric's own ping-pong over tcp;ofi_rxm in the same run."""
    return trip_floor_lines(
        med, setup, "fi_pingpong", 8, "shoal-ofi", "ofi",
        "Floor of libfabric's tcp;ofi_rxm in this run (fi_pingpong from libfabric-bin, 8-byte messages,"
        " both ends polling)")


def extra_lock_lines(med, units):
    """Lock figures the probe printed beyond the two in the table (a lock
    probe may report round trips per uncontended acquisition)."""
    known = {f[0] for f in FIGURES}
    out = []
    for (setup, lib, fig, size), v in sorted(med.items()):
        if fig.startswith("lock_") and fig not in known:
            out.append(f"- {setup}, {lib}: {fig} = {fmt(v)} {units.get(fig, '')}")
    return out


def chart(med, out_png):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series = [(s, lib) for s, _ in SETUPS for lib in SHOAL]
    colors = {"lo": ("#1f77b4", "#9ecae1"), "2x1": ("#d62728", "#fc9272"), "2x2": ("#2ca02c", "#a1d99b")}
    width = 0.8 / len(series)
    fig, ax = plt.subplots(figsize=(15, 5.5))
    drawn = set()
    for i, (setup, lib) in enumerate(series):
        xs, ys = [], []
        for j, (f, size, _, kind) in enumerate(CHARTED):
            r = ratio(med, setup, lib, f, size)
            if r is None or r <= 0:
                continue
            xs.append(j - 0.4 + width * (i + 0.5))
            ys.append(1 / r if kind == "bw" else r)  # time ratio: below 1 is Shoal faster
        if xs:
            drawn.add(setup)
            ax.bar(xs, ys, width, color=colors[setup][lib == "shoal-ofi"], label=f"{setup} {lib}",
                   edgecolor="black", linewidth=0.3)
    for j, (_, _, _, kind) in enumerate(CHARTED):
        op, t = TARGET[kind]
        tt = 1 / t if kind == "bw" else t
        ax.hlines(tt, j - 0.45, j + 0.45, colors="black", linestyles="dotted", linewidth=1.2,
                  label="target" if j == 0 else None)
    ax.axhline(1.0, color="black", linewidth=1)
    ax.set_yscale("log")
    ax.set_xticks(range(len(CHARTED)))
    ax.set_xticklabels([f[2] for f in CHARTED], rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("Shoal / Open MPI, time (bandwidth: inverted)\nbelow 1: Shoal faster")
    ax.set_title("Shoal against Open MPI OSHMEM (UCX over TCP): ratios per figure and setup")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.grid(axis="y", which="both", alpha=0.3)
    ax.set_axisbelow(True)
    fig.tight_layout()
    fig.savefig(out_png, dpi=110)
    return drawn


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    csv_path, env_path, out = sys.argv[1:]
    med, units, reps = load(csv_path)
    env = {}
    with open(env_path) as f:
        for line in f:
            if "=" in line:
                k, v = line.rstrip("\n").split("=", 1)
                env[k] = v
    setups = [s for s in SETUPS if any(k[0] == s[0] for k in med)]
    md = [
        "# Shoal against Open MPI's OSHMEM over the network",
        "",
        "Written by `scripts/bench_network.sh` (`QUICK=1` for a short run); raw numbers in",
        "[network.csv](network.csv), the chart in [network.png](network.png).",
        "",
        f"{env.get('date', '?')}; {env.get('cpus', '?')} CPUs; Shoal {env.get('shoal', '?')};"
        f" Open MPI {env.get('openmpi', '?')}, UCX {env.get('ucx', '?')}; libfabric {env.get('libfabric', '?')};"
        f" {env.get('ktls', '')}.",
        f"Median over {env.get('runs', '?')} alternating run(s) (quick={env.get('quick', '?')}), each the median of"
        f" 3 runs inside the program; lock figures by {env.get('lock_probe', '?')}. Load average before:"
        f" {env.get('load_before', '?')}, after: {env.get('load_after', '?')}; {env.get('seconds', '?')} s."
        " The machine is shared and loaded: compare the columns of one run, not runs.",
        "",
        "- **Shoal tls**: the encrypted transport (TLS 1.3 streams), the default between hosts"
        " (forced on one host with `SHMEM_TRANSPORT=tls`).",
        "- **Shoal ofi**: libfabric `tcp;ofi_rxm` in the clear (`SHMEM_TRANSPORT=ofi FI_TCP_IFACE=lo` on"
        " one host, `SHMEM_ENCRYPT=off` between hosts).",
        "- **Open MPI**: OSHMEM with `--mca spml ucx --mca btl self,tcp -x UCX_TLS=self,tcp` on the"
        " setup's interface; between hosts its `oshrun` runs in host 0 and starts the daemon of host 1"
        " through an rsh agent (`--mca plm_rsh_agent`) that runs `ip netns exec`. Between the"
        " namespace hosts its PEs yield when idle (`mpi_yield_when_idle 1`): spinning there, its"
        " operations took whole scheduler ticks (put 8 ms, barrier 4 ms; HZ=250) against about"
        " 0.2-0.4 ms yielding, most likely because spinning PEs starve the kernel's packet"
        " processing for the veths on the shared cores. On one host it spins (its own default)."
        f" OMPI_YIELD={env.get('ompi_yield', '?')}.",
        "- Ratios are Shoal/Open MPI: for times (us) below 1 means Shoal is faster; for bandwidth"
        " (GB/s) above 1 means Shoal is faster. Targets: latency figures <= 1.0x, barrier and small"
        " reductions <= 0.5x, bandwidth >= 2x the peer's (alltoall, which issue 13 names no target"
        " for, is held to the latency target); an uncontended lock in fewer than 3 round"
        " trips (rt: its time over that of one blocking atomic fetch from the same PE to PE 0, timed"
        " alternately in the same program; a target on Shoal's own figure, not a ratio).",
        "- At 2 hosts x 2 PEs the point-to-point figures are between PE 0 and PE 2 (the first PE of"
        " the other host); the collectives span all 4 PEs (2 on each host share memory).",
        LOCK_NOTE.get(env.get("lock_probe"), "- Lock figures: " + env.get("lock_probe", "?") + "."),
        "",
    ]
    for setup, title in setups:
        n_ok = {lib: 0 for lib in SHOAL}
        n_all = {lib: 0 for lib in SHOAL}
        for fig, size, _, kind in FIGURES:
            for lib in SHOAL:
                m = met(kind, judged(med, setup, lib, fig, size, kind))
                if m != "-":
                    n_all[lib] += 1
                    n_ok[lib] += m == "yes"
        md += [f"## {title} (`{setup}`)", ""]
        md += [f"Targets met: tls {n_ok['shoal-tls']} of {n_all['shoal-tls']},"
               f" ofi {n_ok['shoal-ofi']} of {n_all['shoal-ofi']}.", ""]
        md += table(med, units, setup)
        md.append("")
        md += floor_line(med, setup)
    lock = extra_lock_lines(med, units)
    if lock:
        md += ["## Lock probe, other figures", ""] + lock + [""]
    missing = [f"{s} {lib} {f}" for s, _ in setups for f, size, _, _ in FIGURES
               for lib in SHOAL + [PEER] if (s, lib, f, size) not in med]
    if missing:
        md += ["Not measured (the launch failed or timed out; see the runner's output): "
               + ", ".join(missing) + ".", ""]
    few = sorted({k[:3] for k, r in reps.items() if len(r) < int(env.get("runs", "1") or 1)})
    if few:
        md += ["Fewer runs than asked for: " + ", ".join(" ".join(k) for k in few) + ".", ""]
    md += ["![ratios](network.png)", ""]
    with open(os.path.join(out, "network.md"), "w") as f:
        f.write("\n".join(md))
    try:
        chart(med, os.path.join(out, "network.png"))
    except ImportError as e:
        print(f"network_report.py: no chart ({e}); install python3-matplotlib", file=sys.stderr)


if __name__ == "__main__":
    main()
