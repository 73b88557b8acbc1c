#!/bin/sh
# test.sh: builds Shoal and runs every test (unit, API under oshrun with 1,
# 2, 4 and 8 PEs, launcher, bad input, names, install), then every API test
# over the libfabric transport (SHMEM_TRANSPORT=ofi on loopback), jobs
# spanning network-namespace "hosts", jobs started by MPICH's mpiexec and
# Open MPI's mpirun, then the stress
# tests (the API at 16 PEs, the randomized soak, heap stress, a 16 GiB
# heap) and the start-up scale table, then the same tests under
# AddressSanitizer + UndefinedBehaviorSanitizer, the threaded tests under
# ThreadSanitizer, one 2-PE run under valgrind's memcheck, and a bounded
# libFuzzer run of each fuzz target. Prints the time each stage took.
#   SHOAL_SKIP_STRESS=1      leaves out the stress stage
#   SHOAL_SKIP_SANITIZERS=1  leaves out ASan/UBSan, TSan and valgrind
#   SHOAL_SOAK_SECONDS=N     soak length (default 60 s at 4 PEs, half at 16)
#   SHOAL_SKIP_FUZZ=1        leaves out the fuzzing stage
#   SHOAL_FUZZ_SECONDS=N     time per fuzz target (default 30 s)
set -e
cd "$(dirname "$0")/.."
sh scripts/deps.sh
jobs=$(nproc)
stages=""
stage_start=0

stage() { # name: ends the running stage (if any) and starts the next
    stage_end
    echo "== $1"
    stage_name=$1
    stage_start=$(date +%s)
}
stage_end() {
    [ "$stage_start" = 0 ] && return 0
    took=$(($(date +%s) - stage_start))
    echo "== took ${took} s: $stage_name"
    stages="$stages$(printf '%6d s  %s' "$took" "$stage_name")
"
    stage_start=0
}

configure() { # build-dir, extra cmake args...
    dir=$1; shift
    cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
}
run_suite() { # build-dir, extra cmake args...: every test but the stress ones
    dir=$1
    configure "$@"
    cmake --build "$dir" -j"$jobs"
    (cd "$dir" && ctest --output-on-failure -j"$jobs" --timeout 300 -LE 'stress|ofi|netns|pmi')
}

total_start=$(date +%s)
stage "release build: all tests"
run_suite build-test
stage "install check: oshcc, pkg-config and find_package(Shoal) from an installed tree"
sh tests/install/check_install.sh "$PWD/build-test"
stage "fabric path: every API test over libfabric (tcp;ofi_rxm on loopback) at 2 and 4 PEs"
(cd build-test && ctest --output-on-failure -j"$jobs" --timeout 300 -L ofi)
stage "hosts: jobs across network namespaces (TLS bootstrap, capture, wrong secret, a host killed)"
(cd build-test && ctest --output-on-failure --timeout 600 -L netns)
stage "launchers: mpiexec (MPICH, PMI) and mpirun (Open MPI, PMIx)"
(cd build-test && ctest --output-on-failure -j"$jobs" --timeout 300 -L pmi)

if [ "${SHOAL_SKIP_STRESS:-0}" != 1 ]; then
    stage "stress: API tests at 16 PEs, randomized soak, heap stress, 16 GiB heap"
    if [ -n "${SHOAL_SOAK_SECONDS:-}" ]; then configure build-test -DSHOAL_SOAK_SECONDS="$SHOAL_SOAK_SECONDS"; fi
    (cd build-test && ctest --output-on-failure -j"$jobs" -L stress)
    # The soak's seeds and counts, the heap stress time and the RSS lines.
    grep -E '^(soak: seed|malloc_stress:|bigheap: ([0-9]+ PEs|PE 0 ))' build-test/Testing/Temporary/LastTest.log |
        sed 's/^/   /' || true
    stage "start-up scale: shmem_init time and memory per PE at 1, 8 and 32 PEs"
    sh tests/stress/init_scale.sh build-test 1 8 32
fi

if [ "${SHOAL_SKIP_SANITIZERS:-0}" != 1 ]; then
    stage "address + undefined sanitizers: all tests"
    ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        run_suite build-asan -DSHOAL_SANITIZE=address,undefined
    # The fabric transport under the same sanitizers: its own test and the
    # RMA, atomic, signal and collective suites over libfabric.
    (cd build-asan && ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        ctest --output-on-failure -j"$jobs" --timeout 300 -L ofi \
        -R '^(ofi\.transport|api\.(put_get|amo|signal|coll_reduce|ctx)\.ofi)\.np')

    # Threaded tests: api.threads, api.ctx (threads with private contexts)
    # and the tests labelled "threads". Static data cannot be made
    # symmetric under TSan, so these tests keep their targets on the heap.
    stage "thread sanitizer: the threaded API tests"
    configure build-tsan -DSHOAL_SANITIZE=thread
    tsan_targets="oshrun api_threads api_ctx"
    for t in tests/api/threads_*.c; do
        [ -e "$t" ] && tsan_targets="$tsan_targets api_$(basename "$t" .c)"
    done
    cmake --build build-tsan -j"$jobs" --target $tsan_targets
    (cd build-tsan && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
        ctest --output-on-failure -j"$jobs" --timeout 300 -R '^api\.(threads[a-z_]*|ctx)\.np[0-9]+$')

    # memcheck on a release build: every RMA path on the heap and on
    # globals, at 2 PEs. No suppressions are needed.
    stage "valgrind memcheck: api.put_get and a short soak at 2 PEs"
    command -v valgrind >/dev/null 2>&1 || sh scripts/deps.sh valgrind
    vg="valgrind -q --error-exitcode=1 --leak-check=full"
    build-test/tools/oshrun -n 2 --timeout 280 $vg build-test/tests/api/api_put_get
    SHOAL_SOAK_STEPS=2000 SHOAL_SOAK_SEED=1 \
        build-test/tools/oshrun -n 2 --timeout 280 $vg build-test/tests/stress/stress_soak
fi
if [ "${SHOAL_SKIP_FUZZ:-0}" != 1 ]; then
    stage "fuzzing: configuration parser, oshrun arguments, bootstrap wire decoder"
    sh fuzz/run_fuzzers.sh "${SHOAL_FUZZ_SECONDS:-30}"
fi
stage_end
echo "== stage times"
printf '%s' "$stages"
printf '%6d s  total\n' "$(($(date +%s) - total_start))"
echo "== all test suites passed"
