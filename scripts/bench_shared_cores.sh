#!/bin/sh
# bench_shared_cores.sh: waits and collectives when PEs share or outnumber
# cores (issue 17), Shoal against Open MPI's OSHMEM in the same run.
# Scenarios, each on CPUs 0 and 1 (taskset), so "2 cores" holds on any host:
#   quiet   2 PEs
#   hog     2 PEs and one busy-loop process
#   4on2    4 PEs
#   16on2   16 PEs
# Figures: pingpong (p + wait_until, half round trip, bench_p2p; in the quiet
# scenario also the machine's floor, bench/pingpong_floor.c), and from
# bench_coll at 8 bytes: barrier_all, sum_reduce (8-byte long sum_to_all),
# fcollect (fcollect64 of 8 bytes). Libraries/settings: OSHMEM; Shoal with
# SHMEM_WAIT_POLICY=auto (the default), spin, yield and sleep; in 4on2 and
# 16on2 also the machine's floor for the barrier (bench/barrier_floor.c:
# no library, yields while waiting). The order of
# the five rotates from run to run. A run that passes RUN_TIMEOUT seconds
# (spinning on shared cores can take minutes) is recorded as a timeout.
# Writes docs/bench/shared_cores.csv, .md and .png (or into $OUT).
# Settings: REPS=1 (alternations; the report takes medians), RUN_TIMEOUT=25;
# to measure a part: SCENARIOS="4on2 16on2" (default all four), LIBS="oshmem
# shoal-auto shoal-yield" (default all five).
# Both projects name their launcher oshrun: only absolute paths are used.
set -e
cd "$(dirname "$0")/.."
root=$PWD
REPS=${REPS:-1}
RUN_TIMEOUT=${RUN_TIMEOUT:-25}
OUT=${OUT:-$root/docs/bench}
build=$root/build-shared-cores
mkdir -p "$OUT" "$build/shoal" "$build/peer" "$build/logs"
[ -x /usr/bin/oshcc ] || sh scripts/deps.sh openmpi-bin libopenmpi-dev python3-matplotlib

echo "== building Shoal (Release) and bench/ against both libraries"
nice cmake -S . -B "$build/cmake" -DCMAKE_BUILD_TYPE=Release -DSHOAL_BUILD_TESTS=OFF \
    -DSHOAL_BUILD_EXAMPLES=OFF -DCMAKE_INSTALL_PREFIX="$build/install" >/dev/null
nice cmake --build "$build/cmake" -j2 >/dev/null
cmake --install "$build/cmake" >/dev/null
cflags="-O2 -std=c11 -D_GNU_SOURCE -pthread"
for prog in p2p coll; do
    "$build/install/bin/oshcc" $cflags -o "$build/shoal/bench_$prog" "bench/bench_$prog.c" bench/bench_util.c
    /usr/bin/oshcc $cflags -o "$build/peer/bench_$prog" "bench/bench_$prog.c" bench/bench_util.c
done
# The machine's own floors (no library): a ping-pong, run beside the quiet
# scenario, and a barrier of as many processes as PEs, beside 4on2 and 16on2.
cc $cflags -o "$build/pingpong_floor" bench/pingpong_floor.c
cc $cflags -o "$build/barrier_floor" bench/barrier_floor.c

cpus=0,1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
run_lib() { # lib pes log program args...
    lib=$1 n=$2 log=$3; shift 3
    case $lib in
    oshmem)
        timeout "$RUN_TIMEOUT" taskset -c $cpus /usr/bin/oshrun --oversubscribe --bind-to none --mca osc ^rdma \
            --mca spml ucx --mca btl self,vader --mca oob_tcp_if_include lo --mca btl_tcp_if_include lo \
            -x UCX_TLS=self,sm -x UCX_NET_DEVICES=lo -np "$n" "$build/peer/$@" >"$log" 2>&1 ;;
    *)
        SHMEM_WAIT_POLICY=${lib#shoal-} timeout "$RUN_TIMEOUT" taskset -c $cpus \
            "$build/install/bin/oshrun" -n "$n" "$build/shoal/$@" >"$log" 2>&1 ;;
    esac
}

