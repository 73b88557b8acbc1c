#!/bin/sh
# check_wrappers.sh PREFIX: the installed compiler wrappers and the name
# clash with other OpenSHMEMs. oshcc's --showme forms (as Open MPI's
# wrappers answer) and --help; a C++ program built with oshc++ and oshCC;
# the untyped shmem_wait/shmem_wait_until from C99 (the library's
# functions) and C11 (the generic macros); set_env.sh putting Shoal first in
# PATH; shmem-config --diagnose naming an oshcc found before Shoal's.
# Every program runs at 2 PEs under the installed oshrun, checking data.
set -e
prefix=$(cd "${1:?usage: check_wrappers.sh PREFIX}" && pwd -P)
src=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "install: $*"; exit 1; }
bin=$prefix/bin
inc=$prefix/include
lib=$prefix/lib
link="-L$lib -Wl,-rpath,$lib -lshoal -lpthread"
unset SHOAL_CC CC SHOAL_CXX CXX

# expect WANT COMMAND...: the command's output is exactly WANT.
expect() {
    want=$1
    shift
    got=$("$@" 2>&1) || fail "'$*' exited $?: $got"
    [ "$got" = "$want" ] || fail "'$*' printed '$got', expected '$want'"
}
expect "cc -I$inc $link" "$bin/oshcc" --showme
expect "cc -I$inc -O2 -o prog prog.c $link" "$bin/oshcc" --showme -O2 -o prog prog.c
expect "cc -I$inc -c prog.c" "$bin/oshcc" --showme -c prog.c
expect "cc -v" "$bin/oshcc" --showme -v
expect "-I$inc" "$bin/oshcc" --showme:compile
expect "$link" "$bin/oshcc" --showme:link
expect "cc" "$bin/oshcc" --showme:command
expect "$inc" "$bin/oshcc" --showme:incdirs
expect "$lib" "$bin/oshcc" --showme:libdirs
expect "shoal pthread" "$bin/oshcc" --showme:libs
expect "c++ -I$inc $link" "$bin/oshc++" --showme
expect "c++" "$bin/oshCC" --showme:command
expect "gcc" env SHOAL_CC=gcc CC=clang "$bin/oshcc" --showme:command
expect "clang" env CC=clang "$bin/oshcc" --showme:command
# CC naming the wrapper itself must not make it call itself.
expect "cc" env CC=oshcc PATH="$bin:$PATH" "$bin/oshcc" --showme:command
if "$bin/oshcc" --showme:nonsense >"$work/out" 2>&1; then fail "oshcc --showme:nonsense succeeded"; fi
grep -q "unrecognized option: --showme:nonsense" "$work/out" || fail "oshcc --showme:nonsense: $(cat "$work/out")"
"$bin/oshcc" --help >"$work/help"
head -n 1 "$work/help" | grep -q "^Usage: oshcc " || fail "oshcc --help: $(head -n 1 "$work/help")"
for word in --showme:compile --showme:link SHOAL_CC oshrun "$inc"; do
    grep -q -- "$word" "$work/help" || fail "oshcc --help does not mention $word"
done
grep -q "SHOAL_CXX" "$bin/oshc++" || fail "oshc++ is not the C++ wrapper"
# A build from --showme:compile and --showme:link, as makefiles do.
cc $("$bin/oshcc" --showme:compile) -c -o "$work/consumer.o" "$src/consumer/consumer.c"
cc -o "$work/showme_built" "$work/consumer.o" $("$bin/oshcc" --showme:link)
"$bin/oshrun" -n 2 --timeout 30 "$work/showme_built" | grep -q "consumer ok on 2 PEs" || fail "--showme:link build"
echo "install: oshcc --showme forms and --help ok"

for wrapper in oshc++ oshCC; do
    "$bin/$wrapper" -O2 -Wall -Wextra -Werror -o "$work/cxx" "$src/cxx_consumer.cpp"
    "$bin/oshrun" -n 2 --timeout 30 "$work/cxx" >"$work/out" || { cat "$work/out"; fail "$wrapper program failed"; }
    grep -q "c++ consumer ok on 2 PEs" "$work/out" || { cat "$work/out"; fail "$wrapper program"; }
