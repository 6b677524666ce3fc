#!/usr/bin/env bash
# bench/ysb.sh - examples/ysb (the Yahoo Streaming Benchmark's computation)
# at 1 and 2 workers, beside ysb_plain, the same computation as a plain
# sequential C loop, on the same events (examples/ysb/gen_events). Prints
# one table: median wall and CPU time (user + sys) and events per second,
# and checks that all of them print the same windows.
#
#   bash bench/ysb.sh [--runs N] [--events N] [--build DIR] [--dir DIR]
#
#   --runs N     runs per measurement, the median is reported (default 3)
#   --events N   events (default 1000000, about 260 MB of JSON lines)
#   --build DIR  the build holding stc, gen_events and ysb_plain (default build)
#   --dir DIR    where the input is made (default /tmp/stc-ysb)
#
# Figures on a shared, loaded VM are noisy: the table starts with the load
# average; compare the columns of one run, not runs of different days.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=3 events=1000000 build=build dir=/tmp/stc-ysb
usage() { sed -n '2,17s/^# \{0,1\}//p' "$0"; exit "${1:-0}"; }
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs=${2:?--runs needs a number}; shift 2 ;;
        --events) events=${2:?--events needs a number}; shift 2 ;;
        --build) build=${2:?--build needs a directory}; shift 2 ;;
        --dir) dir=${2:?--dir needs a directory}; shift 2 ;;
        -h|--help) usage 0 ;;
        *) echo "ysb.sh: unknown option '$1'" >&2; usage 64 >&2 ;;
    esac
done
for v in "$runs" "$events"; do
    [[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "ysb.sh: '$v' is not a positive number" >&2; exit 64; }
done
stc=$build/stc gen=$build/examples/ysb/gen_events plain=$build/examples/ysb/ysb_plain prog=examples/ysb/ysb.stc
for f in "$stc" "$gen" "$plain"; do
    [ -x "$f" ] || { echo "ysb.sh: no $f; build with: cmake -S . -B $build && cmake --build $build" >&2; exit 1; }
done
mkdir -p "$dir"
input=$dir/events-$events.json
[ -f "$input" ] || { echo "ysb.sh: making $input" >&2; "$gen" "$events" 1 >"$input.part" && mv "$input.part" "$input"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
declare -A cmd=([stc1]="$stc run --quiet --no-states --workers 1 --input $input $prog"
                [stc2]="$stc run --quiet --no-states --workers 2 --input $input $prog"
                [plain]="$plain")
names=(stc1 stc2 plain)
for r in $(seq "$runs"); do
    for name in "${names[@]}"; do
        TIMEFORMAT="%R %U %S"
        { time ${cmd[$name]} <"$input" >"$tmp/$name.out"; } 2>>"$tmp/$name.times"
    done
    grep -v '^windows = ' "$tmp/plain.out" | cmp -s - "$tmp/stc1.out" || { echo "ysb.sh: stc and ysb_plain differ" >&2; exit 1; }
    cmp -s "$tmp/stc1.out" "$tmp/stc2.out" || { echo "ysb.sh: 1 and 2 workers differ" >&2; exit 1; }
done
echo "ysb: $events events ($(du -m "$input" | cut -f1) MB, $(grep -vc '^windows' "$tmp/plain.out") window lines), $runs runs each, median; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-26s %10s %10s %14s\n' "program" "wall s" "cpu s" "events/s"
label() { case $1 in stc1) echo "stc run --workers 1" ;; stc2) echo "stc run --workers 2" ;; plain) echo "ysb_plain (C loop)" ;; esac; }
for name in "${names[@]}"; do
    wall=$(awk '{ print $1 }' "$tmp/$name.times" | median)
    cpu=$(awk '{ print $2 + $3 }' "$tmp/$name.times" | median)
    printf '%-26s %10.2f %10.2f %14.0f\n' "$(label "$name")" "$wall" "$cpu" "$(awk -v n="$events" -v t="$wall" 'BEGIN { print n / t }')"
done
