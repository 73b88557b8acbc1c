#!/bin/bash
# exit_netns.sh MODE OSHRUN PROG NETNS_TEST: exit_prog MODE on 2 hosts x 2
# PEs (network namespaces, tests/netns/netns_test.sh's "api" job, ofi
# between hosts). Each PE's own stderr is kept apart (a wrapper), so the
# warning can be counted for the whole job: exactly once. For exit_mid the
# job must fail with both hosts' oshrun naming PE 3 on node 1.
# Exit 0 pass, 1 fail, 77 skip (no root or ip netns: netns_test.sh says).
set -u
mode=$1 oshrun=$2 prog=$3 netns_test=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
cat >"$work/pe.sh" <<WRAP
#!/bin/sh
exec "$prog" "\$@" 2>>"$work/pe-err.\$\$"
WRAP
chmod 755 "$work/pe.sh"
bash "$netns_test" api 2x2 "$oshrun" "$work/pe.sh" "$mode" >"$work/log" 2>&1
rc=$?
[ $rc = 77 ] && { cat "$work/log"; exit 77; }
fail() { echo "FAIL ($mode, 2 hosts x 2 PEs): $*"; cat "$work/log"; cat "$work"/pe-err.* 2>/dev/null; exit 1; }
WARN="returned from main \(or called exit\) without calling shmem_finalize; Shoal finalized (it|them) at exit"
pe_lines=$(cat "$work"/pe-err.* 2>/dev/null)
case $mode in
all | late)
    [ $rc = 0 ] || fail "the job failed"
    want="^shoal: warning: PE 0 and 3 other PEs $WARN\$"
    [ "$mode" = late ] && want="^shoal: warning: PE 1 and 2 other PEs $WARN\$"
    [ "$(printf '%s\n' "$pe_lines" | grep -Ec -- "$want")" = 1 ] || fail "not exactly one warning for the job"
    [ "$(printf '%s\n' "$pe_lines" | grep -c .)" = 1 ] || fail "the PEs printed more than the warning" ;;
exit_mid)
    [ $rc != 0 ] || fail "the job passed although PE 3 left while the others waited in a barrier"
    n=$(grep -Ec "oshrun: PE 3 on node 1: returned from main \(or called exit\) without calling shmem_finalize while PEs 0-2 had not reached it" "$work/log")
    [ "$n" = 2 ] || fail "$n oshrun lines name PE 3, want one per host (2)"
    [ -z "$pe_lines" ] || fail "the PEs printed: $pe_lines" ;;
*) fail "unknown mode" ;;
esac
echo "ok ($mode, 2 hosts x 2 PEs)"
