#!/usr/bin/python3
"""Checks what SHMEM_TRACE and SHMEM_STATS wrote for observe_prog.c.

    check_observe.py trace MODE NPES TRACE.json [STDERR_FILE]
    check_observe.py stats-table MODE NPES STDOUT_FILE
    check_observe.py stats-json MODE NPES STATS.json

MODE is observe_prog's mode (plain, pcontrol, overflow). The expected calls
below mirror the sequence documented at the top of observe_prog.c.
Exit 0 when everything holds, 1 with one line per problem otherwise."""
import json
import sys

OVERFLOW_PUTS = 200
RING = 64  # SHMEM_TRACE_BUFFER the overflow case runs with

problems = []


def fail(msg):
    problems.append(msg)


def expected_families(mode):
    """family -> (calls, bytes) of each PE, as SHMEM_STATS counts them."""
    fam = {
        "put": [5 + 3, 5 * 8 + 3 * 8],
        "get": [3, 3 * 16],
        "atomic": [2, 2 * 8],
        "signal": [1, 32],
        "wait": [1, 8],
        "barrier": [4, 0],
        "collective": [1, 32],
        "alloc": [7, 512 + 8 + 8],
    }
    if mode == "pcontrol":  # the pcontrol(0) puts are not counted
        fam["signal"] = [2, 40]
        fam["wait"] = [2, 16]
    if mode == "overflow":
        fam["put"] = [8 + OVERFLOW_PUTS, 64 + 8 * OVERFLOW_PUTS]
    return fam


def expected_row(mode, me, n):
    right, left = (me + 1) % n, (me + n - 1) % n
    row = [0] * n
    row[right] += 64 + 32 + (8 if mode == "pcontrol" else 0) + (8 * OVERFLOW_PUTS if mode == "overflow" else 0)
    row[left] += 48
    row[0] += 16
    return row


def main_thread_calls(mode):
    calls = 24
    if mode == "pcontrol":
        calls += 2  # put_signal and its wait under level 2 (the nested put comes on top)
    if mode == "overflow":
        calls += OVERFLOW_PUTS
    return calls


def check_nesting(events, where):
    """Spans of one track: sorted by start, each either inside the open one or after it."""
    eps = 0.0015  # ts and dur are printed to the ns, in microseconds
    stack = []
    for e in sorted(events, key=lambda e: (e["ts"], -e["dur"])):
        if e["dur"] < 0 or e["ts"] < 0:
            fail(f"{where}: negative time in {e['name']}")
        while stack and e["ts"] >= stack[-1]["ts"] + stack[-1]["dur"] - eps:
            stack.pop()
        if stack and e["ts"] + e["dur"] > stack[-1]["ts"] + stack[-1]["dur"] + eps:
            fail(f"{where}: {e['name']} at {e['ts']} overlaps {stack[-1]['name']} without nesting")
        stack.append(e)


