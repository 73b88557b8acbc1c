#!/bin/bash
# netns_test.sh CASE ARGS...: Shoal jobs spanning "hosts" made of network
# namespaces (hosts.sh). Exit 0 pass, 1 fail, 77 skip (not root, no ip
# netns, no multi-node oshrun). Cases:
#
#   capture_selftest                 the capture check on stand-ins: an
#                                    openssl TLS 1.3 PSK session must be
#                                    clean, a plaintext one must not
#   api HxP OSHRUN PROG [ARGS...]    PROG on H hosts x P PEs; every node exits 0
#   bootstrap_capture OSHRUN LONG_JOB [x509]  the bootstrap port captured
#                                    with tcpdump is TLS 1.3 with nothing in
#                                    the clear; with SHMEM_BOOTSTRAP_TLS=0 the
#                                    same check finds plaintext. With x509:
#                                    certificates instead of the secret, and
#                                    their names and bytes must not show
#   data_capture OSHRUN MARKER_JOB   every TCP connection of a 2x2 job
#                                    moving a marker is TLS 1.3 with the
#                                    marker nowhere; SHMEM_ENCRYPT=off is caught
#   encrypt_required OSHRUN LONG_JOB SHMEM_ENCRYPT=required refuses the fabric
#                                    forced across hosts, and alone encrypts
#   wrong_secret OSHRUN LONG_JOB     node 1 with another secret is refused
#   kill_host OSHRUN LONG_JOB        every PE of host 1 SIGKILLed: both
#                                    oshruns end non-zero within seconds
#
# Every job's processes live in the namespaces, so "no process left" is
# "ip netns pids" empty; hosts.sh kills whatever remains at exit.
case_name=${1:?usage: netns_test.sh CASE ARGS...}
shift
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/hosts.sh"
hosts_require

. "$here/lib.sh"
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3

# Node bookkeeping: NODE_PID[r], NODE_RC[r] (empty while running),
# NODE_MS[r] (when it ended); output in $dir/nodeR.out / .err.
declare -a NODE_PID NODE_RC NODE_MS
JOB_H=0

# job_start H PPN ENVFILE... -- PROG ARGS: oshrun on every host, node 0
# first. Environment for every node: the current one plus JOB_ENV (array of
# NAME=VALUE); JOB_ENV_<r> (string, words) per node on top.
job_start() {
    local h=$1 ppn=$2 r var
    shift 2
    JOB_H=$h
    for ((r = 0; r < h; r++)); do
        var="JOB_ENV_$r"
        # shellcheck disable=SC2086
        hosts_spawn "$r" env "${JOB_ENV[@]}" ${!var} "$OSHRUN" --nnodes "$h" --node-rank "$r" \
            --rendezvous "$(hosts_addr 0):$PORT" -n "$ppn" --timeout "${JOB_TIMEOUT:-100}" "$@" \
            >"$dir/node$r.out" 2>"$dir/node$r.err"
        NODE_PID[r]=$HOSTS_PID
        NODE_RC[r]=
        NODE_MS[r]=
        [ "$r" = 0 ] && sleep 0.2 # let node 0 listen first (the others retry anyway)
    done
}

# job_poll: records the nodes that have ended. Returns 0 when all have.
job_poll() {
    local r all=0 st
    for ((r = 0; r < JOB_H; r++)); do
        [ -n "${NODE_RC[r]}" ] && continue
        st=$(awk '{print $3}' "/proc/${NODE_PID[r]}/stat" 2>/dev/null)
        if [ -z "$st" ] || [ "$st" = Z ]; then
            wait "${NODE_PID[r]}"
            NODE_RC[r]=$?
            NODE_MS[r]=$(now_ms)
        else
            all=1
        fi
    done
    return $all
}

