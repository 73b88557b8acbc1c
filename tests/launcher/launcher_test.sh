#!/bin/sh
# launcher_test.sh CASE OSHRUN BOOT_PE: one oshrun behaviour per CASE.
# Exit 0 pass, 1 fail, 77 skip. Every job carries a unique tag in its
# arguments so the test can prove no process of the job outlives it.
case_name=${1:?usage: launcher_test.sh CASE OSHRUN BOOT_PE}
OSHRUN=${2:?}
PE=${3:?}
tag="shoal-launcher-test-$$-$case_name"
dir=$(mktemp -d "${TMPDIR:-/tmp}/shoal-launcher.XXXXXX") || exit 1
LEFTOVER_TENTHS=10 # within 1 s
. "$(dirname "$0")/lib.sh"
trap 'rm -rf "$dir"' EXIT
trap 'exit 1' INT TERM HUP



# run ARGS...: runs oshrun; sets rc, elapsed (ms); output in $dir/out, $dir/err.
run() {
    t0=$(now_ms)
    "$OSHRUN" "$@" >"$dir/out" 2>"$dir/err"
    rc=$?
    elapsed=$(($(now_ms) - t0))
}

expect_rc() {
    [ "$rc" = "$1" ] || fail "exit status $rc, want $1 (stderr: $(cat "$dir/err"))"
}

# expect_err_line REGEX: stderr is exactly one line matching REGEX.
expect_err_line() {
    lines=$(grep -c '' "$dir/err")
    [ "$lines" = 1 ] || fail "stderr has $lines lines, want 1: $(cat "$dir/err")"
    grep -Eq "$1" "$dir/err" || fail "stderr '$(cat "$dir/err")' does not match '$1'"
}

expect_within() {
    [ "$elapsed" -le "$1" ] || fail "took ${elapsed} ms, want at most $1 ms"
}

# signal_sleepers SIG: a job of 3 sleeping PEs gets SIG once they run; sets rc.
signal_sleepers() {
    "$OSHRUN" -n 3 "$PE" sleep "$tag" >"$dir/out" 2>"$dir/err" &
    pid=$!
    i=0
    until [ "$(tagged_pids | wc -l)" -ge 4 ] || [ $i -ge 100 ]; do sleep 0.05; i=$((i + 1)); done
    sleep 0.2
    kill -"$1" $pid
    wait $pid
    rc=$?
}



case $case_name in
pe_sigkill)
    # Required: a PE SIGKILLed mid-job. The others ignore SIGTERM and have
    # grandchildren, so the SIGKILL escalation and group kill are exercised.
    run -n 4 "$PE" kill 1 noterm "$tag"
    expect_rc 137
    expect_err_line '^oshrun: PE 1 \(pid [0-9]+\) killed by signal SIGKILL \(9\); stopping the other 3 PEs$'
    expect_within 2000
    expect_no_leftovers
    ;;
pe_sigkill_term)
    run -n 2 "$PE" kill 0 "$tag"
    expect_rc 137
    expect_err_line '^oshrun: PE 0 \(pid [0-9]+\) killed by signal SIGKILL \(9\); stopping the other 1 PE$'
    expect_within 1500
    expect_no_leftovers
    ;;
pe_segv)
    run -n 3 sh -c 'if [ "$SHOAL_RANK" = 2 ]; then kill -SEGV $$; fi; sleep 30' "$tag"
    expect_rc 139
    expect_err_line '^oshrun: PE 2 \(pid [0-9]+\) killed by signal SIGSEGV \(11\); stopping the other 2 PEs$'
    expect_within 2000
    expect_no_leftovers
    ;;
exit_status)
    run -n 4 "$PE" exit 2 3 "$tag"
    expect_rc 3
    expect_err_line '^oshrun: PE 2 \(pid [0-9]+\) exited with status 3; stopping the other 3 PEs$'
    expect_within 2000
    expect_no_leftovers
    run -n 2 false
    expect_rc 1
    grep -Eq '^oshrun: PE [01] \(pid [0-9]+\) exited with status 1' "$dir/err" || fail "false: $(cat "$dir/err")"
    ;;
