#!/usr/bin/python3
"""Renders a SHMEM_TRACE file (Chrome/Perfetto trace-event JSON) as a PNG
timeline, no browser needed: one row per PE (and per thread of a PE that
called Shoal from several), each call a bar coloured by its family, and an
arrow from each put_signal to the wait it satisfied.

    scripts/trace_plot.py TRACE.json OUT.png [--title TEXT] [--from MS] [--to MS]

--from/--to cut a window, in milliseconds from the first event. Prints one
line: "N PEs, S spans, F flow arrows" (what was drawn). Needs
python3-matplotlib (scripts/deps.sh installs it)."""
import argparse
import json
import sys

COLORS = {
    "put": "#1f77b4", "get": "#17becf", "atomic": "#9467bd", "signal": "#ff7f0e", "wait": "#d62728",
    "barrier": "#7f7f7f", "collective": "#2ca02c", "alloc": "#8c564b", "lock": "#e377c2", "order": "#bcbd22",
    "team": "#aec7e8",
}


def load(path):
    with open(path) as f:
        doc = json.load(f)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("png")
    ap.add_argument("--title", default="")
    ap.add_argument("--from", dest="t_from", type=float, default=None, help="window start, ms")
    ap.add_argument("--to", dest="t_to", type=float, default=None, help="window end, ms")
    args = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.patches import Patch
    except ImportError:
        sys.exit("trace_plot.py: python3-matplotlib is not installed (apt-get install python3-matplotlib)")

    events = load(args.trace)
    spans = [e for e in events if e.get("ph") == "X"]
    if not spans:
        sys.exit(f"trace_plot.py: {args.trace} holds no spans")
    t0 = min(e["ts"] for e in spans)
    ms = lambda us: (us - t0) / 1000.0
    lo = args.t_from if args.t_from is not None else 0.0
    hi = args.t_to if args.t_to is not None else max(ms(e["ts"] + e["dur"]) for e in spans)

    # One row per (PE, thread), PEs top to bottom.
    tracks = sorted({(e["pid"], e["tid"]) for e in spans})
    row = {t: i for i, t in enumerate(tracks)}
    pes = sorted({p for p, _ in tracks})
    fig_h = 1.2 + 0.45 * len(tracks)
    fig, ax = plt.subplots(figsize=(13, fig_h))
    shown = 0
    slice_at = {}  # (pid, tid, ts) of a flow end -> the y of its row
    for e in spans:
        a, b = ms(e["ts"]), ms(e["ts"] + e["dur"])
        if b < lo or a > hi:
            continue
        depth = e.get("args", {}).get("depth", 0)
        y = row[(e["pid"], e["tid"])]
        h = 0.7 * (0.6 ** depth)
        # Calls shorter than a pixel still show: at least 1/1500 of the window wide.
        w = max(b - a, (hi - lo) / 1500.0)
        ax.broken_barh([(a, w)], (y - h / 2, h), facecolors=COLORS.get(e.get("cat"), "#333333"), linewidth=0)
        shown += 1
    flows = {}
    for e in events:
        if e.get("ph") in ("s", "f"):
            flows.setdefault(e["id"], {}).setdefault(e["ph"], []).append(e)
    by_track = {}
    for e in spans:
        by_track.setdefault((e["pid"], e["tid"]), []).append(e)

    def slice_end(p):
        """End of the innermost span holding flow point p (what it binds to), in ms."""
        holding = [e for e in by_track.get((p["pid"], p["tid"]), []) if e["ts"] <= p["ts"] <= e["ts"] + e["dur"]]
        if not holding:
            return ms(p["ts"])
        inner = min(holding, key=lambda e: e["dur"])
        return ms(inner["ts"] + inner["dur"])

    arrows = 0
    for ends in flows.values():
        for s, f in zip(ends.get("s", []), ends.get("f", [])):
            # From the end of the put_signal to the end of the wait it released.
            xs, xf = slice_end(s), slice_end(f)
            if xf < lo or xs > hi or (s["pid"], s["tid"]) not in row or (f["pid"], f["tid"]) not in row:
                continue
            ys, yf = row[(s["pid"], s["tid"])], row[(f["pid"], f["tid"])]
            ax.annotate("", xy=(xf, yf), xytext=(xs, ys),
                        arrowprops=dict(arrowstyle="->", color="black", lw=0.6, alpha=0.6))
            arrows += 1
    labels = []
    for p, t in tracks:
        labels.append(f"PE {p}" if t == 0 else f"PE {p} thread {t}")
    ax.set_yticks(range(len(tracks)))
    ax.set_yticklabels(labels)
    ax.set_ylim(len(tracks) - 0.5, -0.5)
    ax.set_xlim(lo, hi)
    ax.set_xlabel("time since the first call (ms)")
    cats = sorted({e.get("cat") for e in spans if e.get("cat") in COLORS}, key=list(COLORS).index)
    handles = [Patch(color=COLORS[c], label=c) for c in cats]
    handles.append(Patch(color="black", label="put_signal \u2192 wait"))
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.5 / fig_h * 2.2), ncol=len(handles),
              fontsize=8, frameon=False)
    ax.set_title(args.title or args.trace)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(args.png, dpi=110)
    print(f"{len(pes)} PEs, {shown} spans, {arrows} flow arrows")


if __name__ == "__main__":
    main()
