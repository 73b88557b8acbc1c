#!/bin/bash
# run_case.sh: runs one bad-input program and judges the job from outside.
#
#   run_case.sh [--oshrun PATH --np N] [--exit CODE|nonzero] [--max-seconds S]
#               [--env NAME=VALUE]... [--expect ERE]... [--reject ERE]... [--stamp]
#               [--check-shm]
#               -- PROGRAM TAG [ARGS...]
#
# Without --oshrun the program runs directly. Asserts: the exit status
# (--exit), that the job ended within S seconds (with --stamp: of the time
# the program wrote to $SHOAL_TEST_STAMP), that stderr has a line matching
# each --expect (grep -E) and none matching a --reject, that no process of the job remains (the job's
# command line ends with a token unique to this run, which pgrep -f finds;
# two cases may run the same program with the same arguments at once), and
# with --check-shm that /dev/shm gained no entry.
# Exit 0 pass, 1 fail.
set -u
oshrun= np=2 want_exit=nonzero max_s=5 use_stamp=0 check_shm=0
envs=() expects=() rejects=()
while [ $# -gt 0 ]; do
    case "$1" in
    --oshrun) oshrun=$2; shift 2 ;;
    --np) np=$2; shift 2 ;;
    --exit) want_exit=$2; shift 2 ;;
    --max-seconds) max_s=$2; shift 2 ;;
    --env) envs+=("$2"); shift 2 ;;
    --expect) expects+=("$2"); shift 2 ;;
    --reject) rejects+=("$2"); shift 2 ;;
    --stamp) use_stamp=1; shift ;;
    --check-shm) check_shm=1; shift ;;
    --) shift; break ;;
    *) echo "run_case.sh: unknown option $1" >&2; exit 1 ;;
    esac
done
[ $# -ge 2 ] || { echo "run_case.sh: need PROGRAM TAG" >&2; exit 1; }

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

[ $use_stamp = 1 ] && envs+=("SHOAL_TEST_STAMP=$tmp/stamp")
[ $check_shm = 1 ] && ls -A /dev/shm | sort >"$tmp/shm.before"

token="shoal-case-$$-$RANDOM$RANDOM"
if [ -n "$oshrun" ]; then
    cmd=("$oshrun" -n "$np" --timeout 20 "$@" "$token")
else
    cmd=("$@" "$token")
fi
echo "running: ${envs[*]} ${cmd[*]}" >&2
start=$(date +%s.%N)
env "${envs[@]}" timeout -s KILL 30 "${cmd[@]}" >"$tmp/out" 2>"$tmp/err"
rc=$?
end=$(date +%s.%N)

echo "--- stdout" >&2; cat "$tmp/out" >&2
echo "--- stderr" >&2; cat "$tmp/err" >&2
echo "--- exit status $rc" >&2

if [ "$want_exit" = nonzero ]; then
    [ $rc -ne 0 ] || fail "exit status 0, expected non-zero"
    [ $rc -ne 137 ] || [ $use_stamp = 1 ] || fail "exit status 137: the job was killed by the 30 s safety timeout"
else
    [ $rc -eq "$want_exit" ] || fail "exit status $rc, expected $want_exit"
fi

from=$start what="the start"
if [ $use_stamp = 1 ]; then
    if [ -s "$tmp/stamp" ]; then
        from=$(cat "$tmp/stamp") what="the kill"
    else
        fail "the program wrote no time stamp"
    fi
fi
elapsed=$(awk -v a="$from" -v b="$end" 'BEGIN { printf "%.2f", b - a }')
echo "--- ended $elapsed s after $what (limit $max_s s)" >&2
awk -v e="$elapsed" -v m="$max_s" 'BEGIN { exit !(e <= m) }' || fail "job took $elapsed s after $what, limit $max_s s"

for re in "${expects[@]}"; do
    grep -Eq -- "$re" "$tmp/err" || fail "stderr has no line matching: $re"
done
for re in "${rejects[@]}"; do
    ! grep -Eq -- "$re" "$tmp/err" || fail "stderr has a line matching: $re"
done

# Nothing of the job may remain: no PE, no child of a PE.
sleep 0.3
left=$(pgrep -f -- "$token")
if [ -n "$left" ]; then
    fail "processes of the job remain: $(echo $left)"
    ps -o pid,ppid,stat,args -p "$(echo $left | tr ' ' ',')" >&2
    kill -KILL $left 2>/dev/null
fi

if [ $check_shm = 1 ]; then
    ls -A /dev/shm | sort >"$tmp/shm.after"
    new=$(comm -13 "$tmp/shm.before" "$tmp/shm.after")
    [ -z "$new" ] || fail "new entries in /dev/shm: $new"
fi

[ $fails -eq 0 ] && echo "PASS" >&2
[ $fails -eq 0 ]
