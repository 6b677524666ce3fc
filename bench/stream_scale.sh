#!/usr/bin/env bash
# bench/stream_scale.sh - do fine-grained stream programs that allocate get
# faster with more workers? Runs each program below over the same input at
# 1 worker and at --workers N, interleaved, and prints the medians of wall
# time and lines/s and their ratio (>1: N workers are faster).
#
#   bash bench/stream_scale.sh [--runs N] [--workers N] [--lines N]
#                              [--build DIR] [--dir DIR]
#
#   --runs N     runs per measurement, the median is reported (default 5)
#   --workers N  the worker count compared with 1 (default 2)
#   --lines N    input lines (default 1000000), made once by
#                examples/logstats/gen_log into --dir
#   --build DIR  the build holding stc and gen_log (default build)
#   --dir DIR    where the input is made (default /tmp/stc-stream-scale)
#
# The programs, from the cheapest item to the dearest:
#   bench/stream/tiny_tuple.stc    a pair of ints per line
#   bench/stream/word_counts.stc   split on a captured separator, one serial thread
#   examples/logstats/logstats.stc parsing, five serial threads
# `stc run --profile --workers N --input FILE PROGRAM` shows where the time
# goes per stage, including the input and output stages.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=5 workers=2 lines=1000000 build=build dir=/tmp/stc-stream-scale
usage() { sed -n '2,22s/^# \{0,1\}//p' "$0"; exit "${1:-0}"; }
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs=${2:?--runs needs a number}; shift 2 ;;
        --workers) workers=${2:?--workers needs a number}; shift 2 ;;
        --lines) lines=${2:?--lines needs a number}; shift 2 ;;
        --build) build=${2:?--build needs a directory}; shift 2 ;;
        --dir) dir=${2:?--dir needs a directory}; shift 2 ;;
        -h|--help) usage 0 ;;
        *) echo "stream_scale.sh: unknown option '$1'" >&2; usage 64 >&2 ;;
    esac
done
[ -n "${EPOCHREALTIME:-}" ] || { echo "stream_scale.sh: needs bash 5 or later" >&2; exit 1; }
for v in "$runs" "$workers" "$lines"; do
    [[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "stream_scale.sh: '$v' is not a positive number" >&2; exit 64; }
done
stc=$build/stc
gen=$build/examples/logstats/gen_log
for f in "$stc" "$gen"; do
    [ -x "$f" ] || { echo "stream_scale.sh: no $f; build with: cmake -S . -B $build && cmake --build $build" >&2; exit 1; }
done
mkdir -p "$dir"
input=$dir/lines-$lines.log
if [ ! -f "$input" ] || [ "$(wc -l <"$input")" -ne "$lines" ]; then
    echo "stream_scale.sh: making $input" >&2
    "$gen" "$lines" 1 >"$input.part" && mv "$input.part" "$input"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# once PROGRAM W: one run, its wall time in seconds appended to $tmp/W
once() {
    local t0 t1
    t0=$EPOCHREALTIME
    "$stc" run --quiet --workers "$2" --input "$input" "$1" >/dev/null 2>"$tmp/err" ||
        { echo "stream_scale.sh: stc failed on $1:" >&2; cat "$tmp/err" >&2; exit 1; }
    t1=$EPOCHREALTIME
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f\n", b - a }' >>"$tmp/$2"
}

echo "stc stream scaling: $lines lines, 1 vs $workers workers, median of $runs; $(nproc) CPUs," \
     "load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-32s %10s %12s %10s %12s %8s\n' program "1w s" "1w lines/s" "${workers}w s" "${workers}w lines/s" ratio
for prog in bench/stream/tiny_tuple.stc bench/stream/word_counts.stc examples/logstats/logstats.stc; do
    : >"$tmp/1"; : >"$tmp/$workers"
    for ((r = 1; r <= runs; r++)); do # interleaved: load changes hit both alike
        once "$prog" 1
        once "$prog" "$workers"
    done
    w1=$(median <"$tmp/1"); wn=$(median <"$tmp/$workers")
    awk -v p="$prog" -v n="$lines" -v a="$w1" -v b="$wn" \
        'BEGIN { printf "%-32s %10.3f %12.0f %10.3f %12.0f %8.2f\n", p, a, n / a, b, n / b, a / b }'
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
