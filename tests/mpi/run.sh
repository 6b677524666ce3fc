#!/usr/bin/env bash
# tests/mpi/run.sh - `stc run --mpi` under mpirun gives exactly what `stc run`
# gives on one machine, and a failing rank ends the run (issue 14 items 3, 4).
#
#   bash tests/mpi/run.sh STC SOURCE_DIR [GEN_LOG [EMBED_MPI]]
#
# Skipped (exit 77, with a message) when mpirun is missing or stc was built
# without MPI.  Parts:
#
# 1. Every test of tests/lang/*.stc and tests/diff/regress/*.stc (each
#    `-- test:` section compiled on its own, as lang_runner does, with its
#    `-- input:` lines as an --input file), examples/demo.stc and a
#    logstats log: `mpirun -q -np K stc run --mpi --json --workers N` must
#    print the same stdout and stderr and exit with the same code as
#    `stc run --json --workers N`.  K runs 1..4 and N 1..2.  An mpirun
#    takes 0.3-1 s here, and there are over 550 tests, so by default one
#    test in STC_MPI_TEST_SHARE (7) runs, each with the next (K, N) pair in
#    turn (every pair covers some tests; the part stays near a minute and
#    a half on 2 loaded cores); STC_MPI_TEST_ALL=1 runs every test with all
#    eight pairs (about 75 minutes).
# 2. Faults, without -q so that mpirun names the rank: a rank SIGKILLed
#    while rank 0 runs a stream, a rank whose executable cannot start, a
#    rank whose broadcast fails (simulated: STC_TEST_MPI_FAIL=RANK).
# (1b, 1c and 1d: replicated stages, serial stages owned by other ranks and
#    stages calling read-only threads (the paper's comp_pure and comp_read)
#    really run there, by --stats, with the one-machine output; 1e: the
#    other ranks' per-stage --stats, --profile and --trace; 1f: keyed
#    threads' shard stages owned by other ranks.)
#    Each must end non-zero, with a message naming the rank, within its
#    timeout, and what stdout got must be a prefix of the full output.
# 3. A C host on every rank (examples/embed_mpi.c, libstc_mpi): at -np 1,
#    2 and 3 with 1 and 2 workers it prints what it prints as one process
#    (a C thread, which runs on rank 0 only, and a replicated stage), its
#    batches went to other ranks, and a program error gives the same
#    message and exit code on every rank count; every rank's stc_mpi_run
#    returned rank 0's code.
set -u
STC=${1:?usage: run.sh STC SOURCE_DIR [GEN_LOG [EMBED_MPI]]}
SRC=${2:?usage: run.sh STC SOURCE_DIR [GEN_LOG [EMBED_MPI]]}
GEN_LOG=${3:-}
EMBED=${4:-}
# Absolute: the runs happen in a directory of their own.
STC=$(cd "$(dirname "$STC")" && pwd)/$(basename "$STC")
SRC=$(cd "$SRC" && pwd)
[ -n "$GEN_LOG" ] && GEN_LOG=$(cd "$(dirname "$GEN_LOG")" && pwd)/$(basename "$GEN_LOG")
[ -n "$EMBED" ] && EMBED=$(cd "$(dirname "$EMBED")" && pwd)/$(basename "$EMBED")

if ! command -v mpirun >/dev/null 2>&1; then
    echo "mpi: SKIPPED: mpirun not found (apt-get install openmpi-bin libopenmpi-dev)"
    exit 77
fi
if "$STC" run --mpi /dev/null 2>&1 </dev/null | grep -q "built without MPI"; then
    echo "mpi: SKIPPED: this stc was built without MPI (cmake -DSTC_MPI=ON)"
    exit 77
fi

MPIRUN=(mpirun --oversubscribe)
[ "$(id -u)" -eq 0 ] && MPIRUN+=(--allow-run-as-root)
# Under AddressSanitizer, Open MPI's own allocations left at exit (in libmpi,
# libopen-pal and components it has unloaded, so no suppression can name
# them) would fail every rank: leak checking is off for the ranks (the
# one-machine runs keep it).
MPIRUN+=(-x "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0")
# Under ThreadSanitizer, reports from inside Open MPI are suppressed for the
# ranks (tests/mpi/tsan.supp says which and why).
MPIRUN+=(-x "TSAN_OPTIONS=${TSAN_OPTIONS:+$TSAN_OPTIONS }suppressions=$SRC/tests/mpi/tsan.supp")
# Extra mpirun options, e.g. STC_MPIRUN_ARGS="--mca btl self,vader,tcp".
read -r -a extra <<<"${STC_MPIRUN_ARGS:-}"
MPIRUN+=("${extra[@]}")

exec 3>&2 # the script's own notes, while a run's stderr goes elsewhere
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Open MPI's session directories under $tmp, not the shared /tmp/ompi.HOST.UID:
# there a job ending removes the top directory while another mpirun of the
# same user (a concurrent test) creates its own in it, and that mpirun fails
# ("ORTE_ERROR_LOG: Error in file .../session_dir.c at line 107").
export OMPI_MCA_orte_tmpdir_base="$tmp"
# Open MPI's ob1 messaging layer unless the caller names one: the default
# selection first probes the cm layer (psm, psm2, ofi), ~0.2 s of every
# rank's MPI_Init on a machine without such a fabric, ~40 s of this test's
# wall time (docs/CLUSTER.md, "Start-up").
export OMPI_MCA_pml="${OMPI_MCA_pml:-ob1}"
# A job that ends with a non-zero code (every error case here) made mpirun
# wait 1-2 s before it returned (its SIGTERM-then-SIGKILL timeout, though
# the ranks had exited): none, unless the caller sets one.
export OMPI_MCA_odls_base_sigkill_timeout="${OMPI_MCA_odls_base_sigkill_timeout:-0}"
passed=0 failed=0
bad() { echo "mpi: FAIL: $*"; failed=$((failed + 1)); }

