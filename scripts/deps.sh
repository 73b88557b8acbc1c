#!/bin/sh
# deps.sh [--build-only] [package...]: installs what Shoal needs on Debian 12,
# and nothing else. Skips apt entirely when everything is already there.
#   --build-only  only what building, installing and running Shoal needs
#                 (scripts/demo.sh). Without it, also what the tests need
#                 (scripts/test.sh), Open MPI among them.
#   package...    more Debian packages a caller needs (valgrind, clang, ...)
# Open MPI is a test peer only: it installs its own oshcc and oshrun in
# /usr/bin, which a user of Shoal alone should not get.
set -e
build_only=0
if [ "${1:-}" = --build-only ]; then
    build_only=1
    shift
fi
need=""

# Building, installing, running.
command -v cc >/dev/null 2>&1 || need="$need gcc libc6-dev"
command -v make >/dev/null 2>&1 || need="$need make"
command -v cmake >/dev/null 2>&1 || need="$need cmake"
command -v pkg-config >/dev/null 2>&1 || need="$need pkg-config"
pkg-config --exists libfabric 2>/dev/null || need="$need libfabric-dev"
# oshrun's TLS bootstrap between hosts.
dpkg -s libssl-dev >/dev/null 2>&1 || need="$need libssl-dev"

if [ $build_only = 0 ]; then
    command -v python3 >/dev/null 2>&1 || need="$need python3"
    command -v pgrep >/dev/null 2>&1 || need="$need procps"
    command -v nm >/dev/null 2>&1 || need="$need binutils"
    command -v fi_info >/dev/null 2>&1 || need="$need libfabric-bin"
    # The C++ wrapper's test (tests/install) and the C++ header test.
    command -v c++ >/dev/null 2>&1 || need="$need g++"
    # tests/netns: hosts made of network namespaces, the bootstrap capture.
    command -v ip >/dev/null 2>&1 || need="$need iproute2"
    command -v tcpdump >/dev/null 2>&1 || need="$need tcpdump"
    # The openssl tool makes test certificates.
    command -v openssl >/dev/null 2>&1 || need="$need openssl"
    # Standard launchers and PMIx, for starting PEs under mpiexec/mpirun
    # (tests/pmi); Open MPI is also the peer of the comparisons.
    for pkg in mpich libmpich-dev openmpi-bin libopenmpi-dev libpmix-dev; do
        dpkg -s "$pkg" >/dev/null 2>&1 || need="$need $pkg"
    done
    # The Python package's build and tests (python/tests/run.sh); Debian's
    # torch and its C++ headers build shoal._torch, the torch.distributed
    # backend. torch's headers include pybind11's, which libtorch-dev only
    # recommends (and apt here installs no recommends).
    for pkg in python3-dev python3-venv python3-setuptools python3-pip python3-wheel python3-numpy python3-pytest \
        python3-mpi4py python3-torch libtorch-dev pybind11-dev; do
        dpkg -s "$pkg" >/dev/null 2>&1 || need="$need $pkg"
    done
    # scripts/trace_plot.py (SHMEM_TRACE as a PNG) and its test, tests/observe.
    dpkg -s python3-matplotlib >/dev/null 2>&1 || need="$need python3-matplotlib"
    # Issue 18: CI compiles the CUDA part with Debian's nvcc (11.8, in the
    # contrib and non-free components; about 3.5 minutes and 5 GiB here).
    # It takes clang++-14 as host compiler (gcc 12 is too new for it).
    for pkg in nvidia-cuda-toolkit clang; do
        dpkg -s "$pkg" >/dev/null 2>&1 || need="$need $pkg"
    done
fi
for extra in "$@"; do
    dpkg -s "$extra" >/dev/null 2>&1 || need="$need $extra"
done
[ -z "$need" ] && exit 0
if [ "$(id -u)" != 0 ]; then
    echo "deps.sh: missing packages:$need; run as root (or with sudo) or install them" >&2
    exit 1
fi
echo "deps.sh: installing$need"
export DEBIAN_FRONTEND=noninteractive
# nvidia-cuda-toolkit lives in Debian's contrib and non-free components:
# add them to the Debian sources (one-line or deb822 format) that lack them.
case " $need " in
*" nvidia-cuda-toolkit "*)
    for list in /etc/apt/sources.list /etc/apt/sources.list.d/debian.sources; do
        [ -f "$list" ] || continue
        sed -i -E '/^(deb|deb-src) .*debian/{/ contrib/!s/ main( |$)/ main contrib non-free non-free-firmware\1/}
                   /^Components:/{/contrib/!s/ main( |$)/ main contrib non-free non-free-firmware\1/}' "$list"
    done ;;
esac
apt-get update -qq
apt-get install -y -qq --no-install-recommends $need >/dev/null
