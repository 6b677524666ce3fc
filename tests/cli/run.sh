#!/usr/bin/env bash
# run.sh - tests of the `stc` command: exit codes, output formats, errors.
#
#   bash tests/cli/run.sh PATH/TO/stc SOURCE_DIR
#
# Each case runs stc once and checks its exit code and stdout/stderr
# (exactly or by substring). Ends with "cli: N passed, N failed".
set -uo pipefail

STC=${1:?usage: run.sh PATH/TO/stc SOURCE_DIR}
SRC=${2:?usage: run.sh PATH/TO/stc SOURCE_DIR}
STC=$(cd "$(dirname "$STC")" && pwd)/$(basename "$STC")
VERSION=$(sed -n 's/^#define STC_VERSION_STRING "\(.*\)"/\1/p' "$SRC/include/stc.h")

tmp=$(mktemp -d)
trap 'umount "$tmp/small" 2>/dev/null; chmod -R u+rwx "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
unset STC_QUEUE_CAPACITY

passed=0 failed=0 name="" problems=""

# ---- helpers ----------------------------------------------------------------

# run [ARGS...]: runs stc with stdin from /dev/null (or $INPUT if set).
run() {
    "$STC" "$@" <"${INPUT:-/dev/null}" >out 2>err
    code=$?
}
bad() { problems+="    $*"$'\n'; }
begin() { name=$1; problems=""; }
end() {
    if [ -z "$problems" ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "FAIL $name"
        printf '%s' "$problems"
        echo "    --- stdout:"; head -c 2000 out | sed 's/^/    /'
        echo "    --- stderr:"; head -c 2000 err | sed 's/^/    /'
    fi
}
code_is() { [ "$code" = "$1" ] || bad "exit code $code, expected $1"; }
# out_is TEXT / err_is TEXT: the stream is exactly TEXT plus a final newline.
out_is() { printf '%s\n' "$1" | cmp -s - out || bad "stdout is not exactly: $1"; }
err_is() { printf '%s\n' "$1" | cmp -s - err || bad "stderr is not exactly: $1"; }
out_has() { grep -qF -- "$1" out || bad "stdout lacks: $1"; }
err_has() { grep -qF -- "$1" err || bad "stderr lacks: $1"; }
out_lacks() { ! grep -qF -- "$1" out || bad "stdout has: $1"; }
out_empty() { [ ! -s out ] || bad "stdout is not empty"; }
err_empty() { [ ! -s err ] || bad "stderr is not empty"; }
lines_out() { [ "$(wc -l <out)" -eq "$1" ] || bad "stdout has $(wc -l <out) lines, expected $1"; }
usage_error() {
    code_is 64; out_empty; err_has "$1"; err_has "Run 'stc --help' for usage."
    head -n 1 err | grep -q '^stc: ' || bad "stderr does not start with 'stc: '"
}

# ---- programs ----------------------------------------------------------------

cat >ok.stc <<'EOF'
fun foo(x, s) = (x + 2, s + 2)
fun bar(x, s) = (x * 3, s + 3)
thread f = foo init 0
thread g = bar init 0
main = smap(fn x => g(f(x)), [10, 10])
EOF
OK_TEXT=$'[36, 36]\nf = 4\ng = 6'
OK_JSON='{"result": [36, 36], "states": {"f": 4, "g": 6}}'

cat >values.stc <<'EOF'
main = (1, 2.0, "a\"b", true, (), [inl 1, inr (-2)], [[1], []])
EOF
VALUES_TEXT='(1, 2.0, "a\"b", true, (), [inl 1, inr (-2)], [[1], []])'
VALUES_JSON='{"result": [1, 2.0, "a\"b", true, null, [{"inl": 1}, {"inr": -2}], [[1], []]], "states": {}}'

# Runtime error at 2:26 (the '/'), in thread t, on item 1 (0-based).
cat >divzero.stc <<'EOF'
-- a runtime error
fun inv(x, s) = (s + 100 / x, s)
thread t = inv init 0
main = smap(fn x => t(x), [5, 0, 7])
EOF
DIVZERO_ERR="divzero.stc:2:26: error: division by zero (in thread 't', smap item 1)"

cat >typeerr.stc <<'EOF'
main = 1 + "one"
EOF

printf 'fun f(x) = x\n' >nomain.stc
: >empty.stc

# Deterministic pseudo-random bytes (an LCG; no /dev/urandom, so a failure
# can be reproduced).
rand_bytes() {
    local s=$1 n=$2 i hex out=""
    for ((i = 0; i < n; i++)); do
        s=$(((s * 1103515245 + 12345) % 2147483648))
        printf -v hex '%02x' $(((s >> 16) & 255))
        out+="\\x$hex"
    done
    printf "$out"
}
rand_bytes 42 3000 >random1.stc
rand_bytes 7 500 >random2.stc
{ printf 'main = '; rand_bytes 99 200; } >random3.stc

# ---- version and help ------------------------------------------------------

begin "--version"; run --version; code_is 0; out_is "stc $VERSION"; err_empty; end
begin "version"; run version; code_is 0; out_is "stc $VERSION"; end
begin "--version with an extra argument"; run --version x; usage_error "unexpected argument 'x'"; end
for h in --help help -h; do
    begin "$h"; run $h; code_is 0; out_has "usage: stc run"; out_has "stc check FILE"
    out_has "--workers N"; out_has "--queue-capacity N"; out_has "Exit codes"; out_has "NAME = VALUE"
    err_empty; end
done
begin "run --help"; run run --help; code_is 0; out_has "usage: stc run"; end

# ---- usage errors (64) -----------------------------------------------------

begin "no arguments"; run; usage_error "no command given"; end
begin "unknown command"; run frobnicate ok.stc; usage_error "unknown command 'frobnicate'"; end
begin "unknown top-level flag"; run --frob; usage_error "unknown option '--frob'"; end
begin "unknown run flag"; run run --frob ok.stc; usage_error "unknown option '--frob' for 'run'"; end
begin "run without FILE"; run run; usage_error "'run' needs a FILE"; end
begin "run --json without FILE"; run run --json; usage_error "'run' needs a FILE"; end
begin "check without FILE"; run check; usage_error "'check' needs a FILE"; end
begin "extra FILE"; run run ok.stc ok.stc; usage_error "unexpected extra argument 'ok.stc'"; end
begin "check takes no run flags"; run check --json ok.stc; usage_error "unknown option '--json' for 'check'"; end
begin "flag with a value"; run run --json=yes ok.stc; usage_error "option '--json' takes no value"; end
begin "empty command"; run ""; usage_error "unknown command ''"; end
for w in 0 4097 -1 abc "" 1x " 2" +2 0x10 99999999999999999999999; do
    begin "--workers '$w'"; run run --workers "$w" ok.stc; usage_error "for --workers"; end
done
begin "--workers without a value"; run run ok.stc --workers; usage_error "option '--workers' needs a value"; end
begin "--workers= empty"; run run --workers= ok.stc; usage_error "invalid value '' for --workers"; end
for q in 0 -3 x 16777217; do
    begin "--queue-capacity '$q'"; run run --queue-capacity "$q" ok.stc; usage_error "for --queue-capacity"; end
done
begin "STC_QUEUE_CAPACITY=0"; STC_QUEUE_CAPACITY=0 run run ok.stc; usage_error "for STC_QUEUE_CAPACITY"; end
begin "STC_QUEUE_CAPACITY=abc"; STC_QUEUE_CAPACITY=abc run run ok.stc; usage_error "invalid value 'abc' for STC_QUEUE_CAPACITY"; end

# ---- successful runs (0) ---------------------------------------------------

begin "run: text output"; run run ok.stc; code_is 0; out_is "$OK_TEXT"; err_empty; end
begin "run --json: one line"; run run --json ok.stc; code_is 0; out_is "$OK_JSON"; lines_out 1; err_empty; end
begin "run: flags after FILE"; run run ok.stc --json; code_is 0; out_is "$OK_JSON"; end
begin "run --reference"; run run --reference ok.stc; code_is 0; out_is "$OK_TEXT"; end
for w in 1 2 3 4096; do
    begin "run --workers $w"; run run --workers "$w" --json ok.stc; code_is 0; out_is "$OK_JSON"; end
done
begin "run --workers=2"; run run --workers=2 ok.stc; code_is 0; out_is "$OK_TEXT"; end
begin "run --queue-capacity 1"; run run --queue-capacity 1 --workers 2 ok.stc; code_is 0; out_is "$OK_TEXT"; end
begin "STC_QUEUE_CAPACITY=4"; STC_QUEUE_CAPACITY=4 run run ok.stc; code_is 0; out_is "$OK_TEXT"; end
begin "--queue-capacity overrides a bad STC_QUEUE_CAPACITY"
STC_QUEUE_CAPACITY=bad run run --queue-capacity 2 ok.stc; code_is 0; out_is "$OK_TEXT"; end
begin "run --verify"; run run --verify ok.stc; code_is 0; out_is "$OK_TEXT"; err_empty; end
begin "run --verify --json --workers 2"; run run --verify --json --workers 2 ok.stc; code_is 0; out_is "$OK_JSON"; end
begin "every value kind as text"; run run values.stc; code_is 0; out_is "$VALUES_TEXT"; end
begin "every value kind as JSON"; run run --json values.stc; code_is 0; out_is "$VALUES_JSON"; end
begin "check: ok"; run check ok.stc; code_is 0; out_empty; err_empty; end
begin "stdin '-'"; INPUT=ok.stc run run --json -; code_is 0; out_is "$OK_JSON"; end
begin "check stdin"; INPUT=ok.stc run check -; code_is 0; out_empty; err_empty; end
cp ok.stc ./-dash.stc
begin "-- before a FILE starting with '-'"; run run -- -dash.stc; code_is 0; out_is "$OK_TEXT"; end
begin "demo"; run run "$SRC/examples/demo.stc"; code_is 0
out_is $'[(12, "low"), (56, "good"), (62, "good"), (46, "fair"), (49, "fair"), (46, "fair")]\nclean = 2\nsmooth = (280, 6)\nhigh = 2\nlow = 4'
end

# ---- compile errors (65) -----------------------------------------------------

begin "type error"; run run typeerr.stc; code_is 65; out_empty; err_has "typeerr.stc:1:"; err_has ": error: "
err_has 'main = 1 + "one"'; end
begin "check: type error"; run check typeerr.stc; code_is 65; out_empty; err_has "typeerr.stc:1:"; end
begin "no main"; run run nomain.stc; code_is 65; err_has "nomain.stc:1:1: error: no 'main' declaration"; end
begin "empty file"; run run empty.stc; code_is 65; err_has "empty.stc:1:1: error: no 'main' declaration"; end
begin "empty stdin"; run run -; code_is 65; err_has "<stdin>:1:1: error: no 'main' declaration"; end
begin "syntax error on stdin"; INPUT=typeerr.stc run check -; code_is 65; err_has "<stdin>:1:"; end
for r in random1 random2 random3; do
    begin "random bytes ($r)"; run run $r.stc; code_is 65; out_empty; err_has "$r.stc:"; err_has ": error: "; end
done
begin "NUL bytes"; printf 'main = 1\0 + 2\n' >nul.stc; run run nul.stc; code_is 65; err_has "nul.stc:1:9: error:"; end
begin "unterminated string at the end of the file"; printf 'main = "abc' >unterminated.stc
run run unterminated.stc; code_is 65; err_has "unterminated.stc:1:8: error: unterminated string literal"; end
begin "100000 nested parentheses"; { printf 'main = '; head -c 100000 /dev/zero | tr '\0' '('; } >deep_parens.stc
run check deep_parens.stc; code_is 65; err_has "deep_parens.stc:1:"; err_has "nested too deeply"; end

# ---- runtime errors (70) -----------------------------------------------------

begin "division by zero"; run run divzero.stc; code_is 70; out_empty; err_is "$DIVZERO_ERR"; end
begin "division by zero, --json"; run run --json divzero.stc; code_is 70; out_empty; err_is "$DIVZERO_ERR"; end
begin "division by zero, --verify"; run run --verify divzero.stc; code_is 70; out_empty; err_is "$DIVZERO_ERR"; end
begin "division by zero, --workers 2"; run run --workers 2 divzero.stc; code_is 70; err_is "$DIVZERO_ERR"; end
begin "check does not run"; run check divzero.stc; code_is 0; out_empty; err_empty; end
printf 'fun f(n) = if n == 0 then 0 else 1 + f(n - 1)\nmain = f(100000000)\n' >deep.stc
begin "call depth limit"; run run deep.stc; code_is 70; err_has "call depth limit exceeded"; end

# ---- unreadable files (66) ---------------------------------------------------

begin "missing file"; run run nope.stc; code_is 66; out_empty
err_is "stc: cannot read 'nope.stc': No such file or directory"; end
begin "check: missing file"; run check nope.stc; code_is 66; end
mkdir adir
begin "directory"; run run adir; code_is 66; err_is "stc: cannot read 'adir': Is a directory"; end
# A program file is read up to 64 MiB, not until memory runs out.
begin "program file larger than 64 MiB: /dev/zero"; run run /dev/zero; code_is 65; out_empty
err_is "/dev/zero: error: the program is larger than 64 MiB, the limit"; end
begin "program on standard input larger than 64 MiB"
head -c $(( (64 << 20) + 1 )) /dev/zero | tr '\0' ' ' | "$STC" check - >out 2>err; code=$?
code_is 65; err_is "<stdin>: error: the program is larger than 64 MiB, the limit"; end
if [ "$(id -u)" != 0 ]; then
    cp ok.stc locked.stc; chmod 000 locked.stc
    begin "unreadable file"; run run locked.stc; code_is 66; err_is "stc: cannot read 'locked.stc': Permission denied"; end
fi

# ---- output and resource failures ------------------------------------------

if [ -w /dev/full ]; then
    begin "stdout on a full disk"; "$STC" run ok.stc >/dev/full 2>err </dev/null; code=$?
    : >out; code_is 74; err_is "stc: cannot write output: No space left on device"; end
    begin "help on a full disk"; "$STC" --help >/dev/full 2>err </dev/null; code=$?
    : >out; code_is 74; err_is "stc: cannot write output: No space left on device"; end
fi
# Out of memory: only where an address-space limit works (not under ASan).
if { (ulimit -v 300000 && exec "$STC" --version) >/dev/null 2>&1; } 2>/dev/null; then
    printf 'main = len(range(0, 100000000))\n' >huge.stc
    begin "out of memory"; (ulimit -v 300000; exec "$STC" run huge.stc) >out 2>err </dev/null; code=$?
    code_is 71; out_empty; err_has "out of memory"; end
fi

# ---- the parallel runtime ---------------------------------------------------------

cat >pipe.stc <<'EOF2'
fun acc(x, s) = (s * 10 + x % 10, (s * 10 + x % 10) % 1000000007)
thread a = acc init 0
thread b = acc init 1
main = smap(fn x => b(a(x) + 1), range(0, 50))
EOF2
begin "stats: a pipeline at 2 workers"; run run --stats --workers 2 --queue-capacity 1 pipe.stc; code_is 0
err_has "stats: workers 2, pipelines 1, sequential smaps 0, items 50, peak in flight "; end
begin "stats: nothing parallel under --reference"; run run --stats --reference pipe.stc; code_is 0
err_is "stats: workers 0, pipelines 0, sequential smaps 0, items 0, peak in flight 0 (bound 0), tuple tasks 0, nested loops 0, fused jobs 0, back to fused 0"; end
# Nested smaps (docs/DESIGN.md section 3, "Nested smaps by cost"): which
# smaps run as pipelines, a structural check by --stats (no timing).
nested_rows() { # $1 rows of 3000 pure items
    printf 'fun pure_fn(x) = sin_iter(3, float(x))\nmain = len(smap(fn row => len(smap(pure_fn, row)), ['
    for ((i = 0; i < $1; i++)); do printf '%srange(0, 3000)' "$([ $i -gt 0 ] && echo ', ')"; done
    printf ']))\n'
}
nested_rows 3 >rows3.stc; nested_rows 4 >rows4.stc
begin "nested: 3 rows at 2 workers: main loops over the rows, each inner smap a pipeline"
run run --stats --workers 2 rows3.stc; code_is 0; out_is "3"
err_has "pipelines 3, sequential smaps 0, items 9000,"; err_has "nested loops 1"; end
begin "nested: 4 rows at 3 workers: the same"
run run --stats --workers 3 rows4.stc; code_is 0; out_is "4"
err_has "pipelines 4, sequential smaps 0, items 12000,"; err_has "nested loops 1"; end
begin "nested: 4 rows at 2 workers spread evenly: the outer smap is the pipeline"
run run --stats --workers 2 rows4.stc; code_is 0; out_is "4"
err_has "pipelines 1, sequential smaps 0, items 4,"; err_has "nested loops 0"; end
begin "nested: 1 worker: the outer smap is the pipeline"
run run --stats --workers 1 rows3.stc; code_is 0; out_is "3"
err_has "pipelines 1, sequential smaps 0, items 3,"; err_has "nested loops 0"; end
cat >nested_threads.stc <<'EOF2'
fun acc(x, s) = let v = (s * 31 + x) % 1000003 in (v, v)
thread a = acc init 0
thread b = acc init 0
main = smap(fn r => len(smap(fn x => b(a(x * r)), range(0, 3000))), [1, 2, 3, 4, 5, 6])
EOF2
begin "nested: inner pipelines of threads run as pipelines, one per outer item"
run run --stats --workers 2 nested_threads.stc; code_is 0
err_has "pipelines 6, sequential smaps 0, items 18000,"; err_has "nested loops 1"; end
cat >nested_many.stc <<'EOF2'
fun mix(x, s) = let v = (s * 17 + x * 3 + 1) % 1000003 in (v + x % 7, v)
thread b = mix init 0
fun inner(x) = smap(fn y => b(y * x % 1000), range(0, 5))
main = len(smap(fn x => len(inner(x)), range(0, 3000)))
EOF2
begin "nested: many outer items: never a pipeline per outer item"
run run --stats --workers 2 nested_many.stc; code_is 0; out_has "3000"
err_has "pipelines 1, sequential smaps 0, items 3000,"; err_has "nested loops 0"; end
# Fused until the pipeline gains (docs/DESIGN.md section 5): a job whose
# trial stage times predict too little gain stays fused on the calling
# thread ("fused jobs"), one with a heavy replicated stage goes on as the
# pipeline. Structural (the decision's inputs are times, but the predicted
# speedups, 1.04 against 2+, are far from the 1.25 threshold).
sed 's/range(0, 5)/range(0, 3)/' nested_many.stc >nested_many3.stc # cheaper items: a few us under TSan
for w in 2 3 8; do
    begin "adapt: an inner5-shaped smap (a serial stage with all the work) stays fused at $w workers"
    # The trial decides on measured time, and its windows come again over a
    # run (docs/DESIGN.md 5): one a loaded TSan build preempts can look like
    # a gain (seen once in CI). Fused in one of 3 runs; a trial that takes
    # this job to the pipeline never is.
    for attempt in 1 2 3; do
        run run --stats --workers "$w" nested_many3.stc
        grep -qF "fused jobs 1" err && break
    done
    code_is 0; out_has "3000"
    err_has "pipelines 1, sequential smaps 0, items 3000,"; err_has "fused jobs 1"; end
done
echo 'main = len(smap(fn x => sin_iter(20000, float(x)), range(0, 200)))' >heavy.stc
for w in 2 3; do
    begin "adapt: a heavy replicated stage goes on as the pipeline at $w workers"
    run run --stats --workers "$w" heavy.stc; code_is 0; out_is "200"
    err_has "pipelines 1, sequential smaps 0, items 200,"; err_has "fused jobs 0"; end
done
begin "adapt: 1 worker counts no fused jobs (all are)"; run run --stats --workers 1 heavy.stc; code_is 0
err_has "fused jobs 0"; end
cat >heavy_err.stc <<'EOF2'
fun acc(x, s) = (x, s + 100 / (x - 150))
thread a = acc init 0
main = len(smap(fn x => a(int(sin_iter(20000, float(x))) * 0 + x), range(0, 200)))
EOF2
begin "adapt: an error after the switch to the pipeline is the reference's"; run run --stats --workers 2 heavy_err.stc
code_is 70; "$STC" run --reference heavy_err.stc >/dev/null 2>ref; head -1 err | cmp -s - ref || bad "error differs from --reference"
err_has "smap item 150)"; err_has "fused jobs 0"; end
{ echo 'fun main(lines) = smap(fn l => sin_iter(20000, float(parse_int(l))), lines)'; } >heavy_stream.stc
seq 1 100 >heavy_in.txt
begin "adapt: a heavy stream goes on as the pipeline, its output the reference's"
run run --stats --workers 2 --input heavy_in.txt heavy_stream.stc; code_is 0
"$STC" run --reference --input heavy_in.txt heavy_stream.stc >ref 2>/dev/null; cmp -s out ref || bad "output differs"
err_has "fused jobs 0"; end
begin "verify: the runtime agrees with the reference"; run run --verify --workers 3 --json pipe.stc; code_is 0
out_has '{"result": [11, 112, 1123,'; end
for w in 1 2 8; do
    begin "workers $w: same output as the reference"; run run --workers "$w" --json pipe.stc; code_is 0
    "$STC" run --reference --json pipe.stc >ref 2>/dev/null; cmp -s out ref || bad "output differs from --reference"; end
done
cat >pipe_err.stc <<'EOF2'
fun acc(x, s) = (s * 10 + x % 10, (s * 10 + x % 10) % 1000000007)
fun inv(x, s) = (s + 100 / (x - 37), s)
thread a = acc init 0
thread i = inv init 0
main = smap(fn x => i(a(x) % 7 + x), range(0, 50))
EOF2
begin "runtime error mid-pipeline: the reference's error"; run run --workers 2 --queue-capacity 1 pipe_err.stc
code_is 70; out_empty; "$STC" run --reference pipe_err.stc >/dev/null 2>ref; cmp -s err ref || bad "error differs from --reference"
err_has "error: division by zero (in thread 'i', smap item "; end

cat >long.stc <<'EOF2'
fun acc(x, s) = (s + x, s + x)
fun spin(n, x) = if n == 0 then x else spin(n - 1, x + 1)
thread a = acc init 0
thread b = acc init 0
main = smap(fn x => b(spin(3000, a(x))), range(0, 10000000))
EOF2
# Waits (up to 10 s) until process $1 catches signal $2, then a little
# more: a fixed sleep lost the race in a sanitizer build on a busy machine.
# SigCgt in /proc/PID/status is the mask of caught signals, bit N-1 for
# signal N.
wait_caught() {
    local num cgt
    num=$(kill -l "$2")
    for _ in $(seq 1 200); do
        cgt=$(awk '/^SigCgt:/ {print $2}' /proc/"$1"/status 2>/dev/null || true)
        [ -n "$cgt" ] && [ $(( 0x$cgt >> (num - 1) & 1 )) -eq 1 ] && break
        sleep 0.05
    done
    sleep 0.1
}
for sig in TERM INT; do
    begin "SIG$sig cancels a run: exit 130"
    "$STC" run --workers 2 long.stc </dev/null >out 2>err &
    pid=$!
    wait_caught "$pid" "$sig"
    kill -"$sig" "$pid"
    wait "$pid"
    code=$?
    code_is 130; out_empty; err_is "stc: interrupted"; end
done
# An endless loop by tail calls has no depth limit to stop it: the cancel
# check at every application does (docs/LANGUAGE.md 6).
printf 'fun forever(n) = forever(n + 1)\nthread a = acc init 0\nfun acc(x, s) = (s + x, s + x)\nmain = smap(fn x => forever(a(x)), range(0, 4))\n' >forever.stc
for w in 1 2; do
    begin "SIGINT cancels an endless tail-call loop, --workers $w: exit 130"
    "$STC" run --workers $w forever.stc </dev/null >out 2>err &
    pid=$!
    wait_caught "$pid" INT
    kill -INT "$pid"
    wait "$pid"
    code=$?
    code_is 130; out_empty; err_is "stc: interrupted"; end
done

begin "NUL byte in a source line: every diagnostic, control bytes as '?'"
printf 'main = \0 1\n@\n' >nul.stc; run check nul.stc; code_is 65
err_has "nul.stc:1:8: error: unexpected character '\x00'"; err_has " main = ? 1"
err_has "nul.stc:2:1: error: unexpected character '@'"; end
begin "'%' in a type error message"; printf 'main = 1 %% 1.0\n' >mod.stc; run check mod.stc; code_is 65
err_has "mod.stc:1:10: error: operands of '%' have different types: int and float"; end

# ---- observability: graph, profile, trace -------------------------------------------

begin "graph: DOT of the demo's pipeline"; run graph "$SRC/examples/demo.stc"; code_is 0
out_has "digraph stc {"; out_has "smooth\nserial · line 37"; out_has "replicated, split"; err_empty; end
begin "graph --threads"; run graph --threads "$SRC/examples/demo.stc"; code_is 0
out_has "[label=\"smooth (writes)\"]"; end
# --ranks K: where `stc run --mpi` at K ranks runs each stage (golden labels:
# the parse stage may go to ranks 0-2; the serial one may be owned by one of
# them, by the cost model; the select stage, which calls nothing, stays on
# rank 0)
printf '%s\n' 'fun sq(x) = x * x' 'fun acc(x, s) = (x + s, x + s)' 'thread t = acc init 0' \
    'main = smap(fn x => let a = sq(x) in let b = t(a) in if b > 3 then 1 else 2, range(0, 9))' >ranks.stc
begin "graph --ranks 3: ranks per stage"; run graph --ranks 3 ranks.stc; code_is 0
out_has 'p0_s0 [label="sq\nreplicated\nranks 0-2 · line 4"'; out_has 'p0_s1 [label="t\nserial\none of ranks 0-2 · line 4"'
out_has 'p0_s2 [label="pure\nreplicated\nrank 0 · line 4"'
[ "$(grep -c 'rank 0 · \|ranks 0-2 · ' out)" = "$(grep -c '^ *p[0-9]*_s[0-9]* \[label=' out)" ] || bad "a stage without its ranks"
err_empty; end
# comp_read's f and h are read-only threads: their stage goes to every rank
# (their states with each batch), where it stayed on rank 0 before
begin "graph --ranks 2: a stage calling read-only threads"; run graph --ranks 2 "$SRC/bench/paper/comp_read.stc"; code_is 0
out_has 'p0_s0 [label="h\nreplicated\nranks 0-1 · line 13"'; err_empty; end
# a keyed thread's shard stages may each be owned by one rank (the shard
# choice stays on rank 0); at K ranks a run has a shard per worker and one
# per other rank
printf '%s\n' 'fun count(w, n) = (n + 1, n + 1)' 'keyed thread c = count init 0' \
    'main = smap(fn l => smap(c, words(l)), ["a b", "c"])' >kranks.stc
begin "graph --ranks 2: a keyed thread's shards"; run graph --ranks 2 kranks.stc; code_is 0
out_has 'p0_s0 [label="shard\nreplicated\nrank 0 · line 3"'
out_has 'p0_s1 [label="c [shard 1/S]\nserial, keyed shard\none of ranks 0-1 · line 3"'
out_has 'p0_s2 [label="c [shard S/S]\nserial, keyed shard\none of ranks 0-1 · line 3"'
out_has "S = a run's workers + 1, at most 8"; err_empty; end
begin "graph --ranks 3 --workers 1: a shard per worker and per other rank"; run graph --ranks 3 --workers 1 kranks.stc
code_is 0; out_has 'at 1 worker, a keyed thread in 3 shards'; out_has 'c [shard 3/3]\nserial, keyed shard\none of ranks 0-2'; end
begin "graph --ranks 1: the plain stages view"; run graph --ranks 1 ranks.stc; code_is 0
"$STC" graph ranks.stc </dev/null >plain.out 2>/dev/null; cmp -s out plain.out || bad "--ranks 1 differs from graph"; end
begin "graph --ranks 0: usage error"; run graph --ranks 0 ranks.stc; code_is 64; end
begin "graph: no smap"; printf 'main = 1 + 2\n' >plain.stc; run graph plain.stc; code_is 0
out_has "no smap: nothing runs in parallel"; end
if command -v dot >/dev/null 2>&1; then
    begin "graph: the DOT parses with dot"; run graph "$SRC/examples/demo.stc"
    dot -Tsvg out >/dev/null 2>dot.err || bad "dot rejects the graph: $(cat dot.err)"; end
    begin "graph --svg"; run graph --svg demo.svg "$SRC/examples/demo.stc"; code_is 0; out_empty
    grep -q "<svg" demo.svg || bad "demo.svg is not SVG"; end
fi
# A stand-in for Graphviz's dot that takes its options as dot does: -oFILE,
# or -o FILE when FILE does not start with '-' (else "Missing argument").
mkdir fakedot
cat >fakedot/dot <<'EOF2'
#!/bin/sh
out=
while [ $# -gt 0 ]; do
    case $1 in
        -T*) ;;
        -o) case ${2:--} in -*) echo "Missing argument for -o flag" >&2; exit 1 ;; esac
            out=$2; shift ;;
        -o*) out=${1#-o} ;;
        *) echo "dot: unexpected argument '$1'" >&2; exit 1 ;;
    esac
    shift
