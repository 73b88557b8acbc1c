#!/bin/sh
# hardening_test.sh CASE OSHRUN BOOT_PE: oshrun's small holes, closed. Exit
# 0 pass, 1 fail, 77 skip. Cases:
#
#   secret_file     the job secret file: too short, too long, a FIFO (must
#                   not block), a symlink, readable by others, another
#                   owner: one line each, naming the file and the limit
#   key_file        SHMEM_BOOTSTRAP_TLS_KEY gets the secret's checks (mode,
#                   symlink); a FIFO as the CA is refused at once
#   fd_limit        a low "ulimit -n" is named with its numbers, for oshrun
#                   itself and for a PE's descriptor exchange, instead of
#                   "poll: Invalid argument" or "malformed message"
#   orphan          oshrun SIGKILLed: the processes its PEs forked (which
#                   ignore SIGTERM/SIGHUP) end too (the guardian)
#   idle_clients    three connections that send nothing (or 1-2 bytes),
#                   held open on node 0's port, do not delay a 2-node job
#                   (127.0.0.1), nor make node 0 spin
#   refusal_flood   40 junk connections: node 0 logs at most 5 refusals and
#                   one line counting the rest; the real node still joins
#   silent_node0    a joiner facing a node 0 that accepts and never answers
#                   retries its handshake until --timeout, then says so; when
#                   the real node 0 comes up meanwhile, it joins
#   liveness        a SIGSTOPped node is lost after
#                   SHMEM_BOOTSTRAP_LIVENESS_TIMEOUT; a bad value is refused
case_name=${1:?usage: hardening_test.sh CASE OSHRUN BOOT_PE}
OSHRUN=${2:?}
PE=${3:?}
tag="shoal-hardening-test-$$-$case_name"
dir=$(mktemp -d "${TMPDIR:-/tmp}/shoal-hardening.XXXXXX") || exit 1
. "$(dirname "$0")/lib.sh"
trap 'cleanup' EXIT
trap 'exit 1' INT TERM HUP



# bad WANT-REGEX [ENV=VALUE...]: a node-1 oshrun with those settings must
# exit 1 within 5 s (timeout(1) guards a blocking open) with exactly one
# line on stderr, matching the regex. It never reaches the network: the
# settings are read first.
bad() {
    want=$1
    shift
    t0=$(now_ms)
    env "$@" timeout 5 "$OSHRUN" --nnodes 2 --node-rank 1 --rendezvous 127.0.0.1:9 -n 1 --timeout 3 true \
        >"$dir/out" 2>"$dir/err"
    rc=$?
    took=$(($(now_ms) - t0))
    [ "$rc" = 1 ] || fail "$*: exit $rc after $took ms, want 1 (124: it blocked) (stderr: $(cat "$dir/err"))"
    [ "$(grep -c '' "$dir/err")" = 1 ] || fail "$*: stderr has $(grep -c '' "$dir/err") lines, want 1: $(cat "$dir/err")"
    grep -Eq "$want" "$dir/err" || fail "$*: '$(cat "$dir/err")' does not match '$want'"
    [ "$took" -lt 2000 ] || fail "$*: took $took ms, want < 2000"
}

# Multi-node helpers (as in multinode_test.sh), on 127.0.0.1.
node() { # R NNODES NPES ARGS...
    r=$1 h=$2 n=$3
    shift 3
    "$OSHRUN" --nnodes "$h" --node-rank "$r" --rendezvous "127.0.0.1:$port" -n "$n" --timeout 40 "$@" \
        >"$dir/out.$r" 2>"$dir/err.$r" &
    eval "pid_$r=$!"
    pids="$pids $!"
}
finish() {
    eval "p=\$pid_$1"
    wait "$p"
    eval "rc_$1=$?"
}

