#!/bin/bash
# scale_test.sh CASE OSHRUN SCALE_JOB SCALE_BOOT: the bootstrap's allgather tree across
# namespace hosts (hosts.sh). Exit 0 pass, 1 fail, 77 skip. Cases:
#
#   gather_8x1   8 hosts x 1 PE, default transport (tls): every PE puts to,
#                gets from and fcollects with every other PE, so each holds
#                every other's addresses and keys (scale_job checks every
#                value); and the gathers went through the tree: host 1
#                (node 1, the parent of nodes 5 to 7 with fan-out 4) holds
#                an oshrun-to-oshrun TCP connection with each of hosts 5, 6
#                and 7, which a star through node 0 would not have. Every
#                TCP connection of host 1 but the star's (the tree links and
#                the PEs' streams) is TLS 1.3 with no host name, secret or
#                key in the clear (pcap_check.py); the same check on a job
#                with SHMEM_BOOTSTRAP_TLS=0 must find the host names the
#                tree carries (proves the check sees the tree links).
#   gather_8x1_ofi  the same with SHMEM_TRANSPORT=ofi SHMEM_ENCRYPT=off
#                (no capture: libfabric tcp is plaintext by design)
#   tree_refusal 6 hosts in the job and a 7th outside: host 5 cannot reach
#                host 1 at first, so node 1 waits at its tree listener for
#                node 5; from the 7th host an oshrun with another secret, then
#                one with TLS off, knock there and are refused (one line on
#                each side); then node 5 reaches node 1 and the job passes.
#   stuck_8x1    8 hosts x 1, the bootstrap alone (scale_boot): PE 6 (node
#                6, a child of node 1) finishes while the others wait in a
#                barrier; node 1, holding the barrier, sees its child done
#                and ends the job: every oshrun exits 1 with the line naming
#                node 6 and a waiting node, within seconds.
case_name=${1:?usage: scale_test.sh CASE OSHRUN SCALE_JOB SCALE_BOOT}
OSHRUN=${2:?}
PROG=${3:?}
BOOT_PROG=${4:?}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/hosts.sh"
hosts_require
. "$here/lib.sh"
. "$here/scale_lib.sh"
need_multinode "$OSHRUN"

py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3
have_tcpdump=0
command -v tcpdump >/dev/null 2>&1 && have_tcpdump=1


# Node 1's established peers, seen from inside host 1 while the job holds.
watch_tree() {
    local i
    for ((i = 0; i < 100; i++)); do
        ip netns exec "$(hosts_ns 1)" ss -Htnp state established 2>/dev/null >>"$dir/host1.ss"
        sleep 0.1
    done
}

# gather_job NAME: scale_job on 8 hosts x 1 with checks; host 1 captured
# (all TCP but the star's port) into $dir/NAME.pcap when tcpdump is there.
gather_job() {
    local name=$1 watcher r k
    rm -f "$dir/host1.ss"
    [ $have_tcpdump = 1 ] && { capture_start 1 "$dir/$name.pcap" "tcp and not port $PORT" || return 1; }
    watch_tree &
    watcher=$!
    scale_job 8 1 60 "$PROG" 4000
    kill "$watcher" 2>/dev/null
    wait "$watcher" 2>/dev/null
    [ $have_tcpdump = 1 ] && capture_stop "$dir/$name.pcap"
    for ((r = 0; r < 8; r++)); do
        [ "${SCALE_RC[r]}" = 0 ] || fail "$name: node $r exited with ${SCALE_RC[r]}: $(tail -n5 "$dir/scale$r.err")"
    done
    [ "$(scale_field pes)" = 8 ] || fail "$name: PE 0 did not report 8 PEs: $(cat "$dir/scale0.out")"
    [ "$(scale_field bad)" = 0 ] || fail "$name: wrong values seen: $(cat "$dir/scale0.out") $(cat "$dir"/scale*.err)"
    for k in 5 6 7; do
        # Between the oshruns (the PEs' own streams to host k do not count).
        grep -Eq "[[:space:]]$(hosts_addr "$k" | sed 's/\./\\./g'):[0-9]+[[:space:]].*\"oshrun\"" "$dir/host1.ss" ||
            fail "$name: oshrun on host 1 never had a connection with host $k (its tree child): $(sort -u "$dir/host1.ss" | head -n 20)"
    done
    note "$name: 8 hosts x 1 PE: every PE saw every other PE's data; shmem_init done on all" \
        "$(( ($(scale_field init_end_max_ns) - SCALE_T0_NS) / 1000000 )) ms after the oshruns started"
}