# ---- 1. identical to one machine ---------------------------------------------

# split FILE: one program per `-- test:` section (prelude + section, the
# other lines blank, so locations are the file's) as $tmp/t/NAME.N.stc,
# and its `-- input:` lines as NAME.N.in when it has any.
mkdir -p "$tmp/t"
split() {
    awk -v out="$tmp/t/$(basename "$1" .stc)" '
        { line[NR] = $0 }
        /^-- test:/ { start[++n] = NR }
        END {
            if (n == 0) { start[1] = NR + 1; n = 1; whole = 1 }
            for (t = 1; t <= n; t++) {
                f = out "." t ".stc"; lo = start[t]; hi = (t < n) ? start[t + 1] - 1 : NR
                if (whole) { lo = 1; hi = NR }
                inputs = ""
                for (i = 1; i <= NR; i++) {
                    keep = (i < start[1]) || (i >= lo && i <= hi)
                    print (keep ? line[i] : "") > f
                    if (keep && line[i] ~ /^-- input: /) inputs = inputs substr(line[i], 11) "\n"
                    else if (keep && line[i] == "-- input:") inputs = inputs "\n"
                }
                close(f)
                if (inputs != "") { printf "%s", inputs > (out "." t ".in"); close(out "." t ".in") }
            }
        }' "$1"
}
for f in "$SRC"/tests/lang/*.stc "$SRC"/tests/diff/regress/*.stc "$SRC"/examples/demo.stc; do split "$f"; done

# compare PROG K N [INPUT]: one machine against mpirun -np K.
compare() {
    local prog=$1 k=$2 n=$3 input=${4:-} opts=(--json --workers "$3")
    [ -n "$input" ] && opts+=(--quiet --input "$input")
    local name
    name="$(basename "$prog") -np $k --workers $n"
    (cd "$tmp" && "$STC" run "${opts[@]}" "$prog" >one.out 2>one.err </dev/null)
    local want=$?
    (cd "$tmp" && timeout -k 5 120 "${MPIRUN[@]}" -q -np "$k" "$STC" run --mpi "${opts[@]}" "$prog" \
        >mpi.out 2>mpi.err </dev/null)
    local got=$?
    if [ $got -ne $want ]; then bad "$name: exit $got, one machine $want ($(head -c 300 "$tmp/mpi.err"))"; return; fi
    if ! cmp -s "$tmp/one.out" "$tmp/mpi.out"; then bad "$name: stdout differs: $(diff "$tmp/one.out" "$tmp/mpi.out" | head -5)"; return; fi
    if ! cmp -s "$tmp/one.err" "$tmp/mpi.err"; then bad "$name: stderr differs: $(diff "$tmp/one.err" "$tmp/mpi.err" | head -5)"; return; fi
    passed=$((passed + 1))
}

i=0 j=0
share=${STC_MPI_TEST_SHARE:-7}
for prog in "$tmp"/t/*.stc; do
    input=
    [ -f "${prog%.stc}.in" ] && input=${prog%.stc}.in
    if [ "${STC_MPI_TEST_ALL:-0}" = 1 ]; then
        for k in 1 2 3 4; do for n in 1 2; do compare "$prog" $k $n "$input"; done; done
    elif [ $((i % share)) -eq 0 ]; then
        compare "$prog" $((1 + j % 4)) $((1 + (j / 4) % 2)) "$input"
        j=$((j + 1))
    fi
    i=$((i + 1))
done
echo "mpi: $passed of $i test programs compared (one in $share; STC_MPI_TEST_ALL=1: all, 8 ways each)"

# mpirun_stdin FILE OUT ERR ARGS...: mpirun ARGS with FILE on its standard
# input, its standard output and error into OUT and ERR.
# Open MPI 4.1's mpirun itself sometimes dies of SIGSEGV while forwarding
# a redirected standard input (open-mpi/ompi#7483, in
# orte_iof_hnp_read_local_handler; seen here in 2 of 3 runs of this script,
# never in 20 runs of the same command alone): tried up to three times
# when mpirun dies of SIGSEGV, saying so.
mpirun_stdin() {
    local file=$1 out=$2 err=$3 try code
    shift 3
    for try in 1 2 3; do
        timeout -k 5 120 "${MPIRUN[@]}" "$@" <"$file" >"$out" 2>"$err"
        code=$?
        [ $code -eq 139 ] || return $code
        echo "mpi: note: mpirun died of SIGSEGV forwarding standard input (open-mpi/ompi#7483), try $try" >&3
    done
    return $code
}

# logstats over a generated log (rank 0 reads it), and the same from stdin.
if [ -n "$GEN_LOG" ]; then
    "$GEN_LOG" 3000 7 >"$tmp/access.log"
    compare "$SRC/examples/logstats/logstats.stc" 3 2 "$tmp/access.log"
    compare "$SRC/examples/logstats/logstats.stc" 2 1 "$tmp/access.log"
    "$STC" run --quiet --workers 2 --input - "$SRC/examples/logstats/logstats.stc" <"$tmp/access.log" >"$tmp/one.out" 2>&1
    mpirun_stdin "$tmp/access.log" "$tmp/mpi.out" "$tmp/mpi.err" -q -np 2 "$STC" run --mpi --quiet \
        --workers 2 --input - "$SRC/examples/logstats/logstats.stc"
    cat "$tmp/mpi.err" >>"$tmp/mpi.out"
    if cmp -s "$tmp/one.out" "$tmp/mpi.out"; then passed=$((passed + 1)); else bad "logstats from stdin differs"; fi
fi

# The program itself from standard input: rank 0 reads it, every rank gets it.
printf 'fun f(x, s) = (x * s, s + 1)\nthread t = f init 1\nmain = smap(fn x => t(x), range(0, 100))\n' >"$tmp/p.stc"
"$STC" run --json "$tmp/p.stc" >"$tmp/one.out"
mpirun_stdin "$tmp/p.stc" "$tmp/mpi.out" "$tmp/mpi.err" -q -np 3 "$STC" run --mpi --json -
if [ $? -eq 0 ] && cmp -s "$tmp/one.out" "$tmp/mpi.out"; then passed=$((passed + 1)); else bad "program from stdin"; fi

# A bad command line is reported once, by rank 0, with exit 64.
timeout -k 5 60 "${MPIRUN[@]}" -q -np 3 "$STC" run --mpi --bogus "$tmp/p.stc" >"$tmp/mpi.out" 2>"$tmp/mpi.err"
code=$?
if [ $code -eq 64 ] && [ "$(grep -c "unknown option '--bogus'" "$tmp/mpi.err")" -eq 1 ]; then passed=$((passed + 1))
else bad "bad usage under mpirun: exit $code, $(cat "$tmp/mpi.err")"; fi

# ---- 1b. replicated stages really run on the other ranks ------------------------

# A program with replicated stages around a serial one (captures, a
# closure, floats and strings in the frames), and one whose remote stage
# fails at item 1233: the one-machine output, error and exit code at
# -np 3, and --stats says batches went to rank 1 (counts, not times).
cat >"$tmp/r.stc" <<'EOF'
fun poly(x, k) = x * x + k
fun label(s, x) = concat(s, concat(":", str(x)))
fun acc(x, s) = (x + s, x + s)
thread total = acc init 0
main = let k = 7 in
       let tag = "n" in
       let g = fn y => y + k in
       smap(fn x => let a = poly(x, k) in
                    let b = if a % 3 == 0 then float(a) / 2.0 else 1.5 in
                    let t = total(a) in
                    (label(tag, a), b, t, g), range(0, 5000))
EOF
printf 'fun inv(x) = 1000 / (x - 1234)\nmain = smap(fn x => inv(x) + inv(x + 1), range(0, 3000))\n' >"$tmp/re.stc"
for prog in r re; do
    compare "$tmp/$prog.stc" 3 2
    (cd "$tmp" && timeout -k 5 120 "${MPIRUN[@]}" -q -np 3 "$STC" run --mpi --stats --json --workers 2 "$prog.stc" \
        >mpi.out 2>mpi.err </dev/null)
    total=$(sed -n 's/^stats: remote batches \([0-9]*\),.*/\1/p' "$tmp/mpi.err")
    r1=$(sed -n 's/^stats: rank 1: remote batches \([0-9]*\),.*/\1/p' "$tmp/mpi.err")
    r2=$(sed -n 's/^stats: rank 2: remote batches \([0-9]*\),.*/\1/p' "$tmp/mpi.err")
    if [ "${total:-0}" -gt 0 ] && [ "${r1:-0}" -gt 0 ] && [ $((${r1:-0} + ${r2:-0})) -eq "$total" ]; then
        passed=$((passed + 1))
    else bad "$prog.stc -np 3: no remote batches on rank 1, or counts that do not add up: $(grep stats "$tmp/mpi.err")"; fi
    # per rank: a request and a reply per batch; rank 0 counts the batches it kept
    m1=$(sed -n 's/^stats: rank 1: remote batches [0-9]*, messages \([0-9]*\),.*/\1/p' "$tmp/mpi.err")
    m2=$(sed -n 's/^stats: rank 2: remote batches [0-9]*, messages \([0-9]*\),.*/\1/p' "$tmp/mpi.err")
    if [ "${m1:-x}" = $((2 * ${r1:-0})) ] && [ "${m2:-x}" = $((2 * ${r2:-0})) ] &&
        grep -Eq '^stats: rank 0: batches kept for want of a credit [0-9]+ \(credits [0-9]+ per rank\), time away [0-9.]+ ms$' "$tmp/mpi.err"; then
        passed=$((passed + 1))
    else bad "$prog.stc -np 3: per-rank messages or rank 0's kept batches wrong: $(grep stats "$tmp/mpi.err")"; fi
