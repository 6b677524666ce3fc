#!/usr/bin/env bash
# Test of examples/ysb: test.sh STC GEN_EVENTS YSB_PLAIN [EVENTS]
#
# 1. On generated events, ysb.stc writes the windows as they close and the
#    open windows in its final state exactly as ysb.py (Python, json module)
#    computes them (when python3 is installed), and as ysb_plain (C).
# 2. The output is byte-identical under the reference evaluator, at 1, 2
#    and 4 workers, at queue capacity 1, from standard input, and --verify
#    agrees.
set -euo pipefail

if [[ $# -lt 3 || $# -gt 4 ]]; then
  echo "usage: $0 STC GEN_EVENTS YSB_PLAIN [EVENTS]" >&2
  exit 64
fi
stc=$1
gen=$2
plain=$3
n=${4:-40000}
here=$(cd "$(dirname "$0")" && pwd)
prog=$here/ysb.stc

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "ysb test: FAIL: $*" >&2
  exit 1
}

"$gen" "$n" 5 >"$tmp/events" || fail "$gen $n 5 failed"
[[ $(wc -l <"$tmp/events") -eq $((n + 1000)) ]] || fail "gen_events did not write 1000 table lines and $n events"

# --- 1. the same windows as Python and as plain C ---------------------------
"$plain" <"$tmp/events" >"$tmp/plain" || fail "ysb_plain failed"
if command -v python3 >/dev/null; then
  python3 "$here/ysb.py" "$tmp/events" >"$tmp/py" || fail "ysb.py failed"
  cmp -s "$tmp/py" "$tmp/plain" || fail "ysb.py and ysb_plain disagree (a test bug)"
fi
closed=$(grep -vc '^windows = ' "$tmp/plain" || true)
[[ $closed -ge 50 ]] || fail "only $closed window lines: no window closed to test"
grep -q '^windows = ([0-9]*, {[0-9]*: {"' "$tmp/plain" || fail "no window left open at the end"
grep -q ', 0)$' "$tmp/plain" || fail "events came too late for their window: the generator broke its bound"

run() { # run NAME OPTIONS...: stc's stdout into $tmp/NAME
  local name=$1
  shift
  "$stc" run --quiet "$@" "$prog" >"$tmp/$name" 2>"$tmp/$name.err" ||
    fail "stc run $* exited $? ($(head -3 "$tmp/$name.err"))"
}
run ref --reference --input "$tmp/events"
grep -v '^ads = ' "$tmp/ref" >"$tmp/ref.noads"
if ! cmp -s "$tmp/plain" "$tmp/ref.noads"; then
  diff "$tmp/plain" "$tmp/ref.noads" | head -10 | cut -c1-200 >&2
  fail "stc's output differs from the plain computation's (< plain, > stc)"
fi
[[ $(grep -c '^ads = {"' "$tmp/ref") -eq 1 ]] || fail "no ads table in the final state"

# --- 2. the same bytes whatever the execution ---------------------------------
for v in "w1|--workers 1" "w2|--workers 2" "w4|--workers 4" "q1|--workers 2 --queue-capacity 1" \
         "verify|--verify --workers 3"; do
  name=${v%%|*}
  read -r -a opts <<<"${v#*|}"
  run "$name" "${opts[@]}" --input "$tmp/events"
  cmp -s "$tmp/ref" "$tmp/$name" || fail "${opts[*]}: output differs from --reference"
done
"$stc" run --quiet --workers 2 --no-states "$prog" <"$tmp/events" >"$tmp/stdin" || fail "standard input failed"
grep -v '^windows = ' "$tmp/plain" | cmp -s - "$tmp/stdin" || fail "standard input, --no-states: not the closed windows alone"

echo "ysb test: ok ($n events, $closed window lines; equal to ysb_plain$(command -v python3 >/dev/null && echo " and ysb.py"); reference, 1/2/4 workers, capacity 1, stdin, --verify)"