done
if [ -n "$out" ]; then { echo "<svg fake>"; cat; } >"$out"; else echo "<svg fake>"; cat; fi
EOF2
chmod +x fakedot/dot
begin "graph --svg: a file named like an option (-V)"
PATH="$tmp/fakedot:$PATH" "$STC" graph --svg -V "$SRC/examples/demo.stc" </dev/null >out 2>err; code=$?
code_is 0; out_empty; err_empty; grep -q "<svg fake>" ./-V 2>/dev/null || bad "./-V was not written"; end
begin "graph --svg -: SVG on standard output"
PATH="$tmp/fakedot:$PATH" "$STC" graph --svg - "$SRC/examples/demo.stc" </dev/null >out 2>err; code=$?
code_is 0; out_has "<svg fake>"; out_has "digraph stc {"; err_empty
[ ! -e ./- ] || bad "a file named '-' was written"; end
begin "graph --svg without dot: exit 69"
PATH=/nonexistent "$STC" graph --svg x.svg "$SRC/examples/demo.stc" </dev/null >out 2>err; code=$?
code_is 69; err_has "the 'dot' program is not installed (Debian package graphviz"; end
begin "graph: unknown option"; run graph --json "$SRC/examples/demo.stc"; usage_error "unknown option '--json' for 'graph'"; end
begin "profile: table on stderr"; run run --workers 2 --profile pipe.stc; code_is 0
err_has "pipeline 0: smap at pipe.stc:4:8"; err_has "bottleneck: "; err_has "predicted speedup over 1 worker"
out_has "[11, 112, 1123,"; end
begin "trace: a Chrome trace file"; run run --workers 2 --trace t.json pipe.stc; code_is 0
grep -q '"traceEvents": \[' t.json || bad "no traceEvents"
grep -q '"name": "a (line 4)", "cat": "stage", "ph": "X"' t.json || bad "no slice for stage a"
grep -q '"name": "thread_name", "ph": "M", "pid": 1, "tid": 1' t.json || bad "no track for worker 1"
tail -n 1 t.json | grep -q '^]}$' || bad "trace not closed"; end
# Helpers that call threads get the stages of the inline form (docs/DESIGN.md 3):
# main_stages FILE prints the stage names and kinds of the smap on FILE's
# last line, without their lines.
main_stages() { # [GRAPH OPTIONS...] FILE
    local line; line=$(wc -l <"${@: -1}")
    "$STC" graph "$@" </dev/null | awk -v L="$line" '
        /label="smap at/ { on = index($0, ":" L ":") > 0 }
        on && /^    p[0-9]+_s[0-9]+ \[label=/ {
            match($0, /label="[^"]*"/); s = substr($0, RSTART + 7, RLENGTH - 8)
            gsub(/ · line [0-9]+/, "", s); printf "[%s] ", s }
        END { print "" }'
}
# helper_form NAME MAIN...: NAME.stc, the paper's writing threads f and h
# over 50 items, then the lines MAIN.
helper_form() {
    local name=$1; shift
    { printf '%s\n' 'fun fw(x, s) = (sin_iter(100, x + s), s + 1.0)' 'thread f = fw init 4.0' \
          'thread h = fw init 3.0' 'fun inputs(n) = smap(fn i => 400.0 + 10.0 * float(i), range(0, n))'
      printf '%s\n' "$@"; } >"$name.stc"
}
helper_form inline 'main = smap(fn x => h(f(x)), inputs(50))'
helper_form named 'fun step(x) = h(f(x))' 'main = smap(step, inputs(50))'
helper_form lambda 'fun step(x) = h(f(x))' 'main = smap(fn x => step(x), inputs(50))'
helper_form nested 'fun inner(x) = h(f(x))' 'fun step(x) = inner(x)' 'main = smap(step, inputs(50))'
helper_form lets 'fun step(x) = let y = f(x) in let z = h(y) in z' 'main = smap(fn x => step(x), inputs(50))'
helper_form composed 'fun one(x) = f(x)' 'fun two(y) = h(y)' 'main = smap(fn x => two(one(x)), inputs(50))'
inline_stages=$(main_stages inline.stc)
begin "graph: the inline form has stages f and h"
[ "$inline_stages" = '[f\nserial] [h\nserial] ' ] || bad "inline stages: $inline_stages"; end
run run --json inline.stc; cp out inline.out
for form in named lambda nested lets composed; do
    begin "graph: helpers ($form) give the stages of the inline form, and its results"
    got=$(main_stages $form.stc)
    [ "$got" = "$inline_stages" ] || bad "stages: $got, inline: $inline_stages"
    run run --verify --workers 2 $form.stc; code_is 0
    run run --json --workers 2 $form.stc; code_is 0; cmp -s out inline.out || bad "result differs from the inline form"
    end
done
helper_form recursive 'fun loop(x, n) = if n == 0 then x else loop(h(f(x)), n - 1)' \
    'main = smap(fn x => sin_iter(100, loop(x, 1)), inputs(50))'
begin "graph and profile: a recursive helper is a serial stage, and they say why"
got=$(main_stages recursive.stc)
[ "$got" = '[loop\nserial (calls recursive function loop)] [sin_iter\nreplicated] ' ] || bad "stages: $got"
run run --workers 2 --profile recursive.stc; code_is 0; err_has "serial (calls recursive function loop)"
# the kind column is as wide as its longest entry: the items column starts
# at the same place on the header and on every stage row
awk '/^  stage /{h = index($0, "items") + 4} /^  [^b].*\(line [0-9]+\)/{ if (!h) next; n++
     if (match($0, /[0-9]+ +[0-9]+\.[0-9]+ +[0-9.]+%/) == 0 || RSTART + index(substr($0, RSTART), " ") - 2 != h) bad++ }
     END { exit !(h && n >= 2 && !bad) }' err || bad "profile columns not aligned: $(cat err)"; end