done
# One worker on rank 0: its batches go away without holding it (stc_remote.start),
# so it runs other batches meanwhile; the output is still the one machine's.
compare "$tmp/r.stc" 2 1
(cd "$tmp" && timeout -k 5 120 "${MPIRUN[@]}" -q -np 2 "$STC" run --mpi --stats --workers 1 r.stc \
    >mpi.out 2>mpi.err </dev/null)
r1=$(sed -n 's/^stats: rank 1: remote batches \([0-9]*\),.*/\1/p' "$tmp/mpi.err")
if [ "${r1:-0}" -gt 0 ] && grep -q "^stats: workers 1," "$tmp/mpi.err"; then passed=$((passed + 1))
else bad "r.stc -np 2 --workers 1: no remote batches: $(grep stats "$tmp/mpi.err")"; fi
# STC_MPI_LOCAL=1 keeps every stage on rank 0.
(cd "$tmp" && timeout -k 5 120 "${MPIRUN[@]}" -q -x STC_MPI_LOCAL=1 -np 2 "$STC" run --mpi --stats --workers 2 r.stc \
    >mpi.out 2>mpi.err </dev/null)
if [ $? -eq 0 ] && grep -q "^stats: workers" "$tmp/mpi.err" && ! grep -q "remote batches" "$tmp/mpi.err"; then
    passed=$((passed + 1))
