#!/bin/sh
# compare.sh: Shoal against Open MPI's OSHMEM on this host, side by side.
# Installs Debian's Open MPI and matplotlib if missing, builds Shoal
# (Release) and installs it under build-compare/install, builds the same
# bench/ sources with Shoal's oshcc and with Open MPI's /usr/bin/oshcc, runs
# every figure with both libraries alternately (Shoal first on one figure,
# the peer first on the next), and writes into docs/bench/ (or $OUT):
#   results.csv   library,figure,size,pes,value,unit,rep
#   results.md    every figure with the ratio Shoal/peer, and the targets
#   *.png         latency and bandwidth against message size, log scales
# Settings (environment): PES="2 4 8" (collective PE counts), REPS=1
# (alternations per figure; the report takes the median over them),
# QUICK=1 (small sweeps, to try the runner), OUT=dir.
# Both projects have commands named oshcc and oshrun: only absolute paths
# are used here.
set -e
cd "$(dirname "$0")/.."
root=$PWD
sh scripts/deps.sh openmpi-bin libopenmpi-dev python3-matplotlib
PES=${PES:-"2 4 8"}
REPS=${REPS:-1}
OUT=${OUT:-$root/docs/bench}
build=$root/build-compare
prefix=$build/install
mkdir -p "$OUT" "$build/shoal" "$build/peer" "$build/logs"

echo "== building Shoal (Release) into $prefix"
cmake -S . -B "$build/cmake" -DCMAKE_BUILD_TYPE=Release -DSHOAL_BUILD_TESTS=OFF \
    -DSHOAL_BUILD_EXAMPLES=OFF -DCMAKE_INSTALL_PREFIX="$prefix" >/dev/null
cmake --build "$build/cmake" -j"$(nproc)" >/dev/null
cmake --install "$build/cmake" >/dev/null

echo "== building bench/ against Shoal ($prefix/bin/oshcc) and Open MPI (/usr/bin/oshcc)"
cflags="-O2 -std=c11 -D_GNU_SOURCE -pthread"
for prog in rma p2p coll; do
    "$prefix/bin/oshcc" $cflags -o "$build/shoal/bench_$prog" "bench/bench_$prog.c" bench/bench_util.c
    /usr/bin/oshcc $cflags -o "$build/peer/bench_$prog" "bench/bench_$prog.c" bench/bench_util.c
done

# Open MPI's OSHMEM on one host: UCX over shared memory, loopback only.
# Without "osc ^rdma" it crashes in shmem_finalize (Open MPI 4.1.4).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
peer_run() { # pes, program, args...
    n=$1; shift
    timeout 600 /usr/bin/oshrun --oversubscribe --mca osc ^rdma --mca spml ucx --mca btl self,vader \
        --mca oob_tcp_if_include lo --mca btl_tcp_if_include lo \
        -x UCX_TLS=self,sm -x UCX_NET_DEVICES=lo -np "$n" "$@"
}
shoal_run() { # pes, program, args...
    n=$1; shift
    "$prefix/bin/oshrun" -n "$n" --timeout 600 "$@"
}

if [ "${QUICK:-0}" = 1 ]; then
    rma_args="--max-size 64K --iters 200 --runs 3"
    p2p_args="--iters 2000 --runs 3"
    coll_args="--max-size 64K --iters 50 --runs 3"
else
    rma_args="" p2p_args="" coll_args=""
fi

csv=$OUT/results.csv
env_txt=$OUT/environment.txt
{
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "host: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
    echo "shoal: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown) (working tree), Release, ${prefix#"$root"/}/bin/oshcc $cflags"
    echo "peer: Open MPI $(dpkg-query -W -f='${Version}' openmpi-bin 2>/dev/null) OSHMEM, /usr/bin/oshcc $cflags, spml ucx, UCX_TLS=self,sm"
    echo "reps: $REPS; collective PE counts: $PES"
    echo "load before: $(uptime | sed 's/.*load average/load average/')"
} >"$env_txt"
echo "library,figure,size,pes,value,unit,rep" >"$csv"

turn=0
measure() { # program, pes, figure, extra args...  (LIBS: which libraries)
    prog=$1 n=$2 fig=$3; shift 3
    rep=1
    while [ "$rep" -le "$REPS" ]; do
        if [ $((turn % 2)) = 0 ]; then order="shoal peer"; else order="peer shoal"; fi
        [ -n "${LIBS:-}" ] && order=$LIBS
        turn=$((turn + 1))
        for lib in $order; do
            log=$build/logs/$lib-$prog-$n-$fig-$rep.txt
            if [ "$lib" = shoal ]; then
                shoal_run "$n" "$build/shoal/bench_$prog" --only "$fig" "$@" >"$log" 2>&1 || echo "   $lib $prog $fig at $n PEs failed: see $log"
            else
                peer_run "$n" "$build/peer/bench_$prog" --only "$fig" "$@" >"$log" 2>&1 || echo "   $lib $prog $fig at $n PEs failed: see $log"
            fi
            grep -E '^[a-z_]+,[0-9]+,' "$log" | sed "s/^/$lib,/; s/\$/,$rep/" >>"$csv" || true
        done
        rep=$((rep + 1))
    done
}

echo "== running (load: $(uptime | sed 's/.*load average: //'))"
for fig in put_lat get_lat put_nbi_lat get_nbi_lat put_rate; do
    echo "   rma $fig, 2 PEs"
    measure rma 2 "$fig" $rma_args
done
# memcpy_bw, the reference for put_bw, alternates with it run by run.
echo "   rma put_bw and memcpy_bw, 2 PEs"
measure rma 2 put_bw --only memcpy_bw $rma_args
for fig in pingpong put_signal put_fence_p fetch_add compare_swap; do
    echo "   p2p $fig, 2 PEs"
    measure p2p 2 "$fig" $p2p_args
done
# A host figure, not a library one; Open MPI's launcher would bind both
# threads to one core, so it runs under Shoal's launcher only.
echo "   p2p hw_pingpong (no SHMEM: the host's cache-line floor), 1 PE"
LIBS=shoal
measure p2p 1 hw_pingpong $p2p_args
LIBS=
for n in $PES; do
    for fig in barrier_all broadcast collect fcollect alltoall sum_reduce; do
        echo "   coll $fig, $n PEs"
        measure coll "$n" "$fig" $coll_args
    done
done
echo "load after: $(uptime | sed 's/.*load average/load average/')" >>"$env_txt"

# Debian's matplotlib belongs to Debian's python3, which may not be first on PATH.
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3
"$py" scripts/compare_report.py "$csv" "$OUT"
echo "== done: $OUT/results.md, $OUT/results.csv and the charts in $OUT"
