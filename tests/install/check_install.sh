#!/bin/sh
# check_install.sh BUILD_DIR: installs the build into a fresh prefix and
# builds a program against it three ways (oshcc, pkg-config,
# find_package(Shoal)), then runs each under the installed oshrun; then the
# wrappers' own checks (check_wrappers.sh: --showme, C++, C99, PATH clash).
set -e
build=${1:?usage: check_install.sh BUILD_DIR}
src=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
. "$prefix/bin/set_env.sh"
for f in bin/oshrun bin/oshcc bin/oshc++ bin/oshCC bin/set_env.sh include/shmem.h include/shmemx.h include/pshmem.h include/shoal/rma_gen.h \
         lib/libshoal.so lib/libshoal.a lib/pkgconfig/shoal.pc lib/cmake/Shoal/ShoalConfig.cmake; do
    [ -e "$prefix/$f" ] || { echo "install: missing $f"; exit 1; }
done

oshcc -O2 -o "$work/with_oshcc" "$src/consumer/consumer.c"
oshrun -n 2 --timeout 30 "$work/with_oshcc" | grep -q "consumer ok on 2 PEs"
echo "install: oshcc ok"
sh "$src/check_wrappers.sh" "$prefix"

cc -O2 -o "$work/with_pkgconfig" "$src/consumer/consumer.c" $(pkg-config --cflags --libs shoal)
oshrun -n 2 --timeout 30 "$work/with_pkgconfig" | grep -q "consumer ok on 2 PEs"
echo "install: pkg-config ok"

cmake -S "$src/consumer" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/cmake-build" >/dev/null
oshrun -n 2 --timeout 30 "$work/cmake-build/consumer" | grep -q "consumer ok on 2 PEs"
oshrun -n 2 --timeout 30 "$work/cmake-build/consumer_static" | grep -q "consumer ok on 2 PEs"
echo "install: find_package(Shoal) ok (shared and static)"

# shmem-config finds everything from its own location: the installed
# oshrun and libexec self-test, and this prefix (symlinks resolved).
[ -x "$prefix/bin/shmem-config" ] || { echo "install: missing bin/shmem-config"; exit 1; }
[ "$(shmem-config --prefix)" = "$(cd "$prefix" && pwd -P)" ] || { echo "install: shmem-config --prefix is wrong"; exit 1; }
shmem-config --check >"$work/check.out" 2>&1 || { cat "$work/check.out"; echo "install: shmem-config --check failed"; exit 1; }
grep -q "all 5 tests passed" "$work/check.out" || { cat "$work/check.out"; echo "install: self-test summary missing"; exit 1; }
shmem-config --diagnose >"$work/diagnose.json"
if command -v python3 >/dev/null 2>&1; then
    python3 -m json.tool "$work/diagnose.json" >/dev/null || { echo "install: --diagnose is not valid JSON"; exit 1; }
fi
cc -o "$work/with_shmem_config" "$src/consumer/consumer.c" $(shmem-config --cflags --libs)
oshrun -n 2 --timeout 30 "$work/with_shmem_config" | grep -q "consumer ok on 2 PEs"
echo "install: shmem-config ok (--check, --diagnose, --cflags --libs)"

# issue 14 (h-spec): the deprecated header directory is installed, and a
# program that includes <mpp/shmem.h> and <mpp/shmemx.h> and calls both
# C11 shapes of shmem_sync builds with the installed oshcc and runs.
for f in include/mpp/shmem.h include/mpp/shmemx.h include/mpp/pshmem.h; do
    [ -e "$prefix/$f" ] || { echo "install: missing $f"; exit 1; }
done
oshcc -O2 -o "$work/with_mpp" "$src/mpp_consumer.c"
oshrun -n 2 --timeout 30 "$work/with_mpp" | grep -q "mpp ok on 2 PEs"
echo "install: <mpp/shmem.h> and <mpp/shmemx.h> ok"
