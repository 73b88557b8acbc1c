#!/bin/sh
# check_deps.sh SOURCE_DIR: scripts/deps.sh on a host that has nothing.
# The demo's list (--build-only) must hold what building needs and no Open
# MPI (its oshcc/oshrun clash with Shoal's); the test command's list must
# add the test peers. A fake dpkg and id in an otherwise empty PATH make
# every package missing and the user not root, so deps.sh only
# prints the list and installs nothing.
root=${1:?usage: check_deps.sh SOURCE_DIR}
fake=$(mktemp -d)
trap 'rm -rf "$fake"' EXIT
printf '#!/bin/sh\nexit 1\n' >"$fake/dpkg"
printf '#!/bin/sh\necho 1000\n' >"$fake/id"
chmod +x "$fake/dpkg" "$fake/id"
shell=$(command -v sh)
fail() { echo "deps.sh: $*"; exit 1; }

demo=$(PATH="$fake" "$shell" "$root/scripts/deps.sh" --build-only 2>&1) && fail "--build-only succeeded with nothing installed"
tests=$(PATH="$fake" "$shell" "$root/scripts/deps.sh" valgrind 2>&1) && fail "succeeded with nothing installed"
echo "demo: $demo"
echo "test: $tests"
demo=$(echo "$demo" | tr ';' ' ')
tests=$(echo "$tests" | tr ';' ' ')
for pkg in gcc make cmake pkg-config libfabric-dev libssl-dev; do
    echo " $demo " | grep -q " $pkg " || fail "--build-only does not install $pkg"
    echo " $tests " | grep -q " $pkg " || fail "the full list does not install $pkg"
done
for pkg in openmpi-bin libopenmpi-dev mpich g++ tcpdump valgrind; do
    if echo " $demo " | grep -q " $pkg "; then fail "--build-only installs $pkg"; fi
done
for pkg in openmpi-bin libopenmpi-dev mpich libpmix-dev g++ iproute2 tcpdump valgrind; do
    echo " $tests " | grep -q " $pkg " || fail "the full list does not install $pkg"
done
echo "deps.sh: the demo's list has no Open MPI; the test command's has the peers"