helper_form param 'fun each(g, xs) = smap(g, xs)' 'main = each(fn x => h(f(x)), inputs(50))'
begin "graph: an smap of a helper's parameter shows the stages of the function its call passes"
got=$("$STC" graph param.stc </dev/null | awk '
    /label="smap at/ { on = index($0, "(function from the call at 6:8), 2 stages") > 0 }
    on && /^    p[0-9]+_s[0-9]+ \[label=/ {
        match($0, /label="[^"]*"/); s = substr($0, RSTART + 7, RLENGTH - 8)
        gsub(/ · line [0-9]+/, "", s); printf "[%s] ", s }')
[ "$got" = "$inline_stages" ] || bad "stages: $got, inline: $inline_stages"
run graph param.stc; out_lacks "planned at run time"
run run --json --workers 2 param.stc; code_is 0; cmp -s out inline.out || bad "result differs from the inline form"; end
printf '%s\n' 'fun each(g, xs) = smap(g, xs)' 'fun twice(g, xs) = each(g, each(g, xs))' \
    'main = twice(fn x => x + 1, [1, 2])' >param_value.stc
begin "graph: a parameter passed on as a value is still planned at run time"
run graph param_value.stc; code_is 0; out_has "planned at run time"; end
helper_form value 'main = let g = fn y => h(f(y)) in smap(fn x => g(x), inputs(50))'
begin "graph: a call through a function value is a serial stage, and it says why"
got=$(main_stages value.stc)
[ "$got" = '[call\nserial (calls a function value)] ' ] || bad "stages: $got"; end
# Keyed threads in an smap run as shard stages (docs/DESIGN.md 7b).
printf '%s\n' 'fun count(w, n) = (n + 1, n + 1)' 'keyed thread counts = count init 0' \
    'fun main(lines) = smap(fn l => smap(counts, words(l)), lines)' >keyed.stc
begin "graph: a keyed thread's inner smap is a shard stage per shard"
got=$(main_stages keyed.stc)
one='[shard\nreplicated] [counts [shard 1/S]\nserial, keyed shard] [counts [shard S/S]\nserial, keyed shard] '
[ "$got" = "$one$one" ] || bad "stages (the outer smap's, then the inner's): $got"
run graph keyed.stc; out_has "shards as 1/S and S/S (S = a run's workers, at most 8)"; end
begin "graph --workers 3: every shard of a 3-worker run, numbered"
got=$(main_stages --workers 3 keyed.stc)
three='[shard\nreplicated] [counts [shard 1/3]\nserial, keyed shard] [counts [shard 2/3]\nserial, keyed shard] [counts [shard 3/3]\nserial, keyed shard] '
[ "$got" = "$three$three" ] || bad "stages at 3 workers: $got"
run graph --workers 3 keyed.stc; code_is 0; out_has "at 3 workers, a keyed thread in 3 shards"; out_lacks "1/S"; end
begin "graph --workers 20: at most 8 shards"
run graph --workers=20 keyed.stc; code_is 0; out_has "counts [shard 8/8]"; out_lacks "shard 9/"; end
begin "graph --workers 1: no shards, and it says why"
run graph --workers 1 keyed.stc; code_is 0; out_has "serial (keyed thread counts runs on one worker)"; out_lacks "[shard"; end
begin "graph --workers 2 --ranks 3: both labels (a shard per worker and per other rank)"
run graph --workers 2 --ranks 3 keyed.stc; code_is 0; out_has "counts [shard 4/4]\\nserial, keyed shard\\none of ranks 0-2"
out_has "rank 0"; end
begin "graph --workers 0: usage error"; run graph --workers 0 keyed.stc; usage_error "invalid value '0' for --workers"; end
begin "graph --workers x: usage error"; run graph --workers x keyed.stc; usage_error "invalid value 'x' for --workers"; end
awk 'BEGIN { for (i = 0; i < 3000; i++) print "w" (i % 13) " x" (i % 7) " w" (i % 5) }' >keyed.txt
begin "keyed: the word count stream at 3 workers, --verify, profile and trace rows per shard"
run run --verify --workers 3 --input keyed.txt keyed.stc; code_is 0; out_has 'counts = {"w0": '
run run --workers 3 --profile --trace keyed.json --input keyed.txt keyed.stc; code_is 0
err_has "counts [shard 1/3] (line 3)"; err_has "counts [shard 3/3] (line 3)"; err_has "serial, keyed shard"
grep -q '"name": "counts \[shard 2/3\] (line 3)", "cat": "stage"' keyed.json || bad "no trace slice for shard 2"
run run --reference --input keyed.txt keyed.stc; cp out keyed.ref
run run --workers 2 --input keyed.txt keyed.stc; cmp -s out keyed.ref || bad "2 workers differ from the reference"; end
printf '%s\n' 'fun count(w, n) = (n + 1, n + 1)' 'keyed thread c = count init 0' \
    'main = smap(fn x => c(x % 3) + c(x % 5), range(0, 100))' >keyed2.stc
begin "graph and profile: a keyed thread called twice is one serial stage, and they say why"
got=$(main_stages keyed2.stc)
case "$got" in *"serial, fused segment (keyed thread c shares its stage with other thread calls)"*) ;;
    *) bad "stages: $got" ;; esac
