#!/usr/bin/env bash
# bench/mpi.sh - what `mpirun -np K stc run --mpi` costs and gains against
# `stc run` on one machine (issue 14 item 6).  Runs each program below as
# `stc run --workers N` and under `mpirun -np K ... --mpi --workers N` for
# K = 1..--ranks, interleaved, and prints the medians of wall time and of
# CPU time (user + sys of mpirun and every rank: /usr/bin/time counts the
# children it waits for), with the load average.
#
#   bash bench/mpi.sh [--runs N] [--workers N] [--ranks K] [--lines N]
#                     [--words N] [--serial-ns NS] [--only NAME]
#                     [--build DIR] [--dir DIR]
#
#   --runs N     runs per measurement, the median is reported (default 5)
#   --workers N  worker threads per rank (default 2)
#   --ranks K    the largest rank count (default 4)
#   --lines N    logstats input lines (default 200000), made once by
#                examples/logstats/gen_log into --dir
#   --words N    the keyed word count's input words (default 1000000), made
#                once by examples/wordfreq/gen_text into --dir
#   --serial-ns NS  STC_MPI_SERIAL_NS for the ranks: the serial stages' and
#                keyed shards' placement (-1: every one that may go goes;
#                default: the cost model)
#   --only NAME  only the programs whose name starts with NAME
#   --build DIR  the build holding stc (with MPI) and gen_log (default build)
#   --dir DIR    where the input is made (default /tmp/stc-bench-mpi)
#
# The other ranks run replicated stages that call no thread but read-only
# ones (their states go with each batch) and serial stages whose work is
# dear enough (docs/CLUSTER.md): `pure` is all replicated work, logstats's
# parse stage is replicated (its serial stages are too cheap to move), the
# paper benchmarks' serial stages f and h take milliseconds an item, so at
# 2 ranks one of them goes to rank 1; comp_pure's and comp_read's f and h
# are read-only, one replicated stage that every rank runs.  The
# "stc run x2Nw" row is one process with twice the workers (issue 14's
# "2 ranks x 1 worker against 1 rank x 2 workers").  K > 1 columns include
# the price of the job (starting K processes, each loading Open MPI and
# compiling the program).  After each program's rows, one `-np 2 --stats`
# run says what the transport carried: bytes sent and received an item and
# rank 0's time with batches away an item (items: --stats' count).
#
# The ranks use Open MPI's ob1 messaging layer (OMPI_MCA_pml=ob1) unless
# the environment names another: on a machine without a fast fabric the
# default selection first tries the cm layer, whose probes cost every
# rank ~0.2 s in MPI_Init (docs/CLUSTER.md, "Start-up").
set -euo pipefail
cd "$(dirname "$0")/.."

runs=5 workers=2 ranks=4 lines=200000 words=1000000 serial_ns= only= build=build dir=/tmp/stc-bench-mpi
usage() { sed -n '2,34s/^# \{0,1\}//p' "$0"; exit "${1:-0}"; }
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs=${2:?--runs needs a number}; shift 2 ;;
        --workers) workers=${2:?--workers needs a number}; shift 2 ;;
        --ranks) ranks=${2:?--ranks needs a number}; shift 2 ;;
        --lines) lines=${2:?--lines needs a number}; shift 2 ;;
        --words) words=${2:?--words needs a number}; shift 2 ;;
        --serial-ns) serial_ns=${2:?--serial-ns needs a number}; shift 2 ;;
        --only) only=${2:?--only needs a name}; shift 2 ;;
        --build) build=${2:?--build needs a directory}; shift 2 ;;
        --dir) dir=${2:?--dir needs a directory}; shift 2 ;;
        -h|--help) usage 0 ;;
        *) echo "bench/mpi.sh: unknown option $1" >&2; usage 64 ;;
    esac
done
stc=$build/stc
[ -x "$stc" ] || { echo "bench/mpi.sh: no $stc: build first (make test)" >&2; exit 66; }
command -v mpirun >/dev/null || { echo "bench/mpi.sh: mpirun not found (apt-get install openmpi-bin)" >&2; exit 69; }
if "$stc" run --mpi /dev/null 2>&1 </dev/null | grep -q "built without MPI"; then
    echo "bench/mpi.sh: $stc was built without MPI (apt-get install libopenmpi-dev; cmake -DSTC_MPI=ON)" >&2
    exit 69
