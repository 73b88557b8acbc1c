#!/bin/bash
# run_fault.sh: runs one fault job under oshrun and judges it from outside.
#
#   run_fault.sh --oshrun PATH [--np N] [--exit CODE] [--max-seconds S]
#                [--expect ERE]... [--kill SIG | --kill-launcher]
#                [--env NAME=VALUE]... -- PROGRAM ARGS...
#
# The job runs as "oshrun -n N PROGRAM TAG ARGS..." with a unique TAG, so
# its processes (oshrun included) are found in /proc by their command line.
# With --kill SIG the script waits until PE 1 writes its pid to
# $SHOAL_TEST_PIDFILE and sends it SIG; with --kill-launcher it SIGKILLs
# oshrun instead. Otherwise PE 1 fails by itself and writes the time to
# $SHOAL_TEST_STAMP. Asserts:
#   - oshrun's exit status (--exit; not checked with --kill-launcher),
#   - that the last process of the job was gone within S seconds of the
#     fault (the stamp, the kill),
#   - that stderr has a line matching each --expect (grep -E),
#   - that no process of the job remains (/proc, by TAG),
#   - that the job's private TMPDIR is empty and /tmp and /dev/shm gained
#     no entry of the job,
#   - that no orphan (parent 1) holds a shoal memfd it did not hold before
#     (a live process of the job would hold them; none is left).
# Exit 0 pass, 1 fail.
set -u
oshrun= np=4 want_exit= max_s=2 kill_sig= kill_launcher=0
envs=() expects=()
while [ $# -gt 0 ]; do
    case "$1" in
    --oshrun) oshrun=$2; shift 2 ;;
    --np) np=$2; shift 2 ;;
    --exit) want_exit=$2; shift 2 ;;
    --max-seconds) max_s=$2; shift 2 ;;
    --expect) expects+=("$2"); shift 2 ;;
    --kill) kill_sig=$2; shift 2 ;;
    --kill-launcher) kill_launcher=1; shift ;;
    --env) envs+=("$2"); shift 2 ;;
    --) shift; break ;;
    *) echo "run_fault.sh: unknown option $1" >&2; exit 1 ;;
    esac