run run --workers 2 --profile keyed2.stc; code_is 0; err_has "keyed thread c shares its stage"; end
for prog in "$SRC"/examples/*.stc "$SRC"/bench/paper/*.stc; do
    begin "graph, profile and trace work on $(basename "$prog")"
    run graph "$prog"; code_is 0; out_has "digraph stc {"
    if command -v dot >/dev/null 2>&1; then dot -Tsvg out >/dev/null 2>&1 || bad "dot rejects its graph"; fi
    run run --workers 2 --profile --trace every.json "$prog"; code_is 0
    err_has "predicted speedup over 1 worker"
    tail -n 1 every.json | grep -q '^]}$' || bad "trace not closed"
    end
done
begin "trace: unwritable file"; run run --trace /nonexistent/t.json pipe.stc; code_is 74
err_is "stc: cannot write the trace file '/nonexistent/t.json'"; end
# --verify measures and traces its runtime run, as a plain run does.
begin "verify: --profile, --stats and --trace of the runtime's run"; rm -f vt.json
run run --verify --workers 2 --profile --stats --trace vt.json pipe.stc; code_is 0
out_has "[11, 112, 1123,"; err_has "pipeline 0: smap at pipe.stc:4:8"; err_has "stats: workers 2, pipelines 1"
grep -q '"name": "a (line 4)", "cat": "stage", "ph": "X"' vt.json || bad "no slice for stage a"
tail -n 1 vt.json | grep -q '^]}$' || bad "trace not closed"; end
begin "verify: unwritable trace file"; run run --verify --trace /nonexistent/t.json pipe.stc; code_is 74
err_is "stc: cannot write the trace file '/nonexistent/t.json'"; out_empty; end

# ---- stream programs (fun main(lines)) ---------------------------------------------

cat >wc.stc <<'EOF'
fun count(ws, s) = let (lines, words) = s in (len(ws), (lines + 1, words + len(ws)))
fun acc(n, s) = (s * 10 + n, (s * 10 + n) % 1000000007)   -- order-sensitive
thread total = count init (0, 0)
thread order = acc init 0
fun main(lines) = smap(fn l => concat(str(order(total(words(l)))), concat(" ", l)), lines)
EOF
printf 'a b c\nhello world\n\nlast line, no newline' >in.txt
begin "stream: --input, str results as they are, then the states"
run run --input in.txt wc.stc; code_is 0
out_is $'3 a b c\n32 hello world\n320 \n3204 last line, no newline\ntotal = (4, 9)\norder = 3204'; err_empty; end
begin "stream: standard input by default"
INPUT=in.txt run run wc.stc; code_is 0; out_has "3204 last line, no newline"; end
begin "stream: --json, one value per line, then the states line"
run run --json --input in.txt wc.stc; code_is 0
out_is $'"3 a b c"\n"32 hello world"\n"320 "\n"3204 last line, no newline"\n{"states": {"total": [4, 9], "order": 3204}}'; end
awk 'BEGIN { for (i = 0; i < 20000; i++) print "w" i " x" (i % 7) " y" }' >many.txt
run run --reference --input many.txt wc.stc; cp out ref.out
for w in 1 2 4; do
    begin "stream: 20000 lines at $w workers equal the reference"
    run run --workers $w --input many.txt wc.stc; code_is 0; cmp -s out ref.out || bad "differs from --reference"
    run run --workers $w --queue-capacity 1 --input many.txt wc.stc; code_is 0
    cmp -s out ref.out || bad "differs at capacity 1"
    end
done
begin "stream: --verify"; run run --verify --workers 2 --input many.txt wc.stc; code_is 0
cmp -s out ref.out || bad "differs"; end
begin "stream: --stats counts the items"
run run --workers 2 --stats --input many.txt wc.stc; code_is 0; err_has "items 20000"; end

# Streams that finish (docs/STREAMS.md): `let _ = smap(F, lines) in BODY`
# streams, drops the smap's items, then prints BODY's value and the states.
cat >top.stc <<'EOF'
fun count(w, m) = ((), update(m, w, 0, fn n => n + 1))
thread counts = count init {}
fun neg(kv) = let (w, n) = kv in (0 - n, w)
fun main(lines) =
  let _ = smap(fn l => counts(nth(words(l), 1)), lines) in
  smap(fn p => let (n, w) = p in concat(w, concat(" ", str(0 - n))), take(sort(smap(neg, items(state(counts)))), 3))
EOF
awk '{ n[$2]++ } END { for (w in n) print -n[w], w }' many.txt | sort -k1,1n -k2,2 | head -3 | awk '{ print $2, -$1 }' >top.want
awk '{ n[$2]++ } END { printf "counts = {"; for (i = 0; i < 7; i++) printf "%s\"x%d\": %d", (i ? ", " : ""), i, n["x" i]; print "}" }' many.txt >>top.want
for w in ref 1 2 4; do
    begin "stream that finishes: top 3 after 20000 lines, $w"
    if [ $w = ref ]; then run run --reference --input many.txt top.stc; else run run --workers $w --input many.txt top.stc; fi
    code_is 0; cmp -s out top.want || bad "stdout is not the 3 most frequent words then the states: $(cat top.want)"; end
done
begin "stream that finishes: --no-states prints BODY's items only"
run run --workers 2 --no-states --input many.txt top.stc; code_is 0; head -3 top.want | cmp -s - out || bad "not the top 3 alone"; end
begin "stream that finishes: --json --no-states, no states line"
run run --workers 2 --json --no-states --input many.txt top.stc; code_is 0
head -3 top.want | awk '{ printf "\"%s %s\"\n", $1, $2 }' | cmp -s - out || bad "not the top 3 as JSON strings alone"; end
begin "stream that finishes: --verify"
run run --verify --workers 2 --input many.txt top.stc; code_is 0; cmp -s out top.want || bad "differs"; end
# Constant memory, structurally: the dropped items are never gathered;
# ten times the lines, the same bound on items in flight, never exceeded.
awk 'BEGIN { for (i = 0; i < 200000; i++) print "w" i " x" (i % 7) " y" }' >many10.txt
peak_bound() { sed -n 's/.*items \([0-9]*\), peak in flight \([0-9]*\) (bound \([0-9]*\)).*/\1 \2 \3/p' err; }
begin "stream that finishes: constant memory (--stats: peak in flight within its bound)"
run run --workers 2 --queue-capacity 16 --stats --no-states --input many.txt top.stc; code_is 0; read -r n1 p1 b1 <<<"$(peak_bound)"
run run --workers 2 --queue-capacity 16 --stats --no-states --input many10.txt top.stc; code_is 0; read -r n2 p2 b2 <<<"$(peak_bound)"
# (items: the input's lines and the 10 of BODY's two small smaps)
[ "${n1:-0}" = 20010 ] && [ "${n2:-0}" = 200010 ] || bad "items: ${n1:-?} and ${n2:-?}, expected 20010 and 200010"
[ "${b1:-0}" -gt 0 ] && [ "$b1" = "${b2:-}" ] || bad "the bound differs with the length: ${b1:-?} and ${b2:-?}"
[ "${p1:-0}" -ge 1 ] && [ "${p2:-0}" -ge 1 ] && [ "$p1" -le "$b1" ] && [ "$p2" -le "$b2" ] && [ "$b2" -le 160 ] ||
    bad "peak in flight ${p1:-?} / ${p2:-?} not within bounds ${b1:-?} / ${b2:-?} (<= 160)"
