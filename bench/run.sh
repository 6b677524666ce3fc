#!/usr/bin/env bash
# bench/run.sh - build and run every benchmark, then print one table of
# medians and ratios, all measured in this run (figures from different runs
# or machines do not compare: our machines are small shared VMs).
#
#   bash bench/run.sh [--runs N] [--workers N] [--quick] [--build-dir DIR]
#
#   --runs N      runs per measurement, the median is reported (default 5)
#   --workers N   the parallel worker count (default 2)
#   --quick       a smoke run: 1 run each (unless --runs), a tenth of the
#                 fine-grained items
#   --build-dir   where to build (default build-bench)
#
# Raw outputs of every program are kept in BUILD/bench/results/.
set -euo pipefail
cd "$(dirname "$0")/.."

runs='' workers=2 quick=0 build=build-bench
usage() { sed -n '2,12s/^# \{0,1\}//p' "$0"; exit "${1:-0}"; }
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs=${2:?--runs needs a number}; shift 2 ;;
        --workers) workers=${2:?--workers needs a number}; shift 2 ;;
        --quick) quick=1; shift ;;
        --build-dir) build=${2:?--build-dir needs a directory}; shift 2 ;;
        -h|--help) usage 0 ;;
        *) echo "run.sh: unknown option '$1'" >&2; usage 64 >&2 ;;
    esac
