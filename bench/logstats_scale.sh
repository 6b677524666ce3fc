#!/usr/bin/env bash
# bench/logstats_scale.sh - how far two cores take examples/logstats: stc
# at 1 and 2 workers beside the same aggregation written as a oneTBB
# pipeline (bench/logstats_tbb.cpp: what a C++ user would write instead),
# at 1 and 2 threads, with tokens of 128 lines (about stc's batch of 50 us)
# and of 8,192 lines. Every row measured in this run, runs interleaved (the
# VM's speed drifts from minute to minute); wall and CPU (user + sys) are
# medians; "2 / 1" is a tool's 1-thread wall over its 2-thread wall.
#
#   bash bench/logstats_scale.sh [--runs N] [--lines N] [--build DIR] [--dir DIR]
#
#   --runs N     runs per measurement, the median is reported (default 5)
#   --lines N    log lines (default 1000000), made once by gen_log into --dir
#   --build DIR  a build with -DSTC_BENCH=ON (default build-bench, as run.sh):
#                cmake -S . -B build-bench -DSTC_BENCH=ON -DCMAKE_BUILD_TYPE=Release
#                cmake --build build-bench
#   --dir DIR    where the log is made (default /tmp/stc-cost, as cost.sh)
#
# Without oneTBB (apt-get install libtbb-dev, then build again) only stc's
# rows are shown. Outputs are compared before timing.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=5 lines=1000000 build=build-bench dir=/tmp/stc-cost
usage() { sed -n '2,20s/^# \{0,1\}//p' "$0"; exit "${1:-0}"; }
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs=${2:?--runs needs a number}; shift 2 ;;
        --lines) lines=${2:?--lines needs a number}; shift 2 ;;
        --build) build=${2:?--build needs a directory}; shift 2 ;;
        --dir) dir=${2:?--dir needs a directory}; shift 2 ;;
        -h|--help) usage 0 ;;
        *) echo "logstats_scale.sh: unknown option '$1'" >&2; usage 64 >&2 ;;
    esac
done
for v in "$runs" "$lines"; do
    [[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "logstats_scale.sh: '$v' is not a positive number" >&2; exit 64; }
done
stc=$build/stc gen=$build/examples/logstats/gen_log tbb=$build/bench/logstats_tbb
for f in "$stc" "$gen"; do
    [ -x "$f" ] || { echo "logstats_scale.sh: no $f; build with: cmake -S . -B $build -DSTC_BENCH=ON -DCMAKE_BUILD_TYPE=Release && cmake --build $build" >&2; exit 1; }
done
[ -n "${EPOCHREALTIME:-}" ] || { echo "logstats_scale.sh: needs bash 5 or later" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "logstats_scale.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
mkdir -p "$dir"
log=$dir/access-$lines.log
if [ ! -f "$log" ] || [ "$(wc -l <"$log")" -ne "$lines" ]; then
    echo "logstats_scale.sh: making $log" >&2
    "$gen" "$lines" 1 >"$log.part" && mv "$log.part" "$log"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

prog=examples/logstats/logstats.stc
cases=(
    "stc|1|$stc run --quiet --workers 1 --input $log $prog"
    "stc|2|$stc run --quiet --workers 2 --input $log $prog"
)
if [ -x "$tbb" ]; then
    for n in 128 8192; do
        cases+=("oneTBB, $n lines a token|1|$tbb --threads 1 --lines-per-token $n $log"
                "oneTBB, $n lines a token|2|$tbb --threads 2 --lines-per-token $n $log")
    done
else
    echo "logstats_scale.sh: no $tbb (apt-get install libtbb-dev, then build $build again): stc only" >&2
fi

# The same answer from every case, byte for byte (logstats_tbb prints the
# states as stc does).
for i in "${!cases[@]}"; do
    c=${cases[$i]}
    bash -c "${c##*|}" </dev/null >"$tmp/out" 2>"$tmp/err" ||
        { echo "logstats_scale.sh: '${c##*|}' failed: $(head -3 "$tmp/err")" >&2; exit 1; }
    if [ "$i" -eq 0 ]; then mv "$tmp/out" "$tmp/want"
    elif ! cmp -s "$tmp/want" "$tmp/out"; then
        echo "logstats_scale.sh: '${c##*|}' does not print what stc prints" >&2; exit 1
    fi
done

# The time a cache line takes between the two CPUs now (bench/xcore.c): our
# VMs' 2-worker figures depend on it (bench/README.md, "Cross-core moves").
xc() { if [ -x "$build/xcore" ]; then "$build/xcore"; else echo "? (no $build/xcore)"; fi; }
vs() { if [ -x "$build/vcpu_speed" ]; then "$build/vcpu_speed"; else echo "? (no $build/vcpu_speed)"; fi; }
xc_before=$(xc) vs_before=$(vs)
for ((r = 1; r <= runs; r++)); do
    for i in "${!cases[@]}"; do
        t0=$EPOCHREALTIME
        /usr/bin/time -f '%U %S' -o "$tmp/t" bash -c "${cases[$i]##*|} >/dev/null" </dev/null
        t1=$EPOCHREALTIME
        awk -v a="$t0" -v b="$t1" '{ printf "%.4f %.2f\n", b - a, $1 + $2 }' "$tmp/t" >>"$tmp/r.$i"
    done
done

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "logstats over $lines lines: medians of $runs interleaved runs; $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "a cache line between CPUs: $xc_before ns before the runs, $(xc) ns after"
echo "each CPU's 8 MB chase, ns a load: $vs_before before the runs, $(vs) after"
printf '%-28s %8s %10s %10s %8s\n' tool threads "wall s" "CPU s" "2 / 1"
one=''
for i in "${!cases[@]}"; do
    IFS='|' read -r tool threads _ <<<"${cases[$i]}"
    wall=$(cut -d' ' -f1 "$tmp/r.$i" | median)
    cpu=$(cut -d' ' -f2 "$tmp/r.$i" | median)
    if [ "$threads" = 1 ]; then one=$wall; ratio=''
    else ratio=$(awk -v a="$one" -v b="$wall" 'BEGIN { printf "%.2fx", a / b }'); fi
    printf '%-28s %8s %10.3f %10.3f %8s\n' "$tool" "$threads" "$wall" "$cpu" "$ratio"
done