end
# `let (r) = S` (r in parentheses, unused) is the same form, and a keyed
# count streams alike.
sed 's/let _ = smap/let (r) = smap/; s/^thread counts = count init {}$/keyed thread counts = kcount init 0/; s/^fun count(w, m) = .*$/fun kcount(w, n) = ((), n + 1)/' top.stc >topk.stc
begin "stream that finishes: let (r) = S with r unused, over a keyed thread, in constant memory"
grep -q 'let (r) = smap' topk.stc && grep -q '^keyed thread' topk.stc || bad "topk.stc not made"
run run --workers 2 --queue-capacity 16 --stats --no-states --input many10.txt topk.stc; code_is 0; read -r n3 p3 b3 <<<"$(peak_bound)"
[ "${n3:-0}" = 200010 ] && [ "${p3:-0}" -ge 1 ] && [ "$p3" -le "${b3:-0}" ] && [ "$b3" -le 160 ] ||
    bad "items ${n3:-?}, peak in flight ${p3:-?} not within bound ${b3:-?} (<= 160)"
run run --reference --no-states --input many.txt topk.stc; code_is 0; cp out topk.ref
run run --workers 3 --no-states --input many.txt topk.stc; code_is 0; cmp -s out topk.ref || bad "3 workers differ"
head -3 top.want | cmp -s - out || bad "not the top 3"
end
begin "--no-states: main's value alone"; run run --no-states --workers 2 pipe.stc; code_is 0; lines_out 1; end
begin "--no-states --json: {\"result\": V} alone"
run run --json --no-states pipe.stc; code_is 0; grep -q '^{"result": .*}$' out || bad "not a result object"
grep -q '"states"' out && bad "a states member"; lines_out 1; end
printf 'x1\nx2\nx3\n' >a.txt; printf 'y1\n' >b.txt
cat >ev.stc <<'EOF'
fun main(events) = smap(fn e => let (src, l) = e in concat(str(src), concat(": ", l)), events)
EOF
begin "stream: several inputs merge as (INDEX, LINE), files in turn"
run run --input a.txt --input b.txt ev.stc; code_is 0; out_is $'0: x1\n1: y1\n0: x2\n0: x3'; end
cat >reduce.stc <<'EOF'
fun add(n, s) = ((), s + n)          -- a reduction: () per item, the answer in the state
thread words_seen = add init 0
fun main(lines) = smap(fn l => words_seen(len(words(l))), lines)
EOF
begin "stream: () results print nothing, only the final states"
run run --input in.txt reduce.stc; code_is 0; out_is 'words_seen = 9'
run run --json --input in.txt reduce.stc; code_is 0; out_is '{"states": {"words_seen": 9}}'; end
begin "stream: a missing input"; run run --input nope.txt wc.stc; code_is 66
err_is "stc: cannot read input 'nope.txt': No such file or directory"; end
begin "stream: --input for a main without input"; run run --input in.txt ok.stc; code_is 64
err_has "main takes no input"; end
begin "stream: program and input both on standard input"; run run --input - -; usage_error "standard input"; end
printf 'fun main(l) = smap(fn x => x, l)\n' >s.stc
seq 1 300000 >m.txt
printf 'fun main(l) = smap(fn x => concat(x, "!"), l)\n' >bang.stc
begin "stream: a program on standard input needs --input"
INPUT=bang.stc run run -; code_is 64; out_empty
err_is "stc: the program is read from standard input, so its input lines must come from '--input FILE'"; end
begin "stream: a program on standard input, its lines from --input"
INPUT=bang.stc run run --input in.txt -; code_is 0; out_has "hello world!"; end
begin "stream: a directory as --input is unreadable (66)"; run run --input adir wc.stc; code_is 66; out_empty
err_is "stc: cannot read input 'adir': Is a directory"; end
if [ -r /proc/self/mem ]; then # opens, but reading offset 0 fails (EIO)
    begin "stream: a read error is 'cannot read' (66)"; run run --input /proc/self/mem s.stc; code_is 66
    err_has "cannot read '/proc/self/mem': Input/output error"; end
    begin "stream: a read error under --verify (66)"; run run --verify --input /proc/self/mem s.stc; code_is 66
    err_is "stc: cannot read '/proc/self/mem': Input/output error"; end