no_finalize)
    run -n 2 "$PE" nofinalize 1 "$tag"
    expect_rc 1
    expect_err_line '^oshrun: PE 1 \(pid [0-9]+\) exited without calling shmem_finalize; stopping the other 1 PE$'
    expect_no_leftovers
    ;;
abort)
    run -n 4 "$PE" abort 2 5 "" "$tag"
    expect_rc 5
    expect_err_line '^oshrun: PE 2 called shmem_global_exit\(5\); stopping the other 3 PEs$'
    expect_no_leftovers
    run -n 2 "$PE" abort 1 7 "shmem_putmem: PE 9 is out of range" "$tag"
    expect_rc 7
    expect_err_line '^oshrun: PE 1: shmem_putmem: PE 9 is out of range; stopping the other 1 PE$'
    expect_no_leftovers
    # 256 would wrap to 0 as an exit status: a failed job never returns 0.
    run -n 2 "$PE" abort 1 256 "" "$tag"
    expect_rc 1
    expect_err_line '^oshrun: PE 1 called shmem_global_exit\(256\); stopping the other 1 PE$'
    run -n 1 "$PE" abort 0 3 "" "$tag"
    expect_rc 3
    expect_err_line '^oshrun: PE 0 called shmem_global_exit\(3\)$'
    ;;
timeout)
    run -n 3 --timeout 1 "$PE" sleep "$tag"
    expect_rc 124
    expect_err_line '^oshrun: job timed out after 1 second; stopping 3 PEs$'
    [ "$elapsed" -ge 1000 ] || fail "timed out after only $elapsed ms"
    expect_within 2500
    expect_no_leftovers
    # A job that finishes in time is not affected.
    run -n 2 --timeout 30 "$PE" hello "$tag"
    expect_rc 0
    ;;
tag_output)
    run -n 2 --tag-output sh -c 'echo out$SHOAL_RANK; echo err$SHOAL_RANK >&2; printf "partial$SHOAL_RANK"' "$tag"
    expect_rc 0
    for r in 0 1; do
        grep -qx "\[PE $r\] out$r" "$dir/out" || fail "stdout lacks '[PE $r] out$r': $(cat "$dir/out")"
        grep -qx "\[PE $r\] partial$r" "$dir/out" || fail "stdout lacks '[PE $r] partial$r': $(cat "$dir/out")"
        grep -qx "\[PE $r\] err$r" "$dir/err" || fail "stderr lacks '[PE $r] err$r': $(cat "$dir/err")"
    done
    [ "$(grep -c '' "$dir/out")" = 4 ] || fail "stdout should have 4 lines: $(cat "$dir/out")"
    # Without the option, output is not touched.
    run -n 2 sh -c 'echo plain'
    [ "$(cat "$dir/out")" = "$(printf 'plain\nplain')" ] || fail "untagged output: $(cat "$dir/out")"
    ;;