fi
# Our mpiruns get a session directory of their own: another Open MPI job
# on the machine (a test run) sharing the default one can collide with
# them (tests/mpi found it).
session=$(mktemp -d)
trap 'rm -rf "$session"' EXIT
export OMPI_MCA_orte_tmpdir_base="$session"
export OMPI_MCA_pml="${OMPI_MCA_pml:-ob1}"
export OMPI_MCA_odls_base_sigkill_timeout="${OMPI_MCA_odls_base_sigkill_timeout:-0}" # (docs/CLUSTER.md, "Start-up")
mpirun=(mpirun -q --oversubscribe)
[ "$(id -u)" -eq 0 ] && mpirun+=(--allow-run-as-root)
[ -n "$serial_ns" ] && mpirun+=(-x "STC_MPI_SERIAL_NS=$serial_ns")

mkdir -p "$dir"
log=$dir/access-$lines.log
[ -s "$log" ] || "$build/examples/logstats/gen_log" "$lines" 7 >"$log"
text=$dir/words-$words.txt
[ -s "$text" ] || "$build/examples/wordfreq/gen_text" "$words" 1 >"$text"

# name|program|options
progs=(
    "hello|examples/demo.stc|"
    "comp_write (paper, 50 x 2 ms items)|bench/paper/comp_write.stc|"
    "applicative (paper, serial f, h)|bench/paper/applicative.stc|"
    "conditional (paper, serial f, h)|bench/paper/conditional.stc|"
    "comp_pure (paper, read-only f, h)|bench/paper/comp_pure.stc|"
    "comp_read (paper, read-only f, h)|bench/paper/comp_read.stc|"
    "pure (64 x 2 ms items, replicated)|bench/mpi/pure.stc|"
    "logstats $lines lines|examples/logstats/logstats.stc|--quiet --input $log"
    "join ($lines lines, 20,000-path table)|bench/mpi/join.stc|--quiet --input $log"
    "wordfreq (keyed word count, $words words)|examples/wordfreq/wordfreq.stc|--quiet --input $text"
)

# measure CMD...: "wall cpu" of one run, the output checked against $ref.
measure() {
    /usr/bin/time -o "$dir/time" -f "%e %U %S" "$@" >"$dir/out" 2>/dev/null
    cmp -s "$dir/out" "$dir/ref" || { echo "bench/mpi.sh: output differs: $*" >&2; exit 1; }
    tail -1 "$dir/time" | awk '{ printf "%.3f %.3f\n", $1, $2 + $3 }'
}
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs; $runs runs each, --workers $workers, pml $OMPI_MCA_pml"
printf '%-40s %-10s %10s %10s\n' program mode "wall s" "CPU s"
for p in "${progs[@]}"; do
    IFS='|' read -r name prog opts <<<"$p"
    case $name in "$only"*) ;; *) continue ;; esac
    read -r -a o <<<"$opts"
    "$stc" run --workers "$workers" "${o[@]}" "$prog" >"$dir/ref"
    declare -A wall=() cpu=()
    for ((r = 0; r < runs; r++)); do
        read -r w c < <(measure "$stc" run --workers "$workers" "${o[@]}" "$prog")
        wall[one]+="$w "; cpu[one]+="$c "
        read -r w c < <(measure "$stc" run --workers $((2 * workers)) "${o[@]}" "$prog")
        wall[two]+="$w "; cpu[two]+="$c "
        for ((k = 1; k <= ranks; k++)); do
            read -r w c < <(measure "${mpirun[@]}" -np "$k" "$stc" run --mpi --workers "$workers" "${o[@]}" "$prog")
            wall[$k]+="$w "; cpu[$k]+="$c "
        done
    done
    for m in one two $(seq 1 "$ranks"); do
        case $m in one) label="stc run" ;; two) label="stc run x$((2 * workers))w" ;; *) label="-np $m" ;; esac
        printf '%-40s %-10s %10s %10s\n' "$name" "$label" \
            "$(tr ' ' '\n' <<<"${wall[$m]}" | grep . | median)" "$(tr ' ' '\n' <<<"${cpu[$m]}" | grep . | median)"
    done
    unset wall cpu
    # what the transport carried at -np 2 (one run)
    "${mpirun[@]}" -np 2 "$stc" run --mpi --stats --workers "$workers" "${o[@]}" "$prog" >/dev/null 2>"$dir/stats" || true
    awk -v name="$name" '
        /^stats: workers/ { for (i = 1; i <= NF; i++) if ($i == "items") items = $(i + 1) + 0 }
        /^stats: remote batches/ { line = $0; gsub(",", ""); sent = $7; got = $9 }
        /^stats: rank 0: batches kept/ { for (i = 1; i <= NF; i++) if ($i == "away") away = $(i + 1) }
        END {
            if (!items) { printf "%-40s -np 2: no stats\n", name; exit }
            printf "%-40s -np 2: %.1f bytes sent, %.1f received an item, %.2f us away an item (%d items)\n",
                name, sent / items, got / items, away * 1000 / items, items
            if (line ~ /keyed shards/) { sub(/.*serial stages placed/, "serial stages placed", line); print "  " line }
        }' "$dir/stats"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