fi
begin "stream: a directory among several inputs"; run run --input in.txt --input adir ev.stc; code_is 66
err_is "stc: cannot read input 'adir': Is a directory"; end
printf 'fun main(l) = smap(fn x => parse_float(x), l)\n' >floats.stc
begin "stream: CR LF line ends are stripped"
printf '1\r\n2.5\r\n3\r\n' >crlf.txt; run run --input crlf.txt floats.stc; code_is 0; out_is $'1.0\n2.5\n3.0'; end
begin "stream: a CR not before LF stays"
printf 'a\rb\r\n\r\nc\r' >cr.txt; run run --json --input cr.txt s.stc; code_is 0
out_is $'"a\\rb"\n""\n"c\\r"\n{"states": {}}'; end
# The line limit (256 MiB) is the same for files and pipes: checked on every
# line, not only between reads.  STC_TEST_MAX_LINE lowers it for the test.
awk 'BEGIN { print "short"; s = ""; for (i = 0; i < 3000; i++) s = s "x"; print s; print "after" }' >longline.txt
awk 'BEGIN { s = ""; for (i = 0; i < 1000; i++) s = s "y"; printf "%s\r\n", s }' >limitline.txt
for how in file pipe; do
    begin "stream: a line over the limit from a $how"
    if [ $how = file ]; then STC_TEST_MAX_LINE=1000 "$STC" run --input longline.txt s.stc </dev/null >out 2>err
    else cat longline.txt | STC_TEST_MAX_LINE=1000 "$STC" run s.stc >out 2>err; fi; code=$?
    code_is 70; out_is "short"; err_has ": line 2 is longer than 1000 bytes (smap item 1)"; end
    begin "stream: a line at the limit from a $how"
    if [ $how = file ]; then STC_TEST_MAX_LINE=1000 "$STC" run --input limitline.txt s.stc </dev/null >out 2>err
    else cat limitline.txt | STC_TEST_MAX_LINE=1000 "$STC" run s.stc >out 2>err; fi; code=$?
    code_is 0; lines_out 1; end
