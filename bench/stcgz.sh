#!/usr/bin/env bash
# bench/stcgz.sh - stcgz (examples/stcgz) against pigz and gzip on a 200 MB
# log-like text file (compresses about 4x at -6), all measured in this run.
#
#   bash bench/stcgz.sh [--runs N] [--workers N] [--level L] [--build DIR]
#                       [--file PATH] [--size MB]
#
#   --runs N     runs per tool, the median is reported (default 3)
#   --workers N  stcgz -w N and pigz -p N (default 2)
#   --level L    compression level 1..9 (default 6)
#   --build DIR  the build holding examples/stcgz/stcgz (default build; use a
#                Release build: cmake -S . -B DIR -DCMAKE_BUILD_TYPE=Release)
#   --file PATH  the test file, made once if missing or of another size
#                (default /tmp/stcgz-bench-MB.log)
#   --size MB    its size in MB of 10^6 bytes (default 200)
#
# Prints, per tool, the median wall time and throughput (input MB per
# second, MB = 10^6 bytes) and the compressed size, then stcgz's throughput
# over pigz's at the same worker count.  The 1-worker rows show the cost per
# block without parallelism.  stcgz's output is checked: gunzip must restore
# the input, and -w 1 and -w N must give the same bytes.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=3 workers=2 level=6 build=build file='' mb=200
usage() { sed -n '2,21s/^# \{0,1\}//p' "$0"; exit "${1:-0}"; }
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs=${2:?--runs needs a number}; shift 2 ;;
        --workers) workers=${2:?--workers needs a number}; shift 2 ;;
        --level) level=${2:?--level needs a number}; shift 2 ;;
        --build) build=${2:?--build needs a directory}; shift 2 ;;
        --file) file=${2:?--file needs a path}; shift 2 ;;
        --size) mb=${2:?--size needs a number}; shift 2 ;;
        -h|--help) usage 0 ;;
        *) echo "stcgz.sh: unknown option '$1'" >&2; usage 64 >&2 ;;
    esac
