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
#   pmi_route PROG                    jobs of 2 hosts x 2 PEs under MPICH's
#       mpiexec (PMI: no rendezvous address), no interface named, hosts with
#       no default route. Each PE finds its interface from the route to the
#       other host's name (bind rule (d)): over tls and over the fabric,
#       every listening socket of the PEs is on its host's address and
#       SHMEM_INFO names the rule. Where the name does not resolve, the PEs
#       fall back to a default route with one warning line, and with none
#       the job ends with one line naming the name and SHMEM_NETWORK_IFACE.
case_name=${1:?usage: outsider_test.sh CASE ARGS...}
shift
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/hosts.sh"
hosts_require

. "$here/lib.sh"

# listeners R [own]: "ADDR:PORT" of every TCP socket listening in host R
# that a process running PROG ($prog_path) holds, one a line. With own,
# only those no other program holds too: MPICH's mpiexec leaves its control
# port (on every interface) open in the processes it starts, PEs included,
# and that socket is the launcher's.
listeners() {
    local r=$1 own=${2:-} p pids=" " users held others
    for p in $(hosts_pids "$r"); do
        [ "$(readlink "/proc/$p/exe" 2>/dev/null)" = "$prog_path" ] && pids="$pids$p "
    done
    ip netns exec "$(hosts_ns "$r")" ss -Htlnp 2>/dev/null | while read -r _ _ _ local _ users; do
        held=0 others=0
        for p in $(echo "$users" | grep -o 'pid=[0-9]*' | cut -d= -f2); do
            case $pids in *" $p "*) held=1 ;; *) others=1 ;; esac
        done
        [ $held = 1 ] && { [ -z "$own" ] || [ $others = 0 ]; } && echo "$local"
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

pmi_route)
    PROG=${1:?pmi_route PROG}
    command -v mpiexec.mpich >/dev/null 2>&1 || { echo "SKIP: no mpiexec.mpich (MPICH)"; exit 77; }
    prog_path=$(readlink -f "$PROG")
    hosts_up 2
    # Host names resolve only where a host binds this file over /etc/hosts
    # (in its own mount namespace: ip netns exec makes one).
    printf '127.0.0.1 localhost\n%s shoal-h0\n%s shoal-h1\n' "$(hosts_addr 0)" "$(hosts_addr 1)" >"$dir/hosts"
    # Hydra's ssh launcher runs "nsexec [OPTIONS] HOST COMMAND" for host 1
    # (HOST: its name or address); host 0's proxy is mpiexec's own child.
    cat >"$dir/nsexec" <<EOS
#!/bin/sh
while [ "\${1#-}" != "\$1" ]; do shift; done
case \$1 in shoal-h1 | $(hosts_addr 1)) ;; *) echo "nsexec: unknown host \$1" >&2; exit 1 ;; esac
shift
exec ip netns exec $(hosts_ns 1) unshare --uts sh -c \
    'hostname shoal-h1 && { [ ! -e $dir/resolve ] || mount --bind $dir/hosts /etc/hosts; } && exec sh -c "\$*"' sh "\$@"
