#!/bin/bash
# bench_network.sh: Shoal against Open MPI's OSHMEM over the network, in one
# run: the same bench/ probes, the libraries alternating probe by probe.
#
#   sudo bash scripts/bench_network.sh          # as root, drop sudo
#
# Setups (SETUPS, default all three):
#   lo    one host, 2 PEs, the fabric forced: Shoal SHMEM_TRANSPORT=tls (the
#         encrypted transport, the default between hosts) and =ofi
#         (libfabric tcp;ofi_rxm, FI_TCP_IFACE=lo); Open MPI with spml ucx,
#         btl self,tcp, UCX_TLS=self,tcp on lo
#   2x1   2 hosts x 1 PE: network namespaces joined by a bridge
#         (tests/netns/hosts.sh); Shoal with one oshrun per host (tls: the
#         default; ofi: SHMEM_ENCRYPT=off); Open MPI's oshrun in host 0,
#         starting its daemon in host 1 through an rsh agent that runs
#         "ip netns exec" (written into the work folder)
#   2x2   2 hosts x 2 PEs, the same; point-to-point figures are between PE 0
#         and PE 2 (the first PE of the other host)
# Figures: put 8 B + quiet, get 8 B, fetch_add, ping-pong (p + wait_until),
# lock (set_lock + clear_lock uncontended and with 2 PEs contending),
# barrier_all, sum_to_all 8 B, fcollect64 8 B, alltoall64 8 B (judged as a
# latency figure: at most 1.0x), broadcast64 1 MiB, put and
# get bandwidth 1 MiB (windows of 64 nbi, then quiet). Beside them, in each
# setup, bench/tcp_floor.c: the same exchanges over plain TCP between two
# processes with no library and no encryption, the floor of that run (at
# 2x2 also its barrier of 2 hosts x 2 processes, hierarchical as Shoal's),
# and libfabric's own fi_pingpong (libfabric-bin) over tcp;ofi_rxm, the
# floor of Shoal ofi's operations (on one host inside a network namespace
# of its own, whose loopback it binds), and bench/stream_floor.c: 1 MiB
# messages over plain TCP in the clear and sealed as user-space TLS 1.3,
# the floor of the tls bandwidth and broadcast figures (STREAM_FLOOR=0
# leaves it out).
#
# Settings (environment): RUNS=3 alternations (the report takes the median
# over them; each probe is itself the median of 3 runs inside the program),
# QUICK=1 (RUNS=1 and fewer iterations: a few minutes), SETUPS="lo 2x1 2x2",
# LIBS="shoal-tls shoal-ofi openmpi", BUILD=build-bench (a Release build,
# configured and built here if needed), OUT=docs/bench, OMPI_YIELD=0|1
# (Open MPI's mpi_yield_when_idle; unset: 1 between namespace hosts, where
# its spinning PEs starve the veths' packet processing, and Open MPI's own
# choice on one host: spin).
# Writes OUT/network.csv (setup,library,figure,size,pes,value,unit,rep),
# OUT/network.md (tables, ratios, targets) and OUT/network.png (the chart).
# Needs root (network namespaces; apt for what is missing). Not a test:
# timings are reported, never asserted.
set -u
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
QUICK=${QUICK:-0}
STREAM_FLOOR=${STREAM_FLOOR:-1}
if [ "$QUICK" = 1 ]; then RUNS=${RUNS:-1}; else RUNS=${RUNS:-3}; fi
SETUPS=${SETUPS:-"lo 2x1 2x2"}
LIBS=${LIBS:-"shoal-tls shoal-ofi openmpi"}
OUT=${OUT:-$root/docs/bench}
build=${BUILD:-$root/build-bench}
case $build in /*) ;; *) build=$root/$build ;; esac
OSHRUN=$build/tools/oshrun
PY=/usr/bin/python3

sh "$root/scripts/deps.sh" openmpi-bin libopenmpi-dev python3-matplotlib || exit 1
# Without network namespaces (not root, no ip netns) the one-host setup
# still runs; the report says what was not measured.
if [[ " $SETUPS " = *" 2x"* ]] && ! why=$(. "$root/tests/netns/hosts.sh" && hosts_require); then
    echo "bench_network.sh: no namespace hosts (${why#SKIP: }): the 2x1 and 2x2 setups are skipped"
    SETUPS=$(echo " $SETUPS " | sed 's/ 2x[12]//g; s/^ *//; s/ *$//')
    [ -n "$SETUPS" ] || exit 77