# job_wait SECONDS: waits for every node; a node still running after
# SECONDS fails the test and is stopped (SIGTERM, then SIGKILL after 3 s).
job_wait() {
    local end=$(($(now_ms) + $1 * 1000)) r
    until job_poll; do
        if [ "$(now_ms)" -ge "$end" ]; then
            [ -n "${JOB_PROG:-}" ] && dump_stacks "$JOB_PROG"
            for ((r = 0; r < JOB_H; r++)); do
                [ -z "${NODE_RC[r]}" ] || continue
                fail "node $r still running after $1 s; stopping it (stderr: $(tail -n5 "$dir/node$r.err"))"
                kill -TERM "${NODE_PID[r]}" 2>/dev/null
            done
            end=$(($(now_ms) + 3000))
            until job_poll || [ "$(now_ms)" -ge "$end" ]; do sleep 0.1; done
            for ((r = 0; r < JOB_H; r++)); do
                [ -z "${NODE_RC[r]}" ] && kill -KILL "${NODE_PID[r]}" 2>/dev/null
            done
            job_poll
            return 1
        fi
        sleep 0.1
    done
    return 0
}

# dump_stacks PROG: the stacks of every PE (a process running PROG) in the
# hosts, with gdb when it is there: what a hung job was waiting in.
dump_stacks() {
    local r p exe
    command -v gdb >/dev/null 2>&1 || { echo "(no gdb: no stacks of the hung PEs)"; return 0; }
    for ((r = 0; r < HOSTS_N; r++)); do
        for p in $(hosts_pids "$r"); do
            exe=$(readlink "/proc/$p/exe" 2>/dev/null) || continue
            [ "$exe" = "$(readlink -f "$1")" ] || continue
            echo "--- stacks of pid $p on host $r ($(tr '\0' ' ' <"/proc/$p/cmdline" | cut -c1-80)):"
            timeout 30 gdb -p "$p" -batch -nx -ex 'set pagination off' -ex 'thread apply all bt 15' 2>/dev/null |
                grep -E '^(#|Thread)' | sed 's/^/    /' | cut -c1-200
        done
    done
}

show_node() { # r: its output, indented
    echo "--- node $1: exit ${NODE_RC[$1]}; stdout:"
    sed 's/^/    /' "$dir/node$1.out"
    echo "--- node $1 stderr:"
    sed 's/^/    /' "$dir/node$1.err"
}



# pcap_check FILE WANT_RC NEEDLE-ARGS...: runs the checker on the bootstrap
# port (every TCP connection when CHECK_PORT=all), output shown.
pcap_check() {
    local file=$1 want=$2 rc
    shift 2
    "$py" "$here/pcap_check.py" "$file" "${CHECK_PORT:-$PORT}" "$@" >"$file.check" 2>&1
    rc=$?
    sed 's/^/    /' "$file.check"
    [ "$rc" = "$want" ] || fail "pcap_check on $(basename "$file") exited $rc, want $want"
}

case $case_name in
capture_selftest)
    command -v tcpdump >/dev/null 2>&1 || { echo "SKIP: no tcpdump"; exit 77; }
    command -v openssl >/dev/null 2>&1 || { echo "SKIP: no openssl"; exit 77; }
    hosts_up 2
    head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$dir/secret"
    key=$(cat "$dir/secret")
    tag="shoal-netns-tag-$$-$RANDOM"
    msg="prog /opt/shoal/netns_long_job $tag $(hosts_addr 0) $(hosts_addr 1) SHOL $key"
    needles=(--secret-file "$dir/secret" --forbid netns_long_job --forbid "$tag"
             --forbid-ip "$(hosts_addr 0)" --forbid-ip "$(hosts_addr 1)")
    # TLS 1.3 with a pre-shared key: the message rides encrypted.
    capture_start 0 "$dir/tls.pcap" || exit 1
    # -rev: the server sends each line back reversed (and reads no stdin).
    hosts_spawn 0 timeout 20 openssl s_server -quiet -rev -accept "$PORT" -nocert -psk "$key" \
        -psk_identity shoal -tls1_3 -naccept 1 >"$dir/srv.out" 2>&1 </dev/null
    srv=$HOSTS_PID
    sleep 0.5
    { echo "$msg"; sleep 1; } | hosts_run 1 timeout 20 openssl s_client -quiet -no_ign_eof -connect "$(hosts_addr 0):$PORT" \
        -psk "$key" -psk_identity shoal -tls1_3 >"$dir/cli.out" 2>&1
    kill -TERM "$srv" 2>/dev/null # s_server -rev lingers after its one connection
    wait "$srv"
    grep -q "$(echo "$tag" | rev)" "$dir/cli.out" ||
        fail "no TLS 1.3 session between the openssl stand-ins: $(cat "$dir/srv.out" "$dir/cli.out")"
    grep -q 'Protocol version: TLSv1.3' "$dir/srv.out" || fail "the openssl server did not report TLS 1.3: $(cat "$dir/srv.out")"
    capture_stop "$dir/tls.pcap"
    note "TLS 1.3 stand-in: the check must be clean"
    pcap_check "$dir/tls.pcap" 0 "${needles[@]}"
    # The same message in plaintext: the check must find it.
    capture_start 0 "$dir/plain.pcap" || exit 1
    hosts_spawn 0 timeout 20 "$py" -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1]))); s.listen(1)