def check_trace(mode, n, path, stderr_path):
    with open(path) as f:
        doc = json.load(f)
    events = doc["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e["name"] == "process_name"}
    for pe in range(n):
        if names.get(pe) != f"PE {pe}":
            fail(f"process_name of PE {pe} is {names.get(pe)!r}")
    spans = [e for e in events if e.get("ph") == "X"]
    tracks = {}
    for e in spans:
        tracks.setdefault((e["pid"], e["tid"]), []).append(e)
    lo = min(e["ts"] for e in spans)
    hi = max(e["ts"] + e["dur"] for e in spans)
    if not (0 <= lo and hi - lo < 600e6):
        fail(f"timestamps out of range: {lo} to {hi} us")
    for (pid, tid), evs in sorted(tracks.items()):
        where = f"PE {pid} track {tid}"
        # Written as spans end: end times never go back along a track.
        ends = [e["ts"] + e["dur"] for e in evs]
        if any(b < a - 0.0015 for a, b in zip(ends, ends[1:])):
            fail(f"{where}: span end times are not monotonic")
        check_nesting(evs, where)
    for pe in range(n):
        right, left = (pe + 1) % n, (pe + n - 1) % n
        main = [e for e in tracks.get((pe, 0), []) if e["args"].get("depth", 0) == 0]
        side = tracks.get((pe, 1), [])
        want_main = main_thread_calls(mode)
        if mode == "overflow":
            drops = [e for e in events if e.get("ph") == "i" and e["pid"] == pe and e["tid"] == 0]
            if len(drops) != 1:
                fail(f"PE {pe}: {len(drops)} overflow markers, expected 1")
            elif drops[0]["args"]["dropped"] != want_main - RING or drops[0]["args"]["kept"] != RING:
                fail(f"PE {pe}: overflow marker says {drops[0]['args']}, expected dropped {want_main - RING}")
            if len(main) != RING:
                fail(f"PE {pe}: main track kept {len(main)} spans, expected the ring's {RING}")
        elif len(main) != want_main:
            fail(f"PE {pe}: main track has {len(main)} calls, expected {want_main}")
        if [e["name"] for e in side] != ["shmem_long_p"] * 3:
            fail(f"PE {pe}: second thread's track holds {[e['name'] for e in side]}")
        elif any(e["args"].get("peer") != right or e["args"]["bytes"] != 8 for e in side):
            fail(f"PE {pe}: shmem_long_p args {[e['args'] for e in side]}")
        if mode == "overflow":
            continue
        by_name = {}
        for e in main:
            by_name.setdefault(e["name"], []).append(e)
        for name, count, args in [
            ("shmem_long_put", 5, {"peer": right, "bytes": 8}),
            ("shmem_long_get", 3, {"peer": left, "bytes": 16}),
            ("shmem_long_atomic_fetch_add", 2, {"peer": 0, "bytes": 8}),
            ("shmem_putmem_signal", 2 if mode == "pcontrol" else 1, {"peer": right}),
            ("shmem_signal_wait_until", 2 if mode == "pcontrol" else 1, {"bytes": 8}),
            ("shmem_barrier_all", 4, {"team": "world"}),
            ("shmem_long_sum_reduce", 1, {"team": "world", "bytes": 32}),
            ("shmem_malloc", 2, {}),
            ("shmem_calloc", 2, {"bytes": 8}),
            ("shmem_free", 3, {}),
        ]:
            got = by_name.get(name, [])
            if len(got) != count:
                fail(f"PE {pe}: {len(got)} {name} spans, expected {count}")
            for e in got:
                for k, v in args.items():
                    if e["args"].get(k) != v:
                        fail(f"PE {pe}: {name} has {k}={e['args'].get(k)!r}, expected {v!r}")
        for name in ("shmem_barrier_all", "shmem_long_sum_reduce"):
            for e in by_name.get(name, []):
                if not e["args"].get("algorithm") or "blocked_us" not in e["args"]:
                    fail(f"PE {pe}: {name} lacks algorithm or blocked_us: {e['args']}")
        if "shmem_int_p" in {e["name"] for e in spans if e["pid"] == pe}:
            fail(f"PE {pe}: shmem_int_p recorded under shmem_pcontrol(0)")
        nested = [e for e in tracks.get((pe, 0), []) if e["args"].get("depth", 0) > 0]
        if mode == "pcontrol":
            if len(nested) != 1 or nested[0]["cat"] != "put" or nested[0]["name"] != "shmem_putmem_signal":
                fail(f"PE {pe}: level 2 should add exactly the put nested in a put_signal, got {nested}")
        elif nested:
            fail(f"PE {pe}: nested spans recorded at level 1: {nested}")
    # Flow arrows: each PE's first put_signal to its right neighbour ends in
    # that neighbour's signal wait.
    starts = {(e["pid"], e["id"]) for e in events if e.get("ph") == "s"}
    finishes = {(e["pid"], e["id"]) for e in events if e.get("ph") == "f"}
    if mode != "overflow":
        for pe in range(n):
            right = (pe + 1) % n
            if not any((pe, i) in starts for (p, i) in finishes if p == right):
                fail(f"no flow arrow from PE {pe}'s put_signal to PE {right}'s wait")
    if mode == "overflow" and stderr_path:
        with open(stderr_path) as f:
            text = f.read()
        if text.count("oldest were dropped (raise SHMEM_TRACE_BUFFER)") != n:
            fail(f"expected one overflow warning per PE in stderr, got: {text!r}")


def check_stats_table(mode, n, path):
    with open(path) as f:
        lines = f.read().splitlines()
    try:
        head = next(i for i, l in enumerate(lines) if l.startswith("Shoal statistics"))
    except StopIteration:
        fail("no 'Shoal statistics' table in the output")
        return
    if lines[head] != f"Shoal statistics (SHMEM_STATS): {n} PE{'s' if n > 1 else ''}":
        fail(f"table heading: {lines[head]!r}")
    rows, matrix, in_matrix = {}, {}, False
    for l in lines[head + 2:]:
        if l.startswith("Bytes of puts"):
            in_matrix = True
            continue
        w = l.split()
        if not in_matrix:
            rows[(w[0], w[1])] = (int(w[2]), int(w[3]))
        elif w[0] != "PE":
            matrix[int(w[0])] = [int(x) for x in w[1:]]
    fam = expected_families(mode)
    for pe in range(n):
        for name, (calls, nbytes) in fam.items():
            if rows.get((str(pe), name)) != (calls, nbytes):
                fail(f"PE {pe} {name}: table says {rows.get((str(pe), name))}, expected {(calls, nbytes)}")
        if matrix.get(pe) != expected_row(mode, pe, n):
            fail(f"matrix row {pe}: {matrix.get(pe)}, expected {expected_row(mode, pe, n)}")
    for name, (calls, nbytes) in fam.items():
        if rows.get(("all", name)) != (calls * n, nbytes * n):
            fail(f"all {name}: {rows.get(('all', name))}, expected {(calls * n, nbytes * n)}")
    extra = {k for k in rows if k[1] not in fam}
    if extra:
        fail(f"unexpected rows {sorted(extra)}")


def check_stats_json(mode, n, path):
    with open(path) as f:
        doc = json.load(f)
    if doc["n_pes"] != n or [p["pe"] for p in doc["pes"]] != list(range(n)):
        fail(f"n_pes {doc['n_pes']}, pes {[p['pe'] for p in doc['pes']]}")
        return
    fam = expected_families(mode)
    for p in doc["pes"]:
        got = {k: [v["calls"], v["bytes"]] for k, v in p["families"].items()}
        if got != fam:
            fail(f"PE {p['pe']}: {got}, expected {fam}")
        for k in ("wait", "barrier", "collective"):
            if p["families"][k]["blocked_ns"] <= 0:
                fail(f"PE {p['pe']}: no blocked time in {k}")
    if doc["matrix"] != [expected_row(mode, pe, n) for pe in range(n)]:
        fail(f"matrix {doc['matrix']}")


def main():
    what, mode, n, path = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    if what == "trace":
        check_trace(mode, n, path, sys.argv[5] if len(sys.argv) > 5 else None)
    elif what == "stats-table":
        check_stats_table(mode, n, path)
    elif what == "stats-json":
        check_stats_json(mode, n, path)
    else:
        sys.exit(f"unknown check {what}")
    for p in problems[:40]:
        print("FAIL:", p)
    if problems:
        sys.exit(1)
    print(f"ok: {what} {mode} at {n} PEs")


if __name__ == "__main__":
    main()
