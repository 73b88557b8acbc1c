#!/bin/sh
# fused_bench.sh: runs bench/fused_overlap (GEMM + all-reduce, fused tile by
# tile against compute-then-sum_reduce) at 2 and 4 PEs and prints one
# Markdown table. Builds Shoal in Release first (in $BUILD, default
# build-fused-bench). Arguments go to the benchmark: [-r RUNS] [-t TILE_ROWS] [SIZE...]
#   sh scripts/fused_bench.sh                 # sizes 128 256 384 512, 7 runs
#   PES="2 4 8" sh scripts/fused_bench.sh -r 3 256
# Timings depend on the machine and its load: the header records both.
set -e
cd "$(dirname "$0")/.."
build=${BUILD:-build-fused-bench}
pes=${PES:-"2 4"}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DSHOAL_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target bench_fused_overlap oshrun >/dev/null
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for n in $pes; do
    "$build/tools/oshrun" -n "$n" --timeout 600 "$build/bench/bench_fused_overlap" "$@" >>"$out"
done
echo "fused_overlap on $(nproc) cores, load average$(uptime | sed 's/.*load average//')"
grep '^# fused' "$out" | head -1 | sed 's/^# fused_overlap: //'
echo
echo "| size | PEs | tiles | compute ms | reduce ms | unfused ms | fused comm ms | fused ms | unfused/fused | comm hidden |"
echo "|-----:|----:|------:|-----------:|----------:|-----------:|--------------:|---------:|--------------:|------------:|"
grep -v '^#' "$out" | sort -n -k1,1 -k2,2 | awk '{ printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10 }'