output_lines)
    # h-launch (issue 14): 4 PEs print many long lines to stdout (and some
    # to stderr) into a file: every line arrives whole, each PE's in order.
    n=40000
    run -n 4 awk -v n=$n -v tag="$tag" 'BEGIN {
        pad = sprintf("%90s", ""); gsub(/ /, "x", pad)
        for (i = 0; i < n; i++) {
            printf "PE %s line %06d %s\n", ENVIRON["SHOAL_RANK"], i, pad
            if (i % 1000 == 0) printf "PE %s err %06d %s\n", ENVIRON["SHOAL_RANK"], i, pad > "/dev/stderr"
        } }'
    expect_rc 0
    for f in out err; do
        bad=$(grep -Evc '^PE [0-3] (line|err) [0-9]{6} x{90}$' "$dir/$f")
        [ "$bad" = 0 ] || fail "$bad malformed lines in std$f, e.g.: $(grep -Ev '^PE [0-3] (line|err) [0-9]{6} x{90}$' "$dir/$f" | head -n 2)"
    done
    [ "$(grep -c '' "$dir/out")" = $((4 * n)) ] || fail "stdout has $(grep -c '' "$dir/out") lines, want $((4 * n))"
    [ "$(grep -c '' "$dir/err")" = $((4 * n / 1000)) ] || fail "stderr has $(grep -c '' "$dir/err") lines, want $((4 * n / 1000))"
    awk '{ if ($4 + 0 != next_line[$2] + 0) { print "PE " $2 ": line " $4 " after " next_line[$2] - 1; exit 1 }
           next_line[$2] = $4 + 1 }' "$dir/out" >"$dir/order" || fail "out of order: $(cat "$dir/order")"
    # Into a pipe whose reader starts late (oshrun writes it as it has room).
    { "$OSHRUN" -n 4 awk -v n=$n 'BEGIN { pad = sprintf("%90s", ""); gsub(/ /, "x", pad)
        for (i = 0; i < n; i++) printf "PE %s line %06d %s\n", ENVIRON["SHOAL_RANK"], i, pad }' "$tag"
      echo $? >"$dir/rc"; } | { sleep 1; cat; } >"$dir/out"
    rc=$(cat "$dir/rc")
    expect_rc 0
    bad=$(grep -Evc '^PE [0-3] line [0-9]{6} x{90}$' "$dir/out")
    [ "$bad" = 0 ] || fail "through a pipe: $bad malformed lines"
    [ "$(grep -c '' "$dir/out")" = $((4 * n)) ] || fail "through a pipe: $(grep -c '' "$dir/out") lines, want $((4 * n))"
    # Bytes pass unchanged: no newline added to a last partial line, and a
    # line longer than oshrun's buffer (200 kB) arrives whole when alone.
    run -n 1 sh -c 'printf "a\nb"; head -c 200000 /dev/zero | tr "\0" y' "$tag"
    expect_rc 0
    [ "$(wc -c <"$dir/out")" = 200003 ] || fail "single PE: $(wc -c <"$dir/out") bytes, want 200003"
    [ "$(head -c 3 "$dir/out")" = "$(printf 'a\nb')" ] || fail "single PE output starts '$(head -c 3 "$dir/out")'"
    ;;
sigpipe)
    # The reader goes away: oshrun stops the PEs (which would print forever)
    # and ends quietly by SIGPIPE, naming no PE.
    t0=$(now_ms)
    { "$OSHRUN" -n 4 sh -c 'yes "line from PE $SHOAL_RANK"' "$tag" 2>"$dir/err"; echo $? >"$dir/rc"; } | head -n 1 >"$dir/out"
    elapsed=$(($(now_ms) - t0))
    rc=$(cat "$dir/rc")
    expect_rc 141
    grep -Eqx 'line from PE [0-3]' "$dir/out" || fail "head read '$(cat "$dir/out")'"
    [ -s "$dir/err" ] && fail "stderr: $(cat "$dir/err")"
    expect_within 5000
    expect_no_leftovers
    # Output through stderr too (2>&1 | head).
    { "$OSHRUN" -n 2 sh -c 'yes "err from PE $SHOAL_RANK" >&2' "$tag" 2>&1; echo $? >"$dir/rc"; } | head -n 1 >"$dir/out"
    rc=$(cat "$dir/rc")
    expect_rc 141
    grep -Eqx 'err from PE [01]' "$dir/out" || fail "head read '$(cat "$dir/out")'"
    expect_no_leftovers
    ;;
stalled_reader)
    # A reader that stops reading holds up the PEs' output, not oshrun:
    # --timeout and Ctrl-C still end the job, promptly.
    mkfifo "$dir/fifo" || exit 1
    for how in timeout sigint; do
        t0=$(now_ms)
        if [ $how = timeout ]; then
            "$OSHRUN" -n 2 --timeout 2 sh -c 'yes "PE $SHOAL_RANK"' "$tag" >"$dir/fifo" 2>"$dir/err" &
        else
            "$OSHRUN" -n 2 sh -c 'yes "PE $SHOAL_RANK"' "$tag" >"$dir/fifo" 2>"$dir/err" &
        fi
        pid=$!
        exec 3<"$dir/fifo" # opened, never read
        if [ $how = sigint ]; then
            sleep 1
            kill -INT $pid
        fi
        wait $pid
        rc=$?
        elapsed=$(($(now_ms) - t0))
        exec 3<&-
        if [ $how = timeout ]; then
            expect_rc 124
            expect_err_line '^oshrun: job timed out after 2 seconds; stopping 2 PEs$'
        else
            expect_rc 130
            expect_err_line '^oshrun: job stopped by SIGINT; stopping 2 PEs$'
        fi
        expect_within 6000
        expect_no_leftovers
    done
    ;;