else bad "STC_MPI_LOCAL=1 still sent batches: $(grep stats "$tmp/mpi.err")"; fi
# A join against a table made in main and captured by the mapped function
# (a context of ~130 KB, remote_wire.h): the one-machine output at -np 2
# and 3, its batches go, and the table goes to a peer a few times, not
# with every batch (bytes sent well under batches x 100 KB).
cat >"$tmp/join.stc" <<'EOF'
main = let table = to_map(smap(fn i => (concat("k", str(i)), i * 7), range(0, 10000))) in
       smap(fn x => get(table, concat("k", str(x * 13 % 12000)), -1) + x, range(0, 20000))
EOF
compare "$tmp/join.stc" 2 1
compare "$tmp/join.stc" 3 2
(cd "$tmp" && timeout -k 5 120 "${MPIRUN[@]}" -q -np 3 "$STC" run --mpi --stats --workers 1 join.stc \
    >mpi.out 2>mpi.err </dev/null)
total=$(sed -n 's/^stats: remote batches \([0-9]*\),.*/\1/p' "$tmp/mpi.err")
sent=$(sed -n 's/^stats: remote batches [0-9]*, bytes sent \([0-9]*\),.*/\1/p' "$tmp/mpi.err")
if [ "${total:-0}" -gt 4 ] && [ "${sent:-0}" -lt $((12 * 130000 + ${total:-0} * 4000)) ]; then passed=$((passed + 1))
else bad "join.stc -np 3: its table went with every batch, or no batch went: $(grep stats "$tmp/mpi.err")"; fi

# ---- 1e. seeing a run across ranks (--stats, --profile, --trace) -----------------
# A run that never starts (its input cannot be read) prints no stats, as on
# one machine, and no trace file: only the error, exit 66.
(cd "$tmp" && timeout -k 5 120 "${MPIRUN[@]}" -q -np 2 "$STC" run --mpi --stats --trace nt.json \
    --input /nonexistent/in.txt "$SRC/examples/logstats/logstats.stc" >mpi.out 2>mpi.err </dev/null)
rc=$?
if [ $rc -eq 66 ] && grep -q "cannot read input '/nonexistent/in.txt'" "$tmp/mpi.err" &&
    ! grep -q "^stats:" "$tmp/mpi.err" && [ ! -e "$tmp/nt.json" ]; then passed=$((passed + 1))
else bad "a run that never started: exit $rc, stats or trace printed: $(head -c 400 "$tmp/mpi.err")"; fi
# --stats: rank 1's per-stage rows add up to its totals (batches, bytes).
(cd "$tmp" && timeout -k 5 120 "${MPIRUN[@]}" -q -np 2 "$STC" run --mpi --stats --workers 1 r.stc \
    >mpi.out 2>mpi.err </dev/null)
read -r tb ts tr <<<"$(sed -n 's/^stats: rank 1: remote batches \([0-9]*\), messages [0-9]*, bytes sent \([0-9]*\), received \([0-9]*\),.*/\1 \2 \3/p' "$tmp/mpi.err")"
read -r sb ss sr n <<<"$(sed -n 's/^stats: rank 1: stage .*: batches \([0-9]*\), items [0-9]*, bytes sent \([0-9]*\), received \([0-9]*\), busy [0-9.]* ms$/\1 \2 \3/p' "$tmp/mpi.err" |
    awk '{b += $1; s += $2; r += $3; n++} END {print b + 0, s + 0, r + 0, n + 0}')"
if [ "${tb:-0}" -gt 0 ] && [ "$n" -gt 0 ] && [ "$sb" = "$tb" ] && [ "$ss" = "$ts" ] && [ "$sr" = "$tr" ] &&
    grep -q '^stats: rank 1: stage pure (line 11) at r.stc:8:8: batches [1-9]' "$tmp/mpi.err"; then
    passed=$((passed + 1))
