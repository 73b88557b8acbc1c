#!/bin/bash
# hardening_test.sh CASE OSHRUN LONG_JOB: the bootstrap between hosts under
# faults, on "hosts" made of network namespaces (hosts.sh). Exit 0 pass,
# 1 fail, 77 skip. Cases:
#
#   idle_clients   three TCP connections from a third host that send
#                  nothing, held open on node 0's port during start-up, do
#                  not delay a 2-host job (node 0 handshakes concurrently)
#   cut_link       host 1's veth set down mid-job: both oshruns end within
#                  the liveness limit (default 30 s) + 5 s, each naming the
#                  other node and "no heartbeat"
#   frozen_node    host 1's oshrun and PEs SIGSTOPped: node 0 ends within
#                  the limit + 5 s, naming node 1
#   bad_credentials  each mistake gives exactly one line on the joining
#                  node: a wrong secret ("refused this node's job secret"),
#                  TLS off on node 1 or on node 0 ("TLS mismatch"), node 0
#                  absent ("cannot reach node 0 ... within")
#
# NETNS_LIVENESS (seconds) sets SHMEM_BOOTSTRAP_LIVENESS_TIMEOUT for the
# cut_link and frozen_node cases; unset, the default (30 s) is in force.
case_name=${1:?usage: hardening_test.sh CASE OSHRUN LONG_JOB}
OSHRUN=${2:?}
prog=${3:?}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/hosts.sh"
hosts_require

. "$here/lib.sh"
need_multinode "$OSHRUN"

# Node bookkeeping (as in netns_test.sh): NODE_PID[r], NODE_RC[r] (empty
# while running), NODE_MS[r] (when it ended); output in $dir/nodeR.out/.err.
declare -a NODE_PID NODE_RC NODE_MS

# node_start R H PPN ARGS...: oshrun for node R of H (environment: JOB_ENV
# array, plus JOB_ENV_R words).
node_start() {
    local r=$1 h=$2 ppn=$3 var
    shift 3
    var="JOB_ENV_$r"
    # shellcheck disable=SC2086
    hosts_spawn "$r" env "${JOB_ENV[@]}" ${!var} "$OSHRUN" --nnodes "$h" --node-rank "$r" \
        --rendezvous "$(hosts_addr 0):$PORT" -n "$ppn" --timeout "${JOB_TIMEOUT:-100}" "$@" \
        >"$dir/node$r.out" 2>"$dir/node$r.err"
    NODE_PID[r]=$HOSTS_PID
    NODE_RC[r]=
    NODE_MS[r]=
}

# node_poll R: records whether node R ended; 0 when it has.
node_poll() {
    local r=$1 st
    [ -n "${NODE_RC[r]}" ] && return 0
    st=$(awk '{print $3}' "/proc/${NODE_PID[r]}/stat" 2>/dev/null)
    if [ -z "$st" ] || [ "$st" = Z ]; then
        wait "${NODE_PID[r]}"
        NODE_RC[r]=$?
        NODE_MS[r]=$(now_ms)
        return 0
    fi
    return 1
}

# nodes_wait SECONDS R...: waits until the nodes R... ended; 1 at the limit.
nodes_wait() {
    local end=$(($(now_ms) + $1 * 1000)) r left
    shift
    while :; do
        left=0
        for r in "$@"; do node_poll "$r" || left=1; done
        [ $left = 0 ] && return 0
        [ "$(now_ms)" -ge "$end" ] && return 1
        sleep 0.1
    done
}

show_node() {
    echo "--- node $1: exit ${NODE_RC[$1]}; stderr:"
    sed 's/^/    /' "$dir/node$1.err"
}

# wait_running: the job printed its first round (long_job).
wait_running() {
    local end=$(($(now_ms) + $1 * 1000))
    until grep -q 'long_job: running' "$dir/node0.out" 2>/dev/null; do
        [ "$(now_ms)" -ge "$end" ] && return 1
        node_poll 0 && return 1
        sleep 0.1
    done
    return 0
}