c, _ = s.accept(); d = c.recv(4096); c.sendall(b"ok " + d); c.close()' "$PORT" >"$dir/psrv.out" 2>&1
    srv=$HOSTS_PID
    sleep 0.5
    hosts_run 1 timeout 20 "$py" -c '
import socket, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2]))); s.sendall(sys.argv[3].encode()); s.recv(4096)' \
        "$(hosts_addr 0)" "$PORT" "$msg"
    wait "$srv"
    capture_stop "$dir/plain.pcap"
    note "plaintext stand-in: the check must find the message"
    pcap_check "$dir/plain.pcap" 1 "${needles[@]}"
    for what in "secret file raw" "netns_long_job" "$tag" "address $(hosts_addr 0) as text" "not TLS records"; do
        grep -q -- "$what" "$dir/plain.pcap.check" || fail "the check did not report '$what' in the plaintext capture"
    done
    expect_no_leftovers
    ;;

api)
    layout=${1:?api HxP OSHRUN PROG}
    OSHRUN=${2:?}
    shift 2
    need_multinode "$OSHRUN"
    h=${layout%x*} ppn=${layout#*x}
    hosts_up "$h"
    make_secret "$OSHRUN" "$dir/secret" || exit 1
    JOB_ENV=("SHMEM_BOOTSTRAP_SECRET_FILE=$dir/secret")
    # At the deadline the PEs' stacks are dumped (gdb) before the job is
    # stopped; oshrun's own --timeout is later, as a safety net.
    deadline=${NETNS_JOB_DEADLINE:-100}
    JOB_TIMEOUT=$((deadline + 40))
    JOB_PROG=$1
    t0=$(now_ms)
    job_start "$h" "$ppn" "$@"
    job_wait "$deadline"
    note "$(basename "$1") on $h hosts x $ppn PEs: $(($(now_ms) - t0)) ms"
    for ((r = 0; r < h; r++)); do
        if [ "${NODE_RC[r]}" != 0 ]; then
            fail "node $r exited ${NODE_RC[r]}, want 0"
            show_node "$r"
        fi
    done
    expect_no_leftovers
    ;;

bootstrap_capture)
    OSHRUN=${1:?bootstrap_capture OSHRUN LONG_JOB}
    prog=${2:?}
    need_multinode "$OSHRUN"
    command -v tcpdump >/dev/null 2>&1 || { echo "SKIP: no tcpdump"; exit 77; }
    hosts_up 2
    make_secret "$OSHRUN" "$dir/secret" || exit 1
    tag="shoal-netns-tag-$$-$RANDOM"
    needles=(--secret-file "$dir/secret" --forbid "$prog" --forbid "$(basename "$prog")" --forbid "$tag"
             --forbid-ip "$(hosts_addr 0)" --forbid-ip "$(hosts_addr 1)" --forbid shoal-h0 --forbid shoal-h1
             --forbid "$dir")
    # Strings of the inter-host protocol that would show in the clear.
    # Frames start with the magic "SHNL" (oshrun between hosts, tools/oshrun/
    # net.h) or "SHOL" (PE and oshrun, src/boot/wire.h); a FAULT carries text.
    for s in ${NETNS_WIRE_STRINGS:-SHNL SHOL}; do needles+=(--forbid "$s"); done
    modes="tls plain"
    if [ "${3:-}" = x509 ]; then
        # X.509 instead of the secret: a CA and one certificate per node. TLS
        # 1.3 encrypts the certificates, so their names and bytes must not
        # show either.
        command -v openssl >/dev/null 2>&1 || { echo "SKIP: no openssl to make certificates"; exit 77; }
        modes=x509
        ( cd "$dir" &&
          openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
              -subj "/CN=shoal-netns-ca-$tag" -keyout ca.key -out ca.pem &&
          for r in 0 1; do
              openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=shoal-netns-cn-$tag-$r" \
                  -keyout node$r.key -out node$r.csr &&
              openssl x509 -req -in node$r.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1 -out node$r.pem &&
              chmod 600 node$r.key || exit 1
          done ) >"$dir/openssl.log" 2>&1 || { fail "cannot make certificates: $(cat "$dir/openssl.log")"; exit 1; }
        needles+=(--forbid "shoal-netns-ca-$tag" --forbid "shoal-netns-cn-$tag")
        for f in ca node0 node1; do
            needles+=(--forbid-hex "$(openssl x509 -in "$dir/$f.pem" -outform DER | od -An -tx1 | tr -d ' \n')")
            needles+=(--forbid-hex "$(openssl pkey -in "$dir/$f.key" -outform DER | od -An -tx1 | tr -d ' \n')")
        done
    fi
    for mode in $modes; do
        if [ $mode = tls ]; then
            JOB_ENV=("SHMEM_BOOTSTRAP_SECRET_FILE=$dir/secret")
        elif [ $mode = x509 ]; then
            JOB_ENV=("SHMEM_BOOTSTRAP_TLS_CA=$dir/ca.pem")
            JOB_ENV_0="SHMEM_BOOTSTRAP_TLS_CERT=$dir/node0.pem SHMEM_BOOTSTRAP_TLS_KEY=$dir/node0.key"
            JOB_ENV_1="SHMEM_BOOTSTRAP_TLS_CERT=$dir/node1.pem SHMEM_BOOTSTRAP_TLS_KEY=$dir/node1.key"
        else
            JOB_ENV=("SHMEM_BOOTSTRAP_SECRET_FILE=$dir/secret" "SHMEM_BOOTSTRAP_TLS=0")
        fi
        capture_start 0 "$dir/$mode.pcap" || exit 1
        JOB_TIMEOUT=60
        job_start 2 1 "$prog" 20 "$tag"
        job_wait 70
        capture_stop "$dir/$mode.pcap"
        for r in 0 1; do
            if [ "${NODE_RC[r]}" != 0 ]; then
                fail "$mode: node $r exited ${NODE_RC[r]}, want 0"
                show_node "$r"
            fi
        done
        expect_no_leftovers
        if [ $mode = tls ] || [ $mode = x509 ]; then
            note "TLS on ($mode): the capture must be TLS 1.3 with nothing in the clear"
            pcap_check "$dir/$mode.pcap" 0 "${needles[@]}"
        else
            grep -qi 'warn' "$dir/node0.err" "$dir/node1.err" ||
                fail "SHMEM_BOOTSTRAP_TLS=0 printed no warning (stderr: $(cat "$dir/node0.err"))"
            note "SHMEM_BOOTSTRAP_TLS=0: the same check must find plaintext (proves it can fail)"
            pcap_check "$dir/plain.pcap" 1 "${needles[@]}"
        fi
    done
    ;;

