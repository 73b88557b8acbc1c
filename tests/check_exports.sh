#!/bin/sh
# Fails when libshoal exports a symbol outside shmem_*, pshmem_*, shmemx_*.
lib=${1:?usage: check_exports.sh LIBSHOAL_SO}
bad=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -vE '^(shmem_|pshmem_|shmemx_)' | grep -v '^$')
count=$(nm -D --defined-only "$lib" | wc -l)
if [ -n "$bad" ]; then
    echo "exported symbols outside shmem_/pshmem_/shmemx_:"; echo "$bad"; exit 1
fi
echo "exports ok: $count symbols"