else bad "--stats per stage on rank 1 do not add up to its totals ($tb $ts $tr vs $sb $ss $sr over $n rows): $(grep stats "$tmp/mpi.err")"; fi
# --profile: rank 1's table names the stage it ran and its busy time; the
# output is still the one machine's.
(cd "$tmp" && "$STC" run --json --workers 1 r.stc >one.out 2>/dev/null </dev/null)
(cd "$tmp" && timeout -k 5 120 "${MPIRUN[@]}" -q -np 2 "$STC" run --mpi --profile --json --workers 1 r.stc \
    >mpi.out 2>mpi.err </dev/null)
if cmp -s "$tmp/one.out" "$tmp/mpi.out" && grep -Eq '^rank 1: answered [1-9][0-9]* batches of rank 0.s, busy [0-9.]+ ms' "$tmp/mpi.err" &&
    sed -n '/^rank 1: answered/,$p' "$tmp/mpi.err" | awk '$1 == "pure" && $2 == "(line" && $4 == "replicated" && $5 > 0 && $6 > 0 {ok = 1} END {exit !ok}'; then
    passed=$((passed + 1))
else bad "--profile at -np 2 does not show rank 1's stage time: $(tail -8 "$tmp/mpi.err")"; fi
# --trace: valid JSON, rank 0's workers (pid 1) and rank 1's batches (pid 2):
# the replicated stages', and the serial stage total's first batches (its
# turn is rank 1: it goes, is measured there and comes back, "states back").
rm -f "$tmp/t.json"
(cd "$tmp" && timeout -k 5 120 "${MPIRUN[@]}" -q -np 2 "$STC" run --mpi --trace t.json --json --workers 1 r.stc \
    >mpi.out 2>mpi.err </dev/null)
if cmp -s "$tmp/one.out" "$tmp/mpi.out" && python3 -m json.tool "$tmp/t.json" >/dev/null &&
    python3 - "$tmp/t.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