data_capture)
    # Every TCP connection of a 2 hosts x 2 PEs job that moves a marker with
    # puts, gets and atomics: with the default policy the data go over the
    # encrypted transport and the capture is TLS 1.3 only, marker nowhere;
    # with SHMEM_ENCRYPT=off (libfabric tcp) the same check must find it.
    OSHRUN=${1:?data_capture OSHRUN MARKER_JOB}
    prog=${2:?}
    need_multinode "$OSHRUN"
    command -v tcpdump >/dev/null 2>&1 || { echo "SKIP: no tcpdump"; exit 77; }
    hosts_up 2
    make_secret "$OSHRUN" "$dir/secret" || exit 1
    tag="mk$$x$RANDOM"
    needles=(--secret-file "$dir/secret" --forbid "shoal-marker:$tag:")
    CHECK_PORT=all
    for mode in auto off; do
        JOB_ENV=("SHMEM_BOOTSTRAP_SECRET_FILE=$dir/secret" "SHMEM_INFO=1" "SHMEM_ENCRYPT=$mode")
        capture_start 0 "$dir/$mode.pcap" tcp || exit 1
        JOB_TIMEOUT=80
        job_start 2 2 "$prog" "$tag" 3
        job_wait 90
        capture_stop "$dir/$mode.pcap"
        for r in 0 1; do
            if [ "${NODE_RC[r]}" != 0 ]; then
                fail "$mode: node $r exited ${NODE_RC[r]}, want 0"
                show_node "$r"
            fi
        done
        grep -q "marker_job: 3 rounds on 4 PEs" "$dir/node0.out" || fail "$mode: the job did not finish its rounds"
        expect_no_leftovers
        listens=$(grep -h "listens on" "$dir/node0.out" "$dir/node1.out")
        echo "$listens" | sed 's/^/    /'
        if [ $mode = auto ]; then
            [ "$(echo "$listens" | grep -c 'listens on tls ')" = 4 ] ||
                fail "auto: not every PE used the encrypted transport"
            echo "$listens" | grep -q "listens on tls $(hosts_addr 0):" ||
                fail "auto: host 0's PEs do not listen on the job's address $(hosts_addr 0)"
            note "auto: every TCP connection must be TLS 1.3, the marker nowhere"
            pcap_check "$dir/$mode.pcap" 0 "${needles[@]}"
        else
            echo "$listens" | grep -q 'listens on tls ' && fail "off: a PE used the encrypted transport"
            note "SHMEM_ENCRYPT=off: the same check must find the marker (proves it can fail)"
            pcap_check "$dir/$mode.pcap" 1 "${needles[@]}"
            grep -q "FOUND: .*text 'shoal-marker:$tag:' in the clear" "$dir/$mode.pcap.check" ||
                fail "off: the marker itself was not found in the clear"
        fi
    done
    ;;