# one_line R REGEX: node R's stderr is exactly one line, matching REGEX
# (besides the warning every node with SHMEM_BOOTSTRAP_TLS=0 prints).
one_line() {
    local n
    grep -v '^oshrun: WARNING: SHMEM_BOOTSTRAP_TLS=0: ' "$dir/node$1.err" >"$dir/node$1.lines"
    n=$(grep -c '' "$dir/node$1.lines")
    [ "$n" = 1 ] || fail "node $1 printed $n lines, want 1: $(cat "$dir/node$1.lines")"
    grep -Eq "$2" "$dir/node$1.lines" || fail "node $1's line '$(cat "$dir/node$1.lines")' does not match '$2'"
}


liveness=${NETNS_LIVENESS:-30}
JOB_ENV=("SHMEM_BOOTSTRAP_SECRET_FILE=$dir/secret")
[ -n "${NETNS_LIVENESS:-}" ] && JOB_ENV+=("SHMEM_BOOTSTRAP_LIVENESS_TIMEOUT=$NETNS_LIVENESS")

case $case_name in
idle_clients)
    hosts_up 3
    make_secret "$OSHRUN" "$dir/secret" || exit 1
    JOB_TIMEOUT=60
    node_start 0 2 1 "$prog" 30
    sleep 0.3
    # Host 2 holds three connections that send nothing, for 40 s.
    hosts_spawn 2 python3 -c '
import socket, sys, time
s = [socket.create_connection((sys.argv[1], int(sys.argv[2]))) for _ in range(3)]
print("connected", flush=True)
time.sleep(40)' "$(hosts_addr 0)" "$PORT" >"$dir/idle.out" 2>&1
    idle=$HOSTS_PID
    for ((i = 0; i < 50; i++)); do grep -q connected "$dir/idle.out" && break; sleep 0.1; done
    grep -q connected "$dir/idle.out" || fail "the idle clients did not connect: $(cat "$dir/idle.out")"
    t0=$(now_ms)
    node_start 1 2 1 "$prog" 30
    if wait_running 30; then
        took=$(($(now_ms) - t0))
        note "the job ran $took ms after node 1 started, with 3 idle connections open"
        # One idle connection alone used to hold node 0 for 10 s.
        [ "$took" -lt 8000 ] || fail "the job took $took ms to start behind 3 idle connections, want < 8000"
    else
        fail "the job did not start within 30 s behind 3 idle connections"
    fi
    nodes_wait 40 0 1 || fail "the job did not end within 40 s"
    for r in 0 1; do
        [ "${NODE_RC[r]}" = 0 ] || { fail "node $r exited ${NODE_RC[r]}, want 0"; show_node $r; }
    done
    kill -KILL "$idle" 2>/dev/null
    wait "$idle" 2>/dev/null
    expect_no_leftovers
    ;;

cut_link | frozen_node)
    hosts_up 2
    make_secret "$OSHRUN" "$dir/secret" || exit 1
    JOB_TIMEOUT=$((liveness * 3 + 60))
    node_start 0 2 1 "$prog" 100000
    sleep 0.2
    node_start 1 2 1 "$prog" 100000
    wait_running 40 || { fail "the job did not start within 40 s"; show_node 0; show_node 1; exit 1; }
    sleep 1
    t0=$(now_ms)
    if [ "$case_name" = cut_link ]; then
        ip -n "$(hosts_ns 1)" link set "$(hosts_iface)" down || fail "cannot set host 1's link down"
        note "host 1's link is down; liveness limit ${liveness} s"
        want="0 1"
    else
        stopped=$(hosts_pids 1)
        # shellcheck disable=SC2086
        kill -STOP $stopped
        note "SIGSTOPped every process of host 1 (pids $(echo $stopped)); liveness limit ${liveness} s"
        want="0"
    fi
    # shellcheck disable=SC2086
    nodes_wait $((liveness + 15)) $want || fail "not every surviving node ended within $((liveness + 15)) s"
    for r in $want; do
        [ -n "${NODE_RC[r]}" ] || continue
        took=$((NODE_MS[r] - t0))
        other=$((1 - r))
        note "node $r exited ${NODE_RC[r]} $took ms after the fault: $(cat "$dir/node$r.err")"
        [ "${NODE_RC[r]}" != 0 ] || fail "node $r exited 0"
        [ "$took" -le $(((liveness + 5) * 1000)) ] || fail "node $r took $took ms, want at most $(((liveness + 5) * 1000))"
        [ "$took" -ge $(((liveness - 5) * 1000)) ] || note "(node $r ended before the limit: by another path?)"
        one_line "$r" "^oshrun: lost node $other \($(hosts_addr "$other" | sed 's/\./\\./g')(:[0-9]+)?\): no heartbeat for $liveness s; stopping the job$"
    done
    [ "$case_name" = frozen_node ] && kill -CONT $stopped 2>/dev/null
    expect_no_leftovers
    ;;

