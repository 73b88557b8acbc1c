#!/bin/bash
# tls_test.sh CASE OSHRUN LONG_JOB: the encrypted transport on one host
# (SHMEM_TRANSPORT=tls, every peer over TLS 1.3 on loopback). Exit 0 pass,
# 1 fail, 77 skip. Cases:
#
#   loopback   every socket the PEs listen on is bound to 127.0.0.1, and
#              SHMEM_INFO names it
#   strangers  while a job runs, each PE's port gets a plain-text request,
#              a TLS 1.3 handshake with a wrong key and one with no key at
#              all, and an idle connection: every one is refused (the PE
#              logs it, rate-limited, with a count of the rest), and the job
#              still ends with its data right
case_name=${1:?usage: tls_test.sh CASE OSHRUN LONG_JOB}
OSHRUN=${2:?}
prog=${3:?}
command -v ss >/dev/null 2>&1 || { echo "SKIP: no ss (iproute2)"; exit 77; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/shoal-tls.XXXXXX") || exit 1
trap 'kill $job 2>/dev/null; rm -rf "$dir"' EXIT
failures=0
fail() { echo "FAIL [$case_name]: $*" >&2; failures=$((failures + 1)); }

# start_job ROUNDS: 2 PEs over TLS in the background; waits for the ports.
start_job() {
    SHMEM_TRANSPORT=tls SHMEM_INFO=1 "$OSHRUN" -n 2 --timeout 60 "$prog" "$1" >"$dir/out" 2>"$dir/err" &
    job=$!
    for _ in $(seq 100); do
        [ "$(grep -c 'listens on tls' "$dir/out")" = 2 ] && grep -q 'running on' "$dir/out" && break
        sleep 0.1
    done
    ports=$(sed -n 's/.*listens on tls 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$dir/out")
    [ "$(echo "$ports" | wc -w)" = 2 ] || { fail "PEs did not report two loopback ports: $(cat "$dir/out")"; return 1; }
}
# end_job: the job must end by itself with status 0.
end_job() {
    wait "$job"
    rc=$?
    [ "$rc" = 0 ] || fail "the job exited $rc: $(tail -n5 "$dir/err")"
    grep -q 'long_job: done' "$dir/out" || fail "the job did not finish its rounds"
}

case $case_name in
loopback)
    start_job 300 || exit 1
    # The PEs are oshrun's children; every listening socket of theirs.
    pids=$(pgrep -P "$job" | tr '\n' '|' | sed 's/|$//')
    listeners=$(ss -Htlnp | grep -E "pid=($pids)," || true)
    echo "$listeners" | sed 's/^/    /'
    [ -n "$listeners" ] || fail "found no listening socket of PEs $pids"
    echo "$listeners" | awk '{print $4}' | grep -v '^127\.0\.0\.1:' | grep . &&
        fail "a PE listens beyond loopback"
    for p in $ports; do
        echo "$listeners" | grep -q "127.0.0.1:$p " || fail "SHMEM_INFO's port $p is not a listener of the PEs"
    done
    end_job
    ;;
strangers)
    command -v openssl >/dev/null 2>&1 || { echo "SKIP: no openssl"; exit 77; }
    start_job 300 || exit 1
    wrong_key=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
    for p in $ports; do
        # Idle: connects and says nothing while the others are tried.
        exec 7<>"/dev/tcp/127.0.0.1/$p"
        # A plain-text request shaped like the transport's own header.
        printf '\001\000\000\000\000\000\000\000%056d' 0 | timeout 5 bash -c "cat >/dev/tcp/127.0.0.1/$p" 2>/dev/null
        for mode in wrong-key no-key; do
            if [ $mode = wrong-key ]; then
                args=(-psk "$wrong_key" -psk_identity shoal-transport-psk-v1)
            else
                args=()
            fi
            echo hello | timeout 10 openssl s_client -tls1_3 -quiet -connect "127.0.0.1:$p" "${args[@]}" \
                >"$dir/client.$p.$mode" 2>&1
            grep -qiE 'alert|error|errno|unexpected eof' "$dir/client.$p.$mode" ||
                fail "a TLS client with $mode was not refused by port $p: $(head -c 300 "$dir/client.$p.$mode")"
            grep -q 'Verification\|Protocol *: TLSv1.3' "$dir/client.$p.$mode" &&
                fail "a TLS client with $mode completed a handshake with port $p"
        done
        exec 7>&-
    done
    end_job
    refusals=$(grep -c 'refused a stream from 127.0.0.1' "$dir/err")
    echo "    $refusals refusal line(s) logged:"
    grep 'refused a stream' "$dir/err" | sed 's/^/    /'
    [ "$refusals" -ge 1 ] || fail "no PE logged a refusal"
    # Rate-limited: at most one line per PE per 10 s for 6+ refusals each,
    # and the rest counted in a line of their own.
    [ "$refusals" -le 4 ] || fail "$refusals refusal lines: not rate-limited"
    grep 'more refused streams' "$dir/err" | sed 's/^/    /'
    grep -q '\.\.\. and [1-9][0-9]* more refused streams in the last 10 s' "$dir/err" ||
        fail "the refusals left out were not counted"
    ;;
*)
    echo "tls_test.sh: unknown case $case_name" >&2
    exit 2
    ;;
esac
[ "$failures" = 0 ] && { echo "[$case_name] passed"; exit 0; }
echo "[$case_name] $failures failure(s)"
exit 1