encrypt_required)
    # SHMEM_ENCRYPT=required with the fabric forced across hosts must refuse
    # to start with one line saying why, on every node.
    OSHRUN=${1:?encrypt_required OSHRUN LONG_JOB}
    prog=${2:?}
    need_multinode "$OSHRUN"
    hosts_up 2
    make_secret "$OSHRUN" "$dir/secret" || exit 1
    JOB_ENV=("SHMEM_BOOTSTRAP_SECRET_FILE=$dir/secret" "SHMEM_ENCRYPT=required" "SHMEM_TRANSPORT=ofi")
    JOB_TIMEOUT=30
    job_start 2 1 "$prog" 5
    job_wait 40
    for r in 0 1; do
        [ "${NODE_RC[r]}" != 0 ] || fail "node $r exited 0 with SHMEM_ENCRYPT=required and SHMEM_TRANSPORT=ofi"
    done
    grep -h "SHMEM_ENCRYPT=required, but SHMEM_TRANSPORT=ofi carries data between the job's 2 hosts unencrypted" \
        "$dir/node0.err" "$dir/node1.err" >/dev/null || { fail "no line naming the refusal"; show_node 0; }
    expect_no_leftovers
    # And with required alone the job runs, encrypted.
    JOB_ENV=("SHMEM_BOOTSTRAP_SECRET_FILE=$dir/secret" "SHMEM_ENCRYPT=required" "SHMEM_INFO=1")
    job_start 2 1 "$prog" 5
    job_wait 60
    for r in 0 1; do [ "${NODE_RC[r]}" = 0 ] || { fail "required: node $r exited ${NODE_RC[r]}"; show_node "$r"; }; done
    grep -q "listens on tls " "$dir/node0.out" || fail "required: node 0's PE did not use the encrypted transport"
    expect_no_leftovers
    ;;