command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3" >&2; exit 77; }
"$OSHRUN" --make-secret "$dir/secret" >/dev/null || { fail "--make-secret"; exit 1; }
export SHMEM_BOOTSTRAP_SECRET_FILE="$dir/secret"
unset SHMEM_BOOTSTRAP_TLS SHMEM_BOOTSTRAP_TLS_CA SHMEM_BOOTSTRAP_TLS_CERT SHMEM_BOOTSTRAP_TLS_KEY
unset SHMEM_BOOTSTRAP_LIVENESS_TIMEOUT

case $case_name in
secret_file)
    S=SHMEM_BOOTSTRAP_SECRET_FILE
    printf '0123456789abcdef0123456789abcd\n' >"$dir/short"   # 30 bytes + newline
    chmod 600 "$dir/short"
    bad "^oshrun: $S=$dir/short holds 30 bytes, fewer than the 32 a secret needs; make one with 'oshrun --make-secret FILE'$" \
        "$S=$dir/short"
    head -c 70000 /dev/zero | tr '\0' a >"$dir/long"
    chmod 600 "$dir/long"
    bad "^oshrun: $S=$dir/long is 70000 bytes, more than the 65536 bytes allowed: refusing it$" "$S=$dir/long"
    mkfifo -m 600 "$dir/fifo"
    bad "^oshrun: $S=$dir/fifo is a FIFO \(named pipe\), not a regular file: refusing it$" "$S=$dir/fifo"
    ln -s "$dir/secret" "$dir/link"
    bad "^oshrun: $S=$dir/link is a symbolic link: refusing it \(name the file itself" "$S=$dir/link"
    cp -p "$dir/secret" "$dir/open"
    chmod 640 "$dir/open"
    bad "^oshrun: $S=$dir/open has mode 0640, so other users may read it: run 'chmod 600 $dir/open'$" "$S=$dir/open"
    bad "^oshrun: $S=/dev/zero is a character device, not a regular file: refusing it$" "$S=/dev/zero"
    if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
        cp -p "$dir/secret" "$dir/theirs"
        chown nobody "$dir/theirs"
        bad "^oshrun: $S=$dir/theirs is owned by uid [0-9]+, not by you \(uid 0\): refusing it$" "$S=$dir/theirs"
    fi
    # The good one passes these checks (and fails later, at the rendezvous).
    env "$S=$dir/secret" "$OSHRUN" --nnodes 2 --node-rank 1 --rendezvous 127.0.0.1:9 -n 1 --timeout 1 true 2>"$dir/err"
    grep -q 'cannot reach node 0' "$dir/err" || fail "a good secret file: $(cat "$dir/err")"
    ;;
key_file)
    command -v openssl >/dev/null 2>&1 || { echo "SKIP: no openssl tool"; exit 77; }
    (
        cd "$dir" || exit 1
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=shoal test ca" \
            -keyout ca.key -out ca.pem &&
            openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=node1" -keyout node1.key \
                -out node1.csr &&
            openssl x509 -req -in node1.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -out node1.pem
    ) >/dev/null 2>&1 || { fail "cannot make test certificates"; exit 1; }
    X="SHMEM_BOOTSTRAP_SECRET_FILE= SHMEM_BOOTSTRAP_TLS_CA=$dir/ca.pem SHMEM_BOOTSTRAP_TLS_CERT=$dir/node1.pem"
    K=SHMEM_BOOTSTRAP_TLS_KEY
    chmod 644 "$dir/node1.key"
    # shellcheck disable=SC2086
    bad "^oshrun: $K=$dir/node1.key has mode 0644, so other users may read it: run 'chmod 600 $dir/node1.key'$" \
        $X "$K=$dir/node1.key"
    chmod 600 "$dir/node1.key"
    ln -s "$dir/node1.key" "$dir/key-link"
    # shellcheck disable=SC2086
    bad "^oshrun: $K=$dir/key-link is a symbolic link: refusing it" $X "$K=$dir/key-link"
    mkfifo -m 600 "$dir/key-fifo"
    # shellcheck disable=SC2086
    bad "^oshrun: $K=$dir/key-fifo is a FIFO \(named pipe\), not a regular file: refusing it$" $X "$K=$dir/key-fifo"
    mkfifo "$dir/ca-fifo"
    bad "^oshrun: SHMEM_BOOTSTRAP_TLS_CA=$dir/ca-fifo is a FIFO \(named pipe\), not a regular file: refusing it$" \
        SHMEM_BOOTSTRAP_SECRET_FILE= "SHMEM_BOOTSTRAP_TLS_CA=$dir/ca-fifo" "SHMEM_BOOTSTRAP_TLS_CERT=$dir/node1.pem" \
        "$K=$dir/node1.key"
    # The good key passes (and the node fails later, at the rendezvous).
    # shellcheck disable=SC2086
    env $X "$K=$dir/node1.key" "$OSHRUN" --nnodes 2 --node-rank 1 --rendezvous 127.0.0.1:9 -n 1 --timeout 1 true \
        2>"$dir/err"
    grep -q 'cannot reach node 0' "$dir/err" || fail "a good key file: $(cat "$dir/err")"
    ;;
