#!/bin/sh
# multinode_test.sh CASE OSHRUN BOOT_PE: oshrun across "hosts", all on
# 127.0.0.1: one oshrun per node, started in the background, meeting at a
# free port. Exit 0 pass, 1 fail, 77 skip. Every PE carries a tag unique to
# the run so the test can prove no process outlives the job.
case_name=${1:?usage: multinode_test.sh CASE OSHRUN BOOT_PE}
OSHRUN=${2:?}
PE=${3:?}
tag="shoal-multinode-test-$$-$case_name"
dir=$(mktemp -d "${TMPDIR:-/tmp}/shoal-multinode.XXXXXX") || exit 1
. "$(dirname "$0")/lib.sh"
trap 'cleanup' EXIT
trap 'exit 1' INT TERM HUP




# PEs (not oshrun) whose command line holds WORD.
pe_pids() {
    for p in $(tagged_pids); do
        [ "$(cat /proc/$p/comm 2>/dev/null)" = boot_pe ] || continue
        case "$(tr '\0' ' ' </proc/$p/cmdline 2>/dev/null)" in *"$1"*) echo "$p" ;; esac
    done
}



# node R NNODES NPES ARGS...: starts one oshrun in the background (its own
# --timeout bounds it); its pid in pid_R, output in $dir/out.R and $dir/err.R.
node() {
    r=$1 h=$2 n=$3
    shift 3
    "$OSHRUN" --nnodes "$h" --node-rank "$r" --rendezvous "127.0.0.1:$port" -n "$n" --timeout 40 "$@" \
        >"$dir/out.$r" 2>"$dir/err.$r" &
    eval "pid_$r=$!"
    pids="$pids $!"
}

# node0 NNODES NPES ARGS...: node 0, on a fresh port until one is free.
node0() {
    tries=0
    while :; do
        pick_port
        node 0 "$@"
        sleep 0.3
        grep -q 'Address already in use' "$dir/err.0" 2>/dev/null || return 0
        tries=$((tries + 1))
        [ $tries -lt 5 ] || { fail "no free port"; return 1; }
    done
}

# finish R: waits for node R; rc_R holds its status.
finish() {
    eval "p=\$pid_$1"
    wait "$p"
    eval "rc_$1=$?"
}

expect_rc() { # NODE WANT
    eval "got=\$rc_$1"
    [ "$got" = "$2" ] || fail "node $1 exited with $got, want $2 (stderr: $(cat "$dir/err.$1"))"
}

expect_quiet() {
    [ -s "$dir/err.$1" ] && fail "node $1 stderr: $(cat "$dir/err.$1")"
    return 0
}

expect_line() { # NODE REGEX: stderr is exactly one line matching REGEX
    lines=$(grep -c '' "$dir/err.$1")
    [ "$lines" = 1 ] || fail "node $1 stderr has $lines lines, want 1: $(cat "$dir/err.$1")"
    grep -Eq "$2" "$dir/err.$1" || fail "node $1 stderr '$(cat "$dir/err.$1")' does not match '$2'"
}

secret() { # FILE: a fresh job secret
    rm -f "$1"
    "$OSHRUN" --make-secret "$1" >/dev/null || fail "--make-secret $1"
}

export SHMEM_BOOTSTRAP_SECRET_FILE="$dir/secret"
unset SHMEM_BOOTSTRAP_TLS SHMEM_BOOTSTRAP_TLS_CA SHMEM_BOOTSTRAP_TLS_CERT SHMEM_BOOTSTRAP_TLS_KEY
secret "$dir/secret"