sigint)
    # Ctrl-C: the job was stopped, no PE "killed"; oshrun ends by SIGINT (130).
    signal_sleepers INT
    expect_rc 130
    expect_err_line '^oshrun: job stopped by SIGINT; stopping 3 PEs$'
    expect_no_leftovers
    # A PE that handles SIGINT and exits 0 does not make the job a success.
    "$OSHRUN" -n 2 sh -c 'trap "exit 0" INT; echo ready; while :; do sleep 0.05; done' "$tag" >"$dir/out" 2>"$dir/err" &
    pid=$!
    i=0
    until [ "$(grep -c ready "$dir/out")" = 2 ] || [ $i -ge 100 ]; do sleep 0.05; i=$((i + 1)); done
    kill -INT $pid
    wait $pid
    rc=$?
    expect_rc 130
    expect_err_line '^oshrun: job stopped by SIGINT; stopping 2 PEs$'
    expect_no_leftovers
    ;;
export)
    # -x VAR=VALUE sets, -x VAR passes oshrun's value; options stay before the program.
    FROM_OSHRUN="kept value" run -n 2 -x FOO=bar -x 'EQ=a=b c' -x EMPTY= -x FROM_OSHRUN \
        sh -c 'echo "$SHOAL_RANK|$FOO|$EQ|${EMPTY-unset}|$FROM_OSHRUN"' "$tag"
    expect_rc 0
    for r in 0 1; do
        grep -qx "$r|bar|a=b c||kept value" "$dir/out" || fail "PE $r: $(cat "$dir/out")"
    done
    # It overrides oshrun's own value.
    FOO=outer run -n 1 -x FOO=inner sh -c 'echo "$FOO"'
    [ "$(cat "$dir/out")" = inner ] || fail "-x FOO=inner over FOO=outer gave '$(cat "$dir/out")'"
    check_x() {
        run -n 1 -x "$1" true
        expect_rc 2
        head -n 1 "$dir/err" | grep -Fqx "oshrun: -x needs VAR or VAR=VALUE (VAR: letters, digits, '_'), got '$1'" ||
            fail "-x '$1': $(cat "$dir/err")"
    }
    check_x 1BAD
    check_x =value
    check_x 'A-B=1'
    ;;
local_env)
    # SHOAL_LOCAL_RANK/SIZE on one host as across hosts; SHOAL_NODE_RANK only across hosts.
    run -n 3 sh -c 'echo "$SHOAL_RANK $SHOAL_LOCAL_RANK $SHOAL_LOCAL_SIZE ${SHOAL_NODE_RANK-none}"' "$tag"
    expect_rc 0
    for r in 0 1 2; do grep -qx "$r $r 3 none" "$dir/out" || fail "PE $r: $(cat "$dir/out")"; done
    ;;