# tree_in_capture CHECK_OUTPUT WHAT: the checker saw WHAT on a connection
# from each of hosts 5 to 7 (node 1's tree children) to host 1.
tree_in_capture() {
    local k c p
    p=$(hosts_addr 1 | sed 's/\./\\./g')
    for k in 5 6 7; do
        c=$(hosts_addr "$k" | sed 's/\./\\./g')
        grep -Eq "$c:[0-9]+->$p:[0-9]+: .*$2" "$1" || fail "$(basename "$1"): no tree link from host $k to host 1 showing '$2'"
    done
}

# pcap_check FILE WANT_RC: every TCP connection in FILE, secret and host names forbidden.
pcap_check() {
    local rc needles=(--secret-file "$dir/secret") r
    for ((r = 0; r < 8; r++)); do needles+=(--forbid "shoal-h$r"); done
    "$py" "$here/pcap_check.py" "$1" all "${needles[@]}" >"$1.check" 2>&1
    rc=$?
    sed 's/^/    /' "$1.check" | head -n 20
    [ "$rc" = "$2" ] || fail "pcap_check on $(basename "$1") exited $rc, want $2"
}

case $case_name in
gather_8x1)
    hosts_up 8
    make_secret "$OSHRUN" "$dir/secret"
    SCALE_ENV=(SHMEM_BOOTSTRAP_SECRET_FILE="$dir/secret")
    gather_job tls
    if [ $have_tcpdump = 1 ]; then
        note "host 1's tree links and streams: TLS 1.3 only, no host name, secret or key in the clear"
        pcap_check "$dir/tls.pcap" 0
        tree_in_capture "$dir/tls.pcap.check" "pre-shared key identity b'shoal-bootstrap-psk-v1'"
        SCALE_ENV=(SHMEM_BOOTSTRAP_SECRET_FILE="$dir/secret" SHMEM_BOOTSTRAP_TLS=0)
        gather_job plain
        note "SHMEM_BOOTSTRAP_TLS=0: the same check must find the tree's plaintext (proves it can fail)"
        pcap_check "$dir/plain.pcap" 1
        grep -q "FOUND: .*shoal-h" "$dir/plain.pcap.check" || fail "the plaintext tree links did not show the host names"
        tree_in_capture "$dir/plain.pcap.check" "shoal-h[0-9]. in the clear"
    else
        note "no tcpdump: the capture part is left out"
    fi
    ;;
gather_8x1_ofi)
    hosts_up 8
    make_secret "$OSHRUN" "$dir/secret"
    SCALE_ENV=(SHMEM_BOOTSTRAP_SECRET_FILE="$dir/secret" SHMEM_TRANSPORT=ofi SHMEM_ENCRYPT=off)
    have_tcpdump=0
    gather_job ofi
    ;;
