#!/usr/bin/env bash
# Test of examples/logstats: test.sh STC GEN_LOG [LINES]
#
# 1. The output (every line's result, then the five states) is byte-identical
#    under the reference evaluator, 1, 2 and 4 workers, queue capacity 1,
#    standard input instead of --input, and --verify; --json likewise.
# 2. The output agrees with an independent computation in awk over the same
#    log, so a wrong program fails even when every run agrees with itself.
set -euo pipefail

if [[ $# -lt 2 || $# -gt 3 ]]; then
  echo "usage: $0 STC GEN_LOG [LINES]" >&2
  exit 64
fi
stc=$1
gen=$2
n=${3:-20000}
here=$(cd "$(dirname "$0")" && pwd)
prog=$here/logstats.stc

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() {
  echo "logstats test: FAIL: $*" >&2
  exit 1
}

"$gen" "$n" 7 >"$tmp/access.log" || fail "$gen $n 7 failed"
[[ $(wc -l <"$tmp/access.log") -eq $n ]] || fail "gen_log did not write $n lines"
bad=$(awk 'NF != 7 || $5 + 0 < 200 || $5 + 0 > 599' "$tmp/access.log" | wc -l)
[[ $bad -gt 0 ]] || fail "the generated log has no malformed line to exercise"

# --- 1. the same bytes whatever the execution ----------------------------
run() { # run NAME OPTIONS...: stc's stdout into $tmp/NAME
  local name=$1
  shift
  "$stc" run --quiet "$@" "$prog" >"$tmp/$name" 2>"$tmp/$name.err" ||
    fail "stc run $* exited $? ($(head -3 "$tmp/$name.err"))"
}
run ref --reference --input "$tmp/access.log"
run ref.json --reference --json --input "$tmp/access.log"
[[ $(wc -l <"$tmp/ref") -eq $((n + 5)) ]] || fail "expected $n result lines and 5 states"

variants=(
  "w1|--workers 1"
  "w2|--workers 2"
  "w4|--workers 4"
  "q1|--workers 2 --queue-capacity 1"
  "w4q1|--workers 4 --queue-capacity 1"
  "verify|--verify --workers 3"
)
for v in "${variants[@]}"; do
  name=${v%%|*}
  read -r -a opts <<<"${v#*|}"
  run "$name" "${opts[@]}" --input "$tmp/access.log"
  cmp -s "$tmp/ref" "$tmp/$name" || fail "${opts[*]}: output differs from --reference ($(cmp "$tmp/ref" "$tmp/$name" 2>&1 || true))"
done
"$stc" run --quiet --workers 2 "$prog" <"$tmp/access.log" >"$tmp/stdin" ||
  fail "reading the log from standard input failed"
cmp -s "$tmp/ref" "$tmp/stdin" || fail "standard input: output differs from --input"
for w in 1 2 4; do
  run "w$w.json" --json --workers "$w" --input "$tmp/access.log"
  cmp -s "$tmp/ref.json" "$tmp/w$w.json" || fail "--json --workers $w: output differs from --reference"
done
tail -1 "$tmp/ref.json" | grep -q '^{"states": {"lines": \[' || fail "--json: the last line is not the states"

# --- 2. the same answers as awk --------------------------------------------
awk -f "$here/logstats.awk" "$tmp/access.log" >"$tmp/awk"

# Everything but the latency line must match byte for byte.
grep -v '^latency = ' "$tmp/awk" >"$tmp/awk.exact"
grep -v '^latency = ' "$tmp/ref" >"$tmp/ref.exact"
if ! cmp -s "$tmp/awk.exact" "$tmp/ref.exact"; then
  diff "$tmp/awk.exact" "$tmp/ref.exact" | head -10 >&2
  fail "the output differs from awk's (< awk, > stc)"
fi
# The latency floats: stc prints the shortest form that reads back exactly,
# awk %.17g; compare them as numbers.
stc_lat=$(grep '^latency = ' "$tmp/ref" | tr -d '(),')
awk_lat=$(grep '^latency = ' "$tmp/awk" | tr -d '(),')
awk -v s="$stc_lat" -v a="$awk_lat" 'BEGIN {
  split(s, x, " "); split(a, y, " ")
  exit !(x[3] + 0 == y[3] + 0 && x[4] + 0 == y[4] + 0)
}' || fail "latency: stc says '$stc_lat', awk '$awk_lat'"

echo "logstats test: ok ($n lines, $bad malformed; reference, 1/2/4 workers, queue capacity 1, stdin, --verify, --json; states agree with awk)"
