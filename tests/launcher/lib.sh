# lib.sh: what the launcher test scripts share (POSIX sh, sourced with
# case_name, tag and dir set). Every job carries tag in its arguments, so
# its processes can be found, and shown to be gone, by their command line.
#   fail MSG                   counts a failure, with the case's name
#   tagged_pids                processes whose command line holds the tag
#   expect_no_leftovers        within LEFTOVER_TENTHS tenths of a second
#                              (default 20) no process of the job remains;
#                              any that does is reported and killed
#   cleanup                    kills $pids and the tagged processes, removes dir
#   pick_port                  a free port on 127.0.0.1 in $port
failures=0
pids=""

fail() {
    echo "FAIL [$case_name]: $*" >&2
    failures=$((failures + 1))
}
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# Processes whose command line holds the tag (zombies have none).
tagged_pids() {
    for f in /proc/[0-9]*/cmdline; do
        c=$({ tr '\0' ' ' <"$f"; } 2>/dev/null) || continue
        case "$c" in *"$tag"*) p=${f#/proc/}; echo "${p%/cmdline}" ;; esac
    done
}

expect_no_leftovers() {
    i=0
    while [ $i -lt "${LEFTOVER_TENTHS:-20}" ]; do
        left=$(tagged_pids)
        [ -z "$left" ] && return 0
        sleep 0.1
        i=$((i + 1))
    done
    fail "processes of the job remain: $(for p in $left; do tr '\0' ' ' </proc/$p/cmdline; echo " (pid $p)"; done)"
    for p in $left; do kill -9 "$p" 2>/dev/null; done
}

cleanup() {
    for p in $pids; do kill -9 "$p" 2>/dev/null; done
    for p in $(tagged_pids); do kill -9 "$p" 2>/dev/null; done
    rm -rf "$dir"
}

# A port nobody listens on now; node 0 retries another if it is taken after all.
pick_port() {
    if command -v python3 >/dev/null 2>&1; then
        port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    else
        port=$((20000 + ($$ * 7919 + $(date +%N | sed 's/^0*//;s/^$/0/')) % 40000))
    fi
}