fi

# Iterations per run at 8 B (1 MiB runs do 1/16 of them, at least 5); each
# program reports the median of 3 runs. One launch per program: the sizes
# are 8 B and 1 MiB (--step 131072), the CSV keeps both, the report takes
# the ones it names.
if [ "$QUICK" = 1 ]; then it_p2p=50 it_rma=80 it_coll=30; else it_p2p=150 it_rma=240 it_coll=90; fi
sizes="--min-size 8 --max-size 1M --step 131072"
lock_prog=p2p
[ -f "$root/bench/bench_lock.c" ] && lock_prog=lock
lock_figs="--only lock_uncontended --only lock_contended --only lock_round_trips"
probes=(
    "rma rma --only put_lat --only get_lat --only put_bw --only get_bw $sizes --iters $it_rma"
    "coll coll --only barrier_all --only sum_reduce --only fcollect --only alltoall --only broadcast $sizes --iters $it_coll"
)
if [ $lock_prog = p2p ]; then
    probes+=("p2p p2p --only pingpong --only fetch_add $lock_figs --iters $it_p2p")
else
    probes+=("p2p p2p --only pingpong --only fetch_add --iters $it_p2p" "lock lock $lock_figs --iters $it_p2p")
fi

echo "== building Shoal (Release) in $build"
if [ ! -f "$build/CMakeCache.txt" ]; then
    nice cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DSHOAL_BUILD_TESTS=OFF \
        -DSHOAL_BUILD_EXAMPLES=OFF >/dev/null || exit 1
fi
nice cmake --build "$build" -j2 --target oshrun bench_rma bench_p2p bench_coll >"$build/bench-build.log" 2>&1 ||
    { tail -n 20 "$build/bench-build.log"; echo "bench_network.sh: build failed ($build/bench-build.log)" >&2; exit 1; }
progs="rma p2p coll"
cc -O2 -std=c11 -o "$build/tcp_floor" "$root/bench/tcp_floor.c" -lcrypto >>"$build/bench-build.log" 2>&1 ||
    { echo "bench_network.sh: bench/tcp_floor.c does not build ($build/bench-build.log)" >&2; exit 1; }
if [ "$STREAM_FLOOR" = 1 ]; then
    cc -O2 -std=c11 -o "$build/stream_floor" "$root/bench/stream_floor.c" -lcrypto >>"$build/bench-build.log" 2>&1 ||
        { echo "bench_network.sh: bench/stream_floor.c does not build ($build/bench-build.log)" >&2; exit 1; }
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/shoal-bench-network.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT # hosts.sh takes the trap over (and the removal) below
# Every launch's output stays in the build folder for a look afterwards.
logs=$build/bench-network-logs
rm -rf "$logs"
mkdir -p "$logs" "$work/peer" "$OUT"
echo "== building bench/ with Open MPI's /usr/bin/oshcc"
cflags="-O2 -std=c11 -D_GNU_SOURCE -pthread"
for p in $progs; do
    /usr/bin/oshcc $cflags -o "$work/peer/bench_$p" "$root/bench/bench_$p.c" "$root/bench/bench_util.c" ||
        { echo "bench_network.sh: /usr/bin/oshcc failed on bench_$p.c" >&2; exit 1; }
