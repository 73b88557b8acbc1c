#!/bin/bash
# cases.sh: the fault cases. cases.sh CASE OSHRUN BINDIR runs one case
# through run_fault.sh. PE 1 of 4 fails (FAULT) while PEs 0, 2 and 3 are
# blocked (WHERE); the launcher must name PE 1 and how it died, end the
# job within 2 s and leave nothing behind. Case names are FAULT_WHERE.
set -u
case_name=$1 oshrun=$2 bin=$3
here=$(dirname "$0")
run=("$here/run_fault.sh" --oshrun "$oshrun" --np 4 --max-seconds 2)
prog=$bin/faults_fault_pe
stopping='; stopping the other 3 PEs'
killed() { echo "^oshrun: PE 1 \(pid [0-9]+\) killed by signal $1 \($2\)$stopping"; }

where=${case_name#*_}
case "$case_name" in
segv_*)
    exec "${run[@]}" --exit 139 --expect "$(killed SIGSEGV 11)" -- "$prog" segv "$where" ;;
abort_*)
    exec "${run[@]}" --exit 134 --expect "$(killed SIGABRT 6)" -- "$prog" abort "$where" ;;
exit3_*)
    exec "${run[@]}" --exit 3 --expect "^oshrun: PE 1 \(pid [0-9]+\) exited with status 3$stopping" \
        -- "$prog" exit3 "$where" ;;
exit0_*)
    exec "${run[@]}" --exit 1 \
        --expect "^oshrun: PE 1: returned from main \(or called exit\) without calling shmem_finalize while PEs 0, 2-3 had not reached it and wait in Shoal calls that need this PE.*$stopping" \
        -- "$prog" exit0 "$where" ;;
sigkill_*)
    exec "${run[@]}" --exit 137 --kill KILL --expect "$(killed SIGKILL 9)" -- "$prog" wait "$where" ;;
sigterm_*)
    exec "${run[@]}" --exit 143 --kill TERM --expect "$(killed SIGTERM 15)" -- "$prog" wait "$where" ;;
launcher_*)
    # oshrun is SIGKILLed: it says nothing; the PEs die with it (PR_SET_PDEATHSIG).
    exec "${run[@]}" --kill-launcher -- "$prog" wait "$where" ;;
*)
    echo "cases.sh: unknown case $case_name" >&2
    exit 1 ;;
esac
