#!/usr/bin/env bash
# bench/cost.sh - COST: is one stc worker as fast as the single-threaded
# tool a user would pick instead? One table, every row measured in this
# run, runs interleaved (the VM's speed drifts from minute to minute):
#
#   logstats   examples/logstats over --lines lines: stc at 1 and 2
#              workers, mawk and gawk running examples/logstats/logstats.awk,
#              python3 running bench/cost/logstats.py
#   fib        fib(30) by recursion: stc, lua5.4, python3
#   cheap      3M smap items through one thread (bench/cost/cheap_smap.stc):
#              stc at 1 worker, the same loop in lua5.4
#
#   bash bench/cost.sh [--runs N] [--lines N] [--build DIR] [--dir DIR]
#
#   --runs N     runs per measurement, the median is reported (default 5)
#   --lines N    log lines (default 1000000), made once by gen_log into --dir
#   --build DIR  the build holding stc and gen_log (default build)
#   --dir DIR    where the log is made (default /tmp/stc-cost)
#
# A missing yardstick is left out with the package that provides it
# (apt-get install mawk gawk lua5.4 python3). Outputs are compared before
# timing: a yardstick that computes something else is an error.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=5 lines=1000000 build=build dir=/tmp/stc-cost
usage() { sed -n '2,24s/^# \{0,1\}//p' "$0"; exit "${1:-0}"; }
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs=${2:?--runs needs a number}; shift 2 ;;
        --lines) lines=${2:?--lines needs a number}; shift 2 ;;
        --build) build=${2:?--build needs a directory}; shift 2 ;;
        --dir) dir=${2:?--dir needs a directory}; shift 2 ;;
        -h|--help) usage 0 ;;
        *) echo "cost.sh: unknown option '$1'" >&2; usage 64 >&2 ;;
    esac
done
[ -n "${EPOCHREALTIME:-}" ] || { echo "cost.sh: needs bash 5 or later" >&2; exit 1; }
for v in "$runs" "$lines"; do
    [[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "cost.sh: '$v' is not a positive number" >&2; exit 64; }
done
stc=$build/stc
gen=$build/examples/logstats/gen_log
for f in "$stc" "$gen"; do
    [ -x "$f" ] || { echo "cost.sh: no $f; build with: cmake -S . -B $build && cmake --build $build" >&2; exit 1; }
done
mkdir -p "$dir"
log=$dir/access-$lines.log
if [ ! -f "$log" ] || [ "$(wc -l <"$log")" -ne "$lines" ]; then
    echo "cost.sh: making $log" >&2
    "$gen" "$lines" 1 >"$log.part" && mv "$log.part" "$log"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

have() { command -v "$1" >/dev/null 2>&1; }
# Debian's python3 where it is: a version manager's shim adds ~1 s a start.
py=python3; [ -x /usr/bin/python3 ] && py=/usr/bin/python3
missing=()
for t in mawk:mawk gawk:gawk lua5.4:lua5.4 python3:python3; do
    have "${t%%:*}" || missing+=("${t#*:}")
done

# Each case: NAME|COMMAND (run by bash -c, stdin from /dev/null unless the
# command redirects). Cases of one group run interleaved, round by round.
logstats=(
    "stc 1 worker|$stc run --quiet --workers 1 --input $log examples/logstats/logstats.stc"
    "stc 2 workers|$stc run --quiet --workers 2 --input $log examples/logstats/logstats.stc"
)
have mawk && logstats+=("mawk|mawk -f examples/logstats/logstats.awk $log")
have gawk && logstats+=("gawk|gawk -f examples/logstats/logstats.awk $log")
have python3 && logstats+=("python3|$py bench/cost/logstats.py <$log")
fib=("stc 1 worker|$stc run --quiet --workers 1 bench/cost/fib.stc")
have lua5.4 && fib+=("lua5.4|lua5.4 bench/cost/fib.lua")
have python3 && fib+=("python3|$py bench/cost/fib.py")
cheap=("stc 1 worker|$stc run --quiet --workers 1 bench/cost/cheap_smap.stc")
have lua5.4 && cheap+=("lua5.4|lua5.4 bench/cost/cheap_smap.lua")

# The answers first: every yardstick must print what stc prints (floats
# compared as numbers, since awk prints %.17g).
normalise() { awk '{ for (i = 1; i <= NF; i++) { f = $i; gsub(/[(),]/, "", f); if (f ~ /^-?[0-9.]+(e[-+]?[0-9]+)?$/ && f ~ /\./) $i = sprintf("%.17g", f + 0) } print }'; }
check() { # check GROUP-ARRAY-NAME
    local -n cases=$1
    local first='' c
    for c in "${cases[@]}"; do
        bash -c "${c#*|}" </dev/null 2>"$tmp/err" | normalise >"$tmp/out" ||
            { echo "cost.sh: ${c%%|*} failed: $(head -3 "$tmp/err")" >&2; exit 1; }
        if [ -z "$first" ]; then first=${c%%|*}; cp "$tmp/out" "$tmp/want"
        elif ! cmp -s "$tmp/want" "$tmp/out"; then
            diff "$tmp/want" "$tmp/out" | head -6 >&2
            echo "cost.sh: $1: ${c%%|*} does not print what $first prints" >&2; exit 1
        fi
    done
}
check logstats; check fib; check cheap

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
measure() { # measure GROUP-ARRAY-NAME LABEL: one table block
    local -n cases=$1
    local i r t0 t1 base=''
    for ((r = 1; r <= runs; r++)); do
        for i in "${!cases[@]}"; do
            t0=$EPOCHREALTIME
            bash -c "${cases[$i]#*|}" </dev/null >/dev/null 2>&1
            t1=$EPOCHREALTIME
            awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f\n", b - a }' >>"$tmp/$1.$i"
        done
    done
    for i in "${!cases[@]}"; do
        local m; m=$(median <"$tmp/$1.$i")
        [ -n "$base" ] || base=$m
        awk -v g="$2" -v n="${cases[$i]%%|*}" -v m="$m" -v b="$base" \
            'BEGIN { printf "%-34s %-16s %10.3f %14.2f\n", g, n, m, m / b }'
    done
}

# The time a cache line takes between the two CPUs now (bench/xcore.c): our
# VMs' 2-worker figures depend on it (bench/README.md, "Cross-core moves").
xc() { if [ -x "$build/xcore" ]; then "$build/xcore"; else echo "? (no $build/xcore)"; fi; }
echo "stc COST: medians of $runs interleaved runs; $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), a cache line between CPUs $(xc) ns"
printf '%-34s %-16s %10s %14s\n' benchmark tool "median s" "/ stc 1 worker"
measure logstats "logstats, $lines lines"
measure fib "fib(30)"
measure cheap "smap of 3M cheap items"
[ ${#missing[@]} -eq 0 ] || echo "left out (not installed): ${missing[*]}; apt-get install ${missing[*]}"
vs() { if [ -x "$build/vcpu_speed" ]; then "$build/vcpu_speed"; else echo "? (no $build/vcpu_speed)"; fi; }
echo "a cache line between CPUs after the runs: $(xc) ns; each CPU's 8 MB chase, ns a load: $(vs)"