done
# bench/bench_lock.c, where present, measures the lock figures; where it
# does not build (here or with Open MPI), bench_p2p's figures of the same
# names stand in.
if [ $lock_prog = lock ]; then
    if ! nice cmake --build "$build" -j2 --target bench_lock >>"$build/bench-build.log" 2>&1 ||
        ! /usr/bin/oshcc $cflags -o "$work/peer/bench_lock" "$root/bench/bench_lock.c" "$root/bench/bench_util.c"; then
        echo "   bench_lock does not build: bench_p2p's lock figures instead"
        lock_prog=p2p
        probes=("${probes[@]:0:2}" "p2p p2p --only pingpong --only fetch_add $lock_figs --iters $it_p2p")
    fi
fi

# The tree's state before this run writes its own files (OUT may be in it).
# Changes to the reports themselves (docs/bench) are not changes to Shoal.
shoal_rev="$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$root" diff --quiet HEAD -- . ':(exclude)docs/bench' 2>/dev/null || echo ' (with uncommitted changes)')"
csv=$OUT/network.csv
echo "setup,library,figure,size,pes,value,unit,rep" >"$csv"
env_txt=$logs/environment # kept: the report can be made again from it and the CSV
{
    echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "cpus=$(nproc) ($(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'))"
    echo "shoal=$shoal_rev"
    echo "openmpi=$(dpkg-query -W -f='${Version}' openmpi-bin 2>/dev/null)"
    echo "ucx=$(dpkg-query -W -f='${Version}' libucx0 2>/dev/null)"
    echo "libfabric=$(dpkg-query -W -f='${Version}' libfabric1 2>/dev/null)"
    echo "ktls=$(if grep -qw tls /proc/modules 2>/dev/null; then echo 'kernel TLS module loaded'; else echo 'no kernel tls module: user-space OpenSSL'; fi)"
    echo "runs=$RUNS"
    echo "quick=$QUICK"
    echo "lock_probe=bench_$lock_prog"
    echo "ompi_yield=${OMPI_YIELD:-default: 1 between hosts, the Open MPI default on one host}"
    echo "load_before=$(cut -d' ' -f1-3 /proc/loadavg)"
} >"$env_txt"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
limit=300
[ "$QUICK" = 1 ] && limit=120
ompi_mca="--mca osc ^rdma --mca spml ucx --mca btl self,tcp"

# One host, the fabric forced.
run_lo() { # LIB PROGRAM ARGS
    local lib=$1 prog=$2
    shift 2
    case $lib in
    shoal-*)
        SHMEM_TRANSPORT=${lib#shoal-} FI_TCP_IFACE=lo FI_PROVIDER="tcp;ofi_rxm" \
            timeout $limit "$OSHRUN" -n 2 --timeout $((limit - 10)) "$build/bench/bench_$prog" "$@" ;;
    openmpi)
        timeout $limit /usr/bin/oshrun --oversubscribe $ompi_mca ${OMPI_YIELD:+--mca mpi_yield_when_idle $OMPI_YIELD} \
            --mca oob_tcp_if_include lo \
            --mca btl_tcp_if_include lo -x UCX_TLS=self,tcp -x UCX_NET_DEVICES=lo -np 2 \
            "$work/peer/bench_$prog" "$@" ;;
    esac
}

# Two namespace hosts (set up below when a 2xN setup is asked for).
run_hosts() { # PPN LIB PROGRAM ARGS
    local ppn=$1 lib=$2 prog=$3 r pids='' rc=0 enc=auto
    shift 3
    case $lib in
    shoal-*)
        [ $lib = shoal-ofi ] && enc=off
        for r in 1 0; do
            hosts_spawn "$r" env SHMEM_BOOTSTRAP_SECRET_FILE="$work/secret" SHMEM_ENCRYPT=$enc \
                timeout $limit "$OSHRUN" --nnodes 2 --node-rank "$r" --rendezvous "$(hosts_addr 0):$PORT" \
                -n "$ppn" --timeout $((limit - 10)) "$build/bench/bench_$prog" "$@" >"$work/node$r.out" 2>&1
            pids="$pids $HOSTS_PID"
        done
        for r in $pids; do wait "$r" || rc=$?; done
        cat "$work/node0.out"
        [ "$rc" = 0 ] || { echo "# node 1:"; tail -n 5 "$work/node1.out"; }
        return $rc ;;
    openmpi)
        # Its PEs yield when idle: spinning, they starve the kernel's
        # packet processing for the veths on these shared cores, and every
        # operation then takes whole 4 ms scheduler ticks (see the doc).
        local yield=${OMPI_YIELD:-1}
        hosts_run 0 timeout $limit /usr/bin/oshrun --mca plm_rsh_agent "$work/agent.sh" \
            --hostfile "$work/hostfile" --npernode "$ppn" $ompi_mca --mca mpi_yield_when_idle "$yield" \
            --mca oob_tcp_if_include "$(hosts_iface)" --mca btl_tcp_if_include "$(hosts_iface)" \
            -x UCX_TLS=self,tcp -x UCX_NET_DEVICES="$(hosts_iface)" "$work/peer/bench_$prog" "$@" ;;
    esac
}

