#!/bin/sh
# check_exports.sh LIB...: fails when a library (libshoal.so, or libshoal.a)
# defines a global symbol outside shmem_*, pshmem_*, shmemx_*, or breaks the
# profiling interface (docs/design.md, "Profiling interface"): every shmem_
# function must have a pshmem_ twin at the same address, the pshmem_ one
# strong and the shmem_ one weak, so a tool can define shmem_ names itself;
# and no pshmem_ name may be left without its shmem_ one.
[ $# -ge 1 ] || { echo "usage: check_exports.sh LIBSHOAL_SO [LIBSHOAL_A]"; exit 2; }
status=0
for lib in "$@"; do
    case $lib in
        *.a) syms=$(nm --defined-only "$lib" | awk 'NF == 3 && $2 ~ /[A-Z]/') ;;
        *) syms=$(nm -D --defined-only "$lib") ;;
    esac
    bad=$(echo "$syms" | awk '{print $3}' | grep -vE '^(shmem_|pshmem_|shmemx_)' | grep -v '^$')
    if [ -n "$bad" ]; then
        echo "$lib: exported symbols outside shmem_/pshmem_/shmemx_:"; echo "$bad"; status=1
    fi
    # nm: address, type (T strong function, W weak), name.
    twins=$(echo "$syms" | awk '
        $2 ~ /^[TW]$/ && $3 ~ /^p?shmem_/ { addr[$3] = $1; type[$3] = $2 }
        END {
            for (n in addr) {
                if (n ~ /^shmem_/) {
                    p = "p" n
                    if (!(p in addr)) print n ": no pshmem_ twin"
                    else if (addr[p] != addr[n]) print n ": at " addr[n] ", " p " at " addr[p]
                    else if (type[n] != "W") print n ": not weak (" type[n] ")"
                    else if (type[p] != "T") print p ": not a strong definition (" type[p] ")"
                    else pairs++
                } else if (!(substr(n, 2) in addr)) print n ": no shmem_ name"
            }
            print pairs + 0 " pairs"
        }')
    pairs=$(echo "$twins" | tail -n 1)
    wrong=$(echo "$twins" | sed '$d')
    if [ -n "$wrong" ]; then
        echo "$lib: profiling interface broken ($(echo "$wrong" | wc -l) names):"; echo "$wrong" | sort | head -20
        status=1
    elif [ "${pairs%% *}" -lt 1 ]; then
        echo "$lib: no shmem_/pshmem_ pairs at all"; status=1
    fi
    echo "$lib: $(echo "$syms" | wc -l) symbols, $pairs shmem_/pshmem_"
done
[ $status -eq 0 ] && echo "exports ok"
exit $status