fd_limit)
    # oshrun itself: 8 PEs need more than 32 descriptors.
    (ulimit -n 32 && exec timeout 10 "$OSHRUN" -n 8 "$PE" hello "$tag") >"$dir/out" 2>"$dir/err"
    rc=$?
    [ "$rc" = 1 ] || fail "ulimit -n 32, 8 PEs: exit $rc, want 1: $(cat "$dir/err")"
    [ "$(grep -c '' "$dir/err")" = 1 ] || fail "ulimit -n 32: stderr: $(cat "$dir/err")"
    grep -Eq "^oshrun: the open-file limit \(ulimit -n\) is 32, hard limit 32: too low for 8 PEs on this host, which need at least [0-9]+ descriptors" "$dir/err" ||
        fail "ulimit -n 32: $(cat "$dir/err")"
    # A descriptor exchange that does not fit: oshrun's side (60) or the PEs' (100).
    for lim in 60 100; do
        (ulimit -n $lim && exec timeout 10 "$OSHRUN" -n 4 "$PE" fds 20 "$tag") >"$dir/out" 2>"$dir/err"
        rc=$?
        [ "$rc" = 1 ] || fail "ulimit -n $lim, 4 PEs x 20 descriptors: exit $rc, want 1: $(cat "$dir/err")"
        grep -Eq "^oshrun: .*open-file limit \(ulimit -n\) is $lim" "$dir/err" || fail "ulimit -n $lim: $(cat "$dir/err")"
        grep -Eq 'malformed|Invalid argument' "$dir/err" && fail "ulimit -n $lim: $(cat "$dir/err")"
        expect_no_leftovers
    done
    # With room, the same exchange works.
    (ulimit -n 400 && exec timeout 10 "$OSHRUN" -n 4 "$PE" fds 20 "$tag") >"$dir/out" 2>"$dir/err" ||
        fail "ulimit -n 400: $(cat "$dir/err")"
    ;;
orphan)
    "$OSHRUN" -n 2 "$PE" orphan "$tag" >"$dir/out" 2>"$dir/err" &
    pid=$!
    pids="$pids $pid"
    i=0
    until grep -q orphaned "$dir/out" || [ $i -ge 100 ]; do sleep 0.1; i=$((i + 1)); done
    sleep 0.2
    n=0
    for p in $(tagged_pids); do
        case "$(tr '\0' ' ' </proc/$p/cmdline 2>/dev/null)" in *grandchild*) n=$((n + 1)) ;; esac
    done
    [ "$n" = 2 ] || fail "$n grandchildren running, want 2"
    kill -KILL $pid
    wait $pid 2>/dev/null
    expect_no_leftovers
    ;;
