#!/bin/bash
# bench_hosts.sh: Shoal across "hosts" made of network namespaces, with the
# encrypted transport (tls, the default) and libfabric tcp;ofi_rxm in the
# clear (ofi, SHMEM_ENCRYPT=off) side by side, and optionally one host with
# each transport forced, next to Open MPI's OSHMEM over UCX TCP. Not a test:
# timings are reported, never asserted.
#
#   tests/netns/bench_hosts.sh [BUILD_DIR] [--hosts] [--onehost]
#
#   BUILD_DIR   a Shoal build with the benches (default: build-test); use a
#               Release build: cmake -DCMAKE_BUILD_TYPE=Release
#   --hosts     the namespace part (default when neither option is given):
#               2 hosts x 1 PE (put/get latency 8 B, put bandwidth 1 MiB,
#               fetch_add, barrier) and 2 hosts x 2 PEs (barrier)
#   --onehost   one host, 2 PEs, each transport forced (SHMEM_TRANSPORT=tls,
#               =ofi with FI_TCP_IFACE=lo) against Open MPI's /usr/bin/oshrun
#               with UCX over TCP on lo (bench sources built by /usr/bin/oshcc)
#   Settings: RUNS=5 (runs per figure, the median is reported), ITERS=1000
#   (iterations per run at small sizes), OUT=docs/bench.
#
# Writes OUT/hosts.csv (setup,library,figure,size,pes,value,unit) and
# OUT/hosts.md (the table). Needs root and ip netns for --hosts.
set -u
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$root/build-test
do_hosts=0 do_onehost=0
for a in "$@"; do
    case $a in
    --hosts) do_hosts=1 ;;
    --onehost) do_onehost=1 ;;
    -h | --help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "bench_hosts.sh: unknown option $a" >&2; exit 2 ;;
    *) build=$(cd "$a" && pwd) || exit 2 ;;
    esac
done
[ $do_hosts = 0 ] && [ $do_onehost = 0 ] && do_hosts=1
RUNS=${RUNS:-5}
ITERS=${ITERS:-1000}
OUT=${OUT:-$root/docs/bench}
OSHRUN=$build/tools/oshrun
for p in "$OSHRUN" "$build/bench/bench_rma" "$build/bench/bench_p2p" "$build/bench/bench_coll"; do
    [ -x "$p" ] || { echo "bench_hosts.sh: $p missing: build $build first" >&2; exit 1; }
done
mkdir -p "$OUT"
csv=$OUT/hosts.csv
md=$OUT/hosts.md
work=$(mktemp -d "${TMPDIR:-/tmp}/shoal-bench-hosts.XXXXXX") || exit 1
logs=$work/logs
mkdir -p "$logs"
echo "setup,library,figure,size,pes,value,unit" >"$csv"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

# The measurements: name, program, PEs (total), arguments.
common="--runs $RUNS --iters $ITERS"
lat_args="--only put_lat --only get_lat --min-size 8 --max-size 8 $common"
bw_args="--only put_bw --min-size 1048576 --max-size 1048576 $common"
amo_args="--only fetch_add $common"
bar_args="--only barrier_all --max-size 8 $common"

# record SETUP LIB LOG: the figure lines of LOG into the CSV.
record() {
    grep -E '^[a-z_]+,[0-9]+,[0-9]+,' "$3" | sed "s/^/$1,$2,/" >>"$csv"
    grep -qE '^[a-z_]+,[0-9]+,[0-9]+,' "$3" || echo "   no figures from $2 ($1): see $3 ($(tail -n3 "$3" | tr '\n' ' '))"
}

