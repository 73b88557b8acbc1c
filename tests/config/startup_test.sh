#!/bin/bash
# startup_test.sh CASE NP LAUNCHER PROG: start-up messages, each exactly
# once for the job (not once per PE), naming the call the program made
# (shmem_init), the variable and its limits. LAUNCHER is oshrun's path,
# or "mpiexec" for MPICH's Hydra (PMI-1). PROG is config_exit_prog.
set -u
case=$1 np=$2 launcher=$3 prog=$4
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
fail() { echo "FAIL ($case, $np PEs): $*"; echo "--- stdout"; cat "$out"; echo "--- stderr"; cat "$err"; exit 1; }
once() {
    local c
    c=$(grep -Ec -- "$1" "$err")
    [ "$c" = 1 ] || fail "$c stderr lines match '$1', expected exactly 1"
}
run() { # run VAR=VALUE...: the program (mode "all" returns from main) under the launcher
    if [ "$launcher" = mpiexec ]; then
        command -v mpiexec.mpich >/dev/null || { echo "skip: no mpiexec.mpich"; exit 77; }
        env "$@" timeout -s KILL 60 mpiexec.mpich -n "$np" "$prog" "${MODE:-all}" >"$out" 2>"$err"
    else
        env "$@" timeout -s KILL 60 "$launcher" -n "$np" --timeout 40 "$prog" "${MODE:-all}" >"$out" 2>"$err"
    fi
    rc=$?
}
refused() { # refused VAR=VALUE LIMITS: the job stops in shmem_init with one line
    run "$1"
    [ $rc != 0 ] || fail "$1 accepted"
    local name=${1%%=*} value
    value=$(printf '%s' "${1#*=}" | sed 's/[][().*+?^$|\\]/\\&/g')
    once "shmem_init: start-up failed: $name='?$value'?:? $2"
    [ "$(grep -c . "$err")" = 1 ] || fail "stderr holds more than the one line"
}
case $case in
symmetric_size)
    refused SHMEM_SYMMETRIC_SIZE=0 "is out of range: 1 MiB to 16 TiB"
    refused SHMEM_SYMMETRIC_SIZE=1 "is out of range: 1 MiB to 16 TiB"
    refused SHMEM_SYMMETRIC_SIZE=100T "is out of range: 1 MiB to 16 TiB"
    refused SHMEM_SYMMETRIC_SIZE=lots "is not valid: expected a size from 1 MiB to 16 TiB" ;;
clamped)
    refused SHMEM_TEAMS_MAX=0 "is out of range: 2 to 256 teams"
    refused SHMEM_TEAMS_MAX=100000 "is out of range: 2 to 256 teams"
    refused SHMEM_WAIT_SPIN=99999999999 "is out of range: 0 to 10000000 polls"
    refused SHMEM_FABRIC_TIMEOUT=0 "is out of range: 1 to 86400 seconds"
    refused SHMEM_TRANSPORT=fast "is not valid: expected one of auto, shm, ofi, tls"
    refused SHMEM_COLL_ALGORITHM=reduce:fastest "reduce has no algorithm named 'fastest'" ;;
unknown)
    run SHMEM_SYMETRIC_SIZE=2G SHMEM_BOUNCE_SIZE=1M
    [ $rc = 0 ] || fail "exit status $rc"
    once "warning: SHMEM_SYMETRIC_SIZE \(did you mean SHMEM_SYMMETRIC_SIZE\?\) is not a Shoal setting and is ignored"
    grep -q SHMEM_BOUNCE_SIZE "$err" && fail "Sandia OpenSHMEM's SHMEM_BOUNCE_SIZE was reported" ;;
info)
    run SHMEM_INFO=1 SHMEM_TEAMS_MAX=8
    [ $rc = 0 ] || fail "exit status $rc"
    # One table for the job; its value and source columns start at the same place on every row.
    [ "$(grep -c '^SHMEM_SYMMETRIC_SIZE ' "$out")" = 1 ] || fail "not exactly one SHMEM_INFO table"
    awk '/^(Setting|SHMEM_[A-Z_]+) / { v = index($0, $2); s = index(substr($0, v + length($2)), $3) + v + length($2) - 1;
         if (col && (v != col || s != scol)) bad = 1; col = v; scol = s; n++ }
         END { exit !(n > 10 && !bad) }' "$out" || fail "the SHMEM_INFO table is not aligned"
    grep -Eq '^SHMEM_TEAMS_MAX +8 +environment$' "$out" || fail "SHMEM_TEAMS_MAX row" ;;
thread_first)
    # As with MPI_Init before shmem_init: threads run, static data cannot be
    # remapped; one warning for the job, counting the PEs.
    MODE=thread_first run SHOAL_UNUSED=1
    [ $rc = 0 ] || fail "exit status $rc"
    [ "$(grep -c "done$" "$out")" = "$np" ] || fail "not every PE finished"
    grep -q FAIL "$out" && fail "a data check failed"
    on=""
    [ "$np" -gt 1 ] && on=" on $np of $np PEs"
    once "warning: static data could not be made symmetric$on \(cannot remap static data while [0-9]+ threads run.*\); only heap objects are remotely accessible \(with MPI, call shmem_init before MPI_Init\)\$"
    [ "$(grep -c . "$err")" = 1 ] || fail "stderr holds more than the one line" ;;
*) fail "unknown case" ;;
esac
echo "ok ($case, $np PEs)"