done
[ -n "${EPOCHREALTIME:-}" ] || { echo "run.sh: needs bash 5 or later" >&2; exit 1; }
[ -n "$runs" ] || { [ "$quick" = 1 ] && runs=1 || runs=5; }
for v in "$runs" "$workers"; do
    [[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: '$v' is not a positive number" >&2; exit 64; }
done
fine_flags=(--workers "$workers" --runs "$runs")
[ "$quick" = 1 ] && fine_flags+=(--quick)
papers=(comp_pure comp_read comp_write applicative conditional)

# ---- Build ------------------------------------------------------------------

# Other work on the machine skews every figure: record how busy it was.
load0=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')

echo "run.sh: building in $build (Release, -DSTC_BENCH=ON)" >&2
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! { cmake -S . -B "$build" -DSTC_BENCH=ON -DCMAKE_BUILD_TYPE=Release &&
       cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)"; } >"$log" 2>&1; then
    cat "$log" >&2
    echo "run.sh: the build failed" >&2
    exit 1
fi
bin=$build/bench
res=$bin/results
mkdir -p "$res"
rm -f "$res"/*

# ---- Helpers ------------------------------------------------------------------

# The median of the numbers on stdin, one per line.
median() {
    sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan";
        else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# time_ms OUT CMD...: runs CMD with stdout to OUT, prints its wall time in
# ms. EPOCHREALTIME (bash 5) reads the clock without forking a process.
time_ms() {
    local out=$1 t0 t1
    shift
    t0=${EPOCHREALTIME/[.,]/}
    "$@" >"$out" || { echo "run.sh: failed: $*" >&2; exit 1; }
    t1=${EPOCHREALTIME/[.,]/}
    awk -v us=$((t1 - t0)) 'BEGIN { printf "%.1f\n", us / 1e3 }'
}

# run_prog NAME CMD...: runs a benchmark program, keeps its output in
# results/NAME.txt, stops everything if it fails (a wrong result).
run_prog() {
    local name=$1
    shift
    echo "run.sh: $name" >&2
    if ! "$@" >"$res/$name.txt"; then
        cat "$res/$name.txt" >&2
        echo "run.sh: $name failed" >&2
        exit 1
    fi
}

# col FILE KEY N: column N of the data row whose first column is KEY.
col() { awk -v k="$2" -v n="$3" '!/^#/ && $1 == k { print $n; exit }' "$1"; }

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "-"; else printf "%.2f\n", a / b }'; }

# ---- Paper microbenchmarks: C API, then `stc run` of the .stc files ---------

run_prog paper_c "$bin/paper_c" --workers "$workers" --runs "$runs" --json-dir "$res"
for b in "${papers[@]}"; do
    echo "run.sh: stc run $b.stc" >&2
    f=bench/paper/$b.stc
    "$build/stc" run --json --reference "$f" >"$res/$b.stc.json"
    if ! cmp -s "$res/$b.stc.json" "$res/$b.json"; then
        echo "run.sh: $f and paper_c's $b differ:" >&2
        cat "$res/$b.stc.json" "$res/$b.json" >&2
        exit 1
    fi
    # The C host as a whole process too: paper_c --once runs one stc_run
    # (its own pool) and prints the result; compared with `stc run` below.
    for ((r = 0; r < runs; r++)); do
        time_ms "$res/$b.once.out" "$bin/paper_c" --once "$b" --workers "$workers"
        cmp -s "$res/$b.once.out" "$res/$b.json" ||
            { echo "run.sh: paper_c --once $b differs from its checked result" >&2; exit 1; }
    done | median >"$res/$b.once.ms"
    for mode in ref 1 "$workers"; do
        opts=(--reference)
        [ "$mode" = ref ] || opts=(--workers "$mode")
        for ((r = 0; r < runs; r++)); do
            time_ms "$res/$b.run.out" "$build/stc" run --json "${opts[@]}" "$f"
            cmp -s "$res/$b.run.out" "$res/$b.stc.json" ||
                { echo "run.sh: stc run ${opts[*]} $f differs from --reference" >&2; exit 1; }
        done | median >"$res/$b.run.$mode.ms"
    done
done

# ---- The paper's writing composition in helpers (issue 17), beside the inline form -
# Each form must give comp_write's results and, with calls planned in place,
# its speedup; nested_smap has no inline twin (its 1w and ${w}w times compare).

helpers=(named lambda nested lets composed nested_smap)
for hf in "${helpers[@]}"; do
    echo "run.sh: stc run helpers/$hf.stc" >&2
    f=bench/paper/helpers/$hf.stc
    "$build/stc" run --json --reference "$f" >"$res/helpers_$hf.stc.json"
    if [ "$hf" != nested_smap ] && ! cmp -s "$res/helpers_$hf.stc.json" "$res/comp_write.stc.json"; then
        echo "run.sh: $f and comp_write.stc differ" >&2
        exit 1
    fi
    for mode in 1 "$workers"; do
        for ((r = 0; r < runs; r++)); do
            time_ms "$res/helpers_$hf.run.out" "$build/stc" run --json --workers "$mode" "$f"
            cmp -s "$res/helpers_$hf.run.out" "$res/helpers_$hf.stc.json" ||
                { echo "run.sh: stc run --workers $mode $f differs from --reference" >&2; exit 1; }
        done | median >"$res/helpers_$hf.run.$mode.ms"
    done
done

# ---- Fine-grained pipeline: stc, then oneTBB and OpenMP with stc's calibration -

run_prog fine "$bin/fine" "${fine_flags[@]}"
ipu=$(awk '/^# calibration:/ { print $3; exit }' "$res/fine.txt")
tbb_note='' omp_note=''
if [ -x "$bin/fine_tbb" ]; then
    run_prog fine_tbb "$bin/fine_tbb" "${fine_flags[@]}" --iters-per-us "$ipu"
else
    tbb_note='oneTBB: not built (install libtbb-dev)'
fi
if [ -x "$bin/fine_omp" ]; then
    run_prog fine_omp "$bin/fine_omp" "${fine_flags[@]}" --iters-per-us "$ipu"
else
    omp_note='OpenMP: not built (the compiler has no OpenMP support)'
fi

# ---- The table ----------------------------------------------------------------

w=$workers
cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)
rev=$(git rev-parse --short HEAD 2>/dev/null || echo '?')
git diff --quiet HEAD 2>/dev/null || rev="$rev+changes"
echo
echo "stc benchmarks - $(date -u '+%Y-%m-%d %H:%M UTC'), commit $rev"
echo "machine: $(nproc) CPUs, ${cpu:-unknown CPU}; load average before the run: $load0"
echo "$w workers; median of $runs run(s)$([ "$quick" = 1 ] && echo ', --quick')"
echo
echo "Paper microbenchmarks: 50 items, sin_iter(100000, x) per thread call; ms"
printf '%-12s %8s %9s %9s %8s %10s %10s %9s %10s %9s %10s\n' benchmark 'seq C' 'stc-C 1w' "stc-C ${w}w" speedup \
    'run 1w' "run ${w}w" 'run/C-API' 'run ref' "C-proc ${w}w" 'run/C-proc'
for b in "${papers[@]}"; do
    p=$res/paper_c.txt
    seq=$(col "$p" "$b" 2) c1=$(col "$p" "$b" 3) cn=$(col "$p" "$b" 4)
    r1=$(cat "$res/$b.run.1.ms") rn=$(cat "$res/$b.run.$w.ms") rr=$(cat "$res/$b.run.ref.ms")
    co=$(cat "$res/$b.once.ms")
    printf '%-12s %8s %9s %9s %8s %10s %10s %9s %10s %9s %10s\n' "$b" "$seq" "$c1" "$cn" "$(ratio "$seq" "$cn")" \
        "$r1" "$rn" "$(ratio "$rn" "$cn")" "$rr" "$co" "$(ratio "$rn" "$co")"
done
echo "  speedup = seq C / stc-C ${w}w (target >= 1.9 at 2 workers); run = \`stc run FILE.stc\`, whole"
echo "  process (start, compile, print); run/C-API = run ${w}w / stc-C ${w}w (in-process, warm pool);"
echo "  C-proc = the C host as a whole process (paper_c --once: start, compile, one run with its"
echo "  own workers, print); run/C-proc = run ${w}w / C-proc ${w}w (target: within 10%)"
echo
echo "comp_write with its thread calls in helpers (bench/paper/helpers); \`stc run\`, ms"
printf '%-12s %10s %10s %8s %16s\n' form 'run 1w' "run ${w}w" speedup 'inline speedup'
inline_x=$(ratio "$(cat "$res/comp_write.run.1.ms")" "$(cat "$res/comp_write.run.$w.ms")")
for hf in "${helpers[@]}"; do
    h1=$(cat "$res/helpers_$hf.run.1.ms") hn=$(cat "$res/helpers_$hf.run.$w.ms")
    printf '%-12s %10s %10s %8s %16s\n' "$hf" "$h1" "$hn" "$(ratio "$h1" "$hn")" \
        "$([ "$hf" = nested_smap ] && echo - || echo "$inline_x")"
done
echo "  target: every helper form's speedup within 5% of the inline form's (comp_write);"
echo "  nested_smap (100000 outer items, an inner smap of 5) no slower at ${w}w than at 1w"
echo
echo "Fine-grained pipeline w1 (serial) -> p (pure, W us) -> w2 (serial); ns per item"
echo "(spin calibration $ipu iters/us, shared by all three)"
printf '%-6s %8s %9s | %9s %9s %6s | %9s %9s %6s | %9s %9s %6s | %8s %8s\n' 'W us' items 'seq C' \
    'stc 1w' "stc ${w}w" x 'tbb 1w' "tbb ${w}w" x 'omp 1w' "omp ${w}w" x 'ovh stc' 'ovh tbb'
for k in 0.1 1 10 100; do
    row=()
    for impl in fine fine_tbb fine_omp; do
        t=$res/$impl.txt
        if [ -f "$t" ]; then
            row+=("$(col "$t" $k 4)" "$(col "$t" $k 5)" "$(col "$t" $k 6)")
        else
            row+=(- - -)
        fi
    done
    ovh_tbb=-
    [ -f "$res/fine_tbb.txt" ] && ovh_tbb=$(col "$res/fine_tbb.txt" $k 7)
    printf '%-6s %8s %9s | %9s %9s %6s | %9s %9s %6s | %9s %9s %6s | %8s %8s\n' "$k" \
        "$(col "$res/fine.txt" $k 2)" "$(col "$res/fine.txt" $k 3)" "${row[@]}" \
        "$(col "$res/fine.txt" $k 7)" "$ovh_tbb"
done
echo "  x = 1w / ${w}w (targets: > 1 at 1 us, >= 1.9 at 10 us); ovh = ns per item at 1 worker - W"
echo "  (target: stc <= tbb); seq C can be below W at 0.1 us: the CPU overlaps consecutive spins"
for note in "$tbb_note" "$omp_note"; do [ -z "$note" ] || echo "  $note"; done
echo
echo "raw outputs: $res/"
