#!/usr/bin/env bash
# bench/nested.sh - nested smaps (issue 17 item 2) and the planning time of
# a 10^5-item tuple; prints one table, all measured in this run.
#
#   bash bench/nested.sh [--runs N] [--workers N] [--build-dir DIR]
#
#   --runs N      runs per measurement, the median is reported (default 5)
#   --workers N   the parallel worker count (default 2)
#   --build-dir   where to build (default build-bench, as bench/run.sh)
#
# Every run's output is compared with the reference evaluator's. Times are
# wall ms of the whole `stc run` process: meaningful on a quiet machine
# only (the load average before the run is printed with the table).
set -euo pipefail
cd "$(dirname "$0")/.."

runs=5 workers=2 build=build-bench
usage() { sed -n '2,13s/^# \{0,1\}//p' "$0"; exit "${1:-0}"; }
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs=${2:?--runs needs a number}; shift 2 ;;
        --workers) workers=${2:?--workers needs a number}; shift 2 ;;
        --build-dir) build=${2:?--build-dir needs a directory}; shift 2 ;;
        -h|--help) usage 0 ;;
        *) echo "nested.sh: unknown option '$1'" >&2; usage 64 >&2 ;;
    esac
done
[ -n "${EPOCHREALTIME:-}" ] || { echo "nested.sh: needs bash 5 or later" >&2; exit 1; }
for v in "$runs" "$workers"; do
    [[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "nested.sh: '$v' is not a positive number" >&2; exit 64; }
done
load0=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')

echo "nested.sh: building stc in $build (Release)" >&2
log=$(mktemp)
tmp=$(mktemp -d)
trap 'rm -rf "$log" "$tmp"' EXIT
if ! { cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release &&
       cmake --build "$build" -j 2 --target stc; } >"$log" 2>&1; then
    cat "$log" >&2
    echo "nested.sh: the build failed" >&2
    exit 1
fi
stc=$build/stc

median() {
    sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan";
        else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
# time_ms OUT CMD...: runs CMD with stdout to OUT, prints its wall time in ms.
time_ms() {
    local out=$1 t0 t1
    shift
    t0=${EPOCHREALTIME/[.,]/}
    "$@" >"$out" 2>/dev/null || { echo "nested.sh: failed: $*" >&2; exit 1; }
    t1=${EPOCHREALTIME/[.,]/}
    awk -v us=$((t1 - t0)) 'BEGIN { printf "%.1f\n", us / 1e3 }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "-"; else printf "%.2f\n", a / b }'; }

progs=(rows4 rows3 outer2 inner5 many_tiny)
declare -A target=([rows4]='>= 1.8' [rows3]='> 1.5' [outer2]='>= 1.8' [inner5]='>= 1.0' [many_tiny]='>= 1.0')
rows=()
for p in "${progs[@]}"; do
    f=bench/nested/$p.stc
    echo "nested.sh: $f" >&2
    "$stc" run --json --reference "$f" >"$tmp/$p.ref"
    for mode in 1 "$workers"; do
        for ((r = 0; r < runs; r++)); do
            time_ms "$tmp/$p.out" "$stc" run --json --workers "$mode" "$f"
            cmp -s "$tmp/$p.out" "$tmp/$p.ref" ||
                { echo "nested.sh: stc run --workers $mode $f differs from --reference" >&2; exit 1; }
        done | median >"$tmp/$p.$mode.ms"
    done
    "$stc" run --stats --workers "$workers" "$f" 2>"$tmp/$p.stats" >/dev/null
    rows+=("$(printf '%-10s %9s %9s %8s %8s  %s' "$p" "$(cat "$tmp/$p.1.ms")" "$(cat "$tmp/$p.$workers.ms")" \
        "$(ratio "$(cat "$tmp/$p.1.ms")" "$(cat "$tmp/$p.$workers.ms")")" "${target[$p]}" \
        "$(sed -n 's/^stats: workers [0-9]*, //p' "$tmp/$p.stats" |
           sed 's/, peak in flight.*tuple tasks [0-9]*//')")")
done

# Planning a 10^5-item tuple (docs/DESIGN.md 7: linear grouping). The tuple
# hook plans it when main first evaluates it; the ms between a reference
# run and a run at $workers workers (both parse, type and evaluate the same
# program) bound planning + running the tasks from above.
n=100000
{ printf 'fun acc(x, s) = (s + x, s + x)\nthread a = acc init 0\nthread b = acc init 0\nthread c = acc init 0\n'
  printf 'main = len(['
  awk -v n=$n 'BEGIN { split("a b c", t, " "); printf "("
      for (i = 0; i < n; i++) printf "%s%s(%d)", (i ? ", " : ""), t[i % 3 + 1], i; printf ")" }'
  printf '])\n'; } >"$tmp/tuple.stc"
"$stc" run --json --reference "$tmp/tuple.stc" >"$tmp/tuple.ref"
for mode in ref "$workers"; do
    opts=(--reference); [ "$mode" = ref ] || opts=(--workers "$mode")
    for ((r = 0; r < runs; r++)); do
        time_ms "$tmp/tuple.out" "$stc" run --json "${opts[@]}" "$tmp/tuple.stc"
        cmp -s "$tmp/tuple.out" "$tmp/tuple.ref" || { echo "nested.sh: the tuple differs" >&2; exit 1; }
    done | median >"$tmp/tuple.$mode.ms"
done
"$stc" run --stats --workers "$workers" "$tmp/tuple.stc" 2>"$tmp/tuple.stats" >/dev/null

w=$workers
echo
echo "stc nested smaps - $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
echo "machine: $(nproc) CPUs; load average before the run: $load0; median of $runs run(s); \`stc run\` wall ms"
echo
printf '%-10s %9s %9s %8s %8s  %s\n' program 'run 1w' "run ${w}w" speedup target "stats at ${w}w"
printf '%s\n' "${rows[@]}"
echo "  rows4: 4 rows x 100k pure items; rows3: 3 rows; outer2: 2 outer items, each the paper's"
echo "  comp_write pipeline over 25 items; inner5: 100000 outer items x an inner smap of 5 thread"
echo "  calls; many_tiny: 200000 outer items x a pure inner smap of 0-7 items (bench/nested/)"
echo
echo "10^5-item tuple of thread calls on 3 threads: reference $(cat "$tmp/tuple.ref.ms") ms, ${w}w $(cat "$tmp/tuple.$w.ms") ms"
echo "  (difference = planning + tasks + waking the workers, an upper bound on planning;"
echo "  target: plans in under 10 ms); $(sed -n 's/^stats: //p' "$tmp/tuple.stats")"
