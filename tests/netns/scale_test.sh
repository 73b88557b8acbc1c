#!/bin/bash
# scale_test.sh CASE OSHRUN SCALE_JOB: the bootstrap's allgather tree across
# namespace hosts (hosts.sh). Exit 0 pass, 1 fail, 77 skip. Cases:
#
#   gather_8x1   8 hosts x 1 PE, default transport (tls): every PE puts to,
#                gets from and fcollects with every other PE, so each holds
#                every other's addresses and keys (scale_job checks every
#                value); and the gathers went through the tree: host 1
#                (node 1, the parent of nodes 5 to 7 with fan-out 4) holds
#                an oshrun-to-oshrun TCP connection with each of hosts 5, 6
#                and 7, which a star through node 0 would not have.
#   gather_8x1_ofi  the same with SHMEM_TRANSPORT=ofi SHMEM_ENCRYPT=off
case_name=${1:?usage: scale_test.sh CASE OSHRUN SCALE_JOB}
OSHRUN=${2:?}
PROG=${3:?}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/hosts.sh"
hosts_require
. "$here/lib.sh"
. "$here/scale_lib.sh"
need_multinode "$OSHRUN"

hosts_up 8
make_secret "$OSHRUN" "$dir/secret"
SCALE_ENV=(SHMEM_BOOTSTRAP_SECRET_FILE="$dir/secret")
case $case_name in
gather_8x1) ;;
gather_8x1_ofi) SCALE_ENV+=(SHMEM_TRANSPORT=ofi SHMEM_ENCRYPT=off) ;;
*) echo "scale_test.sh: unknown case $case_name" >&2; exit 2 ;;
esac

# Node 1's established peers, seen from inside host 1 while the job holds.
watch_tree() {
    local i
    for ((i = 0; i < 100; i++)); do
        ip netns exec "$(hosts_ns 1)" ss -Htnp state established 2>/dev/null >>"$dir/host1.ss"
        sleep 0.1
    done
}
watch_tree &
watcher=$!
scale_job 8 1 60 "$PROG" 4000
job_rc=$?
kill "$watcher" 2>/dev/null
wait "$watcher" 2>/dev/null
for ((r = 0; r < 8; r++)); do
    [ "${SCALE_RC[r]}" = 0 ] || fail "node $r exited with ${SCALE_RC[r]}: $(tail -n5 "$dir/scale$r.err")"
done
[ $job_rc = 0 ] || note "stdout of node 0: $(cat "$dir/scale0.out")"
[ "$(scale_field pes)" = 8 ] || fail "PE 0 did not report 8 PEs: $(cat "$dir/scale0.out")"
[ "$(scale_field bad)" = 0 ] || fail "wrong values seen: $(cat "$dir/scale0.out") $(cat "$dir"/scale*.err)"
for k in 5 6 7; do
    # Between the oshruns (the PEs' own streams to host k do not count).
    grep -Eq "[[:space:]]$(hosts_addr "$k" | sed 's/\./\\./g'):[0-9]+[[:space:]].*\"oshrun\"" "$dir/host1.ss" ||
        fail "oshrun on host 1 never had a connection with host $k (its tree child): $(sort -u "$dir/host1.ss" | head -n 20)"
done
start_ms=$(( ($(scale_field init_end_max_ns) - SCALE_T0_NS) / 1000000 ))
note "8 hosts x 1 PE: every PE saw every other PE's data; shmem_init done on all ${start_ms} ms after the oshruns started"
expect_no_leftovers
finish_case