bad_credentials)
    hosts_up 2
    make_secret "$OSHRUN" "$dir/secret" || exit 1
    make_secret "$OSHRUN" "$dir/other" || exit 1
    JOB_TIMEOUT=15
    addr0=$(hosts_addr 0 | sed 's/\./\\./g')
    # try NAME R-ENV0 R-ENV1 REGEX: node 0 and node 1 with those settings;
    # node 1 must end by itself within 12 s with exactly one line.
    try() {
        local name=$1 regex=$4 t0
        JOB_ENV=()
        JOB_ENV_0=$2 JOB_ENV_1=$3
        node_start 0 2 1 "$prog" 10
        sleep 0.3
        t0=$(now_ms)
        node_start 1 2 1 "$prog" 10
        if nodes_wait 12 1; then
            note "$name: node 1 exited ${NODE_RC[1]} after $((NODE_MS[1] - t0)) ms: $(cat "$dir/node1.err")"
            [ "${NODE_RC[1]}" != 0 ] || fail "$name: node 1 exited 0"
            one_line 1 "$regex"
        else
            fail "$name: node 1 still running after 12 s"
        fi
        grep -q 'long_job: running' "$dir/node0.out" "$dir/node1.out" && fail "$name: the job ran"
        kill -TERM "${NODE_PID[0]}" "${NODE_PID[1]}" 2>/dev/null
        nodes_wait 5 0 1 || fail "$name: a node did not stop within 5 s of SIGTERM"
        [ -s "$dir/node0.err" ] && sed "s/^/    $name: node 0: /" "$dir/node0.err"
        expect_no_leftovers
    }
    try "wrong secret" "SHMEM_BOOTSTRAP_SECRET_FILE=$dir/secret" "SHMEM_BOOTSTRAP_SECRET_FILE=$dir/other" \
        "^oshrun: node 0 at $addr0:$PORT refused this node's job secret \(TLS: .+\)"
    grep -q "refused a bootstrap connection from $(hosts_addr 1)" "$dir/node0.err" ||
        fail "wrong secret: node 0 logged no refusal"
    try "TLS off on node 1" "SHMEM_BOOTSTRAP_SECRET_FILE=$dir/secret" "SHMEM_BOOTSTRAP_TLS=0" \
        "^oshrun: node 0 at $addr0:$PORT refused this node: TLS mismatch: TLS is on on node 0 but off on this node"
    grep -q "TLS mismatch" "$dir/node0.err" || fail "TLS off on node 1: node 0 did not log the mismatch"
    try "TLS off on node 0" "SHMEM_BOOTSTRAP_TLS=0" "SHMEM_BOOTSTRAP_SECRET_FILE=$dir/secret" \
        "^oshrun: TLS mismatch with node 0 at $addr0:$PORT: it answered in plaintext"
    # Node 0 absent: node 1 gives up at its --timeout, saying so.
    JOB_ENV=("SHMEM_BOOTSTRAP_SECRET_FILE=$dir/secret")
    JOB_ENV_1=
    t0=$(now_ms)
    JOB_TIMEOUT=3 node_start 1 2 1 "$prog" 10
    nodes_wait 10 1 || fail "node 0 absent: node 1 still running after 10 s"
    note "node 0 absent: node 1 exited ${NODE_RC[1]} after $((NODE_MS[1] - t0)) ms: $(cat "$dir/node1.err")"
    one_line 1 "^oshrun: cannot reach node 0 at $addr0:$PORT within 3 s: "
    expect_no_leftovers
    ;;

*)
    echo "hardening_test.sh: unknown case $case_name" >&2
    exit 2
    ;;
esac

finish_case