tree_refusal)
    # Host 5 cannot reach host 1 at first (a prohibit route), so node 1
    # waits at its tree listener for node 5 after the rendezvous; host 6,
    # outside the job, knocks there meanwhile.
    hosts_up 7
    make_secret "$OSHRUN" "$dir/secret"
    make_secret "$OSHRUN" "$dir/other"
    export SHMEM_BOOTSTRAP_SECRET_FILE="$dir/secret"
    ip -n "$(hosts_ns 5)" route add prohibit "$(hosts_addr 1)/32" || fail "cannot cut host 5 from host 1"
    for ((r = 0; r < 6; r++)); do
        hosts_spawn "$r" "$OSHRUN" --nnodes 6 --node-rank "$r" --rendezvous "$(hosts_addr 0):$PORT" -n 1 --timeout 60 \
            "$PROG" >"$dir/scale$r.out" 2>"$dir/scale$r.err"
        SCALE_PID[r]=$HOSTS_PID
        [ $r = 0 ] && sleep 0.2
    done
    # Node 5 joined node 0 (so every node did, and node 1 is accepting).
    for ((i = 0; i < 200; i++)); do
        ip netns exec "$(hosts_ns 5)" ss -Htn state established 2>/dev/null |
            grep -q "$(hosts_addr 0 | sed 's/\./\\./g'):$PORT[[:space:]]*\$" && break
        sleep 0.1
    done
    tport=$(ip netns exec "$(hosts_ns 1)" ss -Htlnp 2>/dev/null | grep '"oshrun"' |
            sed -n "s/.*$(hosts_addr 1 | sed 's/\./\\./g'):\([0-9]*\) .*/\1/p" | head -n1)
    if [ -z "$tport" ]; then
        fail "node 1 has no tree listener"
    else
        at="$(hosts_addr 1):$tport"
        SHMEM_BOOTSTRAP_SECRET_FILE="$dir/other" hosts_run 6 timeout 20 "$OSHRUN" --nnodes 6 --node-rank 5 \
            --rendezvous "$at" -n 1 --timeout 5 "$PROG" >"$dir/bad.out" 2>"$dir/bad.err"
        [ $? != 0 ] || fail "an oshrun with another secret was taken by node 1's tree listener"
        grep -Eq "^oshrun: node 0 at $at refused this node's job secret" "$dir/bad.err" ||
            fail "the oshrun with another secret: $(cat "$dir/bad.err")"
        SHMEM_BOOTSTRAP_TLS=0 hosts_run 6 timeout 20 "$OSHRUN" --nnodes 6 --node-rank 5 \
            --rendezvous "$at" -n 1 --timeout 5 "$PROG" >"$dir/plain.out" 2>"$dir/plain.err"
        [ $? != 0 ] || fail "an oshrun with TLS off was taken by node 1's tree listener"
        grep -q "refused this node: TLS mismatch: TLS is on on node 1 but off on this node" "$dir/plain.err" ||
            fail "the oshrun with TLS off: $(cat "$dir/plain.err")"
    fi
    ip -n "$(hosts_ns 5)" route del prohibit "$(hosts_addr 1)/32" # node 5 reaches its parent now
    for ((r = 0; r < 6; r++)); do
        wait "${SCALE_PID[r]}"
        rc=$?
        if [ $r != 1 ] && [ -s "$dir/scale$r.err" ]; then fail "node $r stderr: $(cat "$dir/scale$r.err")"; fi
        [ $rc = 0 ] || fail "node $r exited with $rc: $(tail -n5 "$dir/scale$r.err")"
    done
    h6=$(hosts_addr 6 | sed 's/\./\\./g')
    grep -Eq "^oshrun: refused a bootstrap connection from $h6:[0-9]+: TLS handshake failed \(.+\): it holds another job secret$" "$dir/scale1.err" ||
        fail "node 1 did not log the wrong secret: $(cat "$dir/scale1.err")"
    grep -Eq "^oshrun: refused a bootstrap connection from $h6:[0-9]+: TLS mismatch" "$dir/scale1.err" ||
        fail "node 1 did not log the TLS mismatch: $(cat "$dir/scale1.err")"
    [ "$(grep -c '' "$dir/scale1.err")" = 2 ] || fail "node 1 printed more than the two refusals: $(cat "$dir/scale1.err")"
    [ "$(scale_field bad)" = 0 ] && [ "$(scale_field pes)" = 6 ] || fail "the job's check: $(cat "$dir/scale0.out")"
    ;;
stuck_8x1)
    hosts_up 8
    make_secret "$OSHRUN" "$dir/secret"
    SCALE_ENV=(SHMEM_BOOTSTRAP_SECRET_FILE="$dir/secret")
    start=$(now_ms)
    scale_job 8 1 40 "$BOOT_PROG" early 6
    took=$(( $(now_ms) - start ))
    # Node 1 detects it; the waiting node it names is the first whose block
    # reached it (itself, or a child such as node 5): any but node 6.
    line="^oshrun: the PEs of node [0-57] are waiting in barrier, but those of node 6 have finished; the job cannot continue"
    for ((r = 0; r < 8; r++)); do
        [ "${SCALE_RC[r]}" = 1 ] || fail "node $r exited with ${SCALE_RC[r]}, want 1: $(cat "$dir/scale$r.err")"
        grep -Eq "$line" "$dir/scale$r.err" || fail "node $r did not name the stuck barrier: $(cat "$dir/scale$r.err")"
    done
    [ $took -lt 20000 ] || fail "the stuck job took $took ms to end (its --timeout is 40 s)"
    note "a finished child of node 1 while the others wait: every node ended in $took ms naming node 6"
    ;;
*) echo "scale_test.sh: unknown case $case_name" >&2; exit 2 ;;
esac
expect_no_leftovers
finish_case
