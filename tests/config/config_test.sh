#!/bin/sh
# config_test.sh CASE SHMEM_CONFIG SOURCE_DIR CC OSHRUN: one shmem-config
# test. Exit 0 pass, 1 fail, 77 skip (no python3 to parse JSON).
case=${1:?usage: config_test.sh CASE SHMEM_CONFIG SOURCE_DIR CC OSHRUN}
tool=$2
src=$3
cc=$4
oshrun=$5
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() { echo "FAIL ($case): $*"; exit 1; }
need_python() { command -v python3 >/dev/null 2>&1 || { echo "skip: python3 not found"; exit 77; }; }

# Runs --diagnose in a clean environment plus the given assignments (so a
# launcher or SHMEM_* variable around the test run cannot change the
# result); the tool must exit 0 whatever it holds, with JSON on stdout.
diagnose() {
    env -i PATH="$PATH" "$@" "$tool" --diagnose >"$work/out.json" 2>"$work/err" || fail "--diagnose exited $? ($(cat "$work/err"))"
}

# Checks $work/out.json with the Python assertions given on stdin; the
# parsed document is `d`, the table's names (from config.c) `names`.
check_json() {
    python3 -c '
import json, re, sys
d = json.load(open(sys.argv[1]))
names = re.findall(r"^\s*\{\"(SHMEM_[A-Z0-9_]+)\"", open(sys.argv[2]).read(), re.M)
assert names, "no SHMEM_ names found in config.c"
exec(sys.stdin.read())
' "$work/out.json" "$src/src/util/config.c" || { cat "$work/out.json"; fail "JSON check failed"; }
}

case $case in
diagnose)
    need_python
    diagnose
    python3 -m json.tool "$work/out.json" >/dev/null || fail "not valid JSON"
    check_json <<'PY'
assert set(d) == {"build", "configuration", "host", "commands", "problems"}, sorted(d)
assert d["build"]["transports"] == ["auto", "shm", "ofi", "tls"]
assert re.match(r"\d+\.\d+", d["build"]["openshmem"])
rows = {c["name"]: c for c in d["configuration"]}
assert sorted(rows) == sorted(names), (sorted(rows), sorted(names))
for c in d["configuration"]:
    assert c["source"] == "default" and c["value"] is not None and c["help"], c
assert rows["SHMEM_SYMMETRIC_SIZE"]["value"] > 0
for key in ("cores", "memory", "shared_memory", "memfd", "huge_pages", "locked_memory_limit",
            "threads", "ptrace_scope", "libfabric", "openssl", "pmix", "launcher"):
    assert key in d["host"], key
# The thread limits, as the kernel says them, and their least.
t = d["host"]["threads"]
def proc_sys(path):
    with open(path) as f:
        return int(f.read().split()[0])
assert t["pid_max"] == proc_sys("/proc/sys/kernel/pid_max"), t
assert t["threads_max"] == proc_sys("/proc/sys/kernel/threads-max"), t
assert t["max_map_count"] == proc_sys("/proc/sys/vm/max_map_count"), t
import resource
soft = resource.getrlimit(resource.RLIMIT_NPROC)[0]
assert t["processes_limit_soft"] == ("unlimited" if soft == resource.RLIM_INFINITY else soft), t
least = min([t["pid_max"], t["threads_max"], t["max_map_count"] // 2] +
            ([] if soft == resource.RLIM_INFINITY else [soft]))
assert t["threads_per_process_at_most"] == least, t
assert d["host"]["cores"]["online"] >= 1
assert d["host"]["memory"]["total_bytes"] > 0
assert d["host"]["memfd"]["status"] == "ok", d["host"]["memfd"]
assert d["host"]["libfabric"]["available"] is True and re.match(r"\d+\.\d+", d["host"]["libfabric"]["version"])
assert "tcp;ofi_rxm" in d["host"]["libfabric"]["providers"], d["host"]["libfabric"]
assert d["host"]["openssl"]["available"] is True and "OpenSSL" in d["host"]["openssl"]["version"]
assert "pmi (MPICH mpiexec)" in d["host"]["launcher"]["bootstraps_built"]
assert d["host"]["launcher"]["detected"] == []
assert d["problems"] == [], d["problems"]
PY
    # Values from the environment are parsed and attributed.
    diagnose SHMEM_SYMMETRIC_SIZE=512M SHMEM_DEBUG=yes
    check_json <<'PY'
rows = {c["name"]: c for c in d["configuration"]}
assert rows["SHMEM_SYMMETRIC_SIZE"]["value"] == 512 << 20 and rows["SHMEM_SYMMETRIC_SIZE"]["source"] == "environment"
assert rows["SHMEM_DEBUG"]["value"] is True
assert d["host"]["memfd"]["bytes"] == 512 << 20
PY
    ;;
bad_value)
    need_python
    # A bad size, and a string with quotes, a backslash, a control byte and
    # invalid UTF-8, which must still come out as valid JSON.
    diagnose SHMEM_SYMMETRIC_SIZE=banana "$(printf 'SHMEM_TRANSPORT=ofi"\\\001\377')"
    check_json <<'PY'
