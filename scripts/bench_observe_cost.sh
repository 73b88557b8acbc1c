#!/bin/sh
# bench_observe_cost.sh: what the tracing and statistics hooks cost when
# nothing is recorded (docs/observability.md, "What it costs").
#
# Builds the library twice in Release, with the hooks (the default) and
# with them compiled out (-DSHOAL_OBSERVE_HOOKS=OFF), then runs, in
# rounds whose order rotates:
#   on      the default build, SHMEM_TRACE and SHMEM_STATS unset;
#   off     the build without hooks;
#   off'    the build without hooks again: how far two runs of the very
#           same code differ on this machine now (the noise);
#   stats   the default build with SHMEM_STATS=1 and
#   trace   with SHMEM_TRACE set: the cost of a recorded call.
# Figures: 8-byte shmem_putmem to this PE in thread CPU time
# (tests/observe/observe_cost, 1 PE), and bench_rma's put_lat (put +
# quiet) and put_rate at 8 bytes, 2 PEs. Writes $OUT/observe_cost.csv
# and .md (default docs/bench/).
#
#   sh scripts/bench_observe_cost.sh          # ROUNDS=15 by default
#   ROUNDS=5 OUT=/tmp/oc sh scripts/bench_observe_cost.sh
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
rounds=${ROUNDS:-15}
out=${OUT:-$root/docs/bench}
work=${WORK:-$root/build-observe-cost}
py=/usr/bin/python3
mkdir -p "$out" "$work"

build() { # dir, cmake args...
    dir=$1
    shift
    cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=Release -DSHOAL_BUILD_EXAMPLES=OFF "$@" >/dev/null
    cmake --build "$dir" -j"$(nproc)" --target shoal oshrun bench_rma observe_cost >/dev/null
}
echo "building with and without the hooks in $work" >&2
build "$work/on" -DSHOAL_OBSERVE_HOOKS=ON
build "$work/off" -DSHOAL_OBSERVE_HOOKS=OFF

rma_args="--only put_rate --only put_lat --min-size 8 --max-size 8 --iters 200000 --runs 7"
raw="$out/observe_cost.csv"
echo "round,config,figure,value,unit" >"$raw"
trace=$(mktemp -d)
trap 'rm -rf "$trace"' EXIT

one() { # round, config
    case $2 in
    on | stats | trace) b=$work/on ;;
    *) b=$work/off ;;
    esac
    case $2 in
    stats) envs="SHMEM_STATS=1" ;;
    trace) envs="SHMEM_TRACE=$trace/t.json" ;;
    *) envs="SHOAL_UNUSED=1" ;;
    esac
    ns=$(env $envs timeout 120 "$b/tools/oshrun" -n 1 "$b/tests/observe/observe_cost" 2>/dev/null |
        sed -n 's/^\([0-9.]*\) ns per 8-byte.*/\1/p')
    echo "$1,$2,cpu_put,$ns,ns" >>"$raw"
    # shellcheck disable=SC2086
    env $envs timeout 120 "$b/tools/oshrun" -n 2 "$b/bench/bench_rma" $rma_args 2>/dev/null |
        awk -F, -v r="$1" -v c="$2" '$1 == "put_lat" {printf "%s,%s,put_lat,%.3f,ns\n", r, c, $4 * 1000}
                                    $1 == "put_rate" {printf "%s,%s,put_rate,%s,Mmsg/s\n", r, c, $4}' >>"$raw"
}

configs="on off off2 stats trace"
r=1
while [ "$r" -le "$rounds" ]; do
    # Rotate the order, so that no configuration always runs first.
    first=$(((r - 1) % 5)) k=0 head="" tail=""
    for c in $configs; do
        if [ $k -lt $first ]; then tail="$tail $c"; else head="$head $c"; fi
        k=$((k + 1))
    done
    order="$head $tail"
    for c in $order; do one "$r" "$c"; done
    echo "round $r of $rounds done" >&2
    r=$((r + 1))
done
"$py" "$root/bench/observe_cost_report.py" "$raw" >"$out/observe_cost.md"
cat "$out/observe_cost.md"
