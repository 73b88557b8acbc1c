#!/bin/sh
# gpu_check.sh: everything of the CUDA part that needs a GPU, in one run
# (issue 18), for a session lent a GPU machine (the device tool runs it in
# the repository root; about 10 minutes at most):
#   1. builds with SHOAL_CUDA=ON in build-gpu (Release) unless build-gpu
#      already holds the programs (build it here and carry it when the GPU
#      machine has no toolkit: the programs link cudart statically, and
#      libshoal loads libcudart.so.{11.0,12,13} at run time);
#   2. runs every GPU test (ctest -L cuda) and the proxy ring's tests; a
#      GPU test that skips is a failure here;
#   3. runs examples/cuda/gemm_allreduce at 2 and 4 PEs (checked against the
#      serial product) and bench/cuda/bench_cuda_put at 2 PEs;
#   4. writes the figures to docs/bench/gpu.md (and copies it and the logs
#      to $OUT when the device tool sets it).
# Exit status 0 only when every step passed.
set -u
cd "$(dirname "$0")/.."
build=${SHOAL_GPU_BUILD:-build-gpu}
out=${OUT:-}
log=$(mktemp "${TMPDIR:-/tmp}/shoal-gpu.XXXXXX")
status=0
step() { echo "== $*" | tee -a "$log"; }
fail() { echo "FAILED: $*" | tee -a "$log"; status=1; }
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64:/usr/lib/x86_64-linux-gnu"

step "device"
(nvidia-smi -L || echo "nvidia-smi not found") 2>&1 | tee -a "$log"
if [ ! -x "$build/tests/cuda/cuda_device_api" ]; then
    step "build ($build, Release, SHOAL_CUDA=ON)"
    nvcc=""
    [ -x /usr/local/cuda/bin/nvcc ] && nvcc="-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc"
    if ! cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DSHOAL_CUDA=ON $nvcc >>"$log" 2>&1 ||
       ! cmake --build "$build" -j"$(nproc)" --target oshrun shoal cuda_proxy_ring cuda_gpu_probe cuda_gpu_heap \
            cuda_device_api cuda_device_proxy example_cuda_gemm_allreduce bench_cuda_put >>"$log" 2>&1; then
        tail -n 30 "$log"
        fail "build"
        [ -n "$out" ] && cp "$log" "$out/gpu_check.log"
        exit 1
    fi
fi
oshrun=$build/tools/oshrun

step "GPU tests (ctest -L cuda) and the proxy ring (ctest -L proxy)"
ctlog=$(mktemp "${TMPDIR:-/tmp}/shoal-gpu-ctest.XXXXXX")
(cd "$build" && timeout 300 ctest --output-on-failure --timeout 120 -L 'cuda|proxy') >"$ctlog" 2>&1 || fail "ctest"
cat "$ctlog" >>"$log"
grep -E '(Passed|Failed|Skipped|Timeout|Not Run)' "$ctlog" | sed 's/^ *[0-9]*\/[0-9]* //'
grep -q '(Skipped)' "$ctlog" && fail "a GPU test skipped on a machine with a GPU"
results=$(grep -E '^[0-9]+% tests passed' "$ctlog")

step "example: gemm_allreduce (fused GEMM + all-reduce from the kernel vs GEMM then shmem_float_sum_reduce)"
gemm=""
for args in "2 256 256 512 3" "4 256 256 512 3" "2 1024 1024 2048 5" "4 1024 1024 2048 5"; do
    set -- $args
    n=$1; shift
    line=$(timeout 120 "$oshrun" -n "$n" --timeout 110 "$build/examples/cuda/example_cuda_gemm_allreduce" "$@" 2>&1)
    rc=$?
    echo "$line" | tee -a "$log"
    [ $rc = 0 ] || fail "gemm_allreduce -n $n $*"
    gemm="$gemm| \`oshrun -n $n example_cuda_gemm_allreduce $*\` | $(echo "$line" | grep '^gemm_allreduce' | tail -n 1) |
"
done

step "benchmark: bench_cuda_put (2 PEs sharing the GPU)"
bench=$(timeout 240 "$oshrun" -n 2 --timeout 230 "$build/bench/cuda/bench_cuda_put" 2>&1)
rc=$?
echo "$bench" | tee -a "$log"
[ $rc = 0 ] || fail "bench_cuda_put"

step "docs/bench/gpu.md"
{
    echo "# GPU figures (issue 18)"
    echo
    echo "Written by \`scripts/gpu_check.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC'), status $([ $status = 0 ] && echo passed || echo FAILED)."
    echo
    echo "Device: $(nvidia-smi -L 2>/dev/null | head -n 1)"
    echo
    echo "## Tests"
    echo
    echo "\`ctest -L 'cuda|proxy'\`: ${results:-no summary}"
    echo
    echo "## Fused GEMM + all-reduce (examples/cuda/gemm_allreduce.cu)"
    echo
    echo "| command | result |"
    echo "|---|---|"
    printf '%s' "$gemm"
    echo
    echo "## Device put vs cudaMemcpy into the peer's mapping (bench/cuda/bench_cuda_put.cu, 2 PEs, one GPU)"
    echo
    echo '```'
    echo "$bench"
    echo '```'
    echo
    echo "Two processes share the GPU; without MPS the driver time-slices their kernels, which the device ping-pong latency includes."
} >docs/bench/gpu.md
cat docs/bench/gpu.md
if [ -n "$out" ]; then
    cp docs/bench/gpu.md "$out/gpu.md"
    cp "$log" "$out/gpu_check.log"
fi
rm -f "$log" "$ctlog"
[ $status = 0 ] && echo "gpu_check: all passed" || echo "gpu_check: FAILED"
exit $status