idle_clients)
    pick_port
    node 0 2 1 "$PE" gather 2 1 "$tag"
    sleep 0.3
    # One sends nothing, one the first byte of a TLS record, one half a frame magic.
    python3 -c '
import socket, sys, time
s = [socket.create_connection(("127.0.0.1", int(sys.argv[1]))) for _ in range(3)]
s[1].sendall(b"\x16"); s[2].sendall(b"SH")
print("connected", flush=True)
time.sleep(30)' "$port" >"$dir/idle" 2>&1 &
    idle=$!
    pids="$pids $idle"
    i=0
    until grep -q connected "$dir/idle" || [ $i -ge 50 ]; do sleep 0.1; i=$((i + 1)); done
    # Node 0 waits for them without spinning: under 0.5 s of CPU in 2 s.
    cpu0=$(awk '{print $14 + $15}' /proc/$pid_0/stat)
    sleep 2
    cpu=$(($(awk '{print $14 + $15}' /proc/$pid_0/stat) - cpu0))
    [ "$cpu" -lt 50 ] || fail "node 0 used $cpu clock ticks of CPU in 2 s while 3 connections idled, want < 50"
    t0=$(now_ms)
    node 1 2 1 "$PE" gather 2 1 "$tag-n1"
    finish 1
    finish 0
    took=$(($(now_ms) - t0))
    [ "$rc_0" = 0 ] && [ "$rc_1" = 0 ] || fail "exit $rc_0 and $rc_1, want 0: $(cat "$dir/err.0" "$dir/err.1")"
    [ "$took" -lt 8000 ] || fail "the job took $took ms behind 3 idle connections, want < 8000"
    kill $idle 2>/dev/null
    expect_no_leftovers
    ;;
refusal_flood)
    pick_port
    node 0 2 1 "$PE" gather 2 1 "$tag"
    sleep 0.3
    python3 -c '
import socket, sys
for _ in range(40):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
    s.sendall(b"GET / HTTP/1.0\r\n\r\n")
    s.recv(100)
    s.close()' "$port" 2>"$dir/flood"
    node 1 2 1 "$PE" gather 2 1 "$tag-n1"
    finish 1
    finish 0
    [ "$rc_0" = 0 ] && [ "$rc_1" = 0 ] || fail "exit $rc_0 and $rc_1, want 0: $(cat "$dir/err.0" "$dir/err.1")"
    n=$(grep -c '^oshrun: refused a bootstrap connection from 127\.0\.0\.1:[0-9]*: it is not an oshrun' "$dir/err.0")
    [ "$n" = 5 ] || fail "node 0 logged $n refusals, want 5: $(cat "$dir/err.0")"
    grep -qx 'oshrun: \.\.\. and 35 more refusals in the last 10 s' "$dir/err.0" ||
        fail "node 0 did not count the 35 refusals it left out: $(cat "$dir/err.0")"
    [ "$(grep -c '' "$dir/err.0")" = 6 ] || fail "node 0 stderr: $(cat "$dir/err.0")"
    expect_no_leftovers
    ;;
silent_node0)
    # A listener that accepts and says nothing, for good.
    pick_port
    python3 -c '