done
[ -n "$oshrun" ] && [ $# -ge 1 ] || { echo "run_fault.sh: need --oshrun and PROGRAM" >&2; exit 1; }
prog=$1
shift
tag="shoal-fault-$$-$RANDOM"

work=$(mktemp -d "${TMPDIR:-/tmp}/shoal-fault-run.XXXXXX") || exit 1
oshpid=
cleanup() {
    [ -n "$oshpid" ] && kill -KILL "$oshpid" 2>/dev/null
    for p in $(tagged_pids); do kill -KILL "$p" 2>/dev/null; done
    rm -rf "$work"
}
trap cleanup EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
now() { date +%s.%N; }
seconds_since() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# Processes whose command line holds the tag (zombies have an empty one).
# The pattern "[s]hoal-fault-..." does not match grep's own command line.
tagged_pids() {
    grep -las -- "[${tag:0:1}]${tag:1}" /proc/[0-9]*/cmdline | sed 's|^/proc/||; s|/cmdline$||'
}

# "pid" of each process whose parent is 1 and that holds a shoal memfd.
orphan_memfd_holders() {
    local f p
    for f in $(grep -ls '^PPid:[[:space:]]*1$' /proc/[0-9]*/status); do
        p=${f#/proc/}
        p=${p%/status}
        ls -l "/proc/$p/fd" 2>/dev/null | grep -q 'memfd:shoal-' && echo "$p"
    done | sort
}

ls -A /dev/shm | sort >"$work/shm.before"
ls -A /tmp | sort >"$work/tmp.before"
orphan_memfd_holders >"$work/memfd.before"
mkdir "$work/jobtmp"
envs+=("TMPDIR=$work/jobtmp" "SHOAL_TEST_STAMP=$work/stamp" "SHOAL_TEST_PIDFILE=$work/pid")

cmd=("$oshrun" -n "$np" --timeout 20 "$prog" "$tag" "$@")
echo "running: ${envs[*]} ${cmd[*]}" >&2
start=$(now)
env "${envs[@]}" "${cmd[@]}" >"$work/out" 2>"$work/err" &
oshpid=$!

from=$start what="the start"
if [ -n "$kill_sig" ] || [ $kill_launcher = 1 ]; then
    i=0
    until [ -s "$work/pid" ] || [ $i -ge 200 ]; do sleep 0.05; i=$((i + 1)); done
    if [ -s "$work/pid" ]; then
        sleep 0.1 # the others are blocked by now
        from=$(now)
        if [ $kill_launcher = 1 ]; then
            what="SIGKILL to oshrun"
            kill -KILL "$oshpid"
        else
            what="SIG$kill_sig to PE 1"
            kill -"$kill_sig" "$(cat "$work/pid")"
        fi
    else
        fail "PE 1 never wrote its pid"
    fi
fi
wait "$oshpid"
rc=$?
oshpid=
# The job is over when its last process is: poll /proc (the launcher is
# gone already; with --kill-launcher the PEs must notice by themselves).
i=0
while [ -n "$(tagged_pids)" ] && [ $i -lt $(((${max_s%.*} + 2) * 20)) ]; do sleep 0.05; i=$((i + 1)); done
end=$(now)

echo "--- stdout" >&2; cat "$work/out" >&2
echo "--- stderr" >&2; cat "$work/err" >&2
echo "--- exit status $rc" >&2

if [ $kill_launcher = 0 ] && [ -n "$want_exit" ]; then
    [ "$rc" -eq "$want_exit" ] || fail "exit status $rc, expected $want_exit"
fi
if [ -z "$kill_sig" ] && [ $kill_launcher = 0 ]; then
    if [ -s "$work/stamp" ]; then
        from=$(cat "$work/stamp") what="the fault"
    else
        fail "PE 1 wrote no time stamp"
    fi
fi
elapsed=$(seconds_since "$from" "$end")
echo "--- job gone $elapsed s after $what (limit $max_s s)" >&2
awk -v e="$elapsed" -v m="$max_s" 'BEGIN { exit !(e <= m) }' || fail "job took $elapsed s after $what, limit $max_s s"

for re in "${expects[@]}"; do
    grep -Eq -- "$re" "$work/err" || fail "stderr has no line matching: $re"
done

left=$(tagged_pids)
if [ -n "$left" ]; then
    fail "processes of the job remain: $(echo $left)"
    ps -o pid,ppid,stat,args -p "$(echo $left | tr ' ' ',')" >&2
fi

new=$(ls -A "$work/jobtmp")
[ -z "$new" ] || fail "the job left files in its TMPDIR: $new"
ls -A /dev/shm | sort >"$work/shm.after"
# Open MPI (benchmark comparisons) may run meanwhile; its objects are not ours.
new=$(comm -13 "$work/shm.before" "$work/shm.after" | grep -Ev '^(vader_segment|sm_segment|ompi|sem\.mp-|psm2|ucx)')
[ -z "$new" ] || fail "new entries in /dev/shm: $new"
# Other tests may run meanwhile: only names of ours count in /tmp, not
# the work folders test scripts make with mktemp (shoal-NAME.XXXXXX;
# Shoal itself makes nothing in /tmp, and this job's TMPDIR is its own).
ls -A /tmp | sort >"$work/tmp.after"
new=$(comm -13 "$work/tmp.before" "$work/tmp.after" | grep -E "$tag|^shoal|^oshrun|memfd" |
    grep -Ev '^shoal-[a-z-]+\.[A-Za-z0-9]{6,}$')
[ -z "$new" ] || fail "new entries in /tmp: $new"
orphan_memfd_holders >"$work/memfd.after"
new=$(comm -13 "$work/memfd.before" "$work/memfd.after")
[ -z "$new" ] || fail "orphans hold shoal memfds: $new"

[ $fails -eq 0 ] && echo "PASS" >&2
[ $fails -eq 0 ]