if [[ " $SETUPS " = *" 2x"* ]]; then
    . "$root/tests/netns/hosts.sh"
    hosts_require
    hosts_on_exit "rm -rf '$work'"
    hosts_up 2
    PORT=29400
    "$OSHRUN" --make-secret "$work/secret" >/dev/null || exit 1
    # Open MPI starts its daemon on a "remote" host by running the rsh agent
    # with the host's name and a shell command line; this agent runs that
    # line inside the host's namespace (with its own host name, as
    # hosts_run does). The hostfile names the hosts by address.
    {
        echo '#!/bin/sh'
        echo '# rsh agent for Open MPI: HOST COMMAND... runs COMMAND in the namespace of HOST.'
        echo 'h=$1; shift'
        echo 'case $h in'
        for r in 0 1; do echo "$(hosts_addr $r)|shoal-h$r) ns=$(hosts_ns $r) n=$r ;;"; done
        echo '*) echo "agent.sh: unknown host $h" >&2; exit 1 ;;'
        echo 'esac'
        echo 'exec ip netns exec "$ns" unshare --uts sh -c '"'"'hostname "shoal-h$1" && exec sh -c "$0"'"'"' "$*" "$n"'
    } >"$work/agent.sh"
    chmod 755 "$work/agent.sh"
    printf '%s slots=2\n%s slots=2\n' "$(hosts_addr 0)" "$(hosts_addr 1)" >"$work/hostfile"
fi

# record SETUP LIB REP LOG: the figure lines of LOG into the CSV.
record() {
    if grep -qE '^[a-z_]+,[0-9]+,[0-9]+,' "$4"; then
        grep -E '^[a-z_]+,[0-9]+,[0-9]+,' "$4" | sed "s/^/$1,$2,/; s/\$/,$3/" >>"$csv"
    else
        echo "   no figures from $2 ($1): see $4: $(grep -v '^#' "$4" | tail -n 3 | tr '\n' ' ' | cut -c1-300)"
    fi
}

# run_probe SETUP LIB REP SPEC: one probe, one library, its output recorded.
run_probe() {
    local setup=$1 lib=$2 rep=$3 name prog
    set -- $4
    name=$1 prog=$2
    shift 2
    [ "$prog" = lock ] && prog=$lock_prog
    local log=$logs/$setup-$lib-$name-$rep t0=$SECONDS
    case $setup in
    lo) run_lo "$lib" "$prog" "$@" --runs 3 >"$log" 2>&1 ;;
    2x1) run_hosts 1 "$lib" "$prog" "$@" --runs 3 >"$log" 2>&1 ;;
    2x2) run_hosts 2 "$lib" "$prog" "$@" --runs 3 >"$log" 2>&1 ;;
    esac
    local rc=$?
    echo "# launch: $((SECONDS - t0)) s, exit $rc" >>"$log"
    [ $rc = 0 ] || echo "   $lib $name ($setup) exited $rc"
    record "$setup" "$lib" "$rep" "$log"
}

