"""observe_cost_report.py CSV: the table of scripts/bench_observe_cost.sh
(markdown on stdout). Every figure is turned into a time per operation
(put_rate into ns per message), so higher always means costlier.

The question is whether the hooks cost anything measurable when nothing is
recorded. Two samples differ measurably when a two-sided Mann-Whitney U
test over the rounds gives p < 0.05; the same test between two runs of the
very same build ("off" and "off, again") shows what the machine's noise
alone produces."""
import csv
import math
import os
import statistics
import sys
from collections import defaultdict

FIGURES = [("cpu_put", "8-byte `shmem_putmem` to itself, CPU time (1 PE)"),
           ("put_lat", "`put_lat`: 8-byte put + quiet (2 PEs)"),
           ("put_rate", "`put_rate`: 8-byte puts, time per message (2 PEs)")]
CONFIGS = [("on", "hooks in, recording off (the default)"), ("off", "hooks compiled out"),
           ("off2", "hooks compiled out, run again"), ("stats", "`SHMEM_STATS=1`"), ("trace", "`SHMEM_TRACE`")]


def mann_whitney_p(a, b):
    """Two-sided p of the U test, normal approximation with tie correction."""
    n1, n2 = len(a), len(b)
    if n1 < 3 or n2 < 3:
        return float("nan")
    pooled = sorted([(v, 0) for v in a] + [(v, 1) for v in b])
    ranks = [0.0] * len(pooled)
    ties = 0.0
    i = 0
    while i < len(pooled):
        j = i
        while j + 1 < len(pooled) and pooled[j + 1][0] == pooled[i][0]:
            j += 1
        for k in range(i, j + 1):
            ranks[k] = (i + j) / 2 + 1
        t = j - i + 1
        ties += t ** 3 - t
        i = j + 1
    r1 = sum(r for r, (_, g) in zip(ranks, pooled) if g == 0)
    u = r1 - n1 * (n1 + 1) / 2
    n = n1 + n2
    var = n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1)))
    if var <= 0:
        return 1.0
    z = (abs(u - n1 * n2 / 2) - 0.5) / math.sqrt(var)
    return math.erfc(max(z, 0) / math.sqrt(2))


def main():
    vals = defaultdict(list)
    with open(sys.argv[1]) as f:
        for row in csv.DictReader(f):
            if not row["value"]:
                continue
            v = float(row["value"])
            if row["figure"] == "put_rate":
                v = 1000.0 / v  # Mmsg/s -> ns per message
            vals[(row["figure"], row["config"])].append(v)
    rounds = max((len(v) for v in vals.values()), default=0)
    print("# What the observe hooks cost when nothing is recorded\n")
    print(f"`sh scripts/bench_observe_cost.sh`: Release builds with and without the hooks "
          f"(`-DSHOAL_OBSERVE_HOOKS=OFF`), {rounds} rounds, the order rotating each round; "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the end. "
          "Medians over rounds, nanoseconds per operation (lower is better), "
          "with the middle half of the rounds in brackets.\n")
    print("| figure | " + " | ".join(label for _, label in CONFIGS) + " |")
    print("|---|" + "---|" * len(CONFIGS))
    for fig, label in FIGURES:
        cells = []
        for c, _ in CONFIGS:
            s = sorted(vals.get((fig, c), []))
            if not s:
                cells.append("-")
                continue
            q = statistics.quantiles(s, n=4) if len(s) >= 2 else [s[0], s[0], s[0]]
            cells.append(f"{statistics.median(s):.2f} [{q[0]:.2f}-{q[2]:.2f}]")
        print(f"| {label} | " + " | ".join(cells) + " |")
    print("\n| figure | hooks in / out (medians) | p, hooks in vs out | out, again / out | p, same build twice | "
          "measurable? |")
    print("|---|---|---|---|---|---|")
    for fig, label in FIGURES:
        on, off, off2 = (vals.get((fig, c), []) for c in ("on", "off", "off2"))
        if not on or not off or not off2:
            continue
        m_on, m_off, m_off2 = (statistics.median(x) for x in (on, off, off2))
        p_cost, p_noise = mann_whitney_p(on, off), mann_whitney_p(off2, off)
        if math.isnan(p_cost):
            verdict = "too few rounds to tell"
        else:
            verdict = "yes" if p_cost < 0.05 and m_on > m_off else "no"
        print(f"| {label} | {m_on / m_off:.3f} | {p_cost:.2f} | {m_off2 / m_off:.3f} | {p_noise:.2f} | {verdict} |")
    print("\nRecorded calls, per call over the hooks-out median: "
          + "; ".join(f"{fig} {statistics.median(vals[(fig, c)]) - statistics.median(vals[(fig, 'off')]):+.1f} ns "
                      f"with {c}" for fig, _ in FIGURES[:1] for c in ("stats", "trace")
                      if vals.get((fig, c)) and vals.get((fig, "off"))) + ".")


main()
