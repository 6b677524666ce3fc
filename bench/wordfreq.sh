#!/usr/bin/env bash
# bench/wordfreq.sh - examples/wordfreq (the 10 most frequent words of a
# text, a stream that finishes) at 1 and 2 workers, beside the shell
# pipeline tr | sort | uniq -c | sort | head and Python's collections.Counter,
# on the same Zipf-like text (examples/wordfreq/gen_text). Prints one table:
# the median wall time and CPU time (user + sys) of each, words per second,
# and checks that all of them print the same ten lines.
#
#   bash bench/wordfreq.sh [--runs N] [--words N] [--build DIR] [--dir DIR]
#
#   --runs N     runs per measurement, the median is reported (default 3)
#   --words N    words of input (default 10000000: about 70 MB)
#   --build DIR  the build holding stc and gen_text (default build)
#   --dir DIR    where the input is made (default /tmp/stc-wordfreq)
#
# Figures on a shared, loaded VM are noisy: the table starts with the load
# average; compare the columns of one run, not runs of different days.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=3 words=10000000 build=build dir=/tmp/stc-wordfreq
usage() { sed -n '2,18s/^# \{0,1\}//p' "$0"; exit "${1:-0}"; }
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs=${2:?--runs needs a number}; shift 2 ;;
        --words) words=${2:?--words needs a number}; shift 2 ;;
        --build) build=${2:?--build needs a directory}; shift 2 ;;
        --dir) dir=${2:?--dir needs a directory}; shift 2 ;;
        -h|--help) usage 0 ;;
        *) echo "wordfreq.sh: unknown option '$1'" >&2; usage 64 >&2 ;;
    esac
done
for v in "$runs" "$words"; do
    [[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "wordfreq.sh: '$v' is not a positive number" >&2; exit 64; }
done
stc=$build/stc gen=$build/examples/wordfreq/gen_text prog=examples/wordfreq/wordfreq.stc
for f in "$stc" "$gen"; do
    [ -x "$f" ] || { echo "wordfreq.sh: no $f; build with: cmake -S . -B $build && cmake --build $build" >&2; exit 1; }
done
mkdir -p "$dir"
input=$dir/text-$words.txt
[ -f "$input" ] || { echo "wordfreq.sh: making $input" >&2; "$gen" "$words" 1 >"$input.part" && mv "$input.part" "$input"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

pipeline() {
    tr -s ' \t' '\n\n' <"$input" | tr 'A-Z' 'a-z' | grep -v '^$' | LC_ALL=C sort | uniq -c |
        LC_ALL=C sort -k1,1nr -k2,2 | awk 'NR <= 10 { print $1, $2 }'
}
counter() {
    python3 -c '
import collections, sys
c = collections.Counter()
with open(sys.argv[1], "rb") as f:
    for line in f:
        c.update(line.lower().split())
for w, k in sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[:10]:
    print(k, w.decode("ascii"))' "$input"
}
declare -A cmd=([stc1]="$stc run --quiet --no-states --workers 1 --input $input $prog"
                [stc2]="$stc run --quiet --no-states --workers 2 --input $input $prog"
                [pipeline]=pipeline [counter]=counter)
names=(stc1 stc2 pipeline)
command -v python3 >/dev/null && names+=(counter)

# Runs interleave the programs, so a slow minute hits all of them.
for r in $(seq "$runs"); do
    for name in "${names[@]}"; do
        TIMEFORMAT="%R %U %S"
        { time ${cmd[$name]} >"$tmp/$name.out"; } 2>>"$tmp/$name.times"
        if [ "$name" != stc1 ]; then
            cmp -s "$tmp/stc1.out" "$tmp/$name.out" || { echo "wordfreq.sh: $name printed other lines than stc" >&2; exit 1; }
        fi
    done
done
echo "wordfreq: $words words ($(du -m "$input" | cut -f1) MB), $runs runs each, median; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-34s %10s %10s %14s\n' "program" "wall s" "cpu s" "words/s"
label() { case $1 in stc1) echo "stc run --workers 1" ;; stc2) echo "stc run --workers 2" ;;
          pipeline) echo "tr|sort|uniq -c|sort (LC_ALL=C)" ;; counter) echo "python3 collections.Counter" ;; esac; }
for name in "${names[@]}"; do
    wall=$(awk '{ print $1 }' "$tmp/$name.times" | median)
    cpu=$(awk '{ print $2 + $3 }' "$tmp/$name.times" | median)
    printf '%-34s %10.2f %10.2f %14.0f\n' "$(label "$name")" "$wall" "$cpu" "$(awk -v w="$words" -v t="$wall" 'BEGIN { print w / t }')"
done
