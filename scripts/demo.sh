#!/bin/sh
# demo.sh: builds and installs Shoal, compiles the examples with the
# installed oshcc as a user would, and runs each on 4 PEs with oshrun; then
# pip-installs the Python package (python/) and runs its halo exchange.
# It installs only what building and running needs: no Open MPI, whose
# oshcc and oshrun in /usr/bin have the same names as Shoal's.
set -e
cd "$(dirname "$0")/.."
# The Python demo's build needs only numpy, pip, venv and the headers.
sh scripts/deps.sh --build-only python3-numpy python3-dev python3-venv python3-pip python3-setuptools
prefix="$PWD/build/install"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DSHOAL_BUILD_TESTS=OFF -DCMAKE_INSTALL_PREFIX="$prefix" >/dev/null
cmake --build build -j"$(nproc)"
cmake --install build >/dev/null
. "$prefix/bin/set_env.sh"
mkdir -p build/demo
for ex in hello ring_put sum_to_root strided_gather gemm_allreduce gemm_reducescatter allgather_gemm \
    moe_dispatch_combine halo_exchange histogram; do
    oshcc -O2 -o "build/demo/$ex" "examples/$ex.c"
    echo "== oshrun -n 4 $ex"
    oshrun -n 4 --timeout 60 "build/demo/$ex"
done
# The Python package in a venv over Debian's numpy, and its halo exchange.
/usr/bin/python3 -m venv --system-site-packages build/pyvenv
(cd build && rm -rf pysrc && cp -r ../python pysrc && rm -rf pysrc/build pysrc/*.egg-info &&
    pyvenv/bin/python -m pip install -q --no-build-isolation ./pysrc)
echo "== oshrun -n 4 python3 python/examples/halo_numpy.py"
oshrun -n 4 --timeout 60 build/pyvenv/bin/python python/examples/halo_numpy.py
echo "== demo finished: Shoal is installed in $prefix (source $prefix/bin/set_env.sh to use it)"
