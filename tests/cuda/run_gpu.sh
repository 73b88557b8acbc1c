#!/bin/sh
# run_gpu.sh PROBE OSHRUN N PROGRAM: runs PROGRAM at N PEs when a GPU is
# present; otherwise says so in one line and exits 77, which ctest reports
# as skipped (SKIP_RETURN_CODE), never as passed.
probe=$1 oshrun=$2 n=$3 prog=$4
if ! "$probe"; then
    echo "skipped: no GPU"
    exit 77
fi
exec "$oshrun" -n "$n" --timeout 100 "$prog"
