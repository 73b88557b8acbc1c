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

# ---- misuse.c: one mistake per mode, every family (see misuse.c) ----
# m MODE pe0|all [run_case options]: runs badinput_misuse MODE under oshrun.
m() {
    local mode=$1 kind=$2
    shift 2
    exec "${run[@]}" --oshrun "$oshrun" "$@" -- "$bin/badinput_misuse" "$mode" "$kind"
}
SYM="symmetric memory is the heap \[$HEX, $HEX\) and static data \[$HEX, $HEX\)"
NOTSYM="is not symmetric: $SYM"
NULLSYM="is a null pointer: $SYM"
SAME_HEAP="every PE must make the same symmetric allocations"
SAME_COLL="\(SHMEM_DEBUG\)" # hang reports (issue 16): "collective mismatch on team T #n: PE a called X, PE b called Y"
BADCTX="is not a valid context \(never created, or already destroyed\)"
case "$case_name" in
# RMA
put_null_source) m $case_name pe0 --expect "$(who 0 shmem_int_put): source is a null pointer, but the call copies 16 bytes through it" ;;
get_null_dest) m $case_name pe0 --expect "$(who 0 shmem_long_get): dest is a null pointer, but the call copies 16 bytes through it" ;;
iput_null_source) m $case_name pe0 --expect "$(who 0 shmem_int_iput): source is a null pointer, but the call copies 4 bytes through it" ;;
put_null_dest) m $case_name pe0 --expect "$(who 0 shmem_int_put): dest address \(nil\) \(16 bytes\) $NULLSYM" ;;
put_malloc_dest) m $case_name pe0 --expect "$(who 0 shmem_int_put): dest address $HEX \(16 bytes\) $NOTSYM" ;;
get_stack_source) m $case_name pe0 --expect "$(who 0 shmem_int_get): source address $HEX \(16 bytes\) $NOTSYM" ;;
put_overflow) m $case_name pe0 --expect "$(who 0 shmem_int_put): 4611686018427387904 elements of 4 bytes overflow the address space \(at most 4611686018427387903 elements\)" ;;
put_negative) m $case_name pe0 --expect "$(who 0 shmem_putmem): element count -8 is negative \(18446744073709551608 as a size_t\): it must be 0 or more" ;;
put_pe_world) m $case_name pe0 --expect "$(who 0 shmem_int_p): PE 2 is out of range: valid PEs are 0 to 1" ;;
# contexts
ctx_team_pe) m $case_name all --expect "$(who 0 shmem_ctx_int_p): PE 1 is out of range for the context's team: valid PEs are 0 to 0" ;;
ctx_garbage) m $case_name pe0 --expect "$(who 0 shmem_ctx_int_p): context 0x10 $BADCTX" ;;
ctx_garbage_readable) m $case_name pe0 --expect "$(who 0 shmem_ctx_quiet): context $HEX $BADCTX" ;;
ctx_destroyed) m $case_name pe0 --expect "$(who 0 shmem_ctx_putmem): context $HEX $BADCTX" ;;
ctx_invalid) m $case_name pe0 --expect "$(who 0 shmem_ctx_putmem): context is SHMEM_CTX_INVALID" ;;
ctx_create_null) m $case_name pe0 --expect "$(who 0 shmem_ctx_create): ctx is a null pointer" ;;
# atomics
amo_misaligned) m $case_name pe0 --expect "$(who 0 shmem_int_atomic_add): dest address $HEX is not aligned to its 4-byte type" ;;
amo_null) m $case_name pe0 --expect "$(who 0 shmem_long_atomic_fetch): dest address \(nil\) \(8 bytes\) $NULLSYM" ;;
amo_stack) m $case_name pe0 --expect "$(who 0 shmem_int_atomic_inc): dest address $HEX \(4 bytes\) $NOTSYM" ;;
# signals
signal_null) m $case_name pe0 --expect "$(who 0 shmem_signal_fetch): sig_addr address \(nil\) \(8 bytes\) $NULLSYM" ;;
signal_misaligned) m $case_name pe0 --expect "$(who 0 shmem_signal_wait_until): sig_addr address $HEX is not aligned to its 8-byte type" ;;
put_signal_stack_sig) m $case_name pe0 --expect "$(who 0 shmem_putmem_signal): sig_addr address $HEX \(8 bytes\) $NOTSYM" ;;
put_signal_null_source) m $case_name pe0 --expect "$(who 0 shmem_putmem_signal): source is a null pointer, but the call copies 8 bytes through it" ;;
# point-to-point synchronisation
wait_null) m $case_name pe0 --expect "$(who 0 shmem_int_wait_until): ivars address \(nil\) \(4 bytes\) $NULLSYM" ;;
test_all_null) m $case_name pe0 --expect "$(who 0 shmem_long_test_all): ivars address \(nil\) \(32 bytes\) $NULLSYM" ;;
wait_vector_null) m $case_name pe0 --expect "$(who 0 shmem_int_wait_until_all_vector): cmp_values is a null pointer, but nelems is 2" ;;
wait_misaligned) m $case_name pe0 --expect "$(who 0 shmem_int_wait_until): ivars address $HEX is not aligned to its 4-byte type" ;;
wait_some_null_indices) m $case_name pe0 --expect "$(who 0 shmem_int_wait_until_some): indices is a null pointer, but nelems is 2" ;;
wait_stack) m $case_name pe0 --expect "$(who 0 shmem_long_wait_until): ivars address $HEX \(8 bytes\) $NOTSYM" ;;
# locks
lock_null) m $case_name pe0 --expect "$(who 0 shmem_set_lock): lock address \(nil\) \(8 bytes\) $NULLSYM" ;;
lock_stack) m $case_name pe0 --expect "$(who 0 shmem_set_lock): lock address $HEX \(8 bytes\) $NOTSYM" ;;
lock_clear_unheld) m $case_name pe0 --expect "$(who 0 shmem_clear_lock): lock $HEX is not held by this PE \(clear only a lock this PE set\)" ;;
lock_set_twice) m $case_name pe0 --expect "$(who 0 shmem_set_lock): lock $HEX is already held by this thread \(it would wait for itself\)" ;;
lock_misaligned) m $case_name pe0 --expect "$(who 0 shmem_set_lock): lock address $HEX is not aligned to a long" ;;
# teams
team_garbage) m $case_name pe0 --expect "$(who 0 shmem_team_my_pe): team 0x10 is not a valid team \(never created, or already destroyed\)" ;;
team_garbage_readable) m $case_name pe0 --expect "$(who 0 shmem_team_sync): team handle $HEX is not a team \(destroyed, or never created\)" ;;
team_destroyed) m $case_name all --expect "$(who '[01]' shmem_int_sum_reduce): team handle $HEX is not a team \(destroyed, or never created\)" ;;
team_split_null) m $case_name all --expect "$(who '[01]' shmem_team_split_strided): new_team is a null pointer" ;;
team_create_ctx_null) m $case_name pe0 --expect "$(who 0 shmem_team_create_ctx): ctx is a null pointer" ;;
pe_quiet_null) m $case_name pe0 --expect "$(who 0 shmem_pe_quiet): target_pes is a null pointer with npes 2" ;;
# collectives
to_all_negative) m $case_name all --expect "$(who '[01]' shmem_int_sum_to_all): element count -1 is negative \(18446744073709551615 as a size_t\)" ;;
bcast_root) m $case_name all --expect "$(who '[01]' shmem_int_broadcast): root 2 is out of range: the team's PEs are 0 to 1" ;;
reduce_stack_source) m $case_name all --expect "$(who '[01]' shmem_int_sum_reduce): source address $HEX \(16 bytes\) $NOTSYM" ;;
reduce_null_dest) m $case_name all --expect "$(who '[01]' shmem_long_max_reduce): dest address \(nil\) \(32 bytes\) $NULLSYM" ;;
reduce_overflow) m $case_name all --expect "$(who '[01]' shmem_long_sum_reduce): 4611686018427387903 elements of 8 bytes overflow the address space" ;;
coll_nelems) m $case_name all --env SHMEM_DEBUG=1 --expect "$(who '[01]' shmem_int_sum_reduce): collective mismatch on team world #2: PE 0 called shmem_int_sum_reduce\(16 B\), PE 1 called shmem_int_sum_reduce\(32 B\) $SAME_COLL" ;;
coll_root) m $case_name all --env SHMEM_DEBUG=1 --expect "$(who '[01]' shmem_int_broadcast): collective mismatch on team world #2: PE 0 called shmem_int_broadcast\(root 0, 16 B\), PE 1 called shmem_int_broadcast\(root 1, 16 B\) $SAME_COLL" ;;
coll_op) m $case_name all --env SHMEM_DEBUG=1 --expect "$(who '[01]' 'shmem_int_(max|sum)_reduce'): collective mismatch on team world #2: PE 0 called shmem_int_sum_reduce\(16 B\), PE 1 called shmem_int_max_reduce\(16 B\) $SAME_COLL" ;;
# heap
realloc_private) m $case_name pe0 --expect "$(who 0 shmem_realloc): pointer $HEX was not returned by shmem_malloc/calloc/align/realloc, or was already freed" ;;
calloc_overflow) m $case_name all --expect "$(who '[01]' shmem_calloc): 9223372036854775807 elements of 4 bytes overflow the address space" ;;
malloc_unbalanced) m $case_name all --expect "$(who 1 shmem_malloc): PE 1 asked for 4096 bytes, PE 0 for 8192: $SAME_HEAP" ;;
malloc_unbalanced_debug)
    # Every PE checks every PE: whichever reports, it names PE 3.
    exec "${run[@]}" --oshrun "$oshrun" --np 4 --env SHMEM_DEBUG=1 \
        --expect "$(who '[0-3]' shmem_malloc): PE 3 asked for 4096 bytes, PE 0 for 8192: $SAME_HEAP" \
        -- "$bin/badinput_misuse" malloc_unbalanced all ;;
