#!/usr/bin/env bash
# json.sh - every JSON that stc writes is valid JSON, whatever bytes the
# program's strings (or its file name) hold: read back with python3's json
# module and compared with an independent oracle, Python's
# bytes.decode("utf-8", errors="replace") (docs/LANGUAGE.md section 9: each
# maximal ill-formed part of a string is written as U+FFFD).
#
#   bash tests/cli/json.sh PATH/TO/stc
#
# Covers: `stc run --json` (result and states; reference, 2 and 3 workers;
# with --verify and --stats), stream `--json` output (items and the states
# line), and the `--trace` file. (stc_result_to_json and stc_value_to_json
# are what these print; tests/unit/test_value.c checks their bytes.)
# Ends with "json: N passed, N failed".
set -uo pipefail

STC=${1:?usage: json.sh PATH/TO/stc}
STC=$(cd "$(dirname "$STC")" && pwd)/$(basename "$STC")
command -v python3 >/dev/null || { echo "json: python3 is needed to read the JSON back"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
unset STC_QUEUE_CAPACITY

# Python starts three times only (a pyenv shim takes seconds a start):
# gen.py writes every input, stc runs every case, expect.py checks them all.

# gen.py: random byte strings (seeded) biased towards UTF-8 edge cases:
# lone continuation bytes, invalid lead bytes, truncated sequences,
# overlong forms, surrogates, code points past U+10FFFF, control bytes.
# p1..p3.stc: programs with 300 string literals; in4, in5.txt: 2000 lines.
cat >gen.py <<'EOF'
import random
pieces = [b"a", b"Z", b" ", b"\"", b"\\", b"\x00", b"\x01", b"\x1f", b"\x7f", b"\t",
          b"\x80", b"\xbf", b"\xc0", b"\xc1", b"\xc2", b"\xdf", b"\xe0", b"\xed", b"\xef",
          b"\xf0", b"\xf4", b"\xf5", b"\xff", b"\xc3\xa9", b"\xe2\x82\xac", b"\xf0\x9f\x98\x80",
          b"\xe0\x80\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe2\x82", b"\xf0\x9f\x98",
          b"\xc0\xaf", b"\xf8\x88\x80\x80\x80"]
def one(rng):
    return b"".join(rng.choice(pieces) for _ in range(rng.randrange(0, 12)))
for seed in (1, 2, 3):
    rng = random.Random(seed)
    lits = ['"' + "".join("\\x%02x" % c for c in one(rng)) + '"' for _ in range(300)]
    with open("p%d.stc" % seed, "w") as f:
        f.write("fun f(x, s) = (x, concat(s, x))\nthread keep = f init \"\"\n"
                "main = smap(fn x => keep(x), [" + ",\n  ".join(lits) + "])\n")
for seed in (4, 5):
    rng = random.Random(seed)
    # input lines: no newline, CR, NUL or tab (the line format's business)
    lines = [one(rng).translate(None, b"\n\r\x00\t") for _ in range(2000)]
    with open("in%d.txt" % seed, "wb") as f:
        f.write(b"".join(l + b"\n" for l in lines))
# m1..m2.stc: maps with string keys (objects; distinct keys may decode to
# one string: both stay, in key order) and with int keys (arrays of pairs)
for seed in (1, 2):
    rng = random.Random(100 + seed)
    keys = [one(rng) for _ in range(300)] + [b"", b"a", b"a"]
    lits = ['"' + "".join("\\x%02x" % c for c in k) + '"' for k in keys]
    ints = [rng.randrange(-50, 50) for _ in range(200)]
    with open("m%d.stc" % seed, "w") as f:
        f.write("fun add(k, m) = ((), update(m, k, 0, fn n => n + 1))\nthread counts = add init {}\n"
                "fun lits(u) = [" + ", ".join(lits) + "]\n"
                "main = let u = smap(counts, lits(())) in (to_map(smap(fn i => (nth(lits(()), i), i), range(0, %d))), "
                "to_map([" % len(keys) + ", ".join("(%d, %d)" % (k, i) for i, k in enumerate(ints)) + "]))\n")
    with open("m%d.keys" % seed, "w") as f:
        f.write(repr((keys, ints)))
# the --trace case: a program file whose name is not UTF-8
with open(b"p\xff\xe2\x82.stc", "wb") as f:
    f.write(open("p1.stc", "rb").read())
EOF
python3 gen.py || { echo "json: gen.py failed"; exit 1; }

# cases: one line per case, "KIND<tab>SOURCE<tab>OUTPUT<tab>NAME", for expect.py.
: >cases
# case_run KIND SOURCE OUTPUT NAME -- STC_ARGS...: runs stc with stdout into
# OUTPUT (kind trace: the trace file is OUTPUT) and stderr into OUTPUT.err;
# a non-zero exit makes the case's kind "exit".
case_run() {
    local kind=$1 src=$2 out=$3 name=$4
    shift 5
    local stdout=$out
    [ "$kind" = trace ] && stdout=$out.stdout # stc writes the trace into OUTPUT
    "$STC" "$@" >"$stdout" 2>"$out.err" || kind=exit
    printf '%s\t%s\t%s\t%s\n' "$kind" "$src" "$out" "$name" >>cases
}

# ---- stc run --json: result and states ------------------------------------------
n=0
for seed in 1 2 3; do
    for mode in "--reference" "--workers 2" "--workers 3 --queue-capacity 1" "--verify" "--stats --workers 2"; do
        n=$((n + 1))
        # shellcheck disable=SC2086
        case_run program p$seed.stc out$n "run --json $mode, seed $seed" -- run --json $mode p$seed.stc
    done
done

# ---- maps: objects for string keys, arrays of pairs otherwise -------------------
for seed in 1 2; do
    for mode in "--reference" "--workers 2"; do
        n=$((n + 1))
        # shellcheck disable=SC2086
        case_run map m$seed.keys out$n "maps, run --json $mode, seed $seed" -- run --json $mode m$seed.stc
    done
done

# ---- stream --json: one value per line, then the states line --------------------
cat >s.stc <<'EOF'
fun f(x, s) = (x, concat(s, x))
thread keep = f init ""
fun main(lines) = smap(fn l => keep(l), lines)
EOF
for seed in 4 5; do
    for mode in "--reference" "--workers 2" "--workers 3 --queue-capacity 1"; do
        n=$((n + 1))
        # shellcheck disable=SC2086
        case_run stream in$seed.txt out$n "stream --json $mode, seed $seed" -- run --json $mode --input in$seed.txt s.stc
    done
done

# ---- --trace: the process is named after the program file -----------------------
case_run trace "$(printf 'p\xff\xe2\x82.stc')" t.json "--trace file of a program whose name is not UTF-8" -- \
    run --workers 2 --trace t.json "$(printf 'p\xff\xe2\x82.stc')"

# expect.py: each case's JSON read back (strictly UTF-8, then json) and
# compared with the oracle: the program's strings (or input lines) decoded.
cat >expect.py <<'EOF'
import json, re, sys
dec = lambda b: b.decode("utf-8", errors="replace")
passed = failed = 0
for line in open("cases", "rb").read().split(b"\n")[:-1]:
    kind, src, out, name = line.split(b"\t")
    kind, out, name = kind.decode(), out.decode(), dec(name)
    try:
        assert kind != "exit", "stc failed: " + dec(open(out + ".err", "rb").read()[:500])
        raw = open(out, "rb").read()
        raw.decode("utf-8")  # strict: the output itself is UTF-8
        if kind == "map":
            import ast
            keys, ints = ast.literal_eval(open(src).read())
            last = {k: i for i, k in enumerate(keys)}
            count = {}
            for k in keys: count[k] = count.get(k, 0) + 1
            byint = {k: i for i, k in enumerate(ints)}
            pairs = lambda d: [(dec(k), d[k]) for k in sorted(d)]  # bytewise order
            want = [("result", [pairs(last), [[k, byint[k]] for k in sorted(byint)]]),
                    ("states", [("counts", pairs(count))])]
            lines = raw.split(b"\n")
            assert lines[-1] == b"" and len(lines) == 2, "not exactly one line"
            got = json.loads(lines[0], object_pairs_hook=list)
            assert got == want, "maps differ"
            assert len(set(dec(k) for k in keys)) < len(set(keys)), "a weak case: no keys decode alike"
            passed += 1
            continue
        if kind == "program":
            text = open(src, "rb").read().decode()
            items = [bytes(int(h, 16) for h in re.findall(r"\\x([0-9a-f]{2})", lit))
                     for lit in re.findall(r'"((?:\\x[0-9a-f]{2})*)"', text.split("main =", 1)[1])]
        elif kind == "stream":
            items = open(src, "rb").read().split(b"\n")[:-1]
        if kind != "trace":
            want = {"result": [dec(b) for b in items], "states": {"keep": dec(b"".join(items))}}
            assert len(items) >= 300 and any("\ufffd" in s for s in want["result"]), "a weak case"
        if kind == "program":
            lines = raw.split(b"\n")
            assert lines[-1] == b"" and len(lines) == 2, "not exactly one line"
            assert json.loads(lines[0]) == want, "values differ"
        elif kind == "stream":
            lines = [json.loads(l) for l in raw.split(b"\n")[:-1]]
            assert lines[:-1] == want["result"], "stream items differ"
            assert lines[-1] == {"states": want["states"]}, "states line differs"
        else:
            ev = json.loads(raw)
            ev = ev["traceEvents"] if isinstance(ev, dict) else ev
            names = [e["args"]["name"] for e in ev if e.get("name") == "process_name"]
            assert names == [dec(src)], "process name: %r" % names
        passed += 1
    except Exception as e:
        failed += 1
        print("FAIL %s\n    %s: %s" % (name, type(e).__name__, str(e)[:2000]))
print("json: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed or passed == 0 else 0)
EOF
python3 expect.py