csv=$OUT/shared_cores.csv
echo "scenario,pes,load1,library,figure,value_us,rep" >"$csv"
libs=${LIBS:-oshmem shoal-auto shoal-spin shoal-yield shoal-sleep}
nlibs=$(echo $libs | wc -w)
SCENARIOS=${SCENARIOS:-quiet hog 4on2 16on2}
want() { case " $SCENARIOS " in *" $1 "*) return 0 ;; esac; return 1; }
turn=0
scenario() { # name pes
    name=$1 n=$2
    # Runs long enough to measure the steady state (tens of ms for the
    # fastest library) rather than how the PEs settle at the start: a few
    # hundred 0.1-us operations end within the first wait policy measure
    # (10 ms), and at 16 PEs the other PEs only start to sleep in their
    # barrier after about a millisecond. A setting that cannot keep up
    # (spinning with PEs outnumbering cores) shows as a timeout.
    p2p_iters=20000
    if [ "$n" -le 4 ]; then coll_iters=5000; else coll_iters=1000; fi
    rep=1
    while [ "$rep" -le "$REPS" ]; do
        set -- $libs
        k=$((turn % nlibs)); turn=$((turn + 1))
        while [ "$k" -gt 0 ]; do first=$1; shift; set -- "$@" "$first"; k=$((k - 1)); done
        for lib in "$@"; do
            load=$(cut -d' ' -f1 /proc/loadavg)
            log=$build/logs/$name-$lib-p2p-$rep.txt
            if run_lib "$lib" "$n" "$log" bench_p2p --only pingpong --iters $p2p_iters --runs 3; then
                grep -E '^pingpong,' "$log" | awk -F, -v s="$name" -v l="$lib" -v r="$rep" -v ld="$load" \
                    '{print s "," $3 "," ld "," l "," $1 "," $4 "," r}' >>"$csv"
            else echo "$name,$n,$load,$lib,pingpong,timeout,$rep" >>"$csv"; fi
            log=$build/logs/$name-$lib-coll-$rep.txt
            if run_lib "$lib" "$n" "$log" bench_coll --only barrier_all --only sum_reduce --only fcollect \
                --min-size 8 --max-size 8 --iters $coll_iters --runs 3; then
                grep -E '^(barrier_all|sum_reduce|fcollect),' "$log" | awk -F, -v s="$name" -v l="$lib" -v r="$rep" \
                    -v ld="$load" '{print s "," $3 "," ld "," l "," $1 "," $4 "," r}' >>"$csv"
            else for f in barrier_all sum_reduce fcollect; do echo "$name,$n,$load,$lib,$f,timeout,$rep" >>"$csv"; done; fi
        done
        if [ "$name" = quiet ]; then
            load=$(cut -d' ' -f1 /proc/loadavg)
            timeout "$RUN_TIMEOUT" taskset -c $cpus "$build/pingpong_floor" | awk -F, -v ld="$load" -v r="$rep" \
                '{print "quiet,2," ld ",floor,pingpong," $4 "," r}' >>"$csv" || true
        elif [ "$n" -gt 2 ]; then
            load=$(cut -d' ' -f1 /proc/loadavg)
            timeout "$RUN_TIMEOUT" taskset -c $cpus "$build/barrier_floor" "$n" $coll_iters |
                awk -F, -v s="$name" -v n="$n" -v ld="$load" -v r="$rep" \
                    '{print s "," n "," ld ",floor,barrier_all," $4 "," r}' >>"$csv" || true
        fi
        rep=$((rep + 1))
    done
    echo "   $name done (load $(cut -d' ' -f1-3 /proc/loadavg))"
}

echo "== running (load $(cut -d' ' -f1-3 /proc/loadavg))"
want quiet && scenario quiet 2
if want hog; then
    taskset -c 1 sh -c 'while :; do :; done' &
    hog=$!
    trap 'kill $hog 2>/dev/null' EXIT
    scenario hog 2
    kill $hog; trap - EXIT
fi
want 4on2 && scenario 4on2 4
want 16on2 && scenario 16on2 16
/usr/bin/python3 bench/shared_cores_report.py "$csv" "$OUT"
echo "== done: $OUT/shared_cores.md, .csv, .png"
