#!/bin/sh
# relro_put_test.sh OSHRUN PROG [TRANSPORT]: runs relro_put with 2 PEs over
# TRANSPORT (ofi, the default; tls; or shm, where PE 1's static data is
# mapped writable in PE 0). Pass: the job fails, the one line names the put,
# PE 1 and the read-only part, and no PE faulted (PE 1 was stopped by the
# launcher, not by SIGSEGV). Exit 0 pass, 1 fail, 77 skip.
oshrun=${1:?usage: relro_put_test.sh OSHRUN PROG [TRANSPORT]}
prog=${2:?}
transport=${3:-ofi}
out=$(mktemp "${TMPDIR:-/tmp}/shoal-relro.XXXXXX") || exit 1
trap 'rm -f "$out"' EXIT
SHMEM_TRANSPORT=$transport SHMEM_ENCRYPT=off "$oshrun" -n 2 --timeout 60 "$prog" >"$out" 2>&1
rc=$?
sed 's/^/    /' "$out"
grep -q '^SKIP' "$out" && exit 77
fail=0
[ "$rc" != 0 ] || { echo "FAIL: the job exited 0: the put into read-only memory was not refused"; fail=1; }
grep -q 'put.* PE 1.*read-only' "$out" ||
    { echo "FAIL: no line naming the put, PE 1 and the read-only part"; fail=1; }
if grep -q 'SIGSEGV\|SIGBUS\|Segmentation' "$out"; then
    echo "FAIL: a PE faulted"
    fail=1
fi
grep -q 'zero-length put returned' "$out" || { echo "FAIL: a zero-length put into RELRO was refused"; fail=1; }
grep -q 'put into PE 1.s RELRO returned\|table\[1\] is overwritten' "$out" && { echo "FAIL: the put went through"; fail=1; }
[ "$fail" = 0 ] && echo "PASS: refused with one line, no PE faulted"
exit $fail
