#!/bin/bash
# bench_hosts.sh: the benchmark across namespace hosts, under its old name.
# scripts/bench_network.sh does the work: Shoal (tls, the encrypted
# default, and ofi, libfabric tcp;ofi_rxm in the clear) against Open MPI's
# OSHMEM over UCX TCP, 2 hosts x 1 PE and 2 hosts x 2 PEs in network
# namespaces and one host with the fabric forced, in one run. Not a test.
#
#   tests/netns/bench_hosts.sh [BUILD_DIR] [--hosts] [--onehost]
#
#   BUILD_DIR   a Shoal Release build to use (default: scripts/bench_network.sh
#               makes build-bench)
#   --hosts     the namespace setups only (2x1, 2x2)
#   --onehost   the one-host setup only (lo)
#   Settings: those of scripts/bench_network.sh (RUNS, QUICK, LIBS, OUT).
# Writes OUT/network.csv, network.md and network.png (OUT: docs/bench).
set -u
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
setups=
for a in "$@"; do
    case $a in
    --hosts) setups="$setups 2x1 2x2" ;;
    --onehost) setups="$setups lo" ;;
    -h | --help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "bench_hosts.sh: unknown option $a" >&2; exit 2 ;;
    *) BUILD=$(cd "$a" && pwd) || exit 2; export BUILD ;;
    esac
done
[ -n "$setups" ] && export SETUPS="${setups# }"
exec bash "$root/scripts/bench_network.sh"
