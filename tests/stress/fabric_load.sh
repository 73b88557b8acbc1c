#!/bin/sh
# fabric_load.sh OSHRUN NBI_QUIET API_CTX API_THREADS_CTX: the network
# transports under CPU load. HOGS busy loops (default 2) run beside the PEs
# while, over ofi (libfabric tcp;ofi_rxm on loopback) and tls: nbi_quiet
# (every nbi get and put checked after quiet) at 2 and 4 PEs, threads_ctx at
# 4 PEs and ctx at 2 PEs. Every run has its own time limit, so a hang fails
# naming the run; the hogs end with the script.
# A longer soak: SHOAL_STRESS_SOAK_ROUNDS=N repeats it N times with every
# program at 2 and 4 PEs; HOGS=4 loads harder; SHOAL_STRESS_ROUNDS sets
# nbi_quiet's rounds (default 30); SHOAL_STRESS_TRANSPORTS="ofi" keeps to one.
oshrun=$1 nbi=$2 ctx=$3 tctx=$4
soak=${SHOAL_STRESS_SOAK_ROUNDS:-0}
transports=${SHOAL_STRESS_TRANSPORTS:-"ofi tls"}
hogs=${HOGS:-2}
limit=${SHOAL_STRESS_RUN_LIMIT:-60}
export SHOAL_STRESS_ROUNDS=${SHOAL_STRESS_ROUNDS:-30}
if [ "$soak" -gt 0 ]; then
    runs="$nbi:2 $nbi:4 $ctx:2 $ctx:4 $tctx:2 $tctx:4"
    rounds=$soak
else
    runs="$nbi:2 $nbi:4 $tctx:4 $ctx:2"
    rounds=1
fi
out=$(mktemp "${TMPDIR:-/tmp}/fabric_load.XXXXXX") || exit 1
pids=
cleanup() {
    for p in $pids; do kill "$p" 2>/dev/null; done
    for p in $pids; do wait "$p" 2>/dev/null; done
    rm -f "$out"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
i=0
while [ "$i" -lt "$hogs" ]; do
    sh -c 'while :; do :; done' &
    pids="$pids $!"
    i=$((i + 1))
done
failed=0
r=1
while [ "$r" -le "$rounds" ]; do
    for tr in $transports; do
        for run in $runs; do
            prog=${run%:*} n=${run##*:}
            name="round $r: $(basename "$prog") over $tr at $n PEs"
            start=$(date +%s)
            if [ "$tr" = ofi ]; then
                env SHMEM_TRANSPORT=ofi 'FI_PROVIDER=tcp;ofi_rxm' FI_TCP_IFACE=lo \
                    "$oshrun" -n "$n" --timeout "$limit" "$prog" >"$out" 2>&1
            else
                env SHMEM_TRANSPORT=tls "$oshrun" -n "$n" --timeout "$limit" "$prog" >"$out" 2>&1
            fi
            rc=$?
            secs=$(($(date +%s) - start))
            if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ]; then
                echo "FAIL $name: exit $rc after $secs s"
                tail -n 20 "$out"
                failed=$((failed + 1))
            else
                echo "ok   $name ($secs s)"
            fi
        done
    done
    r=$((r + 1))
done
[ "$failed" -eq 0 ] || { echo "$failed run(s) failed"; exit 1; }