EOS
    chmod +x "$dir/nsexec"
    # mpiexec_job NAME HOSTS ENV...: PROG on 2 x 2 PEs from host 0, no
    # interface named; output in $dir/NAME.out and .err, status in rc.
    mpiexec_job() {
        local name=$1 hosts=$2
        shift 2
        hosts_spawn 0 sh -c '{ [ ! -e "$0/resolve" ] || mount --bind "$0/hosts" /etc/hosts; } && exec "$@"' "$dir" \
            env -u FI_TCP_IFACE -u FI_SOCKETS_IFACE -u SHMEM_NETWORK_IFACE SHMEM_INFO=1 "$@" \
            timeout -k 5 100 mpiexec.mpich -launcher ssh -launcher-exec "$dir/nsexec" -hosts "$hosts" -ppn 2 -n 4 \
            "$PROG" 150 >"$dir/$name.out" 2>"$dir/$name.err"
        job=$HOSTS_PID
    }
    touch "$dir/resolve"
    for transport in tls ofi; do
        env=()
        [ $transport = ofi ] && env=(SHMEM_ENCRYPT=off)
        mpiexec_job $transport shoal-h0,shoal-h1 "${env[@]}"
        for r in 0 1; do
            got=()
            for ((i = 0; i < 200; i++)); do
                mapfile -t got < <(listeners "$r" own)
                [ "${#got[@]}" -ge 2 ] && break
                sleep 0.05
            done
            note "$transport, host $r: PEs listen on ${got[*]:-nothing}"
            [ "${#got[@]}" -ge 2 ] || fail "$transport: found ${#got[@]} listening sockets of host $r's 2 PEs"
            for a in "${got[@]}"; do
                case $a in "$(hosts_addr "$r")":*) ;; *) fail "$transport: a PE on host $r listens on $a" ;; esac
            done
        done
        wait "$job"
        rc=$?
        [ "$rc" = 0 ] || fail "$transport: the job exited $rc: $(tail -n5 "$dir/$transport.err")"
        grep -q 'long_job: done' "$dir/$transport.out" || fail "$transport: the job did not finish its rounds"
        # Each PE routes toward the lowest-ranked PE of the other host.
        for r in 0 1; do
            o=$((1 - r))
            n=$(grep -c "listens on $transport .*$(hosts_addr "$r"):[0-9]* on shoal0 (route to the node shoal-h$o ($(hosts_addr "$o")))" "$dir/$transport.out")
            [ "$n" = 2 ] || fail "$transport: $n of host $r's 2 PEs say they listen on shoal0 by the route to shoal-h$o: $(grep listens "$dir/$transport.out")"
        done
    done
    # Names that do not resolve: hydra is given addresses; the PEs' host
    # names (shoal-hN) are unknown. First with a default route on each host.
    rm "$dir/resolve"
    for r in 0 1; do ip -n "$(hosts_ns "$r")" route add default dev "$(hosts_iface)"; done
    mpiexec_job fallback "$(hosts_addr 0),$(hosts_addr 1)"
    wait "$job"
    rc=$?
    [ "$rc" = 0 ] || fail "default route: the job exited $rc: $(tail -n5 "$dir/fallback.err")"
    n=$(grep -c "data endpoints listen on 10\.[0-9.]* (shoal0), the default route's interface (cannot resolve node 'shoal-h[01]'" "$dir/fallback.err")
    [ "$n" -ge 1 ] || fail "default route: no warning naming the fallback: $(head -n3 "$dir/fallback.err")"
    n=$(grep -c "listens on tls .* on shoal0 (the default route's interface)" "$dir/fallback.out")
    [ "$n" = 4 ] || fail "default route: $n of 4 PEs say they listen on the default route's interface"
    for r in 0 1; do ip -n "$(hosts_ns "$r")" route del default; done
    # No default route either: one line, and the job ends.
    mpiexec_job noroute "$(hosts_addr 0),$(hosts_addr 1)"
    start=$(now_ms)
    wait "$job"
    rc=$?
    took=$(($(now_ms) - start))
    [ "$rc" != 0 ] || fail "no route: the job exited 0"
    [ "$took" -lt 60000 ] || fail "no route: the job took $took ms to end"
    grep -q "cannot resolve node 'shoal-h[01]' to an IPv4 address.*; no default route on this host either: set SHMEM_NETWORK_IFACE" \
        "$dir/noroute.err" || fail "no route: no line naming the host and SHMEM_NETWORK_IFACE: $(head -n5 "$dir/noroute.err")"
    note "no route: ended with status $rc in $took ms: $(grep -m1 'SHMEM_NETWORK_IFACE' "$dir/noroute.err")"
    ;;

*)
    echo "outsider_test.sh: unknown case '$case_name'" >&2
    exit 1
    ;;
esac

finish_case
