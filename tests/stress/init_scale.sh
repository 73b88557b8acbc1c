#!/bin/sh
# init_scale.sh BUILD_DIR [N...]: runs bench_init_scale under oshrun at each
# PE count (default 1, 8 and 32) and prints one table, so the growth of
# shmem_init time and of memory per PE with the PE count shows. The last
# column is the whole job's wall time, launcher included.
set -e
build=${1:?usage: init_scale.sh BUILD_DIR [N...]}
shift
[ $# -gt 0 ] || set -- 1 8 32
oshrun=$build/tools/oshrun
prog=$build/bench/bench_init_scale
header=""
for n in "$@"; do
    start=$(date +%s%N)
    out=$("$oshrun" -n "$n" --timeout 120 "$prog" $header)
    end=$(date +%s%N)
    ms=$(( (end - start) / 1000000 ))
    if [ -z "$header" ]; then
        printf '%s\n' "$out" | sed -e '1s/$/ | job wall/' -e '2s/$/ |   ms/' -e '3,$s/$/ | '"$(printf '%6d' "$ms")"'/'
        header=-H
    else
        printf '%s | %6d\n' "$out" "$ms"
    fi
done
