#!/usr/bin/env bash
# bench/keyed.sh - does a keyed thread's stage scale like a replicated one?
# Runs three programs doing the same ~30 us of work per item over 20000
# items (bench/keyed/):
#   keyed.stc       a keyed thread over 1000 keys: shard stages (DESIGN.md 7b)
#   mapstate.stc    an ordinary thread whose state is the same map: one serial stage
#   replicated.stc  the work without a state: a replicated stage
# at 1 and at --workers N workers, interleaved, and prints the medians of
# wall and CPU (user + sys) time, their wall ratio, and the profile's
# predicted speedup at N workers (from the measured per-stage busy times,
# which a loaded machine disturbs less than wall times).
#
#   bash bench/keyed.sh [--runs N] [--workers N] [--build DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=3 workers=2 build=build
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs=${2:?--runs needs a number}; shift 2 ;;
        --workers) workers=${2:?--workers needs a number}; shift 2 ;;
        --build) build=${2:?--build needs a directory}; shift 2 ;;
        -h|--help) sed -n '2,16s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) echo "keyed.sh: unknown option '$1'" >&2; exit 64 ;;
    esac
done
stc=$build/stc
[ -x "$stc" ] || { echo "keyed.sh: no $stc (build first)" >&2; exit 1; }
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# one_run W PROG: "wall cpu" seconds
one_run() {
    local t; t=$( { /usr/bin/time -f '%e %U %S' "$stc" run --quiet --workers "$1" "$2" >/dev/null; } 2>&1 | tail -n 1)
    awk '{ printf "%s %.2f\n", $1, $2 + $3 }' <<<"$t"
}
echo "load: $(cut -d' ' -f1-3 /proc/loadavg) (wall times on a loaded machine are noise; see the prediction)"
printf '%-12s %10s %10s %10s %10s %8s %10s\n' program "wall w=1" "cpu w=1" "wall w=$workers" "cpu w=$workers" ratio "predicted"
for p in keyed mapstate replicated; do
    prog=bench/keyed/$p.stc
    w1=() c1=() wn=() cn=()
    for ((r = 0; r < runs; r++)); do
        read -r a b < <(one_run 1 "$prog"); w1+=("$a") c1+=("$b")
        read -r a b < <(one_run "$workers" "$prog"); wn+=("$a") cn+=("$b")
    done
    mw1=$(printf '%s\n' "${w1[@]}" | median) mc1=$(printf '%s\n' "${c1[@]}" | median)
    mwn=$(printf '%s\n' "${wn[@]}" | median) mcn=$(printf '%s\n' "${cn[@]}" | median)
    pred=$("$stc" run --quiet --workers "$workers" --profile "$prog" 2>&1 >/dev/null |
        awk -v W="$workers" '/^  workers/ { for (i = 2; i <= NF; i++) if ($i == W) c = i } /^  speedup/ && c { print $c; exit }')
    printf '%-12s %10s %10s %10s %10s %8.2f %10s\n' "$p" "$mw1" "$mc1" "$mwn" "$mcn" \
        "$(awk -v a="$mw1" -v b="$mwn" 'BEGIN { print (b > 0 ? a / b : 0) }')" "${pred:-?}"
done
