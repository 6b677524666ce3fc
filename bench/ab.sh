#!/usr/bin/env bash
# bench/ab.sh - a change measured side by side: one program run by two stc
# binaries (say main's and a branch's), runs interleaved A, B, A, B, ... so
# that the VM's drift (its two vCPUs near or far apart, minute to minute)
# falls on both alike. Prints every run's wall time and CPU (user + sys),
# then the medians and B's wall over A's, and B's --stats line of one more
# run.
#
#   bash bench/ab.sh [--runs N] [--workers N] [--input FILE] A B PROGRAM
#
#   --runs N     runs of each binary (default 7)
#   --workers N  stc run --workers (default 2)
#   --input FILE the program's input lines (default: none; a stream program
#                needs one, e.g. the log bench/cost.sh makes:
#                /tmp/stc-cost/access-1000000.log)
#
# A binary to compare with is made by building a checkout of the old commit:
#   git worktree add /tmp/stc-old HEAD~1
#   cmake -S /tmp/stc-old -B /tmp/stc-old/b -DCMAKE_BUILD_TYPE=Release
#   cmake --build /tmp/stc-old/b --target stc
set -euo pipefail

runs=7 workers=2 input=
usage() { sed -n '2,21s/^# \{0,1\}//p' "$0"; exit "${1:-0}"; }
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs=${2:?--runs needs a number}; shift 2 ;;
        --workers) workers=${2:?--workers needs a number}; shift 2 ;;
        --input) input=${2:?--input needs a file}; shift 2 ;;
        -h|--help) usage 0 ;;
        -*) echo "ab.sh: unknown option '$1'" >&2; usage 64 >&2 ;;
        *) break ;;
    esac
done
[ $# -eq 3 ] || usage 64 >&2
a=$1 b=$2 prog=$3
for f in "$a" "$b"; do [ -x "$f" ] || { echo "ab.sh: $f is not an executable" >&2; exit 66; }; done
[ -r "$prog" ] || { echo "ab.sh: cannot read $prog" >&2; exit 66; }
[ -z "$input" ] || [ -r "$input" ] || { echo "ab.sh: cannot read $input" >&2; exit 66; }
[ "$runs" -ge 1 ] 2>/dev/null || { echo "ab.sh: --runs needs a positive number" >&2; exit 64; }
args=(run --quiet --no-states --workers "$workers")
[ -z "$input" ] || args+=(--input "$input")
args+=("$prog")

# The outputs first: a change that alters them is no speed-up.
"$a" "${args[@]}" >/tmp/ab.$$.a 2>/dev/null || true
"$b" "${args[@]}" >/tmp/ab.$$.b 2>/dev/null || true
if ! cmp -s /tmp/ab.$$.a /tmp/ab.$$.b; then
    rm -f /tmp/ab.$$.*
    echo "ab.sh: A and B print different outputs" >&2
    exit 1
fi
rm -f /tmp/ab.$$.*

timed() { # prints "wall cpu" of one run
    local t0=$EPOCHREALTIME
    /usr/bin/env time -o /tmp/ab.$$.time -f "%U %S" "$@" >/dev/null 2>&1 || true
    local t1=$EPOCHREALTIME
    awk -v a="$t0" -v b="$t1" '{ printf "%.3f %.3f\n", b - a, $1 + $2 }' /tmp/ab.$$.time
}
if ! /usr/bin/env time -o /dev/null -f "%U" true >/dev/null 2>&1; then
    echo "ab.sh: needs GNU time (apt-get install time)" >&2
    exit 69
fi
: >/tmp/ab.$$.runs
for i in $(seq "$runs"); do
    echo "A $(timed "$a" "${args[@]}")" >>/tmp/ab.$$.runs
    echo "B $(timed "$b" "${args[@]}")" >>/tmp/ab.$$.runs
done
echo "runs (binary, wall s, cpu s), in the order they ran:"
paste -d' ' - - </tmp/ab.$$.runs | sed 's/^/  /'
awk '
    { w[$1] = w[$1] " " $2; c[$1] = c[$1] " " $3 }
    function median(s,   n, x, i, j, t) {
        n = split(s, x, " ")
        for (i = 2; i <= n; i++) for (j = i; j > 1 && x[j-1] + 0 > x[j] + 0; j--) { t = x[j]; x[j] = x[j-1]; x[j-1] = t }
        return n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2
    }
    END {
        wa = median(w["A"]); wb = median(w["B"])
        printf "median A: wall %.3f s, cpu %.3f s\n", wa, median(c["A"])
        printf "median B: wall %.3f s, cpu %.3f s\n", wb, median(c["B"])
        printf "B / A wall: %.2f\n", (wa > 0 ? wb / wa : 0)
    }' /tmp/ab.$$.runs
rm -f /tmp/ab.$$.runs /tmp/ab.$$.time
"$b" "${args[@]/--quiet/--stats}" 2>&1 >/dev/null | grep '^stats:' | sed 's/^/B /' || true
