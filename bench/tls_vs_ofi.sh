#!/bin/bash
# tls_vs_ofi.sh: the encrypted transport (tls) against libfabric tcp in the
# clear (ofi), in one run, on one host with the fabric forced and between
# network namespace hosts; writes docs/bench/hosts.md (and hosts.csv).
#
#   sudo bash bench/tls_vs_ofi.sh        # as root: namespaces
#
# scripts/bench_network.sh does the measuring (its settings apply: RUNS,
# QUICK, SETUPS, BUILD); this keeps Shoal's two transports only and writes
# the issue's figures: 1 MiB put and get bandwidth, 8-byte put + quiet,
# fetch_add. Timings are reported, never asserted.
set -u
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${OUT:-$root/docs/bench}
build=${BUILD:-$root/build-bench}
case $build in /*) ;; *) build=$root/$build ;; esac
work=$(mktemp -d "${TMPDIR:-/tmp}/shoal-tls-vs-ofi.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
STREAM_FLOOR=1 LIBS="shoal-tls shoal-ofi" OUT="$work" BUILD="$build" bash "$root/scripts/bench_network.sh" || exit $?
# Right after the libraries ran, the cipher's own ceiling on this machine
# (bench/aead_floor.c); the floor of a user-space TLS stream with no library
# (bench/stream_floor.c) ran in each setup beside them (STREAM_FLOOR=1).
cc -O2 -std=c11 -o "$build/aead_floor" "$root/bench/aead_floor.c" -lcrypto -lpthread ||
    { echo "tls_vs_ofi.sh: bench/aead_floor.c does not build" >&2; exit 1; }
"$build/aead_floor" >"$work/aead.txt" || exit 1
mkdir -p "$OUT"
cp "$work/network.csv" "$OUT/hosts.csv"
/usr/bin/python3 "$root/bench/tls_vs_ofi_report.py" "$work/network.csv" "$build/bench-network-logs/environment" \
    "sudo bash bench/tls_vs_ofi.sh${RUNS:+ (RUNS=$RUNS)}" "$work/aead.txt" >"$OUT/hosts.md" || exit 1
echo "== wrote $OUT/hosts.md and $OUT/hosts.csv"
