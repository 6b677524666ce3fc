#!/usr/bin/env bash
# predict.sh - how good is `stc run --profile`'s speedup prediction?
#
#   bash bench/predict.sh [--runs N] [--lines N] [--build DIR] [--only NAME]
#
# For each program: profile it on 1 worker and on 2 workers; from each
# profile take the predicted wall time for 1 and 2 workers, and compare
# with the wall time measured on that many workers (medians of N runs,
# default 5, the 1- and 2-worker runs interleaved).  Prints the error of
# each prediction in percent and the predicted and measured speedups.
# A 1-worker profile samples its pipelines at 2 workers (docs/OBSERVE.md),
# so the 1-worker time is measured by a third profile, pinned to CPU 0
# (`taskset -c 0`: one CPU, no sample).
# The programs: bench/paper/*.stc, examples/logstats over --lines lines
# (default 1000000, made by gen_log) and bench/stream/*.stc over the same
# lines.  --only NAME keeps the programs whose name contains NAME.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=5 lines=1000000 build=build only=
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs=${2:?--runs needs a number}; shift 2 ;;
        --lines) lines=${2:?--lines needs a number}; shift 2 ;;
        --build) build=${2:?--build needs a directory}; shift 2 ;;
        --only) only=${2:?--only needs a name}; shift 2 ;;
        -h|--help) sed -n '2,13s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) echo "predict.sh: unknown option '$1'" >&2; exit 64 ;;
    esac
done
for v in "$runs" "$lines"; do
    [[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "predict.sh: '$v' is not a positive number" >&2; exit 64; }
done
STC=$build/stc gen=$build/examples/logstats/gen_log
for f in "$STC" "$gen"; do
    [ -x "$f" ] || { echo "predict.sh: no $f; build first (make test)" >&2; exit 1; }
done
dir=/tmp/stc-predict; mkdir -p "$dir"
input=$dir/lines-$lines.log
[ -f "$input" ] && [ "$(wc -l <"$input")" -eq "$lines" ] || "$gen" "$lines" 1 >"$input"

median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

# profile W FILE [ARGS]: prints "measured predicted1 predicted2" (ms) for one run on W workers
# (W "1pin": on 1 worker, pinned to CPU 0)
profile() {
    local w=$1 pin=(); shift
    if [ "$w" = 1pin ]; then w=1 pin=(taskset -c 0); fi
    "${pin[@]}" "$STC" run --workers "$w" --profile --no-states "$@" 2>&1 >/dev/null | awk '
        /^  wall ms/ { p1 = $3; p2 = $4 }
        /this run:/ { for (i = 1; i <= NF; i++) if ($i == "measured,") m = $(i - 2) }
        END { print m, p1, p2 }'
}

# The time a cache line takes between the two CPUs now (bench/xcore.c): our
# VMs' 2-worker figures depend on it (bench/README.md, "Cross-core moves").
xc() { if [ -x "$build/xcore" ]; then "$build/xcore"; else echo "? (no $build/xcore)"; fi; }
vs() { if [ -x "$build/vcpu_speed" ]; then "$build/vcpu_speed"; else echo "? (no $build/vcpu_speed)"; fi; }
echo "a cache line between CPUs before the runs: $(xc) ns; each CPU's 8 MB chase, ns a load: $(vs)"
printf '%-14s %9s %9s %7s | %9s %9s %7s | %6s %6s %6s | %s\n' program "1w meas" "1w pred" "err %" "2w meas" "2w pred" \
    "err %" "meas x" "pred1x" "pred2x" "xcore ns"
row() { # NAME FILE [ARGS]
    local name=$1; shift
    [ -z "$only" ] || [[ "$name" == *"$only"* ]] || return 0
    local m1=() m2=() p2from1=() p1from2=() p2from2=() xs=() m p1 p2
    for _ in $(seq "$runs"); do
        read -r m p1 p2 < <(profile 1pin "$@"); m1+=("$m")
        read -r m p1 p2 < <(profile 1 "$@"); p2from1+=("$p2")
        xs+=("$(xc)") # the placement the 2-worker run met
        read -r m p1 p2 < <(profile 2 "$@"); m2+=("$m"); p1from2+=("$p1"); p2from2+=("$p2")
    done
    local X
    X=$(printf '%s\n' "${xs[@]}" | sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {print (lo == hi) ? lo : lo "-" hi}')
    local M1 M2 P2 P1 Q2
    M1=$(printf '%s\n' "${m1[@]}" | median); M2=$(printf '%s\n' "${m2[@]}" | median)
    P2=$(printf '%s\n' "${p2from1[@]}" | median); P1=$(printf '%s\n' "${p1from2[@]}" | median)
    Q2=$(printf '%s\n' "${p2from2[@]}" | median)
    # predicted from the other worker count: 1w profile -> 2w time, 2w profile -> 1w time;
    # speedups: measured, predicted by the 1-worker profile, by the 2-worker one
    awk -v n="$name" -v m1="$M1" -v p1="$P1" -v m2="$M2" -v p2="$P2" -v q2="$Q2" -v x="$X" 'BEGIN {
        printf "%-14s %9.1f %9.1f %+7.1f | %9.1f %9.1f %+7.1f | %6.2f %6.2f %6.2f | %s\n", n, m1, p1, 100 * (p1 - m1) / m1,
            m2, p2, 100 * (p2 - m2) / m2, m1 / m2, m1 / p2, p1 / q2, x }'
}
for f in bench/paper/*.stc; do row "$(basename "$f" .stc)" "$f"; done
row logstats --input "$input" examples/logstats/logstats.stc
for f in bench/stream/*.stc; do row "$(basename "$f" .stc)" --input "$input" "$f"; done
echo "1w pred: the 1-worker time predicted from a 2-worker profile; 2w pred: the 2-worker time predicted"
echo "from a 1-worker profile; pred1x/pred2x: the speedup predicted by the 1-/2-worker profile;"
echo "xcore ns: a cache line's move between the CPUs before each 2-worker run (over ~100 ns: the far"
echo "placement, in which 2-worker runs of fine-grained programs take up to 1.5x longer: bench/README.md)"
echo "(medians of $runs runs; $lines input lines)"
echo "a cache line between CPUs after the runs: $(xc) ns; each CPU's 8 MB chase, ns a load: $(vs)"
