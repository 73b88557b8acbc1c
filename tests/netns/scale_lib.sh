# scale_lib.sh: one Shoal job across H namespace hosts, every oshrun
# released at the same instant, for scale_test.sh and scale_hosts.sh
# (bash, sourced after hosts.sh and lib.sh; the hosts are up).
#
#   scale_job H PPN TIMEOUT PROG ARGS...
#       runs OSHRUN (set by the caller) on hosts 0..H-1 with PPN PEs each,
#       extra environment from the array SCALE_ENV (NAME=VALUE). Each oshrun
#       first waits on a FIFO; when all wait there (each blocked opening it),
#       the FIFO is opened once and every oshrun starts together. Sets
#       SCALE_T0_NS (the release, CLOCK_REALTIME), SCALE_END_NS (the last
#       oshrun gone), SCALE_RC[r] (exit status of node r); output in
#       $dir/scaleR.out and $dir/scaleR.err. Returns 0 when every node
#       exited 0. TIMEOUT is each oshrun's --timeout.
declare -a SCALE_RC SCALE_PID
SCALE_ENV=()

scale_job() {
    local h=$1 ppn=$2 limit=$3 r tries gate=$dir/gate
    shift 3
    rm -f "$gate"
    mkfifo "$gate" || { fail "mkfifo $gate"; return 1; }
    for ((r = 0; r < h; r++)); do
        # shellcheck disable=SC2016
        hosts_spawn "$r" sh -c 'read _ <"$0"; exec "$@"' "$gate" env "${SCALE_ENV[@]}" "$OSHRUN" --nnodes "$h" \
            --node-rank "$r" --rendezvous "$(hosts_addr 0):$PORT" -n "$ppn" --timeout "$limit" "$@" \
            >"$dir/scale$r.out" 2>"$dir/scale$r.err"
        SCALE_PID[r]=$HOSTS_PID
    done
    # Every one blocked in open() on the FIFO: then one open releases all.
    for ((tries = 0; tries < 300; tries++)); do
        local waiting=0
        for ((r = 0; r < h; r++)); do
            [ "$(cat "/proc/${SCALE_PID[r]}/wchan" 2>/dev/null)" = wait_for_partner ] && waiting=$((waiting + 1))
        done
        [ $waiting = "$h" ] && break
        sleep 0.05
    done
    [ $tries -lt 300 ] || fail "only $waiting of $h nodes reached the start gate within 15 s"
    SCALE_T0_NS=$(date +%s%N)
    : >"$gate"
    local ok=0
    for ((r = 0; r < h; r++)); do
        wait "${SCALE_PID[r]}"
        SCALE_RC[r]=$?
        [ "${SCALE_RC[r]}" = 0 ] || ok=1
    done
    SCALE_END_NS=$(date +%s%N)
    rm -f "$gate"
    return $ok
}

# scale_field NAME: the value of NAME= in node 0's scale_job line.
scale_field() { sed -n "s/^scale_job: .*[[:space:]]$1=\([0-9.-]*\).*/\1/p; s/^scale_job: $1=\([0-9.-]*\).*/\1/p" "$dir/scale0.out" | head -n1; }