done
echo "install: oshc++ and oshCC ok (put, get, atomics, barrier, shmem_wait from C++)"

for std in c99 c11; do
    "$bin/oshcc" -std=$std -pedantic-errors -Wall -Wextra -Werror -o "$work/wait_$std" "$src/wait_untyped.c"
    "$bin/oshrun" -n 2 --timeout 30 "$work/wait_$std" >"$work/out" || { cat "$work/out"; fail "wait_untyped ($std)"; }
    grep -q "wait_untyped .* ok on 2 PEs" "$work/out" || { cat "$work/out"; fail "wait_untyped ($std)"; }
done
# C99 calls the library's untyped functions; C11 the typed ones behind the macros.
nm -u "$work/wait_c99" | grep -qw shmem_wait_until || fail "-std=c99 does not call shmem_wait_until"
nm -u "$work/wait_c11" | grep -qw shmem_int_wait_until || fail "-std=c11 does not use the generic shmem_wait_until"
if nm -u "$work/wait_c11" | grep -qw shmem_wait; then fail "-std=c11 calls the untyped shmem_wait"; fi
echo "install: shmem_wait and shmem_wait_until ok (C99 functions, C11 generics)"

# A fake oshcc and oshrun before everything else in PATH, as an Open MPI
# in /usr/bin would be: set_env.sh puts Shoal's first again, and
# shmem-config --diagnose names the fake while it comes first.
mkdir "$work/other"
for name in oshcc oshrun; do
    printf '#!/bin/sh\necho "another OpenSHMEM"\n' >"$work/other/$name"
    chmod +x "$work/other/$name"
done
(
    PATH="$work/other:$PATH"
    . "$bin/set_env.sh"
    [ "$(command -v oshcc)" = "$bin/oshcc" ] || fail "after set_env.sh, oshcc is $(command -v oshcc)"
    [ "$(command -v oshrun)" = "$bin/oshrun" ] || fail "after set_env.sh, oshrun is $(command -v oshrun)"
)
PATH="$work/other:$bin:$PATH" "$bin/shmem-config" --diagnose >"$work/clash.json" 2>/dev/null
PATH="$bin:$work/other:$PATH" "$bin/shmem-config" --diagnose >"$work/no_clash.json" 2>/dev/null
if command -v python3 >/dev/null 2>&1; then
    python3 - "$work" "$bin" <<'PY' || fail "shmem-config --diagnose does not report the clash as it should"
import json, sys
work, bin = sys.argv[1], sys.argv[2]
clash = json.load(open(work + "/clash.json"))
cmds = {c["name"]: c for c in clash["commands"]}
for name in ("oshcc", "oshrun"):
    c = cmds[name]
    assert c["first_in_path"] == work + "/other/" + name and c["shoal_in_path"] and not c["shoal_first"], c
    warned = [p for p in clash["problems"] if p["what"].startswith(name + " in PATH is " + work + "/other/")]
    assert len(warned) == 1 and warned[0]["severity"] == "warning" and bin in warned[0]["next_step"], clash["problems"]
assert cmds["oshc++"]["shoal_first"], cmds["oshc++"]
fine = json.load(open(work + "/no_clash.json"))
assert all(c["shoal_first"] for c in fine["commands"]), fine["commands"]
assert not [p for p in fine["problems"] if " in PATH is " in p["what"]], fine["problems"]
PY
else
    grep -q "oshcc in PATH is $work/other/oshcc" "$work/clash.json" || fail "--diagnose does not name the fake oshcc"
    if grep -q " in PATH is " "$work/no_clash.json"; then fail "--diagnose warns with Shoal first"; fi
fi
echo "install: set_env.sh puts Shoal first; --diagnose names another oshcc/oshrun before Shoal's"