done
begin "stream: --input needs a file"; run run --input; usage_error "'--input' needs a file name"; end
cat >bad_line.stc <<'EOF'
fun acc(n, s) = (s + n, s + n)
thread a = acc init 0
fun main(lines) = smap(fn l => a(parse_int(l)), lines)
EOF
printf '1\n2\nthree\n4\n' >nums.txt
for w in ref 1 2; do
    begin "stream: error mid-stream at $w workers: earlier results out, then the error"
    if [ $w = ref ]; then run run --reference --input nums.txt bad_line.stc
    else run run --workers $w --input nums.txt bad_line.stc; fi
    code_is 70; out_is $'1\n3'
    err_is 'bad_line.stc:3:34: error: parse_int: "three" is not an integer (smap item 2)'; end
done
begin "stream: --verify, error mid-stream: the output and error of run"
run run --verify --workers 2 --input nums.txt bad_line.stc; code_is 70; out_is $'1\n3'
err_is 'bad_line.stc:3:34: error: parse_int: "three" is not an integer (smap item 2)'; end
if [ -w /dev/full ]; then
    begin "stream: output to a full disk"; "$STC" run --input many.txt wc.stc >/dev/full 2>err; code=$?
    code_is 74; err_is "stc: cannot write output: No space left on device (results from item 0 on are missing)"
    end
    # The first write fails: one message, naming the first result lost.
    begin "stream: a full disk: one error, the first item lost"
    "$STC" run --input m.txt s.stc >/dev/full 2>err; code=$?; : >out
    code_is 74; err_is "stc: cannot write output: No space left on device (results from item 0 on are missing)"; end
