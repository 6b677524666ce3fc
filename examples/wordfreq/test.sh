#!/usr/bin/env bash
# Test of examples/wordfreq: test.sh STC GEN_TEXT [WORDS]
#
# 1. On a generated Zipf-like text, the ten lines are those of two
#    independent tools: python3's collections.Counter (when python3 is
#    installed) and the pipeline tr | sort | uniq -c | sort | head.
# 2. The output is byte-identical under the reference evaluator, at 1, 2
#    and 4 workers and at queue capacity 1, and --verify agrees.
# 3. Ties go to the smaller word (a small text made of ties), and without
#    --no-states the final state, the whole count, follows.
set -euo pipefail

if [[ $# -lt 2 || $# -gt 3 ]]; then
  echo "usage: $0 STC GEN_TEXT [WORDS]" >&2
  exit 64
fi
stc=$1
gen=$2
n=${3:-200000}
prog=$(cd "$(dirname "$0")" && pwd)/wordfreq.stc

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "wordfreq test: FAIL: $*" >&2
  exit 1
}

"$gen" "$n" 11 5000 >"$tmp/text" || fail "$gen $n 11 5000 failed"
[[ $(wc -w <"$tmp/text") -eq $n ]] || fail "gen_text did not write $n words"
grep -q '[A-Z]' "$tmp/text" || fail "no capital letter to fold in the text"

# --- 1. the same ten lines as independent tools ------------------------------
tr -s ' \t' '\n\n' <"$tmp/text" | tr 'A-Z' 'a-z' | grep -v '^$' | LC_ALL=C sort | uniq -c |
  LC_ALL=C sort -k1,1nr -k2,2 | awk 'NR <= 10 { print $1, $2 }' >"$tmp/want"
[[ $(wc -l <"$tmp/want") -eq 10 ]] || fail "the shell pipeline did not give 10 lines"
if command -v python3 >/dev/null; then
  python3 - "$tmp/text" >"$tmp/want.py" <<'PY'
import collections, sys
c = collections.Counter()
with open(sys.argv[1], "rb") as f:
    for line in f:
        c.update(line.lower().split())
for w, k in sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[:10]:
    print(k, w.decode("ascii"))
PY
  cmp -s "$tmp/want" "$tmp/want.py" || fail "python3's Counter and the shell pipeline disagree (a test bug)"
fi

run() { # run NAME OPTIONS...: stc's stdout into $tmp/NAME
  local name=$1
  shift
  "$stc" run --quiet "$@" "$prog" >"$tmp/$name" 2>"$tmp/$name.err" ||
    fail "stc run $* exited $? ($(head -3 "$tmp/$name.err"))"
}
run ref --reference --no-states --input "$tmp/text"
if ! cmp -s "$tmp/want" "$tmp/ref"; then
  diff "$tmp/want" "$tmp/ref" | head -10 >&2
  fail "the ten lines differ from the shell pipeline's (< want, > stc)"
fi

# --- 2. the same bytes whatever the execution ---------------------------------
for v in "w1|--workers 1" "w2|--workers 2" "w4|--workers 4" "q1|--workers 2 --queue-capacity 1" \
         "verify|--verify --workers 3"; do
  name=${v%%|*}
  read -r -a opts <<<"${v#*|}"
  run "$name" "${opts[@]}" --no-states --input "$tmp/text"
  cmp -s "$tmp/ref" "$tmp/$name" || fail "${opts[*]}: output differs from --reference"
done

# --- 3. ties, and the final state ---------------------------------------------
printf 'pear Apple fig\n\nfig  apple\tPEAR kiwi\n' >"$tmp/ties.txt"
run ties --workers 2 --input "$tmp/ties.txt"
printf '2 apple\n2 fig\n2 pear\n1 kiwi\ncounts = {"apple": 2, "fig": 2, "kiwi": 1, "pear": 2}\n' >"$tmp/ties.want"
cmp -s "$tmp/ties.want" "$tmp/ties" || fail "ties: got $(cat "$tmp/ties")"
run ties.json --workers 2 --json --input "$tmp/ties.txt"
tail -1 "$tmp/ties.json" | grep -qx '{"states": {"counts": {"apple": 2, "fig": 2, "kiwi": 1, "pear": 2}}}' ||
  fail "--json: the last line is not the count"

echo "wordfreq test: ok ($n words; equal to the shell pipeline$(command -v python3 >/dev/null && echo " and python3's Counter"); reference, 1/2/4 workers, capacity 1, --verify; ties)"