wrong_secret)
    OSHRUN=${1:?wrong_secret OSHRUN LONG_JOB}
    prog=${2:?}
    need_multinode "$OSHRUN"
    hosts_up 2
    make_secret "$OSHRUN" "$dir/secret0" || exit 1
    make_secret "$OSHRUN" "$dir/secret1" || exit 1
    cmp -s "$dir/secret0" "$dir/secret1" && fail "two oshrun --make-secret files are identical"
    JOB_ENV=()
    JOB_ENV_0="SHMEM_BOOTSTRAP_SECRET_FILE=$dir/secret0"
    JOB_ENV_1="SHMEM_BOOTSTRAP_SECRET_FILE=$dir/secret1"
    JOB_TIMEOUT=30
    t0=$(now_ms)
    job_start 2 1 "$prog" 100
    # Node 1 must give up by itself; node 0 must log the refusal.
    end=$(($(now_ms) + 20000))
    until job_poll || [ -n "${NODE_RC[1]}" ] || [ "$(now_ms)" -ge "$end" ]; do sleep 0.1; done
    for ((i = 0; i < 20; i++)); do
        grep -q 'oshrun: refused a bootstrap connection from' "$dir/node0.err" && break
        sleep 0.1
    done
    if [ -z "${NODE_RC[1]}" ]; then
        fail "node 1 (wrong secret) still running after 20 s"
    else
        note "node 1 exited ${NODE_RC[1]} after $((NODE_MS[1] - t0)) ms"
        [ "${NODE_RC[1]}" != 0 ] || fail "node 1 (wrong secret) exited 0"
    fi
    grep -q "oshrun: refused a bootstrap connection from $(hosts_addr 1)" "$dir/node0.err" ||
        fail "node 0's log has no 'oshrun: refused a bootstrap connection from $(hosts_addr 1)' line"
    grep -q 'long_job: running' "$dir/node0.out" "$dir/node1.out" && fail "the job ran with a wrong secret"
    # Node 0 may time out by itself; otherwise SIGTERM must stop it at once.
    if [ -z "${NODE_RC[0]}" ]; then
        kill -TERM "${NODE_PID[0]}"
        t1=$(now_ms)
        end=$((t1 + 5000))
        until job_poll || [ "$(now_ms)" -ge "$end" ]; do sleep 0.1; done
        if [ -z "${NODE_RC[0]}" ]; then
            fail "node 0 still running 5 s after SIGTERM"
        else
            note "node 0 stopped by SIGTERM: exit ${NODE_RC[0]} after $((NODE_MS[0] - t1)) ms"
        fi
    else
        note "node 0 ended by itself: exit ${NODE_RC[0]}"
    fi
    job_wait 5
    [ "${NODE_RC[0]}" != 0 ] || fail "node 0 exited 0 though node 1 never joined"
    show_node 0
    show_node 1
    expect_no_leftovers
    ;;

kill_host)
    OSHRUN=${1:?kill_host OSHRUN LONG_JOB}
    prog=${2:?}
    need_multinode "$OSHRUN"
    hosts_up 2
    make_secret "$OSHRUN" "$dir/secret" || exit 1
    JOB_ENV=("SHMEM_BOOTSTRAP_SECRET_FILE=$dir/secret")
    JOB_TIMEOUT=90
    job_start 2 2 "$prog" 6000
    end=$(($(now_ms) + 40000))
    until grep -q 'long_job: running' "$dir/node0.out" 2>/dev/null || [ "$(now_ms)" -ge "$end" ] || job_poll; do
        sleep 0.1
    done
    if ! grep -q 'long_job: running' "$dir/node0.out"; then
        fail "the job did not start within 40 s"
        job_wait 1
        show_node 0
        show_node 1
        exit 1
    fi
    comm=$(basename "$prog" | cut -c1-15)
    pes=
    for p in $(hosts_pids 1); do
        [ "$(cat "/proc/$p/comm" 2>/dev/null)" = "$comm" ] && pes="$pes $p"
    done
    [ "$(echo $pes | wc -w)" = 2 ] || fail "host 1 runs $(echo $pes | wc -w) PEs ($pes), want 2"
    t0=$(now_ms)
    # shellcheck disable=SC2086
    kill -KILL $pes
    note "SIGKILLed the PEs of host 1 (pids$pes)"
    job_wait 10
    for r in 0 1; do
        [ -n "${NODE_RC[r]}" ] || continue
        took=$((NODE_MS[r] - t0))
        note "node $r exited ${NODE_RC[r]} after $took ms"
        [ "${NODE_RC[r]}" != 0 ] || fail "node $r exited 0 after host 1's PEs were killed"
        [ "$took" -le "${NETNS_KILL_WITHIN_MS:-5000}" ] || fail "node $r took $took ms to end, want at most ${NETNS_KILL_WITHIN_MS:-5000}"
    done
    grep -Eq 'PE [0-9]+.*(SIGKILL|killed)' "$dir/node1.err" ||
        fail "node 1's stderr does not name the killed PE"
    grep -Eq 'PE [0-9]+|node 1|host' "$dir/node0.err" ||
        fail "node 0's stderr names neither the PE nor the node"
    show_node 0
    show_node 1
    expect_no_leftovers
    ;;

*)
    echo "netns_test.sh: unknown case $case_name" >&2
    exit 2
    ;;
esac

finish_case