import socket, sys, time
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", int(sys.argv[1]))); l.listen(8)
print("listening", flush=True)
held = []
while True:
    c, _ = l.accept(); held.append(c)' "$port" >"$dir/silent" 2>&1 &
    silent=$!
    pids="$pids $silent"
    i=0
    until grep -q listening "$dir/silent" || [ $i -ge 50 ]; do sleep 0.1; i=$((i + 1)); done
    t0=$(now_ms)
    "$OSHRUN" --nnodes 2 --node-rank 1 --rendezvous "127.0.0.1:$port" -n 1 --timeout 3 true >"$dir/out" 2>"$dir/err"
    rc=$?
    took=$(($(now_ms) - t0))
    [ "$rc" = 1 ] || fail "against a silent node 0: exit $rc, want 1"
    [ "$(grep -c '' "$dir/err")" = 1 ] || fail "against a silent node 0: $(cat "$dir/err")"
    grep -Eq "^oshrun: no TLS handshake with node 0 at 127\.0\.0\.1:$port completed within 3 s \(1 timed out, 0 closed by node 0; last: timed out\)" "$dir/err" ||
        fail "against a silent node 0: $(cat "$dir/err")"
    [ "$took" -le 4500 ] || fail "against a silent node 0: took $took ms, want at most 4500"
    # The same, but the real node 0 replaces the silent one after 2 s: the
    # joiner's first handshake is cut off, it retries and joins.
    kill $silent
    wait $silent 2>/dev/null
    python3 -c '
import socket, sys, time
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", int(sys.argv[1]))); l.listen(8)
print("listening", flush=True)
c, _ = l.accept(); time.sleep(2); c.close(); l.close()' "$port" >"$dir/silent" 2>&1 &
    silent=$!
    pids="$pids $silent"
    i=0
    until grep -q listening "$dir/silent" || [ $i -ge 50 ]; do sleep 0.1; i=$((i + 1)); done
    node 1 2 1 "$PE" gather 2 1 "$tag-n1"
    wait $silent
    node 0 2 1 "$PE" gather 2 1 "$tag"
    finish 1
    finish 0
    [ "$rc_0" = 0 ] && [ "$rc_1" = 0 ] || fail "after a retry: exit $rc_0 and $rc_1, want 0: $(cat "$dir/err.0" "$dir/err.1")"
    expect_no_leftovers
    ;;
liveness)
    pick_port
    bad "^oshrun: SHMEM_BOOTSTRAP_LIVENESS_TIMEOUT=0 is out of range: 1 to 86400 seconds$" SHMEM_BOOTSTRAP_LIVENESS_TIMEOUT=0
    bad "^oshrun: SHMEM_BOOTSTRAP_LIVENESS_TIMEOUT='soon' is not valid" SHMEM_BOOTSTRAP_LIVENESS_TIMEOUT=soon
    export SHMEM_BOOTSTRAP_LIVENESS_TIMEOUT=3
    node 0 2 1 "$PE" sleep "$tag" && node 1 2 1 "$PE" sleep "$tag-n1"
    i=0
    until [ "$(tagged_pids | wc -l)" -ge 6 ] || [ $i -ge 100 ]; do sleep 0.1; i=$((i + 1)); done
    sleep 0.5
    # Freeze node 1: its oshrun and its PE (the guardian too).
    frozen="$pid_1 $(for p in $(tagged_pids); do case "$(tr '\0' ' ' </proc/$p/cmdline)" in *"$tag-n1"*) echo "$p" ;; esac; done)"
    # shellcheck disable=SC2086
    kill -STOP $frozen
    t0=$(now_ms)
    finish 0
    took=$(($(now_ms) - t0))
    [ "$rc_0" = 1 ] || fail "node 0 exited $rc_0, want 1"
    grep -Eqx 'oshrun: lost node 1 \(127\.0\.0\.1:[0-9]+\): no heartbeat for 3 s; stopping the job' "$dir/err.0" ||
        fail "node 0: $(cat "$dir/err.0")"
    [ "$(grep -c '' "$dir/err.0")" = 1 ] || fail "node 0 stderr: $(cat "$dir/err.0")"
    [ "$took" -le 4500 ] || fail "node 0 took $took ms to give up on a frozen node, want at most 4500"
    # shellcheck disable=SC2086
    kill -CONT $frozen
    finish 1
    [ "$rc_1" != 0 ] || fail "node 1 exited 0 after it was lost"
    expect_no_leftovers
    ;;
*)
    echo "unknown case $case_name" >&2
    exit 1
    ;;
esac
[ $failures = 0 ] || exit 1
exit 0