bind_to)
    command -v python3 >/dev/null 2>&1 || { echo "no python3; skipping"; exit 77; }
    # Oshrun's CPUs grouped by core (sysfs), as kernel lists, one core a line.
    cores() {
        python3 - "$1" <<'PY'
import sys
def expand(text):
    out = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out += range(int(lo), int(hi or lo) + 1)
    return out
def fmt(cpus):
    runs, start = [], None
    for i, c in enumerate(cpus):
        if start is None: start = c
        if i + 1 == len(cpus) or cpus[i + 1] != c + 1:
            runs.append(str(start) if start == c else "%d-%d" % (start, c)); start = None
    return ",".join(runs)
def key(cpu):
    try:
        t = "/sys/devices/system/cpu/cpu%d/topology/" % cpu
        return (open(t + "physical_package_id").read().strip(), open(t + "core_id").read().strip())
    except OSError:
        return ("cpu", cpu)
groups = {}
for c in expand(sys.argv[1]): groups.setdefault(key(c), []).append(c)
for g in sorted(groups.values()): print(fmt(g))
PY
    }
    mine=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
    cores "$mine" >"$dir/cores"
    ncores=$(grep -c '' "$dir/cores")
    [ "$ncores" -ge 2 ] || { echo "only $ncores core available; skipping"; exit 77; }
    show='echo "$SHOAL_RANK $(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)"'
    # Default, PEs fit one per core: PE i on core i.
    run -n 2 sh -c "$show" "$tag"
    expect_rc 0
    for r in 0 1; do
        want=$(sed -n "$((r + 1))p" "$dir/cores")
        grep -qx "$r $want" "$dir/out" || fail "default: PE $r runs on '$(sed -n "s/^$r //p" "$dir/out")', want core $r: '$want'"
    done
    run -n "$ncores" --bind-to core sh -c "$show" "$tag"
    expect_rc 0
    [ "$(cut -d' ' -f2 "$dir/out" | sort -u | grep -c '')" = "$ncores" ] || fail "--bind-to core: PEs share cores: $(cat "$dir/out")"
    # None; more PEs than cores; one PE: every CPU oshrun has.
    for args in "-n 2 --bind-to none" "-n $((ncores + 1))" "-n 1"; do
        run $args sh -c "$show" "$tag"
        expect_rc 0
        bad=$(grep -vc " $mine\$" "$dir/out")
        [ "$bad" = 0 ] || fail "$args: PEs bound: $(cat "$dir/out"), want all on $mine"
    done
    # Asking for cores that are not there is refused in one line.
    run -n $((ncores + 1)) --bind-to core true
    expect_rc 1
    expect_err_line "^oshrun: --bind-to core: $((ncores + 1)) PEs on this host but only $ncores cores available to oshrun; use --bind-to none$"
    run -n 2 --bind-to socket true
    expect_rc 2
    grep -Fqx "oshrun: --bind-to needs core or none, got 'socket'" "$dir/err" || fail "--bind-to socket: $(cat "$dir/err")"
    # Only the CPUs oshrun may use count (sched_getaffinity).
    if command -v taskset >/dev/null 2>&1; then
        first=$(head -n 1 "$dir/cores")
        t0=$(now_ms)
        taskset -c "$first" "$OSHRUN" -n 2 sh -c "$show" "$tag" >"$dir/out" 2>"$dir/err"
        rc=$?
        expect_rc 0
        [ "$(grep -vc " $first\$" "$dir/out")" = 0 ] || fail "under taskset -c $first: $(cat "$dir/out")"
    fi
    ;;
gather_*)
    n=${case_name#gather_}
    run -n "$n" "$PE" gather 6 3 "$tag"
    expect_rc 0
    [ -s "$dir/err" ] && fail "stderr: $(cat "$dir/err")"
    ;;
many_fds)
    # More than 250 descriptors per PE: they travel in follow-up messages.
    run -n 2 "$PE" gather 1 260 "$tag"
    [ "$rc" = 77 ] && exit 77
    expect_rc 0
    [ -s "$dir/err" ] && fail "stderr: $(cat "$dir/err")"
    ;;
hello)
    run -n 3 --tag-output "$PE" hello "$tag"
    expect_rc 0
    for r in 0 1 2; do
        grep -qx "\[PE $r\] rank $r size 3 boot launcher" "$dir/out" || fail "PE $r: $(cat "$dir/out")"
    done
    ;;
single)
    "$PE" hello "$tag" >"$dir/out" 2>&1 || fail "hello without oshrun: $(cat "$dir/out")"
    grep -qx 'rank 0 size 1 boot single' "$dir/out" || fail "single: $(cat "$dir/out")"
    "$PE" gather 4 3 "$tag" || fail "gather without oshrun"
    ;;
non_shmem)
    run -n 2 true
    expect_rc 0
    [ -s "$dir/err" ] && fail "stderr: $(cat "$dir/err")"
    [ -s "$dir/out" ] && fail "stdout: $(cat "$dir/out")"
    ;;
private_fds)
    # Each PE holds what the launcher was given plus its own socket only:
    # no other PE's socket, no launcher pipe.
    base=$(sh -c 'ls /proc/$$/fd' | sort | tr '\n' ' ')
    run -n 4 --tag-output sh -c 'echo "boot $SHOAL_BOOT_FD"; ls /proc/$$/fd' "$tag"
    expect_rc 0
    for r in 0 1 2 3; do
        boot=$(sed -n "s/^\[PE $r\] boot //p" "$dir/out")
        [ -n "$boot" ] || fail "PE $r has no SHOAL_BOOT_FD"
        got=$(sed -n "s/^\[PE $r\] //p" "$dir/out" | grep -v '^boot ' | grep -vx "$boot" | sort | tr '\n' ' ')
        [ "$got" = "$base" ] || fail "PE $r has descriptors '$got' besides its socket $boot, want '$base'"
    done
    ;;