rows = {c["name"]: c for c in d["configuration"]}
assert rows["SHMEM_SYMMETRIC_SIZE"]["value"] is None
assert rows["SHMEM_SYMMETRIC_SIZE"]["environment"] == "banana"
assert rows["SHMEM_TRANSPORT"]["value"] == "ofi\"\\\u0001\ufffd", repr(rows["SHMEM_TRANSPORT"]["value"])
errors = [p["what"] for p in d["problems"] if p["severity"] == "error"]
assert any("SHMEM_SYMMETRIC_SIZE" in w and "banana" in w for w in errors), errors
assert any("SHMEM_TRANSPORT" in w for w in errors), errors
assert all(p["next_step"] for p in d["problems"])
# The host is still probed, with the default heap size.
assert d["host"]["memfd"]["status"] == "ok"
PY
    ;;
memfd_error)
    need_python
    # A 4 GiB heap past a 1 GiB file-size limit (ulimit -f; SIGXFSZ
    # ignored, so ftruncate fails with EFBIG): the heap's memfd cannot be
    # sized, exactly as in shmem_init. Not ulimit -v: AddressSanitizer's
    # shadow memory cannot live in a small address space. (A size past the
    # setting's limits is refused before any mapping: see the limits case.)
    (trap '' XFSZ && ulimit -f 1048576 && diagnose SHMEM_SYMMETRIC_SIZE=4G) || exit 1
    check_json <<'PY'
m = d["host"]["memfd"]
assert m["status"] == "error" and m["step"] in ("ftruncate", "mmap"), m
assert any("SHMEM_SYMMETRIC_SIZE=4G" in p["what"] and p["severity"] == "error" for p in d["problems"]), d["problems"]
PY
    ;;
limits)
    need_python
    # h-runtime (issue 14): every value shmem_init refuses is a problem of
    # --diagnose, with the same line (one check, util/config.c).
    for bad in SHMEM_SYMMETRIC_SIZE=0 SHMEM_SYMMETRIC_SIZE=1 SHMEM_SYMMETRIC_SIZE=100T SHMEM_TEAMS_MAX=0 \
               SHMEM_TEAMS_MAX=100000 SHMEM_WAIT_SPIN=99999999999 SHMEM_FABRIC_TIMEOUT=0 \
               SHMEM_BOOTSTRAP_LIVENESS_TIMEOUT=86401 SHMEM_TRANSPORT=fast SHMEM_ENCRYPT=maybe \
               SHMEM_FABRIC_PROGRESS_THREAD=sometimes SHMEM_COLL_ALGORITHM=reduce:fastest; do
        diagnose "$bad"
        BAD=$bad check_json <<'PY'
import os
name, value = os.environ["BAD"].split("=", 1)
errors = [p["what"] for p in d["problems"] if p["severity"] == "error"]
mine = [w for w in errors if w.startswith(name + "=")]  # one line per refused value
assert len(mine) == 1, errors
w = mine[0]
limits = {"SHMEM_SYMMETRIC_SIZE": "out of range: 1 MiB to 16 TiB", "SHMEM_TEAMS_MAX": "out of range: 2 to 256 teams",
          "SHMEM_WAIT_SPIN": "out of range: 0 to 10000000 polls", "SHMEM_FABRIC_TIMEOUT": "out of range: 1 to 86400 seconds",
          "SHMEM_BOOTSTRAP_LIVENESS_TIMEOUT": "out of range: 1 to 86400 seconds",
          "SHMEM_TRANSPORT": "expected one of auto, shm, ofi, tls", "SHMEM_ENCRYPT": "expected one of auto, required, off",
          "SHMEM_FABRIC_PROGRESS_THREAD": "expected one of auto, on, off",
          "SHMEM_COLL_ALGORITHM": "reduce has no algorithm named 'fastest' (it has direct, linear, oneshot, tree, hier, rd, ring)"}
assert limits[name] in w and value in w and w.endswith("shmem_init would stop"), w
rows = {c["name"]: c for c in d["configuration"]}
assert rows[name]["environment"] == value
PY
    done
    # The limits themselves are accepted.
    diagnose SHMEM_SYMMETRIC_SIZE=1M SHMEM_TEAMS_MAX=256 SHMEM_WAIT_SPIN=0 SHMEM_FABRIC_TIMEOUT=86400
    check_json <<'PY'
