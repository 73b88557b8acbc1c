#!/bin/sh
# test.sh: builds Shoal and runs every test (unit, API under oshrun with 1,
# 2, 4 and 8 PEs, launcher, bad input, names, install), then the same tests
# under AddressSanitizer + UndefinedBehaviorSanitizer.
set -e
cd "$(dirname "$0")/.."
sh scripts/deps.sh
jobs=$(nproc)

run_suite() { # build-dir, extra cmake args...
    dir=$1; shift
    cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
    cmake --build "$dir" -j"$jobs"
    (cd "$dir" && ctest --output-on-failure -j"$jobs" --timeout 300)
}

echo "== release build: all tests"
run_suite build-test
echo "== install check: oshcc, pkg-config and find_package(Shoal) from an installed tree"
sh tests/install/check_install.sh "$PWD/build-test"
if [ "${SHOAL_SKIP_SANITIZERS:-0}" != 1 ]; then
    echo "== address + undefined sanitizers: all tests"
    ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        run_suite build-asan -DSHOAL_SANITIZE=address,undefined
fi
echo "== all test suites passed"