if [ $do_hosts = 1 ]; then
    . "$root/tests/netns/hosts.sh"
    hosts_require
    hosts_on_exit "rm -rf '$work'"
    hosts_up 2
    "$OSHRUN" --make-secret "$work/secret" >/dev/null || exit 1
    PORT=29400
    # netns_run PPN LOG PROG ARGS: one oshrun per host; node 0's output in LOG.
    netns_run() {
        local ppn=$1 log=$2 r pids=
        shift 2
        for r in 1 0; do
            hosts_spawn "$r" env SHMEM_BOOTSTRAP_SECRET_FILE="$work/secret" SHMEM_ENCRYPT="${SHMEM_ENCRYPT:-auto}" \
                timeout 600 "$OSHRUN" \
                --nnodes 2 --node-rank "$r" --rendezvous "$(hosts_addr 0):$PORT" -n "$ppn" --timeout 590 "$@" \
                >"$log.node$r" 2>&1
            pids="$pids $HOSTS_PID"
        done
        for p in $pids; do wait "$p" || echo "   node exited $? (see $log.node*)"; done
        cp "$log.node0" "$log"
    }
    # Both transports between the namespace hosts, alternating figure by
    # figure so both see the same load: tls (the default, encrypted) and
    # ofi (SHMEM_ENCRYPT=off: libfabric tcp;ofi_rxm in the clear).
    echo "== 2 hosts (network namespaces): Shoal tls (default) and ofi (SHMEM_ENCRYPT=off), alternately"
    for spec in "rma-lat 1 rma $lat_args" "rma-bw 1 rma $bw_args" "p2p 1 p2p $amo_args" \
        "coll2 1 coll $bar_args" "coll4 2 coll $bar_args"; do
        set -- $spec
        name=$1 ppn=$2 prog=$3
        shift 3
        for enc in auto off; do
            lib=shoal-tls
            [ $enc = off ] && lib=shoal-ofi
            SHMEM_ENCRYPT=$enc netns_run "$ppn" "$logs/netns-$lib-$name" "$build/bench/bench_$prog" "$@"
            record netns $lib "$logs/netns-$lib-$name"
        done
    done
    hosts_down
else
    trap 'rm -rf "$work"' EXIT
fi

if [ $do_onehost = 1 ]; then
    [ -x /usr/bin/oshcc ] && [ -x /usr/bin/oshrun ] || sh "$root/scripts/deps.sh" openmpi-bin libopenmpi-dev
    echo "== building bench/ with Open MPI's /usr/bin/oshcc"
    cflags="-O2 -std=c11 -D_GNU_SOURCE -pthread"
    for prog in rma p2p coll; do
        /usr/bin/oshcc $cflags -o "$work/peer_$prog" "$root/bench/bench_$prog.c" "$root/bench/bench_util.c" || exit 1
    done
    shoal_lo() { # TRANSPORT PES LOG PROG ARGS
        local tr=$1 n=$2 log=$3
        shift 3
        SHMEM_TRANSPORT=$tr FI_TCP_IFACE=lo FI_PROVIDER="tcp;ofi_rxm" \
            timeout 600 "$OSHRUN" -n "$n" --timeout 590 "$@" >"$log" 2>&1 || echo "   Shoal exited $? (see $log)"
    }
    ompi_lo() { # PES LOG PROG ARGS
        local n=$1 log=$2
        shift 2
        OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 600 /usr/bin/oshrun --oversubscribe \
            --mca osc ^rdma --mca spml ucx --mca btl self,vader --mca oob_tcp_if_include lo \
            --mca btl_tcp_if_include lo -x UCX_TLS=tcp,self -x UCX_NET_DEVICES=lo -np "$n" "$@" \
            >"$log" 2>&1 || echo "   Open MPI exited $? (see $log)"
    }
    echo "== 1 host, transport forced: Shoal tls and ofi (tcp;ofi_rxm on lo), Open MPI (UCX tcp on lo), alternately"
    for spec in "rma-lat rma 2 $lat_args" "rma-bw rma 2 $bw_args" "p2p p2p 2 $amo_args" \
        "coll2 coll 2 $bar_args" "coll4 coll 4 $bar_args"; do
        set -- $spec
        name=$1 prog=$2 n=$3
        shift 3
        for tr in tls ofi; do
            shoal_lo $tr "$n" "$logs/lo-shoal-$tr-$name" "$build/bench/bench_$prog" "$@"
            record lo shoal-$tr "$logs/lo-shoal-$tr-$name"
        done
        ompi_lo "$n" "$logs/lo-ompi-$name" "$work/peer_$prog" "$@"
        record lo openmpi "$logs/lo-ompi-$name"
    done