malloc_extra) m $case_name all --expect "$(who 1 shmem_malloc): PE 1 is at its symmetric heap call #2, PE 0 at #0 .*: $SAME_HEAP" ;;
free_mismatch) m $case_name all --expect "$(who 1 shmem_free): PE 1 freed the block at heap offset 0x40, PE 0 the one at 0x0: $SAME_HEAP" ;;
free_mismatch_debug) m free_mismatch all --env SHMEM_DEBUG=1 --expect "$(who '[01]' shmem_free): PE 1 freed the block at heap offset 0x40, PE 0 the one at 0x0: $SAME_HEAP" ;;
align_mismatch) m $case_name all --expect "$(who 1 shmem_align): PE 1 asked for alignment 128, PE 0 for 64: $SAME_HEAP" ;;
# zero-length calls (issue 14, h-zero): null pointers pass, a bad PE, a
# stray non-null pointer and a null dest others write into do not
put_zero_pe) m $case_name pe0 --expect "$(who 0 shmem_putmem): PE 2 is out of range: valid PEs are 0 to 1" ;;
iget_zero_pe) m $case_name pe0 --expect "$(who 0 shmem_int_iget): PE -1 is out of range: valid PEs are 0 to 1" ;;
put_zero_stack) m $case_name pe0 --expect "$(who 0 shmem_putmem): dest address $HEX \(0 bytes\) $NOTSYM" ;;
collect_null_dest) m $case_name all --expect "$(who 0 shmem_int_collect): dest address \(nil\) cannot hold the blocks of all 2 PEs: they run past the end of its symmetric segment" ;;
esac

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
coll_setting)
    # A bad SHMEM_COLL_ALGORITHM ends the job in shmem_init, before any collective.
    exec "${run[@]}" --oshrun "$oshrun" --np 2 --env SHMEM_COLL_ALGORITHM=reduce:fastest \
        --expect "$(who '[01]' shmem_init): start-up failed: SHMEM_COLL_ALGORITHM='reduce:fastest': reduce has no algorithm named 'fastest' \(it has direct, linear, oneshot, tree, hier, rd, ring\)" \
        -- "$bin/badinput_heap_full" full ;;
