#!/bin/sh
# observe_test.sh CASE NPES OSHRUN PROG CHECKER [PLOT_SCRIPT]: runs observe_prog under
# oshrun with SHMEM_TRACE / SHMEM_STATS and checks what they wrote
# (check_observe.py). Cases: trace, pcontrol, overflow, stats_table, stats_json,
# stats_ofi (the same counts when every PE goes through libfabric), plot.
set -u
case_=$1 npes=$2 oshrun=$3 prog=$4 checker=$5 plot=${6:-}
py=/usr/bin/python3
dir=$(mktemp -d "${TMPDIR:-/tmp}/shoal-observe-test.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
run() { # mode, then extra environment
    mode=$1
    shift
    env "$@" "$oshrun" -n "$npes" --timeout 90 "$prog" "$mode" >"$dir/out" 2>"$dir/err"
    st=$?
    if [ $st -ne 0 ]; then
        echo "FAIL: oshrun -n $npes observe_prog $mode exited $st"
        cat "$dir/out" "$dir/err"
        exit 1
    fi
}
case $case_ in
trace) run plain SHMEM_TRACE="$dir/t.json" && $py "$checker" trace plain "$npes" "$dir/t.json" ;;
pcontrol) run pcontrol SHMEM_TRACE="$dir/t.json" SHMEM_STATS="json:$dir/s.json" &&
    $py "$checker" trace pcontrol "$npes" "$dir/t.json" && $py "$checker" stats-json pcontrol "$npes" "$dir/s.json" ;;
overflow) run overflow SHMEM_TRACE="$dir/t.json" SHMEM_TRACE_BUFFER=64 &&
    $py "$checker" trace overflow "$npes" "$dir/t.json" "$dir/err" ;;
stats_table) run plain SHMEM_STATS=1 && $py "$checker" stats-table plain "$npes" "$dir/out" ;;
stats_ofi) run plain SHMEM_TRANSPORT=ofi FI_TCP_IFACE=lo SHMEM_STATS="json:$dir/s.json" &&
    $py "$checker" stats-json plain "$npes" "$dir/s.json" ;;
stats_json) run overflow SHMEM_STATS="json:$dir/s.json" && $py "$checker" stats-json overflow "$npes" "$dir/s.json" ;;
plot)
    if ! $py -c 'import matplotlib' 2>/dev/null; then
        echo "SKIP: python3-matplotlib is not installed (scripts/deps.sh installs it)"
        exit 77
    fi
    run plain SHMEM_TRACE="$dir/t.json" &&
        $py "$plot" "$dir/t.json" "$dir/t.png" --title "observe_prog, $npes PEs" >"$dir/plot.out" || exit 1
    # A PNG, and the script's summary names every PE and the flow arrows.
    head -c 8 "$dir/t.png" | od -An -c | grep -q 'P   N   G' || { echo "FAIL: $dir/t.png is not a PNG"; exit 1; }
    grep -q "^$npes PEs, " "$dir/plot.out" || { echo "FAIL: plot summary: $(cat "$dir/plot.out")"; exit 1; }
    grep -q " [1-9][0-9]* flow arrows" "$dir/plot.out" || { echo "FAIL: no flow arrows drawn: $(cat "$dir/plot.out")"; exit 1; }
    echo "ok: plot at $npes PEs: $(cat "$dir/plot.out")"
    ;;
*) echo "unknown case $case_"; exit 2 ;;
esac
