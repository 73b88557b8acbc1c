#!/bin/bash
# scale_hosts.sh: start-up time and memory per PE of Shoal jobs across
# "hosts" made of network namespaces (hosts.sh), for the model in
# docs/scaling.md. Not a test: figures are reported, never asserted.
#
#   tests/netns/scale_hosts.sh [BUILD_DIR]
#
#   BUILD_DIR   a Shoal build (default: build-test) with tools/oshrun and
#               tests/netns/netns_scale_job
#   Settings (environment):
#     LAYOUTS="2x1 4x1 8x1 16x1 2x2 4x2 8x2"   HOSTSxPEs per host
#     TRANSPORTS="launcher boot tls ofi"   tls: the default between hosts;
#                            ofi: SHMEM_TRANSPORT=ofi SHMEM_ENCRYPT=off;
#                            launcher: /bin/true instead of scale_job (the
#                            oshruns alone: rendezvous, tree, end);
#                            boot: scale_boot time (allgathers through the
#                            tree: barrier, 376 B and 64 KiB per PE)
#     FANOUTS=4              oshrun --tree-fanout values (64: a star)
#     RUNS=3                 runs of each point; the table shows medians
#     OUT=docs/bench         where scale_hosts.csv and scale_hosts.md go
#
# Each job is scale_job (tests/netns/scale_job.c) on every host, the
# oshruns released at one instant (scale_lib.sh). Figures per point:
#   start-up   release -> the last PE returned from shmem_init (the
#              oshruns meet, spawn their PEs, the PEs' shmem_init with its
#              bootstrap allgathers through the tree)
#   first      release -> the first PE returned from shmem_init
#   job        release -> the last oshrun exited (the job: start-up, every
#              PE putting to, getting from and fcollecting with every other,
#              finalize, the oshruns ending)
#   init       shmem_init in the PE, mean over PEs (wall, and CPU: all
#              "hosts" share this machine's cores, so the CPU time is what
#              a PE with a core of its own would take)
#   RSS init   VmRSS of a PE right after shmem_init, mean over PEs
#   RSS peers  VmRSS once the PE has talked to every other PE (per-peer
#              state opened lazily: tls streams, ofi AV entries...)
#   oshrun 0   peak RSS (VmHWM) of node 0's oshrun, read by its PE 0
# Runs alternate transports and layouts (run 1 of every point, then run
# 2, ...), so slow phases of a loaded machine spread over all points.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$root/build-test
for a in "$@"; do
    case $a in
    -h | --help) sed -n '2,36p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "scale_hosts.sh: unknown option $a" >&2; exit 2 ;;
    *) build=$(cd "$a" && pwd) || exit 2 ;;
    esac
done
LAYOUTS=${LAYOUTS:-2x1 4x1 8x1 16x1 2x2 4x2 8x2}
TRANSPORTS=${TRANSPORTS:-launcher boot tls ofi}
FANOUTS=${FANOUTS:-4}
RUNS=${RUNS:-3}
OUT=${OUT:-$root/docs/bench}
OSHRUN=$build/tools/oshrun
PROG=$build/tests/netns/netns_scale_job
BOOT_PROG=$build/tests/netns/netns_scale_boot
for p in "$OSHRUN" "$PROG" "$BOOT_PROG"; do
    [ -x "$p" ] || { echo "scale_hosts.sh: $p missing: build $build first" >&2; exit 1; }
done
case_name=scale_hosts
. "$here/hosts.sh"
hosts_require
. "$here/lib.sh"
. "$here/scale_lib.sh"
need_multinode "$OSHRUN"

# ms NS: milliseconds from the release to NS (CLOCK_REALTIME nanoseconds).
ms() { awk -v a="$1" -v b="$SCALE_T0_NS" 'BEGIN { printf "%.1f", (a - b) / 1e6 }'; }

max_h=0
for l in $LAYOUTS; do [ "${l%x*}" -gt $max_h ] && max_h=${l%x*}; done
hosts_up "$max_h"
make_secret "$OSHRUN" "$dir/secret"
mkdir -p "$OUT"
csv=$OUT/scale_hosts.csv
md=$OUT/scale_hosts.md
echo "layout,hosts,ppn,pes,transport,fanout,run,status,startup_ms,first_ms,job_ms,init_ms_mean,rss_init_kb,rss_peers_kb,pss_init_kb,oshrun0_hwm_kb,cpu_init_ms,barrier_ms,gather376_ms,gather64k_ms" >"$csv"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