kill_pe)
    # The launcher ends the job within ~2 s of the kill, names PE 1 and
    # SIGKILL, exits 137 and leaves nothing behind.
    exec "${run[@]}" --oshrun "$oshrun" --np 4 --exit 137 --max-seconds 2 --stamp --check-shm \
        --expect "PE 1 .*SIGKILL" \
        -- "$bin/badinput_kill_pe" kill ;;
# ---- issue 14 (h-spec): allocations that cannot be made return NULL with one
# line per PE ("shoal: PE n: error: call: ..."; the PE named once) and the
# job goes on (heap_full.c checks NULL and a later allocation). heap_full
# and align_bad expected the old behaviour: "heap is full" for a request
# larger than the whole heap, and shmem_align ending the job.
heap_full)
    # 2 MiB from a 1 MiB heap can never fit: the line names the setting.
    exec "${run[@]}" --oshrun "$oshrun" --np 2 --exit 0 --env SHMEM_SYMMETRIC_SIZE=1M \
        --expect "^shoal: PE 0: error: shmem_malloc: 2 MiB requested exceeds the symmetric heap size \(SHMEM_SYMMETRIC_SIZE=1 MiB\); raise SHMEM_SYMMETRIC_SIZE above 2 MiB$" \
        --expect "^shoal: PE 1: error: shmem_malloc: 2 MiB requested exceeds" \
        --reject "heap is full" --reject "PE [0-9]+:.*PE [0-9]+" \
        -- "$bin/badinput_heap_full" full ;;