assert not [p for p in d["problems"] if p["severity"] == "error"], d["problems"]
PY
    ;;
unknown_variable)
    need_python
    diagnose SHMEM_SYMETRIC_SIZE=2G PMI_RANK=0 PMI_SIZE=2
    check_json <<'PY'
warn = [p["what"] for p in d["problems"] if p["severity"] == "warning"]
assert any(w.startswith("SHMEM_SYMETRIC_SIZE ") and w.endswith("(did you mean SHMEM_SYMMETRIC_SIZE?)") for w in warn), warn
assert d["host"]["launcher"]["detected"] == ["mpich-hydra"], d["host"]["launcher"]
assert any("mpich-hydra" in w for w in warn), warn
assert not [p for p in d["problems"] if p["severity"] == "error"], d["problems"]
PY
    ;;
check)
    "$tool" --check >"$work/out" 2>&1 || { cat "$work/out"; fail "--check exited $?"; }
    cat "$work/out"
    for t in "put" "get" "atomic fetch_add" "barrier_all" "sum_reduce"; do
        grep -q "^  $t.* ok .* us" "$work/out" || fail "no passing line for $t"
    done
    grep -q "2 PEs" "$work/out" || fail "not run on 2 PEs"
    grep -q "all 5 tests passed" "$work/out" || fail "no summary"
    ;;
check_fails)
    # shmem_init refuses a bad value, so the self-test fails: --check must say so.
    SHMEM_SYMMETRIC_SIZE=banana "$tool" --check >"$work/out" 2>&1 && { cat "$work/out"; fail "--check passed"; }
    grep -q "self-test FAILED" "$work/out" || { cat "$work/out"; fail "no failure line"; }
    ;;
flags)
    prefix=$("$tool" --prefix) || fail "--prefix exited $?"
    [ -d "$prefix" ] || fail "--prefix '$prefix' is not a directory"
    cflags=$("$tool" --cflags) || fail "--cflags exited $?"
    libs=$("$tool" --libs) || fail "--libs exited $?"
    case $libs in *-lshoal*) ;; *) fail "--libs '$libs' lacks -lshoal" ;; esac
    [ "$("$tool" --cflags --libs)" = "$cflags $libs" ] || fail "--cflags --libs differs from the two apart"
    inc=${cflags#-I}
    [ -f "$inc/shmem.h" ] || fail "--cflags '$cflags' does not name the directory of shmem.h"
    printf '#include <shmem.h>\n#include <stdio.h>\nint main(void) { shmem_init(); if (shmem_my_pe() == 0) printf("flags ok on %%d PEs\\n", shmem_n_pes()); shmem_finalize(); return 0; }\n' >"$work/prog.c"
    # shellcheck disable=SC2086 # the flags are words on purpose
    "$cc" $cflags -o "$work/prog" "$work/prog.c" $libs || fail "cannot build with --cflags/--libs"
    "$oshrun" -n 2 --timeout 60 "$work/prog" | grep -q "flags ok on 2 PEs" || fail "program built with the flags did not run"
    ;;
version)
    "$tool" --version >"$work/out" || fail "--version exited $?"
    grep -Eq '^Shoal [0-9]+\.[0-9]+\.[0-9]+$' "$work/out" || fail "no Shoal version: $(cat "$work/out")"
    grep -q '^OpenSHMEM 1\.6$' "$work/out" || fail "no OpenSHMEM version: $(cat "$work/out")"
    ;;
docs)
    "$tool" --markdown >"$work/configuration.md" || fail "--markdown exited $?"
    diff -u "$src/docs/configuration.md" "$work/configuration.md" ||
        fail "docs/configuration.md is out of date: run 'cmake --build BUILD --target config_doc'"
    for name in $(sed -n 's/^ *{"\(SHMEM_[A-Z0-9_]*\)".*/\1/p' "$src/src/util/config.c"); do
        grep -q "| \`$name\` |" "$work/configuration.md" || fail "$name missing from the reference"
    done
    ;;
usage)
    "$tool" --help | grep -q -- "--diagnose" || fail "--help does not list --diagnose"
    "$tool" --bogus 2>"$work/err" && fail "--bogus accepted"
    [ $? -eq 2 ] || fail "--bogus: exit status is not 2"
    grep -q "unknown option '--bogus'" "$work/err" || fail "no message for --bogus"
    "$tool" >/dev/null 2>&1 && fail "no option accepted"
    ;;
*) fail "unknown case" ;;
esac
echo "ok ($case)"