# run_floor SETUP REP: bench/tcp_floor.c's exchanges and (unless
# STREAM_FLOOR=0) bench/stream_floor.c's streams, recorded as "floor".
run_floor() {
    local log=$logs/$1-floor-$2 floors=tcp_floor
    [ "$STREAM_FLOOR" = 1 ] && floors="tcp_floor stream_floor"
    : >"$log"
    for floor in $floors; do
        local rc=0
        case $1 in
        lo) timeout 120 "$build/$floor" >>"$log" 2>&1 || rc=$? ;;
        *)
            # At 2x2 tcp_floor also runs a barrier of 2 x 2 processes.
            local members=
            [ "$1" = 2x2 ] && [ $floor = tcp_floor ] && members="--members 1"
            hosts_spawn 1 timeout 120 "$build/$floor" --listen $((PORT + 50)) $members >/dev/null 2>&1
            local listener=$HOSTS_PID
            hosts_run 0 timeout 120 "$build/$floor" --connect "$(hosts_addr 1)" $((PORT + 50)) $members >>"$log" 2>&1 || rc=$?
            wait "$listener" || rc=$? ;;
        esac
        [ $rc = 0 ] || echo "   $floor ($1) exited $rc"
    done
    provider_floor "$1" >>"$log" 2>&1 || echo "   fi_pingpong ($1) failed"
    record "$1" floor "$2" "$log"
}

# provider_floor SETUP: libfabric's own ping-pong over tcp;ofi_rxm (8-byte
# messages, both ends polling their completion queues), printed as
# "fi_pingpong,8,2,<us per one-way message>,us". Its server listens on
# every address of its namespace: on one host, a namespace of its own
# holding only a loopback; between hosts, namespace host 1.
provider_floor() {
    command -v fi_pingpong >/dev/null 2>&1 || return 0
    local args=(-p 'tcp;ofi_rxm' -e rdm -S 8 -I 20000) port=$((${PORT:-29400} + 60)) out
    case $1 in
    lo)
        out=$(FI_TCP_IFACE=lo timeout 60 unshare -n sh -c 'ip link set lo up &&
            { fi_pingpong "$@" -B '$port' >/dev/null 2>&1 & } && sleep 0.5 &&
            fi_pingpong "$@" -P '$port' 127.0.0.1' sh "${args[@]}") || return 1 ;;
    *)
        hosts_spawn 1 env FI_TCP_IFACE="$(hosts_iface)" timeout 60 fi_pingpong "${args[@]}" -B $port >/dev/null 2>&1
        local server=$HOSTS_PID
        sleep 0.5
        out=$(hosts_run 0 env FI_TCP_IFACE="$(hosts_iface)" timeout 60 fi_pingpong "${args[@]}" -P $port \
            "$(hosts_addr 1)") || { wait "$server"; return 1; }
        wait "$server" ;;
    esac
    # The last line: bytes #sent #ack total time MB/sec usec/xfer Mxfers/sec.
    echo "$out" | awk '$1 == 8 && NF >= 8 {print "fi_pingpong,8,2," $7 ",us"}'
}

# The libraries alternate: each probe starts with the next library in turn,
# so that a change of load hurts them alike.
start=$(date +%s)
turn=0
for ((rep = 1; rep <= RUNS; rep++)); do
    for setup in $SETUPS; do
        echo "== run $rep/$RUNS, $setup (load $(cut -d' ' -f1 /proc/loadavg), $(($(date +%s) - start)) s)"
        for spec in "${probes[@]}"; do
            set -- $LIBS
            n=$#
            order=
            for ((i = 0; i < n; i++)); do
                j=$(((turn + i) % n + 1))
                order="$order ${!j}"
            done
            turn=$((turn + 1))
            for lib in $order; do run_probe "$setup" "$lib" "$rep" "$spec"; done
        done
        run_floor "$setup" "$rep"
    done
done
echo "load_after=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$env_txt"
echo "seconds=$(($(date +%s) - start))" >>"$env_txt"
[[ " $SETUPS " = *" 2x"* ]] && hosts_down

"$PY" "$root/bench/network_report.py" "$csv" "$env_txt" "$OUT" || exit 1
echo "== wrote $csv, $OUT/network.md and $OUT/network.png ($(($(date +%s) - start)) s)"
