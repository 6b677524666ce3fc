#!/usr/bin/env bash
# predict.sh - how good is `stc run --profile`'s speedup prediction?
#
#   bash bench/predict.sh [--runs N] [STC]
#
# For each paper benchmark: profile it on 1 worker and on 2 workers; from
# each profile take the predicted wall time for 1 and 2 workers, and
# compare with the wall time measured on that many workers (medians of N
# runs, default 5).  Prints the prediction error in percent.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=5
if [ "${1:-}" = "--runs" ]; then runs=$2; shift 2; fi
STC=${1:-build/stc}
[ -x "$STC" ] || { echo "predict.sh: build stc first (make test), or give its path" >&2; exit 1; }

median() { sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

# profile FILE W: prints "measured predicted1 predicted2" (ms) for one run on W workers
profile() {
    "$STC" run --workers "$2" --profile "$1" 2>&1 >/dev/null | awk '
        /^  wall ms/ { p1 = $3; p2 = $4 }
        /this run:/ { for (i = 1; i <= NF; i++) if ($i == "measured,") m = $(i - 2) }
        END { print m, p1, p2 }'
}

printf '%-14s %10s %10s %8s | %10s %10s %8s\n' benchmark "1w meas" "1w pred" "err %" "2w meas" "2w pred" "err %"
for f in bench/paper/*.stc; do
    name=$(basename "$f" .stc)
    m1=(); m2=(); p2from1=(); p1from2=()
    for _ in $(seq "$runs"); do
        read -r m p1 p2 < <(profile "$f" 1); m1+=("$m"); p2from1+=("$p2")
        read -r m p1 p2 < <(profile "$f" 2); m2+=("$m"); p1from2+=("$p1")
    done
    M1=$(printf '%s\n' "${m1[@]}" | median); M2=$(printf '%s\n' "${m2[@]}" | median)
    P2=$(printf '%s\n' "${p2from1[@]}" | median); P1=$(printf '%s\n' "${p1from2[@]}" | median)
    # predicted from the other worker count: 1w profile -> 2w time, 2w profile -> 1w time
    awk -v n="$name" -v m1="$M1" -v p1="$P1" -v m2="$M2" -v p2="$P2" 'BEGIN {
        printf "%-14s %10.1f %10.1f %+8.1f | %10.1f %10.1f %+8.1f\n", n, m1, p1, 100 * (p1 - m1) / m1, m2, p2, 100 * (p2 - m2) / m2 }'
done
echo "1w pred: predicted from a 2-worker profile; 2w pred: predicted from a 1-worker profile (medians of $runs runs)"
