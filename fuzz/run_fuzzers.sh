#!/bin/sh
# run_fuzzers.sh [SECONDS]: builds the libFuzzer targets with clang in
# build-fuzz/ and runs each for SECONDS (default 30), all at once. New
# corpus entries go to build-fuzz/corpus/<name>/ (kept between runs; the
# committed seeds in fuzz/corpus/ are only read); crashes go to
# build-fuzz/artifacts/<name>/. Exits non-zero if any target crashed,
# leaked, timed out or ran out of memory: copy the artifact into
# fuzz/regressions/<name>/ so tests/fuzz_regress replays it forever.
# Environment: SHOAL_FUZZ_BUILD (build dir), SHOAL_FUZZ_JOBS (targets run at
# once; default: all).
set -e
cd "$(dirname "$0")/.."
secs=${1:-30}
case $secs in '' | *[!0-9]*) echo "usage: $0 [SECONDS]" >&2; exit 2 ;; esac
build=${SHOAL_FUZZ_BUILD:-build-fuzz}
targets="config oshrun_args wire"

# clang and its libFuzzer/sanitizer runtimes (Debian 12: clang 14).
sh scripts/deps.sh clang libclang-rt-14-dev
CC=clang cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSHOAL_BUILD_FUZZERS=ON \
    -DSHOAL_BUILD_TESTS=OFF -DSHOAL_BUILD_EXAMPLES=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target fuzzers

start=$(date +%s)
pids=""
for t in $targets; do
    mkdir -p "$build/corpus/$t" "$build/artifacts/$t"
    rm -f "$build/fuzz_$t.rc"
    extra=""
    [ -f "fuzz/dict/$t.dict" ] && extra="-dict=fuzz/dict/$t.dict"
    seeds="fuzz/corpus/$t"
    [ -d "fuzz/regressions/$t" ] && seeds="$seeds fuzz/regressions/$t"
    echo "== fuzz_$t: ${secs}s (log: $build/fuzz_$t.log)"
    # shellcheck disable=SC2086
    (ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
        "$build/fuzz/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$build/artifacts/$t/" $extra \
        "$build/corpus/$t" $seeds >"$build/fuzz_$t.log" 2>&1 && rc=0 || rc=$?
     echo $rc >"$build/fuzz_$t.rc") &
    pids="$pids $!"
done
# shellcheck disable=SC2086
wait $pids || true

failed=0
for t in $targets; do
    rc=$(cat "$build/fuzz_$t.rc" 2>/dev/null || echo missing)
    stats=$(grep -E '^stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb)' \
        "$build/fuzz_$t.log" | sed 's/^stat:://' | tr -s ' \n' ' ' || true)
    cov=$(grep -E '^#[0-9]+.*(DONE|INITED)' "$build/fuzz_$t.log" | tail -n 1 | sed -n 's/.*\(cov: [0-9]*\).*\(ft: [0-9]*\).*/\1 \2/p' || true)
    if [ "$rc" = 0 ]; then
        echo "fuzz_$t: ok ($cov; $stats)"
    else
        failed=1
        echo "fuzz_$t: FAILED (exit $rc); last lines of $build/fuzz_$t.log:" >&2
        tail -n 40 "$build/fuzz_$t.log" >&2
        for f in "$build/artifacts/$t"/*; do
            [ -e "$f" ] && echo "fuzz_$t: crashing input $f; keep it: cp $f fuzz/regressions/$t/" >&2
        done
    fi
done
echo "fuzzing took $(($(date +%s) - start))s"
exit $failed