fi
begin "stream: SIGPIPE ignored: one error"
(trap '' PIPE; "$STC" run --input m.txt s.stc 2>err | head -c 1 >/dev/null; exit "${PIPESTATUS[0]}"); code=$?
: >out; code_is 74; [ "$(wc -l <err)" -eq 1 ] || bad "stderr has $(wc -l <err) lines, expected 1"
err_has "stc: cannot write output: Broken pipe (results from item "; end
# Output cut short in mid-line: every result before the one named is there
# whole; the output ends with the start of that one's line.
check_cut() { # FILE: the output file cut short; err names the first result lost
    local lost whole
    lost=$(sed -n 's/.*(results from item \([0-9]*\) on are missing)$/\1/p' err)
    whole=$(wc -l <"$1")
    [ -n "$lost" ] || { bad "no item named"; return; }
    [ "$lost" = "$whole" ] || bad "names item $lost, but $whole whole lines were written"
    head -n "$whole" m.txt | cmp -s - <(head -n "$whole" "$1") || bad "the whole lines are not the first results"
    local part; part=$(tail -c +$(( $(head -n "$whole" "$1" | wc -c) + 1 )) "$1")
    case $(sed -n "$((lost + 1))p" m.txt) in "$part"*) ;; *) bad "the partial line '$part' is not the start of item $lost";; esac
}
begin "stream: a file size limit in mid-line: the first item not fully written"
(trap '' XFSZ; ulimit -f 1000; exec "$STC" run --input m.txt s.stc >cut.txt 2>err); code=$?; : >out
code_is 74; err_has "File too large (results from item "; [ "$(wc -l <err)" -eq 1 ] || bad "more than one error line"
check_cut cut.txt; end
if [ "$(id -u)" = 0 ] && mkdir small && mount -t tmpfs -o size=1m tmpfs small 2>/dev/null; then
    begin "stream: a full 1 MiB tmpfs: the first item not fully written"
    "$STC" run --input m.txt s.stc >small/out.txt 2>err; code=$?; : >out
    code_is 74; err_has "No space left on device (results from item "; check_cut small/out.txt; end
    umount small
else
    echo "cli: skipped the 1 MiB tmpfs case (needs root and mount)"
fi
cat >slow.stc <<'EOF'
fun main(lines) = smap(fn l => sin_iter(100000, 1.0), lines)
EOF
awk 'BEGIN { for (i = 0; i < 400; i++) print i }' >slow.txt
if command -v script >/dev/null 2>&1; then
    # script(1) gives stc a terminal for stderr.
    begin "stream: a progress line on a terminal"
    script -qec "$STC run --workers 2 --input slow.txt slow.stc >/dev/null" typescript >/dev/null 2>&1; code=$?
    code_is 0; grep -q "items/s" typescript || bad "no progress line"; end
    begin "stream: --quiet: no progress line"
    script -qec "$STC run --quiet --workers 2 --input slow.txt slow.stc >/dev/null" typescript >/dev/null 2>&1
    if grep -q "items/s" typescript; then bad "progress line despite --quiet"; fi; end
fi
begin "stream: no progress line when stderr is not a terminal"
run run --workers 2 --input slow.txt slow.stc; code_is 0; err_empty; lines_out 400; end
if command -v mkfifo >/dev/null 2>&1; then
    begin "stream: Ctrl-C while waiting for input"
    mkfifo fifo
    sleep 20 >fifo & writer=$! # holds the pipe open without writing
    "$STC" run --input fifo wc.stc >out 2>err & pid=$!
    wait_caught "$pid" INT; kill -INT $pid; wait $pid; code=$?
    kill $writer 2>/dev/null; wait $writer 2>/dev/null
    code_is 130; err_has "interrupted"; end
fi

# ---- the command's structure ------------------------------------------------------

# The modules of cli/, in the order written at the top of cli/stc.c: each
# may include only the headers of modules after it (and include/stc.h).
begin "cli modules depend one way"
order=$(sed -n '/The command.s modules/,/\*\//p' "$SRC/cli/stc.c" | sed -n 's/^ \*   \([a-z_]*\)\.c .*/\1/p')
[ "$(echo "$order" | wc -l)" -ge 5 ] || bad "no module order in cli/stc.c"
rank() { echo "$order" | grep -nx "$1" | cut -d: -f1; }
for f in "$SRC"/cli/*.[ch]; do
    m=$(basename "$f"); m=${m%.*}; rm_=$(rank "$m")
    [ -n "$rm_" ] || { bad "cli/$(basename "$f") is not in the module order"; continue; }
    for h in $(sed -n 's/^#include "\([a-z_]*\)\.h"/\1/p' "$f"); do
        [ "$h" = "$m" ] || [ "$h" = stc ] || [ "$h" = stc_mpi ] && continue # the public headers
        rh=$(rank "$h")
        [ -n "$rh" ] && [ "$rh" -gt "$rm_" ] || bad "cli/$(basename "$f") includes $h.h, which is not after $m in the order"
    done
done; end

# ---- odd argv ------------------------------------------------------------------

begin "long argument"; run "$(head -c 100000 /dev/zero | tr '\0' x)"; code_is 64; end
begin "control bytes in argv"; run run $'\x01\x02' ; code_is 66; end

echo "cli: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
