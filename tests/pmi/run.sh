#!/bin/sh
# run.sh: runs a Shoal program under a standard launcher and judges the job.
#
#   run.sh mpich|mpich-port|ompi NP EXPECT PROGRAM [ARGS...]
#
# mpich-port is Hydra's -pmi-port mode (PMI_PORT and PMI_ID, no PMI_FD).
# EXPECT is "ok" (exit 0), "status=N" (the job ends with exactly N) or
# "fail" (non-zero). A job that outlives its time limit is a failure
# (a hang), whatever EXPECT says. Exit 77 (skip) only when the launcher
# binary is missing. Everything stays on loopback.
kind=${1:?usage: run.sh mpich|mpich-port|ompi NP EXPECT PROGRAM [ARGS...]}
np=${2:?}
expect=${3:?}
shift 3
limit=${SHOAL_PMI_TEST_LIMIT:-50}

case $kind in
mpich)
    launcher=$(command -v mpiexec.mpich) || { echo "run.sh: mpiexec.mpich not installed; skipping"; exit 77; }
    set -- "$launcher" -n "$np" "$@"
    ;;
mpich-port)
    launcher=$(command -v mpiexec.mpich) || { echo "run.sh: mpiexec.mpich not installed; skipping"; exit 77; }
    set -- "$launcher" -pmi-port -n "$np" "$@"
    ;;
ompi)
    # Open MPI refuses root unless told (even for --version); tests run as
    # whoever runs ctest.
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    launcher=$(command -v mpirun.openmpi) || launcher=$(command -v mpirun) || launcher=""
    if [ -z "$launcher" ] || ! "$launcher" --version 2>/dev/null | grep -q -e "Open MPI" -e "OpenRTE"; then
        echo "run.sh: Open MPI's mpirun not installed; skipping"
        exit 77
    fi
    set -- "$launcher" --oversubscribe --mca btl self,vader --mca oob_tcp_if_include lo \
        --mca btl_vader_single_copy_mechanism none -n "$np" "$@"
    ;;
*)
    echo "run.sh: unknown launcher kind '$kind'" >&2
    exit 2
    ;;
esac

echo "run.sh: $*"
timeout -k 5 "$limit" "$@"
rc=$?
if [ $rc = 124 ] || [ $rc = 137 ]; then
    echo "run.sh: FAIL: the job did not end within ${limit}s (hang)"
    exit 1
fi
case $expect in
ok) [ $rc = 0 ] || { echo "run.sh: FAIL: exit status $rc, expected 0"; exit 1; } ;;
fail) [ $rc != 0 ] || { echo "run.sh: FAIL: exit status 0, expected a failure"; exit 1; } ;;
status=*)
    [ $rc = "${expect#status=}" ] || { echo "run.sh: FAIL: exit status $rc, expected ${expect#status=}"; exit 1; } ;;
*)
    echo "run.sh: unknown expectation '$expect'" >&2
    exit 2
    ;;
esac
echo "run.sh: pass (exit status $rc)"
exit 0