fi

# The table: one row per figure, one column per setup and library.
{
    echo "# Shoal across hosts"
    echo
    echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')),"
    echo "Shoal $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?') (working tree), $RUNS runs of $ITERS iterations, median."
    echo "Written by tests/netns/bench_hosts.sh; raw numbers in hosts.csv."
    echo "Load average when the run began: $load_before (2 CPUs shared with other work: the"
    echo "numbers are noisy; compare columns of one run, not runs)."
    echo
    echo "- **2 hosts (netns)**: two network namespaces joined by a bridge (veth pairs), one"
    echo "  oshrun per namespace (--nnodes 2 --rendezvous). **tls**: the default, Shoal's"
    echo "  encrypted transport (TLS 1.3 streams, $(if grep -qw tls /proc/modules 2>/dev/null; then echo 'kernel TLS module loaded'; else echo 'user-space OpenSSL: this kernel has no tls module'; fi));"
    echo "  **ofi**: SHMEM_ENCRYPT=off, libfabric tcp;ofi_rxm in the clear. Same kernel, so this"
    echo "  is TCP through veths, not a wire."
    echo "- **1 host**: 2 PEs (4 for the 4-PE barrier) under one oshrun with SHMEM_TRANSPORT=tls"
    echo "  or ofi (FI_TCP_IFACE=lo); Open MPI $(dpkg-query -W -f='${Version}' openmpi-bin 2>/dev/null) OSHMEM with spml ucx,"
    echo "  UCX_TLS=tcp,self on lo (bench sources built by /usr/bin/oshcc)."
    echo
    awk -F, '
    NR == 1 { next }
    { v[$1 "," $2 "," $3 "," $4 "," $5] = $6; u[$3] = $7 }
    function cell(x) { return x == "" ? "-" : x }
    function ratio(a, b) { return (a == "" || b == "" || b + 0 == 0) ? "-" : sprintf("%.2f", a / b) }
    END {
        n = split("put_lat,8,2,put 8 B + quiet;get_lat,8,2,get 8 B;put_bw,1048576,2,put bandwidth 1 MiB;" \
                  "fetch_add,8,2,fetch_add 64-bit;barrier_all,0,2,barrier 2 PEs;barrier_all,0,4,barrier 4 PEs", rows, ";")
        print "| figure | unit | netns tls | netns ofi | tls/ofi | 1 host tls | 1 host ofi | tls/ofi | 1 host Open MPI |"
        print "|---|---|---:|---:|---:|---:|---:|---:|---:|"
        for (i = 1; i <= n; i++) {
            split(rows[i], f, ",")
            label = f[4]
            if (f[1] == "barrier_all" && f[3] == 4) label = label " (netns: 2 hosts x 2)"
            else if (f[1] == "barrier_all") label = label " (netns: 2 hosts x 1)"
            k = f[1] "," f[2] "," f[3]
            a = v["netns,shoal-tls," k]; b = v["netns,shoal-ofi," k]
            c = v["lo,shoal-tls," k]; d = v["lo,shoal-ofi," k]; e = v["lo,openmpi," k]
            unit = (f[1] in u) ? u[f[1]] : ""
            printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", label, unit, cell(a), cell(b), ratio(a, b),
                   cell(c), cell(d), ratio(c, d), cell(e)
        }
    }' "$csv"
    echo
    echo "Latencies in microseconds per operation (lower is better; tls/ofi under 1 means"
    echo "the encrypted path is faster), bandwidth in GB/s (higher is better; tls/ofi is the"
    echo "encrypted path's share of the unencrypted bandwidth). \"-\" means not measured."
    echo "Open MPI's barrier figure (under 1 us at 2 PEs) can only be shared memory: its"
    echo "collectives appear to go through btl self,vader, not UCX TCP; not a fabric number."
} >"$md"
echo "== wrote $csv and $md"
cat "$md"
