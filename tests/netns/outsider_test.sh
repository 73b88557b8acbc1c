#!/bin/bash
# outsider_test.sh CASE ARGS...: what a process on a neighbouring host with
# no secret can do to a Shoal job whose data goes over libfabric (the ofi
# transport; SHMEM_TRANSPORT=ofi, SHMEM_ENCRYPT=off). Exit 0 pass, 1 fail,
# 77 skip. Cases:
#
#   outsider OSHRUN TARGET OUTSIDER   a job on 2 hosts x 2 PEs (TARGET) keeps
#       a pattern in its heap and globals; in a third host, OUTSIDER is given
#       every TCP port the PEs listen on (ss inside their hosts) and tries
#       fi_write and fi_read with keys 0..64 and 64 random keys at offsets
#       0, 8, 4096 and 1 MiB. No write and no read may complete, and every PE
#       must find its memory intact and its peers still reachable.
#   loopback OSHRUN PROG              a one-host job with the fabric forced
#       (SHMEM_TRANSPORT=ofi, no interface named) in a host that also has a
#       network address: every listening socket of its PEs is on 127.0.0.1.
case_name=${1:?usage: outsider_test.sh CASE ARGS...}
shift
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/hosts.sh"
hosts_require

. "$here/lib.sh"

# listeners R: "ADDR:PORT" of every TCP socket listening in host R that
# belongs to a process running PROG ($prog_path), one a line.
listeners() {
    local r=$1 p pids=" "
    for p in $(hosts_pids "$r"); do
        [ "$(readlink "/proc/$p/exe" 2>/dev/null)" = "$prog_path" ] && pids="$pids$p "
    done
    ip netns exec "$(hosts_ns "$r")" ss -Htlnp 2>/dev/null | while read -r _ _ _ local _ users; do
        for p in $pids; do
            case $users in *"pid=$p,"*) echo "$local"; break ;; esac
        done
    done
}

# Data over libfabric between the hosts: the fabric forced (ofi), not TLS.
FABRIC_ENV=(SHMEM_TRANSPORT=ofi SHMEM_ENCRYPT=off)

case $case_name in
outsider)
    OSHRUN=${1:?outsider OSHRUN TARGET OUTSIDER}
    TARGET=${2:?}
    OUTSIDER=${3:?}
    need_multinode "$OSHRUN"
    prog_path=$(readlink -f "$TARGET")
    hosts_up 3 # hosts 0 and 1 run the job; host 2 is the outsider
    "$OSHRUN" --make-secret "$dir/secret" >"$dir/secret.out" 2>&1 || { fail "oshrun --make-secret: $(cat "$dir/secret.out")"; exit 1; }
    pids=()
    for r in 0 1; do
        # No interface named: the PEs must find theirs from the route to
        # the rendezvous address (oshrun's SHOAL_RENDEZVOUS).
        hosts_spawn "$r" env -u FI_TCP_IFACE -u FI_SOCKETS_IFACE "${FABRIC_ENV[@]}" \
            SHMEM_BOOTSTRAP_SECRET_FILE="$dir/secret" SHMEM_INFO=1 \
            "$OSHRUN" --nnodes 2 --node-rank "$r" --rendezvous "$(hosts_addr 0):$PORT" -n 2 --timeout 150 \
            "$TARGET" "$dir/ready" "$dir/done" 120 >"$dir/node$r.out" 2>"$dir/node$r.err"
        pids[r]=$HOSTS_PID
        [ "$r" = 0 ] && sleep 0.2
    done
    for ((i = 0; i < 600; i++)); do
        [ -e "$dir/ready" ] && break
        sleep 0.1
    done
    [ -e "$dir/ready" ] || fail "the job did not become ready in 60 s: $(tail -n5 "$dir"/node*.err)"
    targets=()
    for r in 0 1; do
        mapfile -t got < <(listeners "$r")
        note "host $r: PEs listen on ${got[*]:-nothing}"
        for a in "${got[@]}"; do
            case $a in
            "$(hosts_addr "$r")":*) ;;
            *) fail "a PE on host $r listens on $a, not only on its job interface $(hosts_addr "$r")" ;;
            esac
            targets+=("$a")
        done
    done
    # Two PEs per host, each listening: the outsider must have them all.
    [ "${#targets[@]}" -ge 4 ] || fail "found ${#targets[@]} listening ports of the PEs, want at least 4"
    if [ "${#targets[@]}" -gt 0 ]; then
        hosts_run 2 timeout 600 "$OUTSIDER" "${targets[@]}" >"$dir/outsider.out" 2>&1
        orc=$?
        sed 's/^/    /' "$dir/outsider.out"
        [ "$orc" = 0 ] || fail "the outsider exited $orc (1: it wrote or read a PE's memory, 2: it could not start)"
        grep -q ' 0 writes and 0 reads completed, 0 bytes read' "$dir/outsider.out" ||
            fail "the outsider's summary does not say that nothing completed"
    fi
    touch "$dir/done"
    for r in 0 1; do
        wait "${pids[r]}"
        rc=$?
        echo "--- node $r: exit $rc"
        sed 's/^/    /' "$dir/node$r.out" | grep -v '^    SHMEM_\|^      '
        sed 's/^/    err: /' "$dir/node$r.err" | tail -n 20
        [ "$rc" = 0 ] || fail "node $r exited $rc"
    done
    n_rule=$(cat "$dir"/node*.out | grep -c 'listens on ofi .* on shoal0 (route to the rendezvous')
    [ "$n_rule" = 4 ] || fail "$n_rule of 4 PEs say (SHMEM_INFO) they listen on shoal0 by the route to the rendezvous"
    n_ok=$(cat "$dir"/node*.out | grep -c 'heap, globals and static data intact')
    [ "$n_ok" = 4 ] || fail "$n_ok of 4 PEs report their memory intact"
    ;;

loopback)
    OSHRUN=${1:?loopback OSHRUN PROG}
    PROG=${2:?}
    prog_path=$(readlink -f "$PROG")
    hosts_up 1
    # No interface named: the one-host rule alone must choose loopback,
    # although the host has another address (shoal0).
    hosts_spawn 0 env -u FI_TCP_IFACE -u FI_SOCKETS_IFACE "${FABRIC_ENV[@]}" SHMEM_INFO=1 \
        "$OSHRUN" -n 2 --timeout 60 "$PROG" 400 >"$dir/job.out" 2>"$dir/job.err"
    job=$HOSTS_PID
    got=()
    for ((i = 0; i < 100; i++)); do
        sleep 0.1
        mapfile -t got < <(listeners 0)
        [ "${#got[@]}" -ge 2 ] && break
    done
    note "PEs listen on: ${got[*]:-nothing}"
    [ "${#got[@]}" -ge 2 ] || fail "found ${#got[@]} listening sockets of the 2 PEs: $(tail -n5 "$dir/job.err")"
    for a in "${got[@]}"; do
        case $a in 127.0.0.1:*) ;; *) fail "a PE listens on $a, not on loopback" ;; esac
    done
    wait "$job"
    rc=$?
    [ "$rc" = 0 ] || fail "the job exited $rc: $(tail -n5 "$dir/job.err")"
    grep -q 'PE 0 listens on ofi .*127\.0\.0\.1:[0-9]* on lo' "$dir/job.out" ||
        fail "SHMEM_INFO does not show PE 0 listening on 127.0.0.1: $(grep listens "$dir/job.out")"
    ;;

*)
    echo "outsider_test.sh: unknown case '$case_name'" >&2
    exit 1
    ;;
esac

finish_case
