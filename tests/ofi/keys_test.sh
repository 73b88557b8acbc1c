#!/bin/sh
# keys_test.sh OSHRUN PROG: the memory keys of the ofi transport are fresh
# in every job. Runs "PROG keys" (ofi_transport_test) twice with 2 PEs;
# every key printed must be above 64 and no key of the first job may appear
# in the second. Exit 0 pass, 1 fail.
oshrun=${1:?usage: keys_test.sh OSHRUN PROG}
prog=${2:?}
out=$(mktemp "${TMPDIR:-/tmp}/shoal-keys.XXXXXX") || exit 1
trap 'rm -f "$out" "$out.1" "$out.2"' EXIT
for run in 1 2; do
    "$oshrun" -n 2 --timeout 100 "$prog" keys >"$out.$run" 2>"$out" || {
        echo "FAIL: run $run exited non-zero: $(cat "$out")"
        exit 1
    }
done
fail=0
for run in 1 2; do
    n=$(grep -c '^keys PE [01]:' "$out.$run")
    [ "$n" = 2 ] || { echo "FAIL: run $run printed keys for $n of 2 PEs"; fail=1; }
    for k in $(sed -n 's/^keys PE [0-9]*://p' "$out.$run"); do
        [ ${#k} -gt 2 ] || [ "$k" -gt 64 ] || { echo "FAIL: run $run has key $k (0..64 are guessable)"; fail=1; }
    done
done
first=$(sed -n 's/^keys PE [0-9]*://p' "$out.1")
second=$(sed -n 's/^keys PE [0-9]*://p' "$out.2")
for k in $first; do
    for j in $second; do
        [ "$k" = "$j" ] && { echo "FAIL: key $k appears in both jobs"; fail=1; }
    done
done
echo "run 1:" $first
echo "run 2:" $second
[ "$fail" = 0 ] && echo "PASS: $(echo $first $second | wc -w) keys, all above 64, none reused"
exit $fail