case $case_name in
two_by_two)
    # Ranks, allgather (small and 300 kB) and node-local descriptors.
    node0 2 2 "$PE" gather 4 3 "$tag" && node 1 2 2 "$PE" gather 4 3 "$tag-n1"
    finish 0; finish 1
    expect_rc 0 0; expect_rc 1 0; expect_quiet 0; expect_quiet 1
    # Different PE counts per node: node 1's PEs follow node 0's.
    node0 2 1 --tag-output "$PE" hello "$tag" && node 1 2 3 --tag-output "$PE" hello "$tag-n1"
    finish 0; finish 1
    expect_rc 0 0; expect_rc 1 0
    grep -qx '\[PE 0\] rank 0 size 4 boot launcher node 0 local 0/1' "$dir/out.0" || fail "node 0: $(cat "$dir/out.0")"
    for r in 1 2 3; do
        grep -qx "\[PE $r\] rank $r size 4 boot launcher node 1 local $((r - 1))/3" "$dir/out.1" ||
            fail "node 1, PE $r: $(cat "$dir/out.1")"
    done
    expect_no_leftovers
    ;;
export)
    # h-launch (issue 14): -x across hosts. Each host's oshrun starts its
    # PEs from its own environment and applies its own -x options.
    show='echo "$SHOAL_RANK $SHOAL_LOCAL_RANK/$SHOAL_LOCAL_SIZE $FOO $BAR"; exec "$0" hello "$1"'
    BAR=b0 node0 2 1 -x FOO=zero -x BAR sh -c "$show" "$PE" "$tag" &&
        BAR=b1 node 1 2 2 -x FOO=one -x BAR sh -c "$show" "$PE" "$tag-n1"
    finish 0; finish 1
    expect_rc 0 0; expect_rc 1 0; expect_quiet 0; expect_quiet 1
    grep -qx '0 0/1 zero b0' "$dir/out.0" || fail "node 0: $(cat "$dir/out.0")"
    grep -qx '1 0/2 one b1' "$dir/out.1" && grep -qx '2 1/2 one b1' "$dir/out.1" || fail "node 1: $(cat "$dir/out.1")"
    expect_no_leftovers
    ;;
three_by_one)
    node0 3 1 "$PE" gather 3 2 "$tag" && node 2 3 1 "$PE" gather 3 2 "$tag-n2" && node 1 3 1 "$PE" gather 3 2 "$tag-n1"
    finish 0; finish 1; finish 2
    for r in 0 1 2; do expect_rc $r 0; expect_quiet $r; done
    expect_no_leftovers
    ;;
wrong_secret)
    # A node with another secret is refused; node 0 logs it and keeps waiting.
    secret "$dir/other"
    node0 2 1 "$PE" gather 2 1 "$tag" &&
        SHMEM_BOOTSTRAP_SECRET_FILE="$dir/other" node 1 2 1 "$PE" gather 2 1 "$tag-bad"
    finish 1
    [ "$rc_1" != 0 ] || fail "the node with the wrong secret exited 0"
    expect_line 1 "^oshrun: node 0 at 127\.0\.0\.1:$port refused this node's job secret \(TLS: .+\): SHMEM_BOOTSTRAP_SECRET_FILE must hold the same secret on every node$"
    # Without TLS at all: refused as well, named as a TLS mismatch.
    SHMEM_BOOTSTRAP_TLS=0 node 1 2 1 "$PE" gather 2 1 "$tag-plain"
    finish 1
    [ "$rc_1" != 0 ] || fail "a node without TLS exited 0"
    grep -v '^oshrun: WARNING: SHMEM_BOOTSTRAP_TLS=0' "$dir/err.1" >"$dir/err.1x"
    [ "$(grep -c '' "$dir/err.1x")" = 1 ] && grep -q "^oshrun: node 0 at 127\.0\.0\.1:$port refused this node: TLS mismatch: TLS is on on node 0 but off on this node" "$dir/err.1x" ||
        fail "a node without TLS: $(cat "$dir/err.1")"
    node 1 2 1 "$PE" gather 2 1 "$tag-n1"
    finish 1; finish 0
    expect_rc 0 0; expect_rc 1 0
    grep -Eq '^oshrun: refused a bootstrap connection from 127\.0\.0\.1:[0-9]+: TLS handshake failed \(.+\): it holds another job secret$' "$dir/err.0" ||
        fail "node 0 did not log the wrong secret: $(cat "$dir/err.0")"
    grep -Eq '^oshrun: refused a bootstrap connection from 127\.0\.0\.1:[0-9]+: TLS mismatch: it sent plaintext' "$dir/err.0" ||
        fail "node 0 did not log the TLS mismatch: $(cat "$dir/err.0")"
    [ "$(grep -c '' "$dir/err.0")" = 2 ] || fail "node 0 stderr: $(cat "$dir/err.0")"
    # The secret file must be private, and a job across hosts needs one.
    chmod 644 "$dir/secret"
    port=1
    node 1 2 1 true
    finish 1
    expect_rc 1 1
    expect_line 1 "^oshrun: SHMEM_BOOTSTRAP_SECRET_FILE=.*/secret has mode 0644, so other users may read it: run 'chmod 600 .*'$"
    SHMEM_BOOTSTRAP_SECRET_FILE= node 1 2 1 true
    finish 1
    expect_rc 1 1
    expect_line 1 "^oshrun: a job across hosts needs a job secret .*--make-secret FILE"
    expect_no_leftovers
    ;;
