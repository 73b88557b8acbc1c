#!/bin/sh
# demo.sh: builds and installs Shoal, compiles the examples with the
# installed oshcc as a user would, and runs each on 4 PEs with oshrun.
# It installs only what building and running needs: no Open MPI, whose
# oshcc and oshrun in /usr/bin have the same names as Shoal's.
set -e
cd "$(dirname "$0")/.."
sh scripts/deps.sh --build-only
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
echo "== demo finished: Shoal is installed in $prefix (source $prefix/bin/set_env.sh to use it)"