done
[ -n "${EPOCHREALTIME:-}" ] || { echo "stcgz.sh: needs bash 5 or later" >&2; exit 1; }
for v in "$runs" "$workers" "$mb"; do
    [[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "stcgz.sh: '$v' is not a positive number" >&2; exit 64; }
done
[[ "$level" =~ ^[1-9]$ ]] || { echo "stcgz.sh: level '$level' is not 1..9" >&2; exit 64; }

stcgz=$build/examples/stcgz/stcgz
if [ ! -x "$stcgz" ]; then
    echo "stcgz.sh: no $stcgz; build it (zlib needed) with" >&2
    echo "  cmake -S . -B $build -DCMAKE_BUILD_TYPE=Release && cmake --build $build --target stcgz" >&2
    exit 1
fi
if ! command -v pigz >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "stcgz.sh: installing pigz" >&2
        apt-get install -y pigz >&2 || { apt-get update >&2 && apt-get install -y pigz >&2; }
    fi
    command -v pigz >/dev/null ||
        { echo "stcgz.sh: needs pigz (e.g. sudo apt-get install pigz)" >&2; exit 1; }
fi

# ---- The test file: made once, deterministic ----------------------------------

[ -n "$file" ] || file=/tmp/stcgz-bench-${mb}MB.log
size=$((mb * 1000000))
if [ ! -f "$file" ] || [ "$(wc -c <"$file")" -ne "$size" ]; then
    echo "stcgz.sh: making $file ($mb MB of log lines)" >&2
    # Repeated structure with varying fields (times, addresses, ids) from
    # a fixed-seed LCG (exact in awk's doubles): gzip -6 gets about 4x.
    LC_ALL=C awk -v n="$size" -v s=42 '
    function rnd() { s = (s * 69069 + 1) % 4294967296; return int(s / 65536) }
    BEGIN {
        split("GET GET GET POST PUT DELETE", meth, " ")
        split("INFO INFO INFO INFO WARN ERROR DEBUG", lvl, " ")
        split("/api/v1/users /api/v1/orders /api/v1/items /static/app.js /static/style.css " \
              "/login /logout /api/v2/search /health /metrics", path, " ")
        split("200 200 200 200 200 304 404 500 201 302", code, " ")
        split("Mozilla/5.0 (X11; Linux x86_64) Firefox/126.0|curl/8.5.0|" \
              "Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/125.0|" \
              "python-requests/2.31|Go-http-client/1.1", ua, "|")
        t = 1700000000
        while (total < n) {
            t += rnd() % 3
            line = sprintf("%d.%03d %s [worker-%d] 10.%d.%d.%d \"%s %s/%d?page=%d\" %s %d %dms \"%s\" req=%04x%04x%04x\n",
                t, rnd() % 1000, lvl[1 + rnd() % 7], rnd() % 16, rnd() % 4, rnd() % 256, rnd() % 256,
                meth[1 + rnd() % 6], path[1 + rnd() % 10], rnd() % 10000, rnd() % 50,
                code[1 + rnd() % 10], rnd() % 65536, rnd() % 900, ua[1 + rnd() % 5],
                rnd(), rnd(), rnd())
            if (total + length(line) > n) line = substr(line, 1, n - total)
            printf "%s", line
            total += length(line)
        }
    }' >"$file.tmp"
    mv "$file.tmp" "$file"
fi
bytes=$(wc -c <"$file")

tmp=$(mktemp -d "${TMPDIR:-/tmp}/stcgz-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cat "$file" >/dev/null # into the page cache, for every tool alike

# ---- Helpers ----------------------------------------------------------------

median() {
    sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan";
        else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# time_s OUT CMD...: runs CMD with stdout to OUT, prints its wall time in s.
time_s() {
    local out=$1 t0 t1
    shift
    t0=${EPOCHREALTIME/[.,]/}
    "$@" <"$file" >"$out" || { echo "stcgz.sh: failed: $*" >&2; exit 1; }
    t1=${EPOCHREALTIME/[.,]/}
    awk -v us=$((t1 - t0)) 'BEGIN { printf "%.3f\n", us / 1e6 }'
}

names=("stcgz -w $workers" "pigz -p $workers" "gzip" "stcgz -w 1" "pigz -p 1")
cmds=("$stcgz -q -w $workers -$level" "pigz -p $workers -$level -c" "gzip -$level -c"
      "$stcgz -q -w 1 -$level" "pigz -p 1 -$level -c")

# ---- Runs: interleaved, so drift in the machine's load hits every tool ------

load0=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')
echo "stcgz.sh: $runs runs of ${#names[@]} commands on $file ($bytes bytes)" >&2
for ((r = 1; r <= runs; r++)); do
    for i in "${!names[@]}"; do
        # shellcheck disable=SC2086 # the commands are word lists
        t=$(time_s "$tmp/out.$i.gz" ${cmds[$i]})
        echo "$t" >>"$tmp/times.$i"
        echo "  run $r: ${names[$i]}: $t s" >&2
    done
done

# ---- Checks -----------------------------------------------------------------

gzip -dc "$tmp/out.0.gz" | cmp -s - "$file" ||
    { echo "stcgz.sh: stcgz output does not decompress to the input" >&2; exit 1; }
cmp -s "$tmp/out.0.gz" "$tmp/out.3.gz" ||
    { echo "stcgz.sh: stcgz -w $workers and -w 1 outputs differ" >&2; exit 1; }

# ---- The table ----------------------------------------------------------------

cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)
echo
echo "stcgz benchmark: $((bytes / 1000000)) MB, level $level, median of $runs runs"
echo "machine: ${cpu:-?}, $(nproc) CPUs, load before: $load0; $(pigz --version 2>&1 | head -1), $(gzip --version | head -1)"
printf '%-14s %10s %10s %14s %7s\n' tool seconds MB/s compressed ratio
declare -a mbs
for i in "${!names[@]}"; do
    s=$(median <"$tmp/times.$i")
    c=$(wc -c <"$tmp/out.$i.gz")
    mbs[i]=$(awk -v b="$bytes" -v s="$s" 'BEGIN { printf "%.1f", b / 1e6 / s }')
    printf '%-14s %10.3f %10s %14d %7.2f\n' "${names[$i]}" "$s" "${mbs[$i]}" "$c" \
        "$(awk -v b="$bytes" -v c="$c" 'BEGIN { print b / c }')"
done
echo
awk -v a="${mbs[0]}" -v b="${mbs[1]}" -v w="$workers" \
    'BEGIN { printf "stcgz -w %d / pigz -p %d throughput: %.3f\n", w, w, a / b }'
awk -v a="${mbs[3]}" -v b="${mbs[4]}" \
    'BEGIN { printf "stcgz -w 1 / pigz -p 1 throughput: %.3f\n", a / b }'
awk -v a="${mbs[0]}" -v b="${mbs[3]}" -v w="$workers" \
    'BEGIN { printf "stcgz speedup -w %d over -w 1:    %.3f\n", w, a / b }'