spans = {p: [e for e in ev if e["pid"] == p and e["ph"] == "X"] for p in (1, 2)}
names = {e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name" and e["pid"] == 2}
ok = spans[1] and spans[2] and names == {"rank 1"} and {e["pid"] for e in ev} == {1, 2}
ok = ok and all((e["name"] in ("poly (line 8)", "pure (line 11)", "total (line 10)") and e["args"]["items"] > 0) or
                (e["name"] == "states back" and e["args"]["items"] == 0) for e in spans[2])
sys.exit(0 if ok else 1)
PY
then passed=$((passed + 1))
else bad "--trace at -np 2: not valid JSON with the tracks of two ranks: $(head -c 300 "$tmp/mpi.err")"; fi
# A rank keeps a bounded number of spans (here 3: STC_TEST_MPI_SPANS) and says so.
rm -f "$tmp/t.json"
(cd "$tmp" && timeout -k 5 120 "${MPIRUN[@]}" -q -x STC_TEST_MPI_SPANS=3 -np 2 "$STC" run --mpi --trace t.json --workers 1 r.stc \
    >mpi.out 2>mpi.err </dev/null)
if grep -Eq "^stc: --trace: rank 1's track has its first 3 batches, not the [1-9][0-9]* after \(memory bound\)$" "$tmp/mpi.err" &&
    python3 - "$tmp/t.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
names = [e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name" and e["pid"] == 2]
ok = len([e for e in ev if e["pid"] == 2 and e["ph"] == "X"]) == 3
sys.exit(0 if ok and len(names) == 1 and "3 batches;" in names[0] and "more not recorded" in names[0] else 1)
PY
then passed=$((passed + 1))
else bad "--trace with a rank's spans capped at 3: $(head -c 300 "$tmp/mpi.err")"; fi

# ---- 1c. serial stages owned by another rank ------------------------------------
# serial_on PROG K N ENV DESC [INPUT]: `mpirun -np K --workers N` with
# environment ENV (e.g. STC_MPI_SERIAL_NS=-1) prints what `stc run` prints,
# and --stats says rank 1 ran batches of a serial stage.
serial_on() {
    local prog=$1 k=$2 n=$3 env=$4 desc=$5 input=${6:-} opts=(--workers "$3")
    [ -n "$input" ] && opts+=(--input "$input")
    (cd "$tmp" && "$STC" run "${opts[@]}" "$prog" >one.out 2>one.err </dev/null)
    (cd "$tmp" && timeout -k 5 120 "${MPIRUN[@]}" -q -x "$env" -np "$k" "$STC" run --mpi --stats "${opts[@]}" "$prog" \
        >mpi.out 2>mpi.err </dev/null)
    local code=$? s1
    s1=$(sed -n 's/^stats: rank 1: remote batches [0-9]*, .*, serial-stage batches \([0-9]*\)$/\1/p' "$tmp/mpi.err")
    if [ $code -eq 0 ] && cmp -s "$tmp/one.out" "$tmp/mpi.out" && [ "${s1:-0}" -gt 0 ] &&
        grep -Eq '^stats: remote batches [0-9]+, .*, serial stages placed [1-9][0-9]* \(their batches and states [1-9][0-9]*\), of them keyed shards [0-9]+ \([0-9]+\)$' "$tmp/mpi.err"; then
        passed=$((passed + 1))
    else bad "$desc: exit $code, output $(cmp -s "$tmp/one.out" "$tmp/mpi.out" && echo same || echo differs), stats: $(grep stats "$tmp/mpi.err")"; fi
}
# A paper benchmark under the cost model: f and h take ~4 ms an item, so
# one goes to rank 1 and one stays on rank 0 (round robin over the ranks).
serial_on "$SRC/bench/paper/comp_write.stc" 2 1 STC_MPI_SERIAL_NS=0 "comp_write -np 2 --workers 1 (cost model)"
# conditional: f goes to rank 1, h stays; the cheap replicated `if` stage
# must not queue behind f's batches there (each waited for up to 4 of f's
# milliseconds-long items while h on rank 0 waited for it; 33-37 of them
# went to rank 1 before src/mpi/transport.c kept them while f's batches
# were away, 6-8 since), nor go at all: it calls only `round`, a builtin of
# constant time, so it stays on rank 0 (src/flow/remote.c, cheap_builtin).
(cd "$tmp" && timeout -k 5 120 "${MPIRUN[@]}" -q -np 2 "$STC" run --mpi --stats --workers 1 \
    "$SRC/bench/paper/conditional.stc" >mpi.out 2>mpi.err </dev/null)
code=$?
(cd "$tmp" && "$STC" run --workers 1 "$SRC/bench/paper/conditional.stc" >one.out 2>/dev/null </dev/null)
ifb=$(sed -n 's/^stats: rank 1: stage if (line 14) .*: batches \([0-9]*\), items.*/\1/p' "$tmp/mpi.err")
fb=$(sed -n 's/^stats: rank 1: stage f (line 14) .*: batches \([0-9]*\), items.*/\1/p' "$tmp/mpi.err")
if [ $code -eq 0 ] && cmp -s "$tmp/one.out" "$tmp/mpi.out" && [ "${fb:-0}" -gt 0 ] && [ -z "$ifb" ]; then
    passed=$((passed + 1))
else bad "conditional -np 2 --workers 1: exit $code, f's batches on rank 1 ${fb:-none}, the if stage's ${ifb:-none} (want none)"; fi
# logstats' serial stages cost ~1 us a line (the model keeps them on rank 0):
# placed anyway (-1), they run on rank 1 and the output is the same.
if [ -n "$GEN_LOG" ]; then
    serial_on "$SRC/examples/logstats/logstats.stc" 2 1 STC_MPI_SERIAL_NS=-1 "logstats -np 2 --workers 1 (serial stages forced onto rank 1)" "$tmp/access.log"
    serial_on "$SRC/examples/logstats/logstats.stc" 3 2 STC_MPI_SERIAL_NS=-1 "logstats -np 3 --workers 2 (serial stages forced onto ranks 1-2)" "$tmp/access.log"
fi
# Errors in an owned stage: the one-machine message, item and exit code.
printf 'fun acc(x, s) = (1000 / (x - 777) + s, s + 1)\nthread t = acc init 0\nmain = smap(fn x => let a = t(x) in str(a), range(0, 3000))\n' >"$tmp/se.stc"
(cd "$tmp" && "$STC" run --json --workers 1 se.stc >one.out 2>one.err </dev/null)
want=$?
(cd "$tmp" && timeout -k 5 120 "${MPIRUN[@]}" -q -x STC_MPI_SERIAL_NS=-1 -np 2 "$STC" run --mpi --json --workers 1 se.stc \
    >mpi.out 2>mpi.err </dev/null)
got=$?
if [ $got -eq $want ] && [ $want -ne 0 ] && cmp -s "$tmp/one.out" "$tmp/mpi.out" && cmp -s "$tmp/one.err" "$tmp/mpi.err"; then
    passed=$((passed + 1))
else bad "an owned stage's error: exit $got (one machine $want): $(head -c 300 "$tmp/mpi.err")"; fi

# ---- 1d. stages that call read-only threads -------------------------------------
# comp_pure and comp_read: every item's f and h are read-only threads (their
# states travel with each batch).  At -np 2 and -np 3 with one worker the
# output is the one machine's (compare), and --stats says the serving ranks
# ran more batches than the inputs' smap alone could make (at most 6 of its
# 50 cheap items at one worker: batches of 1, then 50 / 4; those were all
# that went before read-only stages could), every serving rank some.
for prog in comp_pure comp_read; do
    for k in 2 3; do
        compare "$SRC/bench/paper/$prog.stc" $k 1
        (cd "$tmp" && timeout -k 5 120 "${MPIRUN[@]}" -q -np $k "$STC" run --mpi --stats --workers 1 \
            "$SRC/bench/paper/$prog.stc" >mpi.out 2>mpi.err </dev/null)
        code=$?
        total=$(sed -n 's/^stats: remote batches \([0-9]*\),.*/\1/p' "$tmp/mpi.err")
        r1=$(sed -n 's/^stats: rank 1: remote batches \([0-9]*\),.*/\1/p' "$tmp/mpi.err")
        r2=$(sed -n 's/^stats: rank 2: remote batches \([0-9]*\),.*/\1/p' "$tmp/mpi.err")
        if [ $code -eq 0 ] && [ "${total:-0}" -ge 11 ] && [ "${r1:-0}" -gt 0 ] && { [ $k -eq 2 ] || [ "${r2:-0}" -gt 0 ]; }; then
            passed=$((passed + 1))
        else bad "$prog -np $k --workers 1: read-only stages did not run on the other ranks: exit $code, $(grep stats "$tmp/mpi.err")"; fi
    done
done

# ---- 1f. keyed threads' shards owned by other ranks ------------------------------
# With STC_MPI_SERIAL_NS=-1 every shard stage of a keyed thread goes to a
# peer from its first batch (round robin: the shards of one thread spread
# over the ranks), its shard map with it, and comes back before the job
# merges the shards.  Every test of tests/lang/keyed.stc and the keyed
# stream of tests/lang/stream_finish.stc, each at the next of the pairs
# -np 1-3 x --workers 1-2 in turn (errors included: stdout, stderr and the
# exit code are one machine's), and the word count (examples/wordfreq)
# over 3,000 generated lines at every pair; at -np 2-3, --stats must say
# all its shard stages went (one per worker and per peer: N + K - 1) and
# their batches ran on rank 1.
keyed_on() { # PROG K N [INPUT]: as compare, with every stage that may go going
    local prog=$1 k=$2 n=$3 input=${4:-} opts=(--json --workers "$3")
    [ -n "$input" ] && opts+=(--quiet --input "$input")
    (cd "$tmp" && "$STC" run "${opts[@]}" "$prog" >one.out 2>one.err </dev/null)
    local want=$?
    (cd "$tmp" && timeout -k 5 120 "${MPIRUN[@]}" -q -x STC_MPI_SERIAL_NS=-1 -np "$k" "$STC" run --mpi "${opts[@]}" "$prog" \
        >mpi.out 2>mpi.err </dev/null)
    local got=$?
    if [ $got -eq $want ] && cmp -s "$tmp/one.out" "$tmp/mpi.out" && cmp -s "$tmp/one.err" "$tmp/mpi.err"; then
        passed=$((passed + 1))
    else bad "$(basename "$prog") -np $k --workers $n, shards owned: exit $got (one machine $want): $(diff "$tmp/one.out" "$tmp/mpi.out" | head -3) $(head -c 300 "$tmp/mpi.err")"; fi
}
j=0
for prog in "$tmp"/t/keyed.*.stc "$tmp"/t/stream_finish.*.stc; do
    case $prog in *stream_finish*) grep -q '^keyed thread' "$prog" || continue ;; esac
    input=
    [ -f "${prog%.stc}.in" ] && input=${prog%.stc}.in
    keyed_on "$prog" $((1 + j % 3)) $((1 + (j / 3) % 2)) "$input"
    j=$((j + 1))
done
awk 'BEGIN { x = 7; for (i = 0; i < 3000; i++) { l = ""; for (w = 0; w < 8; w++) { x = (x * 1103515245 + 12345) % 2147483648; l = l (w ? " " : "") "w" int(x / 65536) % 700 } print l } }' >"$tmp/words.txt"
for k in 1 2 3; do
    for n in 1 2; do
        keyed_on "$SRC/examples/wordfreq/wordfreq.stc" $k $n "$tmp/words.txt"
        [ $k -gt 1 ] || continue
        (cd "$tmp" && timeout -k 5 120 "${MPIRUN[@]}" -q -x STC_MPI_SERIAL_NS=-1 -np $k "$STC" run --mpi --stats --quiet \
            --workers $n --input words.txt "$SRC/examples/wordfreq/wordfreq.stc" >mpi.out 2>mpi.err </dev/null)
        code=$?
        moved=$(sed -n 's/^stats: remote batches .*, of them keyed shards \([0-9]*\) (\([0-9]*\))$/\1 \2/p' "$tmp/mpi.err")
        sb=$(sed -n 's/^stats: rank 1: stage counts \[shard [0-9]*\/[0-9]*\] (line [0-9]*) .*: batches \([0-9]*\), items.*/\1/p' "$tmp/mpi.err" | head -1)
        if [ $code -eq 0 ] && [ "${moved%% *}" = $((n + k - 1)) ] && [ "${moved##* }" -gt $((n + k - 1)) ] && [ "${sb:-0}" -gt 0 ]; then
            passed=$((passed + 1))
        else bad "wordfreq -np $k --workers $n: shard stages did not go: exit $code, $(grep stats "$tmp/mpi.err" | head -5)"; fi
    done
done
echo "mpi: keyed threads' shards owned by other ranks: $j keyed test programs and the word count compared"

# ---- 2. faults -------------------------------------------------------------------

# A stream whose input arrives slowly, so rank 0 is mid-run when a rank dies.
printf 'fun main(lines) = smap(fn l => concat(l, "!"), lines)\n' >"$tmp/s.stc"
slow() { for j in 1 2 3 4 5 6 7 8; do echo "line$j"; sleep 0.3; done; }
full=$(for j in 1 2 3 4 5 6 7 8; do echo "line$j!"; done)
# (the program does what the faults below cut short)
[ "$(for j in 1 2 3 4 5 6 7 8; do echo "line$j"; done | "$STC" run --input - "$tmp/s.stc")" = "$full" ] ||
    bad "the fault tests' program does not give the full output on one machine"

# fault NAME TIMEOUT RANK_PATTERN COMMAND...: non-zero, the message names the
# rank, in time, stdout a prefix of $full.  The input comes slowly through
# a FIFO ($tmp/fifo, read by rank 0 as --input), not through mpirun's
# standard input (see mpirun_stdin).
fault() {
    local name=$1 limit=$2 pattern=$3
    shift 3
    rm -f "$tmp/fifo"
    mkfifo "$tmp/fifo"
    slow >"$tmp/fifo" 2>/dev/null &
    local writer=$! t0=$SECONDS
    timeout -k 5 "$limit" "$@" >"$tmp/f.out" 2>"$tmp/f.err" </dev/null
    local code=$? took=$((SECONDS - t0))
    kill $writer 2>/dev/null
    exec 4<>"$tmp/fifo" # a writer still waiting to open the FIFO gets a reader and ends
    wait $writer 2>/dev/null
    exec 4<&-
    if [ $code -eq 0 ]; then bad "$name: exit 0"; return; fi
    if [ $code -eq 124 ] || [ $took -ge "$limit" ]; then bad "$name: hung (timeout)"; return; fi
    if ! grep -Eq "$pattern" "$tmp/f.err"; then bad "$name: no message naming the rank: $(head -c 400 "$tmp/f.err")"; return; fi
    case "$full" in "$(cat "$tmp/f.out")"*) ;; *) bad "$name: stdout is not a prefix: $(head -3 "$tmp/f.out")"; return ;; esac
    passed=$((passed + 1))
}

