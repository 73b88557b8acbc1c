#!/bin/bash
# Hang-report and SHMEM_DEBUG collective-check cases (CMakeLists.txt).
# Usage: cases.sh CASE OSHRUN HANG_PE. Each case runs hang_pe under oshrun
# and checks the report's lines (call, arguments, values, team, number)
# and its verdict, or the one-line collective mismatch.
set -u
case_name=$1 OSHRUN=$2 PE=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL ($case_name): $*"; echo "--- stderr:"; cat "$dir/err"; echo "--- stdout:"; cat "$dir/out"; exit 1; }
expect() { grep -Eq -- "$1" "$dir/${2:-err}" || fail "no line matching: $1"; }
expect_rc() { [ "$rc" = "$1" ] || fail "exit status $rc, expected $1"; }
run() { env "$@" >"$dir/out" 2>"$dir/err"; rc=$?; }
wait_ready() {
    i=0
    until grep -q ready "$dir/out" || [ $i -ge 200 ]; do sleep 0.05; i=$((i + 1)); done
    grep -q ready "$dir/out" || fail "the job did not start"
    sleep 0.3 # into the wait
}
wait_line='shmem_long_wait_until\(&flag \[static\], SHMEM_CMP_EQ'

case $case_name in
barrier_vs_wait_2 | barrier_vs_wait_4)
    n=${case_name##*_}
    run "$OSHRUN" -n "$n" --timeout 2 "$PE" barrier_vs_wait
    expect_rc 124
    expect '^PE 0: shmem_barrier_all \(world, #3\), blocked [0-9.]+ s$'
    # A wait stamps its record at its first failed poll: the age still counts from there.
    for p in $(seq 1 $((n - 1))); do expect "^PE $p: $wait_line, 1\) current 0, blocked (1\.[5-9]|2\.[0-9]) s$"; done
    expect '^verdict: PE 0 is in shmem_barrier_all \(world, #3\) while PE 1 waits in shmem_long_wait_until: the PEs disagree on the sequence of collectives$'
    expect '^oshrun: job timed out after 2 seconds'
    ;;
lost_wait_spin | lost_wait_sleep | lost_wait_8)
    n=2 spin=0
    [ "$case_name" = lost_wait_spin ] && spin=10000000
    [ "$case_name" = lost_wait_8 ] && n=8
    run SHMEM_WAIT_SPIN=$spin "$OSHRUN" -n $n --timeout 2 "$PE" lost_wait
    expect_rc 124
    expect '^PE 0: in shmem_finalize, waiting for the other PEs'
    expect "^PE 1: $wait_line, 7\) current 3, blocked (1\.[5-9]|2\.[0-9]) s$"
    expect '^verdict: PE 1 waits in shmem_long_wait_until\(&flag \[static\], SHMEM_CMP_EQ, 7\) current 3, but every other PE has finished'
    ;;
poll)
    run "$OSHRUN" -n 2 --timeout 2 "$PE" poll
    expect_rc 124
    expect '^PE 1: in no blocking Shoal call \(last: shmem_long_test\(&flag \[static\], SHMEM_CMP_EQ, 5\) current 0\)$'
    expect '^verdict: PE 1 polls shmem_long_test\(&flag \[static\], SHMEM_CMP_EQ, 5\) current 0, but every other PE has finished'
    ;;
lock)
    run "$OSHRUN" -n 2 --timeout 2 "$PE" lock
    expect_rc 124
    expect '^PE 0: shmem_barrier_all \(world, #2\), blocked'
    expect '^PE 0: holds the lock at &lock \[static\]$'
    expect '^PE 1: shmem_set_lock\(&lock \[static\]\), blocked'
    expect '^verdict: PE 1 waits in shmem_set_lock\(&lock \[static\]\) for a lock PE 0 holds, and PE 0 is blocked in shmem_barrier_all \(world, #2\): the lock is never released$'
    ;;
two_colls)
    run "$OSHRUN" -n 2 --timeout 2 "$PE" two_colls
    expect_rc 124
    expect '^PE 0: shmem_long_sum_reduce \(world, #1, 8 B\), blocked'
    expect '^PE 1: shmem_team_sync \(shared, #1\), blocked'
    expect '^verdict: PE 0 is in shmem_long_sum_reduce \(world, #1, 8 B\) while PE 1, a member of that team, is in shmem_team_sync \(shared, #1\): the PEs disagree on the sequence of collectives$'
    ;;