mismatch)
    run -n 3 "$PE" mismatch "$tag"
    expect_rc 1
    expect_err_line '^oshrun: collective mismatch: PE [0-9] called allgather with (8|16) bytes .*; stopping 3 PEs$'
    expect_no_leftovers
    run -n 2 "$PE" early "$tag"
    expect_rc 1
    expect_err_line '^oshrun: PE 1 is waiting in barrier, but PE 0 has (called shmem_finalize|exited); the job cannot continue; stopping [12] PEs?$'
    expect_no_leftovers
    ;;
forward)
    "$OSHRUN" -n 2 "$PE" usr1 "$tag" >"$dir/out" 2>"$dir/err" &
    pid=$!
    i=0
    until grep -q ready "$dir/out" || [ $i -ge 100 ]; do sleep 0.05; i=$((i + 1)); done
    kill -USR1 $pid
    wait $pid
    rc=$?
    expect_rc 0
    signal_sleepers TERM
    expect_rc 143
    expect_err_line '^oshrun: job stopped by SIGTERM; stopping 3 PEs$'
    expect_no_leftovers
    ;;
launcher_killed)
    # A SIGKILLed launcher takes its PEs with it (PR_SET_PDEATHSIG).
    "$OSHRUN" -n 3 "$PE" sleep "$tag" >"$dir/out" 2>"$dir/err" &
    pid=$!
    i=0
    until [ "$(tagged_pids | wc -l)" -ge 4 ] || [ $i -ge 100 ]; do sleep 0.05; i=$((i + 1)); done
    [ "$(tagged_pids | wc -l)" -ge 4 ] || fail "the PEs did not start"
    kill -KILL $pid
    wait $pid 2>/dev/null
    expect_no_leftovers
    ;;
not_found)
    run -n 2 ./no-such-program-"$tag"
    expect_rc 127
    expect_err_line "^oshrun: cannot execute '\./no-such-program-$tag': No such file or directory$"
    run -n 2 /dev/null
    expect_rc 126
    ;;
bad_args)
    check_bad() {
        want=$1
        shift
        run "$@"
        expect_rc 2
        head -n 1 "$dir/err" | grep -Fqx "$want" || fail "'$*': got '$(head -n 1 "$dir/err")', want '$want'"
        [ -s "$dir/out" ] && fail "'$*' wrote to stdout"
    }
    check_bad "oshrun: -n needs a positive number of PEs, got 'x'" -n x true
    check_bad "oshrun: -n needs a positive number of PEs, got '0'" -n 0 true
    check_bad "oshrun: -n needs a positive number of PEs, got '-3'" -n -3 true
    check_bad "oshrun: -np needs a positive number of PEs, got '2x'" -np 2x true
    check_bad "oshrun: -n needs a positive number of PEs" -n
    check_bad "oshrun: -n 5000: at most 4096 PEs can run on one host" -n 5000 true
    check_bad "oshrun: --timeout needs a positive whole number of seconds (at most 31536000), got 'soon'" -n 1 --timeout soon true
    check_bad "oshrun: unknown option '--frobnicate'" -n 1 --frobnicate true
    check_bad "oshrun: no program to run" -n 2
    check_bad "oshrun: the number of PEs is missing: use -n N" true
    run --help
    expect_rc 0
    grep -q '^Usage: oshrun -n N' "$dir/out" || fail "--help: $(cat "$dir/out")"
    run --version
    expect_rc 0
    grep -Eq '^oshrun \(Shoal\) [0-9]+\.[0-9]+' "$dir/out" || fail "--version: $(cat "$dir/out")"
    # Options after the program belong to the program.
    run -np 1 sh -c 'echo "$*"' sh -n 3 --help
    expect_rc 0
    [ "$(cat "$dir/out")" = "-n 3 --help" ] || fail "program arguments: $(cat "$dir/out")"
    ;;
*)
    echo "unknown case $case_name" >&2
    exit 1
    ;;
esac
[ $failures = 0 ] || exit 1
exit 0