fault "rank 1 killed mid-run" 60 "rank 1 .*(signal 9|Killed)" \
    "${MPIRUN[@]}" -np 2 bash -c 'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then sleep 1; kill -KILL $$; fi; exec "$0" "$@"' \
    "$STC" run --mpi --input "$tmp/fifo" "$tmp/s.stc"
fault "rank 1 cannot start" 60 "rank 1" \
    "${MPIRUN[@]}" -np 1 "$STC" run --mpi --input "$tmp/fifo" "$tmp/s.stc" : -np 1 "$tmp/no-such-stc"
fault "rank 2 fails to receive the program" 60 "stc: rank 2: .*failed" \
    env STC_TEST_MPI_FAIL=2 "${MPIRUN[@]}" -np 3 "$STC" run --mpi --input "$tmp/fifo" "$tmp/s.stc"

# ---- 3. a C host on every rank (stc_mpi_run) ------------------------------------

if [ -n "$EMBED" ]; then
    # One process, no mpirun (MPI's singleton): what every rank count must
    # print (leak checking off, as for the ranks: Open MPI's own leaks).
    one=(env "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" timeout -k 5 120 "$EMBED")
    (cd "$tmp" && "${one[@]}" --workers 2 >one.out 2>one.err </dev/null)
    code=$?
    grep -q '^result: (20000, ' "$tmp/one.out" && [ $code -eq 0 ] || bad "embed_mpi as one process: exit $code: $(cat "$tmp/one.out" "$tmp/one.err")"
    (cd "$tmp" && "${one[@]}" --fail --stats >onefail.out 2>onefail.all </dev/null)
    want=$?
    grep -v ' returned ' "$tmp/onefail.all" >"$tmp/onefail.err"
    fail_rc=$(sed -n 's/^embed_mpi: rank 0: stc_mpi_run returned \(-[0-9]*\)$/\1/p' "$tmp/onefail.all")
    [ $want -ne 0 ] && [ -n "$fail_rc" ] && grep -q 'division by zero (smap item 12345)' "$tmp/onefail.err" ||
        bad "embed_mpi --fail as one process: exit $want: $(cat "$tmp/onefail.all")"
    # every_rank K RC: each of the K ranks said its stc_mpi_run returned RC
    every_rank() { [ "$(grep -c "^embed_mpi: rank [0-9]*: stc_mpi_run returned $2\$" "$tmp/mpi.err")" -eq "$1" ]; }
    for k in 1 2 3; do
        for n in 1 2; do
            (cd "$tmp" && timeout -k 5 120 "${MPIRUN[@]}" -q -np $k "$EMBED" --workers $n --stats >mpi.out 2>mpi.err </dev/null)
            code=$?
            batches=$(sed -n 's/^embed_mpi: remote batches \([0-9]*\)$/\1/p' "$tmp/mpi.err")
            # at one rank nothing can go; at 2 and 3, the replicated stage's batches do
            if [ $code -eq 0 ] && cmp -s "$tmp/one.out" "$tmp/mpi.out" && every_rank $k 0 &&
                { { [ $k -eq 1 ] && [ "${batches:-x}" = 0 ]; } || { [ $k -gt 1 ] && [ "${batches:-0}" -gt 0 ]; }; }; then
                passed=$((passed + 1))
            else bad "embed_mpi -np $k --workers $n: exit $code, output $(cmp -s "$tmp/one.out" "$tmp/mpi.out" && echo same || echo differs), $(head -c 300 "$tmp/mpi.err")"; fi
        done
        (cd "$tmp" && timeout -k 5 120 "${MPIRUN[@]}" -q -np $k "$EMBED" --fail --stats --workers 2 >mpi.out 2>mpi.err </dev/null)
        code=$?
        if [ $code -eq $want ] && cmp -s "$tmp/onefail.out" "$tmp/mpi.out" && every_rank $k "$fail_rc" &&
            grep -v ' returned ' "$tmp/mpi.err" | cmp -s "$tmp/onefail.err" -; then
            passed=$((passed + 1))
        else bad "embed_mpi --fail -np $k: exit $code (one process $want): $(head -c 300 "$tmp/mpi.err")"; fi
    done
else
    echo "mpi: part 3 (embed_mpi) not run: no EMBED_MPI given" >&3
fi

echo "mpi: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
