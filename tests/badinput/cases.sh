#!/bin/bash
# cases.sh: the bad-input cases. cases.sh CASE OSHRUN BINDIR runs one case
# through run_case.sh with its expected exit status and stderr lines. The
# messages name the call, the PE that made it ("PE n: call" or
# "call: PE n"), the bad value and the limit.
set -u
case_name=$1 oshrun=$2 bin=$3
here=$(dirname "$0")
run=("$here/run_case.sh")
HEX='0x[0-9a-f]+'
# "PE n: call" or "call: PE n"
who() { echo "(PE $1: $2|$2: PE $1)"; }

case "$case_name" in
pe_high)
    exec "${run[@]}" --oshrun "$oshrun" --np 2 \
        --expect "$(who 1 shmem_int_put): PE 2 is out of range: valid PEs are 0 to 1" \
        --expect "oshrun: .*PE 1" \
        -- "$bin/badinput_bad_pe" high ;;
pe_negative)
    exec "${run[@]}" --oshrun "$oshrun" --np 2 \
        --expect "$(who 0 shmem_long_p): PE -1 is out of range: valid PEs are 0 to 1" \
        -- "$bin/badinput_bad_pe" negative ;;
stack_dest)
    exec "${run[@]}" --oshrun "$oshrun" --np 2 \
        --expect "$(who 0 shmem_int_put): dest address $HEX \(16 bytes\) is not symmetric: symmetric memory is the heap \[$HEX, $HEX\) and static data \[$HEX, $HEX\)" \
        -- "$bin/badinput_bad_stack_dest" stack ;;
free_private)
    exec "${run[@]}" --oshrun "$oshrun" --np 2 \
        --expect "$(who 0 shmem_free): pointer $HEX was not returned by shmem_malloc/calloc/align/realloc, or was already freed \(symmetric heap is \[$HEX, $HEX\)\)" \
        -- "$bin/badinput_bad_free" private ;;
free_double)
    exec "${run[@]}" --oshrun "$oshrun" --np 2 \
        --expect "$(who '[01]' shmem_free): pointer $HEX was not returned by shmem_malloc/calloc/align/realloc, or was already freed" \
        -- "$bin/badinput_bad_free" double ;;
before_init)
    exec "${run[@]}" --oshrun "$oshrun" --np 2 \
        --expect "$(who '-?[0-9]+' shmem_int_put): called before shmem_init" \
        -- "$bin/badinput_before_init" launcher ;;
before_init_nolauncher)
    exec "${run[@]}" \
        --expect "$(who '-?[0-9]+' shmem_int_put): called before shmem_init" \
        -- "$bin/badinput_before_init" direct ;;
heap_full)
    # Handled NULL: exit 0; both PEs say what was asked, what is free and the limit.
    exec "${run[@]}" --oshrun "$oshrun" --np 2 --exit 0 --env SHMEM_SYMMETRIC_SIZE=1M \
        --expect "$(who 0 shmem_malloc).*symmetric heap is full: 2 MiB requested, [0-9.]+ (bytes|KiB|MiB) free, largest free block [0-9.]+ (bytes|KiB|MiB); raise SHMEM_SYMMETRIC_SIZE \(now 1 MiB\)" \
        --expect "$(who 1 shmem_malloc).*symmetric heap is full: 2 MiB requested" \
        -- "$bin/badinput_heap_full" full ;;
kill_pe)
    # The launcher ends the job within ~2 s of the kill, names PE 1 and
    # SIGKILL, exits 137 and leaves nothing behind.
    exec "${run[@]}" --oshrun "$oshrun" --np 4 --exit 137 --max-seconds 2 --stamp --check-shm \
        --expect "PE 1 .*SIGKILL" \
        -- "$bin/badinput_kill_pe" kill ;;
*)
    echo "cases.sh: unknown case $case_name" >&2
    exit 1 ;;
esac
