#!/bin/bash
# exit_test.sh MODE NP OSHRUN PROG: a job whose PEs leave main without
# shmem_finalize (exit_prog.c), judged from outside: exit status, that the
# warning or the error appears exactly once for the job (not once per PE),
# that it names the right PEs, that no data check failed, and how long the
# job took. The environment (SHMEM_TRANSPORT) comes from CTest.
set -u
mode=$1 np=$2 oshrun=$3 prog=$4
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
fail() { echo "FAIL ($mode, $np PEs): $*"; echo "--- stdout"; cat "$out"; echo "--- stderr"; cat "$err"; exit 1; }
once() { # once ERE: exactly one stderr line matches
    local c
    c=$(grep -Ec -- "$1" "$err")
    [ "$c" = 1 ] || fail "$c stderr lines match '$1', expected exactly 1"
}
WARN="returned from main \(or called exit\) without calling shmem_finalize; Shoal finalized (it|them) at exit"
start=$(date +%s)
timeout -s KILL 90 "$oshrun" -n "$np" --timeout 60 "$prog" "$mode" >"$out" 2>"$err"
rc=$?
took=$(($(date +%s) - start))
grep -q FAIL "$out" && fail "a data check failed"
last=$((np - 1))
others() { # the warning's count of other PEs
    case $1 in 0) echo "" ;; 1) echo " and 1 other PE" ;; *) echo " and $1 other PEs" ;; esac
}
case $mode in
all)
    [ $rc = 0 ] || fail "exit status $rc, expected 0"
    once "^shoal: warning: PE 0$(others $last) $WARN\$"
    [ "$(grep -c . "$err")" = 1 ] || fail "stderr holds more than the warning" ;;
late)
    [ $rc = 0 ] || fail "exit status $rc, expected 0"
    grep -q "PE 0 read every PE after the computation" "$out" || fail "PE 0 did not finish"
    if [ "$np" = 1 ]; then
        [ ! -s "$err" ] || fail "stderr is not empty"
    else
        once "^shoal: warning: PE 1$(others $((np - 2))) $WARN\$"
    fi ;;
mixed)
    [ $rc = 0 ] || fail "exit status $rc, expected 0"
    if [ "$np" = 1 ]; then
        [ ! -s "$err" ] || fail "stderr is not empty"
    else
        once "^shoal: warning: PE 1$(others $((np / 2 - 1))) $WARN\$"
    fi ;;
exit_mid | coll_mid)
    if [ "$np" = 1 ]; then
        [ $rc = 0 ] || fail "exit status $rc, expected 0"
        once "^shoal: warning: PE 0 $WARN\$"
    else
        [ $rc != 0 ] || fail "exit status 0 for a job whose PE $last left while the others waited for it"
        pes="PEs 0-$((last - 1))"
        [ $last = 1 ] && pes="PE 0"
        once "PE $last: returned from main \(or called exit\) without calling shmem_finalize while $pes had not reached it and waits? in Shoal calls that need this PE"
        [ "$(grep -c . "$err")" = 1 ] || fail "stderr holds more than the one line"
        [ "$took" -le 20 ] || fail "the job took $took s to end"
    fi ;;
fail3 | put_exit)
    # A failure status is kept, not finalized away: the launcher names it.
    [ $rc = 3 ] || fail "exit status $rc, expected 3"
    once "^oshrun: PE $last \(pid [0-9]+\) exited with status 3"
    grep -q "without calling shmem_finalize" "$err" && fail "a failed PE was finalized at exit"
    [ "$took" -le 20 ] || fail "the job took $took s to end" ;;
*) fail "unknown mode" ;;
esac
echo "ok ($mode, $np PEs, exit status $rc, $took s)"