x509)
    command -v openssl >/dev/null 2>&1 || { echo "no openssl tool" >&2; exit 77; }
    (
        cd "$dir" || exit 1
        for ca in ca rogue; do
            openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=shoal test $ca" \
                -keyout $ca.key -out $ca.pem >/dev/null 2>&1 || exit 1
        done
        for n in node0:ca node1:ca intruder:rogue; do
            name=${n%%:*} ca=${n#*:}
            openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$name" -keyout $name.key \
                -out $name.csr >/dev/null 2>&1 &&
                openssl x509 -req -in $name.csr -CA $ca.pem -CAkey $ca.key -CAcreateserial -days 2 -out $name.pem \
                    >/dev/null 2>&1 || exit 1
        done
        chmod 600 ./*.key
    ) || { fail "cannot make test certificates"; exit 1; }
    export SHMEM_BOOTSTRAP_SECRET_FILE=
    export SHMEM_BOOTSTRAP_TLS_CA="$dir/ca.pem"
    SHMEM_BOOTSTRAP_TLS_CERT="$dir/node0.pem" SHMEM_BOOTSTRAP_TLS_KEY="$dir/node0.key" node0 2 2 "$PE" gather 2 2 "$tag"
    # A certificate from another CA is refused (it trusts our CA, we do not trust its).
    SHMEM_BOOTSTRAP_TLS_CERT="$dir/intruder.pem" SHMEM_BOOTSTRAP_TLS_KEY="$dir/intruder.key" \
        node 1 2 2 "$PE" gather 2 2 "$tag-bad"
    finish 1
    [ "$rc_1" != 0 ] || fail "the node with a certificate from another CA exited 0"
    expect_line 1 "^oshrun: node 0 at 127\.0\.0\.1:$port refused this node's certificate \(TLS: .+\)"
    # So is a node without a certificate (a job secret instead).
    SHMEM_BOOTSTRAP_TLS_CA= SHMEM_BOOTSTRAP_SECRET_FILE="$dir/secret" node 1 2 2 "$PE" gather 2 2 "$tag-bad"
    finish 1
    [ "$rc_1" != 0 ] || fail "the node without a certificate exited 0"
    SHMEM_BOOTSTRAP_TLS_CERT="$dir/node1.pem" SHMEM_BOOTSTRAP_TLS_KEY="$dir/node1.key" node 1 2 2 "$PE" gather 2 2 "$tag-n1"
    finish 1; finish 0
    expect_rc 0 0; expect_rc 1 0; expect_quiet 1
    n=$(grep -Ec '^oshrun: refused a bootstrap connection from 127\.0\.0\.1:[0-9]+: TLS handshake failed \(.+\)$' "$dir/err.0")
    [ "$n" = 2 ] || fail "node 0 logged $n refusals, want 2: $(cat "$dir/err.0")"
    # Node 0 with a certificate of another CA: the joining node refuses it.
    SHMEM_BOOTSTRAP_TLS_CERT="$dir/intruder.pem" SHMEM_BOOTSTRAP_TLS_KEY="$dir/intruder.key" node0 2 1 --timeout 3 true
    SHMEM_BOOTSTRAP_TLS_CERT="$dir/node1.pem" SHMEM_BOOTSTRAP_TLS_KEY="$dir/node1.key" node 1 2 1 true
    finish 1; finish 0
    [ "$rc_1" != 0 ] || fail "node 1 joined a node 0 whose certificate is from another CA"
    grep -q 'certificate verify failed' "$dir/err.1" || fail "node 1: $(cat "$dir/err.1")"
    expect_no_leftovers
    ;;
tls_off)
    export SHMEM_BOOTSTRAP_TLS=0 SHMEM_BOOTSTRAP_SECRET_FILE=
    node0 2 2 "$PE" gather 2 2 "$tag" && node 1 2 2 "$PE" gather 2 2 "$tag-n1"
    finish 0; finish 1
    for r in 0 1; do
        expect_rc $r 0
        expect_line $r "^oshrun: WARNING: SHMEM_BOOTSTRAP_TLS=0: the bootstrap between hosts is not encrypted or authenticated; anyone who can reach 127\.0\.0\.1:$port can join or read the job's addresses$"
    done
    expect_no_leftovers
    # TLS off on node 0 only: the joining node names the mismatch at once.
    node0 2 1 --timeout 5 "$PE" gather 1 1 "$tag"
    secret "$dir/secret"
    SHMEM_BOOTSTRAP_TLS= SHMEM_BOOTSTRAP_SECRET_FILE="$dir/secret" node 1 2 1 "$PE" gather 1 1 "$tag-n1"
    finish 1
    expect_rc 1 1
    expect_line 1 "^oshrun: TLS mismatch with node 0 at 127\.0\.0\.1:$port: it answered in plaintext, so TLS is off there \(SHMEM_BOOTSTRAP_TLS=0\) but on here; set the same SHMEM_BOOTSTRAP_TLS on every node$"
    finish 0
    grep -q "^oshrun: refused a bootstrap connection from 127\.0\.0\.1:[0-9]*: TLS mismatch: it started a TLS handshake, but TLS is off here" "$dir/err.0" ||
        fail "node 0 did not log the mismatch: $(cat "$dir/err.0")"
    ;;
kill_node)
    # Every PE of node 1 SIGKILLed: the whole job ends, on every node.
    node0 2 2 "$PE" sleep "$tag" && node 1 2 2 "$PE" sleep "$tag-n1"
    i=0
    until [ "$(pe_pids "$tag" | wc -l)" -ge 4 ] || [ $i -ge 100 ]; do sleep 0.1; i=$((i + 1)); done
    sleep 0.3
    kill -9 $(pe_pids "$tag-n1") 2>/dev/null
    finish 0; finish 1
    expect_rc 0 137; expect_rc 1 137
    for r in 0 1; do expect_line $r '^oshrun: PE [23] on node 1 killed by signal SIGKILL \(9\); stopping the job$'; done
    expect_no_leftovers
    # A PE's shmem_global_exit ends the job everywhere with its status.
    node0 2 2 "$PE" abort 3 5 "" "$tag" && node 1 2 2 "$PE" abort 3 5 "" "$tag-n1"
    finish 0; finish 1
    expect_rc 0 5; expect_rc 1 5
    for r in 0 1; do expect_line $r '^oshrun: PE 3 on node 1 called shmem_global_exit\(5\); stopping the job$'; done
    expect_no_leftovers
    # A node that cannot start its program stops the others.
    node0 2 1 "$PE" sleep "$tag" && node 1 2 1 ./no-such-program-"$tag"
    finish 0; finish 1
    expect_rc 0 127; expect_rc 1 127
    expect_line 0 '^oshrun: node 1 could not start its PEs \(status 127\); stopping the job$'
    expect_no_leftovers
    ;;
lost_node)
    # Node 1's oshrun vanishes: node 0 ends the job.
    node0 2 1 "$PE" sleep "$tag" && node 1 2 1 "$PE" sleep "$tag-n1"
    i=0
    until [ "$(pe_pids "$tag" | wc -l)" -ge 2 ] || [ $i -ge 100 ]; do sleep 0.1; i=$((i + 1)); done
    kill -9 "$pid_1"
    finish 0; finish 1
    expect_rc 0 1
    expect_line 0 '^oshrun: lost node 1 \(127\.0\.0\.1:[0-9]+\): connection closed; stopping the job$'
    expect_no_leftovers
    # Node 0 vanishes: the others end their PEs.
    node0 2 1 "$PE" sleep "$tag" && node 1 2 1 "$PE" sleep "$tag-n1"
    i=0
    until [ "$(pe_pids "$tag" | wc -l)" -ge 2 ] || [ $i -ge 100 ]; do sleep 0.1; i=$((i + 1)); done
    kill -9 "$pid_0"
    finish 0; finish 1
    expect_rc 1 1
    expect_line 1 "^oshrun: lost node 0 \(127\.0\.0\.1:$port\): connection closed; stopping the job$"
    expect_no_leftovers
    ;;
no_peer)
    # Nobody comes: both sides give up at their timeout with one line.
    node0 2 1 --timeout 1 true
    finish 0
    expect_rc 0 1
    expect_line 0 "^oshrun: only 1 of 2 nodes joined at 127\.0\.0\.1:$port within 1 s \(missing: node 1\); giving up$"
    node 1 2 1 --timeout 1 true
    finish 1
    expect_rc 1 1
    expect_line 1 "^oshrun: cannot reach node 0 at 127\.0\.0\.1:$port within 1 s: .+$"
    ;;
args)
    # Options across hosts, and --make-secret.
    bad() { # WANT ARGS...
        want=$1
        shift
        "$OSHRUN" "$@" >"$dir/out" 2>"$dir/err"
        rc=$?
        [ $rc = 2 ] || fail "'$*' exited $rc, want 2"
        head -n 1 "$dir/err" | grep -Fqx "$want" || fail "'$*': got '$(head -n 1 "$dir/err")', want '$want'"
    }
    bad "oshrun: a job across hosts needs all of --nnodes H, --node-rank R and --rendezvous HOST:PORT" \
        --nnodes 2 -n 1 true
    bad "oshrun: --node-rank 2 is out of range for --nnodes 2 (0 to 1)" \
        --nnodes 2 --node-rank 2 --rendezvous 127.0.0.1:1 -n 1 true
    bad "oshrun: --rendezvous needs HOST:PORT (node 0's address), got 'nohost'" --rendezvous nohost -n 1 true
    bad "oshrun: --nnodes needs a number of hosts from 1 to 4096" --nnodes 0 -n 1 true
    bad "oshrun: --make-secret needs exactly one FILE" --make-secret
    "$OSHRUN" --make-secret "$dir/new" >"$dir/out" 2>"$dir/err" || fail "--make-secret: $(cat "$dir/err")"
    [ "$(stat -c %a "$dir/new")" = 600 ] || fail "secret mode $(stat -c %a "$dir/new"), want 600"
    grep -Eqx '[0-9a-f]{64}' "$dir/new" || fail "secret is not 64 hex digits: $(cat "$dir/new")"
    cmp -s "$dir/new" "$dir/secret" && fail "two secrets are equal"
    "$OSHRUN" --make-secret "$dir/new" >"$dir/out" 2>"$dir/err"
    [ $? = 1 ] || fail "--make-secret overwrote an existing file"
    grep -q "File exists" "$dir/err" || fail "--make-secret on an existing file: $(cat "$dir/err")"
    # A single-host run has no network part: no socket, no TLS, no secret needed.
    SHMEM_BOOTSTRAP_SECRET_FILE=/nonexistent "$OSHRUN" -n 2 "$PE" gather 1 1 "$tag" >"$dir/out" 2>"$dir/err" ||
        fail "single host: $(cat "$dir/err")"
    ;;
*)
    echo "unknown case $case_name" >&2
    exit 1
    ;;
esac
[ $failures = 0 ] || exit 1
exit 0
