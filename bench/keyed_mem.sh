#!/usr/bin/env bash
# bench/keyed_mem.sh - is a keyed count's memory bounded by its distinct
# keys, not by the input's length (issue 13's target)?  Runs the word count
# of examples/wordfreq (a keyed thread, a stream that finishes, --no-states)
# over inputs of SMALL and LARGE lines holding KEYS distinct words each
# (K = each of --keys), at 1 and --workers N workers, and prints the exact
# peak RSS (bench/peak_rss.c: /proc/PID/smaps_rollup sampled every 0.5 ms)
# of each, median of --runs.  Bounded by the keys means: the LARGE column
# within a few percent of the SMALL one for each K, and the rows growing
# with K.
#
#   bash bench/keyed_mem.sh [--runs N] [--workers N] [--build DIR] [--dir DIR]
#                           [--small LINES] [--large LINES] [--keys "K1 K2 ..."]
#
# Defaults: 3 runs, 2 workers, build, /tmp/stc-keyed-mem, 200000 and
# 2000000 lines of 8 words, keys "1000 100000".
set -euo pipefail
cd "$(dirname "$0")/.."
runs=3 workers=2 build=build dir=/tmp/stc-keyed-mem small=200000 large=2000000 keys="1000 100000"
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs=${2:?}; shift 2 ;;
        --workers) workers=${2:?}; shift 2 ;;
        --build) build=${2:?}; shift 2 ;;
        --dir) dir=${2:?}; shift 2 ;;
        --small) small=${2:?}; shift 2 ;;
        --large) large=${2:?}; shift 2 ;;
        --keys) keys=${2:?}; shift 2 ;;
        -h|--help) sed -n '2,17s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) echo "keyed_mem.sh: unknown option '$1'" >&2; exit 64 ;;
    esac
done
for v in "$runs" "$workers" "$small" "$large" $keys; do
    [[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "keyed_mem.sh: '$v' is not a positive number" >&2; exit 64; }
done
stc=$build/stc prog=examples/wordfreq/wordfreq.stc
[ -x "$stc" ] || { echo "keyed_mem.sh: no $stc (build first)" >&2; exit 1; }
mkdir -p "$dir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -o "$tmp/peak_rss" bench/peak_rss.c || { echo "keyed_mem.sh: cannot compile bench/peak_rss.c" >&2; exit 1; }
norand=(setarch -R)
setarch -R true 2>/dev/null || norand=()
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# input LINES K: LINES lines of 8 words drawn from K distinct ones (every one appears)
input() {
    local f=$dir/lines-$1-keys-$2.txt
    [ -f "$f" ] || awk -v n="$1" -v k="$2" 'BEGIN { j = 0; for (i = 0; i < n; i++) { l = "";
        for (w = 0; w < 8; w++) { l = l (w ? " " : "") "w" (j % k); j += 7919 } print l } }' >"$f"
    echo "$f"
}
echo "load: $(cut -d' ' -f1-3 /proc/loadavg); exact peak RSS in KB, median of $runs"
printf '%-8s %-8s %14s %14s %8s\n' keys workers "$small lines" "$large lines" growth
for k in $keys; do
    fs=$(input "$small" "$k") fl=$(input "$large" "$k")
    for w in 1 "$workers"; do
        for f in "$fs" "$fl"; do
            : >"$tmp/rss"
            for ((r = 0; r < runs; r++)); do
                "${norand[@]}" "$tmp/peak_rss" "$stc" run --quiet --no-states --workers "$w" --input "$f" "$prog" \
                    >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
                sed -n 's/^peak_rss: exact \([0-9]*\) KB.*/\1/p' "$tmp/err" >>"$tmp/rss"
            done
            median <"$tmp/rss" >"$tmp/m.$(basename "$f")"
        done
        a=$(cat "$tmp/m.$(basename "$fs")") b=$(cat "$tmp/m.$(basename "$fl")")
        printf '%-8s %-8s %14s %14s %7.1f%%\n' "$k" "$w" "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN { print (b - a) * 100 / a }')"
    done
done