for ((run = 1; run <= RUNS; run++)); do
    for layout in $LAYOUTS; do
        h=${layout%x*} ppn=${layout#*x}
        for fanout in $FANOUTS; do
            for transport in $TRANSPORTS; do
                SCALE_ENV=(SHMEM_BOOTSTRAP_SECRET_FILE="$dir/secret")
                [ "$transport" = ofi ] && SCALE_ENV+=(SHMEM_TRANSPORT=ofi SHMEM_ENCRYPT=off)
                status=ok
                if [ "$transport" = launcher ]; then
                    scale_job "$h" "$ppn" 120 --tree-fanout "$fanout" /bin/true || status=failed
                    if [ $status = ok ]; then
                        echo "$layout,$h,$ppn,$((h * ppn)),$transport,$fanout,$run,ok,,,$(ms "$SCALE_END_NS"),,,,,,,,," >>"$csv"
                        tail -n1 "$csv"
                        continue
                    fi
                elif [ "$transport" = boot ]; then
                    scale_job "$h" "$ppn" 120 --tree-fanout "$fanout" "$BOOT_PROG" time || status=failed
                    f() { sed -n "s/^scale_boot: .*[[:space:]]$1=\([0-9.]*\).*/\1/p" "$dir/scale0.out"; }
                    [ "$(f bad)" = 0 ] || status=failed
                    if [ $status = ok ]; then
                        echo "$layout,$h,$ppn,$((h * ppn)),$transport,$fanout,$run,ok,,,$(ms "$SCALE_END_NS"),,,,,,,$(f barrier_ms),$(f gather376_ms),$(f gather64k_ms)" >>"$csv"
                        tail -n1 "$csv"
                        continue
                    fi
                else
                    scale_job "$h" "$ppn" 120 --tree-fanout "$fanout" "$PROG" || status=failed
                    [ "$(scale_field bad)" = 0 ] || status=failed
                fi
                if [ $status = failed ]; then
                    echo "scale_hosts.sh: $layout $transport fan-out $fanout run $run failed:" >&2
                    for ((r = 0; r < h; r++)); do tail -n3 "$dir/scale$r.err" >&2; done
                    echo "$layout,$h,$ppn,$((h * ppn)),$transport,$fanout,$run,failed,,,,,,,,,,,," >>"$csv"
                    continue
                fi
                printf '%s,%d,%d,%d,%s,%d,%d,ok,%s,%s,%s,%s,%s,%s,%s,%s,%s,,,\n' "$layout" "$h" "$ppn" $((h * ppn)) \
                    "$transport" "$fanout" "$run" "$(ms "$(scale_field init_end_max_ns)")" \
                    "$(ms "$(scale_field init_end_min_ns)")" "$(ms "$SCALE_END_NS")" \
                    "$(scale_field init_ms_mean)" "$(scale_field rss_init_kb_mean)" "$(scale_field rss_peers_kb_mean)" \
                    "$(scale_field pss_init_kb_mean)" "$(scale_field launcher0_hwm_kb)" "$(scale_field cpu_init_ms_mean)" >>"$csv"
                tail -n1 "$csv"
            done
        done
    done
done

# The medians of every point, in the order of the settings.
{
    echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC') on $(nproc) cores, load $load_before before and" \
         "$(cut -d' ' -f1-3 /proc/loadavg) after; medians of $RUNS runs; times from the release of every oshrun."
    echo
    echo "| hosts x PEs | transport | fan-out | start-up ms | first PE ms | job ms | shmem_init ms | shmem_init CPU ms | RSS after init MiB | RSS after all peers MiB | PSS after init MiB | node 0 oshrun peak MiB | runs ok |"
    echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    for layout in $LAYOUTS; do
        for fanout in $FANOUTS; do
            for transport in $TRANSPORTS; do
                awk -F, -v l="$layout" -v t="$transport" -v f="$fanout" '
                    function median(col,   n, i, j, v, tmp) {
                        n = 0
                        for (i = 1; i <= rows; i++) v[++n] = val[i, col]
                        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { tmp = v[i]; v[i] = v[j]; v[j] = tmp }
                        if (n == 0) return "-"
                        return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
                    }
                    NR > 1 && $1 == l && $5 == t && $6 == f { total++; if ($8 == "ok") { rows++; for (c = 9; c <= 20; c++) val[rows, c] = $c } }
                    END {
                        if (!total) exit
                        if (!rows) { printf "| %s | %s | %s | failed |||||||| 0/%d |\n", l, t, f, total; exit }
                        if (t == "launcher") { printf "| %s | oshrun alone (/bin/true) | %s | - | - | %.0f | - | - | - | - | - | - | %d/%d |\n", l, f, median(11), rows, total; exit }
                        if (t == "boot") { printf "| %s | bootstrap alone: barrier %.2f ms, 376 B/PE %.2f ms, 64 KiB/PE %.1f ms | %s | - | - | %.0f | - | - | - | - | - | - | %d/%d |\n", l, median(18), median(19), median(20), f, median(11), rows, total; exit }
                        printf "| %s | %s | %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.1f | %.1f | %.1f | %.1f | %d/%d |\n", l, t, f,
                            median(9), median(10), median(11), median(12), median(17), median(13) / 1024, median(14) / 1024,
                            median(15) / 1024, median(16) / 1024, rows, total
                    }' "$csv"
            done
        done
    done
    echo
    echo "Command: tests/netns/scale_hosts.sh $(basename "$build") with LAYOUTS=\"$LAYOUTS\" TRANSPORTS=\"$TRANSPORTS\" FANOUTS=\"$FANOUTS\" RUNS=$RUNS"
} >"$md"
cat "$md"
finish_case