heap_exhausted)
    # A request that fits the heap but not its free space: the heap is full.
    exec "${run[@]}" --oshrun "$oshrun" --np 2 --exit 0 --env SHMEM_SYMMETRIC_SIZE=1M \
        --expect "^shoal: PE 0: error: shmem_malloc: symmetric heap is full: 640 KiB requested, [0-9.]+ (bytes|KiB) free, largest free block [0-9.]+ (bytes|KiB); raise SHMEM_SYMMETRIC_SIZE \(now 1 MiB\)$" \
        --expect "^shoal: PE 1: error: shmem_malloc: symmetric heap is full: 640 KiB requested" \
        --reject "PE [0-9]+:.*PE [0-9]+" \
        -- "$bin/badinput_heap_full" exhausted ;;
heap_huge)
    exec "${run[@]}" --oshrun "$oshrun" --np 2 --exit 0 \
        --expect "^shoal: PE 0: error: shmem_malloc: 1 TiB requested exceeds the symmetric heap size \(SHMEM_SYMMETRIC_SIZE=[0-9.]+ (MiB|GiB)\); raise SHMEM_SYMMETRIC_SIZE above 1 TiB$" \
        --expect "^shoal: PE 1: error: shmem_malloc: 1 TiB requested exceeds" \
        --reject "heap is full" --reject "PE [0-9]+:.*PE [0-9]+" \
        -- "$bin/badinput_heap_full" huge ;;
align_bad)
    exec "${run[@]}" --oshrun "$oshrun" --np 2 --exit 0 \
        --expect "^shoal: PE 0: error: shmem_align: alignment 0 is not a power of two \(valid: 1, 2, 4, \.\.\. 1073741824\); returning NULL$" \
        --expect "^shoal: PE 1: error: shmem_align: alignment 48 is not a power of two \(valid: 1, 2, 4, \.\.\. 1073741824\); returning NULL$" \
        --expect "^shoal: PE 0: error: shmem_align: alignment 2147483648 exceeds the largest supported alignment 1073741824; returning NULL$" \
        --reject "PE [0-9]+:.*PE [0-9]+" \
        -- "$bin/badinput_heap_full" align ;;
# ---- issue 17 (h-fcol): collect's algorithms include the one-shot fcollect.
coll_setting_collect)
    exec "${run[@]}" --oshrun "$oshrun" --np 2 --env SHMEM_COLL_ALGORITHM=collect:fastest \
        --expect "$(who '[01]' shmem_init): start-up failed: SHMEM_COLL_ALGORITHM='collect:fastest': collect has no algorithm named 'fastest' \(it has direct, linear, oneshot, hier, bruck, pairwise\)" \
        -- "$bin/badinput_heap_full" full ;;
*)
    echo "cases.sh: unknown case $case_name" >&2
    exit 1 ;;
esac
