# lib.sh: what the netns test scripts share (bash, sourced after hosts.sh
# with case_name set). Sets dir (a temp folder removed at exit) and the
# failure count; fail/note report, finish_case gives the verdict.
#   need_multinode OSHRUN      skip (77) unless OSHRUN has --rendezvous
#   make_secret OSHRUN FILE    a job secret, mode 0600 checked
#   expect_no_leftovers        within 3 s no process is left in any host
#   finish_case                exit 0 (passed) or 1 (failures)
PORT=29400
failures=0
dir=$(mktemp -d "${TMPDIR:-/tmp}/shoal-netns.XXXXXX") || exit 1
hosts_on_exit 'rm -rf "$dir"'

fail() {
    echo "FAIL [$case_name]: $*" >&2
    failures=$((failures + 1))
}
note() { echo "[$case_name] $*"; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }

need_multinode() { # OSHRUN
    [ -x "$1" ] || { echo "SKIP: no oshrun at $1"; exit 77; }
    "$1" --help 2>&1 | grep -q -- --rendezvous ||
        { echo "SKIP: $1 has no multi-node options (--rendezvous)"; exit 77; }
}

make_secret() { # OSHRUN FILE
    "$1" --make-secret "$2" >"$dir/make-secret.out" 2>&1 ||
        { fail "oshrun --make-secret $2 failed: $(cat "$dir/make-secret.out")"; return 1; }
    [ "$(stat -c %a "$2")" = 600 ] || fail "secret file $2 has mode $(stat -c %a "$2"), want 600"
}

expect_no_leftovers() {
    local i r p left
    for ((i = 0; i < 30; i++)); do
        left=
        for ((r = 0; r < HOSTS_N; r++)); do
            for p in $(hosts_pids "$r"); do left="$left host$r:$p($(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null))"; done
        done
        [ -z "$left" ] && return 0
        sleep 0.1
    done
    fail "processes left in the namespaces:$left"
}

finish_case() {
    if [ "$failures" -gt 0 ]; then
        echo "[$case_name] $failures failure(s)"
        exit 1
    fi
    echo "[$case_name] passed"
    exit 0
}

# capture_start R FILE [FILTER]: tcpdump on host R's interface, the
# bootstrap port ($PORT) only unless FILTER says otherwise.
capture_start() {
    hosts_spawn "$1" tcpdump -Z root -U --immediate-mode -B 65536 -n -i "$HOSTS_IFACE" -w "$2" "${3:-tcp port $PORT}" \
        2>"$2.err"
    CAP_PID=$HOSTS_PID
    CAP_HOST=$1
    local i
    for ((i = 0; i < 50; i++)); do
        grep -q 'listening on' "$2.err" 2>/dev/null && return 0
        sleep 0.1
    done
    fail "tcpdump did not start: $(cat "$2.err")"
    return 1
}
# capture_settle FILE: waits (10 s at most) until no connection on the
# captured host can still send (TIME-WAIT and FIN-WAIT-2 cannot) and FILE
# has not grown for 0.25 s. tcpdump stopped while a closing connection's
# last packet is in flight counts it as taken but never writes it.
capture_settle() {
    local i size last=-1 open
    for ((i = 0; i < 40; i++)); do
        open=$(ip netns exec "$(hosts_ns "$CAP_HOST")" ss -tanH state established state syn-sent \
            state syn-recv state fin-wait-1 state close-wait state last-ack state closing 2>/dev/null | wc -l)
        size=$(stat -c %s "$1" 2>/dev/null || echo 0)
        [ "$open" = 0 ] && [ "$size" = "$last" ] && return 0
        [ "$open" = 0 ] && last=$size
        sleep 0.25
    done
}
# capture_stop FILE: stops tcpdump; fails when it did not write every
# packet the filter took (the check would then look at part of the job).
capture_stop() {
    local got took dropped
    capture_settle "$1"
    kill -TERM "$CAP_PID" 2>/dev/null
    wait "$CAP_PID" 2>/dev/null
    grep -E 'packets (captured|received|dropped)' "$1.err" | sed 's/^/    tcpdump: /'
    got=$(sed -n 's/^\([0-9]*\) packets\{0,1\} captured.*/\1/p' "$1.err")
    took=$(sed -n 's/^\([0-9]*\) packets\{0,1\} received by filter.*/\1/p' "$1.err")
    dropped=$(sed -n 's/^\([0-9]*\) packets\{0,1\} dropped by kernel.*/\1/p' "$1.err")
    [ -n "$got" ] && [ "$got" = "$took" ] && [ "${dropped:-0}" = 0 ] ||
        fail "tcpdump wrote ${got:-?} of ${took:-?} packets (${dropped:-?} dropped): the capture is incomplete"
}
