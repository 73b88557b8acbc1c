#!/bin/sh
# deps.sh: installs what building and testing Shoal needs on Debian 12, and
# nothing else. Skips apt entirely when everything is already there.
set -e
need=""
command -v cc >/dev/null 2>&1 || need="$need gcc libc6-dev"
command -v make >/dev/null 2>&1 || need="$need make"
command -v cmake >/dev/null 2>&1 || need="$need cmake"
command -v python3 >/dev/null 2>&1 || need="$need python3"
command -v pgrep >/dev/null 2>&1 || need="$need procps"
command -v nm >/dev/null 2>&1 || need="$need binutils"
command -v pkg-config >/dev/null 2>&1 || need="$need pkg-config"
pkg-config --exists libfabric 2>/dev/null || need="$need libfabric-dev"
command -v fi_info >/dev/null 2>&1 || need="$need libfabric-bin"
# tests/netns: hosts made of network namespaces, the bootstrap capture.
command -v ip >/dev/null 2>&1 || need="$need iproute2"
command -v tcpdump >/dev/null 2>&1 || need="$need tcpdump"
# oshrun's TLS bootstrap between hosts; the openssl tool makes test certificates.
dpkg -s libssl-dev >/dev/null 2>&1 || need="$need libssl-dev"
command -v openssl >/dev/null 2>&1 || need="$need openssl"
# Standard launchers and PMIx, for starting PEs under mpiexec/mpirun (tests/pmi).
for pkg in mpich libmpich-dev openmpi-bin libopenmpi-dev libpmix-dev; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need="$need $pkg"
done
for extra in "$@"; do
    dpkg -s "$extra" >/dev/null 2>&1 || need="$need $extra"
done
[ -z "$need" ] && exit 0
if [ "$(id -u)" != 0 ]; then
    echo "deps.sh: missing packages:$need; run as root or install them" >&2
    exit 1
fi
echo "deps.sh: installing$need"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends $need >/dev/null