usr1 | where)
    "$OSHRUN" -n 2 --timeout 20 "$PE" live >"$dir/out" 2>"$dir/err" &
    pid=$!
    wait_ready
    if [ "$case_name" = usr1 ]; then
        kill -USR1 $pid
        sleep 1.5
        src=err
    else
        "$OSHRUN" --where $pid >"$dir/where" 2>&1 || fail "oshrun --where $pid failed: $(cat "$dir/where")"
        src=where
    fi
    kill -TERM $pid
    wait $pid
    rc=$?
    expect_rc 143
    expect '^PE 0: shmem_long_wait_until\(heap\+0x[0-9a-f]+, SHMEM_CMP_GT, 41\) current 0, blocked [0-9.]+ s$' $src
    expect '^PE 1: in shmem_finalize, waiting for the other PEs' $src
    # The job went on after the report: stopped by the TERM only.
    expect '^oshrun: job stopped by SIGTERM'
    ;;
multinode)
    # Two oshruns on 127.0.0.1, two PEs each: SIGUSR1 to node 0 gathers
    # node 1's lines too; at the timeout a node reports its own PEs.
    "$OSHRUN" --make-secret "$dir/secret" >/dev/null || fail "--make-secret"
    export SHMEM_BOOTSTRAP_SECRET_FILE="$dir/secret" FI_TCP_IFACE=lo
    port=$((20000 + RANDOM % 30000))
    "$OSHRUN" --nnodes 2 --node-rank 0 --rendezvous 127.0.0.1:$port -n 2 --timeout 6 "$PE" barrier_vs_wait \
        >"$dir/out" 2>"$dir/err" &
    pid0=$!
    "$OSHRUN" --nnodes 2 --node-rank 1 --rendezvous 127.0.0.1:$port -n 2 --timeout 6 "$PE" barrier_vs_wait \
        >"$dir/out1" 2>"$dir/err1" &
    pid1=$!
    # Every PE past its barriers, then into its wait.
    i=0
    until [ "$(cat "$dir/out" "$dir/out1" | grep -c ready)" -ge 4 ] || [ $i -ge 100 ]; do sleep 0.05; i=$((i + 1)); done
    sleep 0.5
    kill -USR1 $pid0
    wait $pid0
    rc=$?
    wait $pid1
    expect_rc 124
    # The SIGUSR1 report: the whole job, from node 0.
    expect '^oshrun: where each PE is:$'
    expect "^PE 3: $wait_line, 1\) current 0, blocked"
    expect '^verdict: PE 0 is in shmem_barrier_all \(world, #3\) while PE 1 waits in shmem_long_wait_until'
    # At the timeout the node whose clock runs out first reports its own
    # PEs; its fault may stop the other before that one's timeout.
    grep -Eq '^oshrun: where each PE is \(this host.s PEs\):$' "$dir/err" "$dir/err1" ||
        fail "no per-host report at the timeout"
    ;;
debug_routine_2 | debug_routine_4 | debug_root_2 | debug_root_4 | debug_size_2 | debug_size_4)
    what=${case_name#debug_} n=${what##*_} what=${what%_*}
    run SHMEM_DEBUG=1 "$OSHRUN" -n "$n" --timeout 20 "$PE" "$what"
    expect_rc 1
    case $what in
    routine) m='collective mismatch on team world #1: PE 0 called shmem_broadcastmem\(root 0, 64 B\), PE 1 called shmem_barrier_all \(SHMEM_DEBUG\)' ;;
    root) m='collective mismatch on team world #1: PE 0 called shmem_broadcastmem\(root 0, 64 B\), PE 1 called shmem_broadcastmem\(root 1, 64 B\) \(SHMEM_DEBUG\)' ;;
    size) m='collective mismatch on team world #2: PE 0 called shmem_broadcastmem\(root 0, 64 B\), PE 1 called shmem_broadcastmem\(root 0, 32 B\) \(SHMEM_DEBUG\)' ;;
    esac
    expect "^oshrun: PE [0-9]: shmem_[a-z_]+: $m; stopping"
    [ "$(grep -c 'collective mismatch' "$dir/err")" = 1 ] || fail "not exactly one mismatch line"
    grep -q 'timed out' "$dir/err" && fail "the job hung until the timeout"
    ;;
*) echo "unknown case $case_name"; exit 2 ;;
esac
echo "ok ($case_name)"
