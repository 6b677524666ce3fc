#!/usr/bin/env bash
# examples/stcgz/test.sh - checks stcgz: for several inputs (empty, 1 byte,
# one block, one block + 1, two blocks, ~3 MB of mixed text and random
# bytes) and levels, the output is the same at 1, 2 and 4 workers, passes
# `gzip -t` and `gunzip -c` restores the input; and the error cases exit
# non-zero with a message.
#
#   bash examples/stcgz/test.sh PATH/TO/stcgz
#
# Exits 0 when every check passes, 1 otherwise.
set -u
stcgz=${1:?usage: test.sh PATH/TO/stcgz}
[ -x "$stcgz" ] || { echo "test.sh: $stcgz is not an executable" >&2; exit 1; }
for t in gzip cmp awk; do
    command -v "$t" >/dev/null || { echo "test.sh: needs $t" >&2; exit 1; }
done

dir=$(mktemp -d "${TMPDIR:-/tmp}/stcgz-test.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
failures=0 checks=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
ok() { checks=$((checks + 1)); }
# expect MESSAGE CMD...: CMD must succeed, else MESSAGE is a failure.
expect() {
    local msg=$1
    shift
    if "$@"; then ok; else fail "$msg"; fi
}

# ---- Inputs -------------------------------------------------------------------

# Deterministic bytes: an LCG (exact in awk's doubles: 69069 * 2^32 < 2^53).
# mixed: ~3 MB of 64 KiB segments, alternately log-like text (compresses)
# and random bytes (does not), so blocks and dictionaries see both.
gen() { # gen MODE BYTES SEED
    LC_ALL=C awk -v mode="$1" -v n="$2" -v s="$3" '
    function rnd() { s = (s * 69069 + 1) % 4294967296; return int(s / 65536) }
    function text(k,   line) {
        while (k > 0) {
            line = sprintf("2024-05-%02d %02d:%02d:%02d host%d GET /api/v1/item/%d status=%d bytes=%d\n",
                           1 + rnd() % 28, rnd() % 24, rnd() % 60, rnd() % 60, rnd() % 8,
                           rnd() % 5000, (rnd() % 10 < 8) ? 200 : 404, rnd() % 100000)
            if (length(line) > k) line = substr(line, 1, k)
            printf "%s", line
            k -= length(line)
        }
    }
    function bytes(k) { while (k-- > 0) printf "%c", rnd() % 256 }
    BEGIN {
        if (mode == "text") text(n)
        else if (mode == "random") bytes(n)
        else for (i = 0; n > 0; i++) {
            k = n < 65536 ? n : 65536
            if (i % 3 == 2) bytes(k); else text(k)
            n -= k
        }
    }'
}

: >"$dir/empty"
printf 'x' >"$dir/one"
gen text 131072 1 >"$dir/block"        # exactly one block
gen text 131073 2 >"$dir/block1"       # one block and one byte
gen random 262144 3 >"$dir/two"        # two full blocks of random bytes
gen mixed 3000000 4 >"$dir/mixed"
for f in block:131072 block1:131073 two:262144 mixed:3000000; do
    size=$(wc -c <"$dir/${f%%:*}")
    [ "$size" -eq "${f#*:}" ] || { echo "test.sh: generated ${f%%:*} has $size bytes" >&2; exit 1; }
done

# ---- Round trips --------------------------------------------------------------

# check NAME LEVEL: compress at 1, 2 and 4 workers; same bytes, valid gzip,
# restores the input.
check() {
    local in=$dir/$1 level=$2 w out st ref=
    for w in 1 2 4; do
        out=$dir/$1.$level.w$w.gz
        "$stcgz" -q -w "$w" "-$level" "$in" "$out" 2>"$dir/err"
        st=$?
        if [ "$st" -ne 0 ]; then
            fail "$1 -$level -w $w: exit $st ($(cat "$dir/err"))"
            continue
        fi
        if [ -s "$dir/err" ]; then fail "$1 -$level -w $w: wrote to stderr: $(cat "$dir/err")"; fi
        if [ -z "$ref" ]; then
            ref=$out
            if gzip -t "$out" 2>"$dir/err"; then ok; else fail "$1 -$level: gzip -t: $(cat "$dir/err")"; fi
            if gzip -dc "$out" | cmp -s - "$in"; then ok
            else fail "$1 -$level: gunzip does not restore the input"; fi
        else
            expect "$1 -$level: -w $w output differs from -w 1" cmp -s "$ref" "$out"
        fi
    done
}

for f in empty one block block1 two; do check "$f" 6; done
for level in 1 6 9; do check mixed "$level"; done
check block1 1
check two 9

# The gzip header: deflate, no flags, mtime 0, OS Unix; nothing varies.
hdr=$(head -c 10 "$dir/mixed.6.w1.gz" | od -An -tx1 | tr -d ' \n')
expect "header is $hdr" [ "$hdr" = 1f8b0800000000000003 ]

# The level is passed on: on mostly-text input -9 is smaller than -1.
s1=$(wc -c <"$dir/mixed.1.w1.gz") s9=$(wc -c <"$dir/mixed.9.w1.gz")
expect "-9 output ($s9 bytes) not smaller than -1 ($s1)" [ "$s9" -lt "$s1" ]

# stdin and stdout (by default and as '-') give the same bytes as files.
"$stcgz" -q -w 2 <"$dir/mixed" >"$dir/pipe.gz"
expect "stdin to stdout differs" cmp -s "$dir/pipe.gz" "$dir/mixed.6.w1.gz"
# shellcheck disable=SC2002 # a pipe, not a file, is the point
cat "$dir/mixed" | "$stcgz" -q -w 2 - - >"$dir/pipe2.gz"
expect "'-' '-' from a pipe differs" cmp -s "$dir/pipe2.gz" "$dir/mixed.6.w1.gz"
"$stcgz" -w 0 "$dir/mixed" >"$dir/w0.gz" 2>"$dir/err"
expect "-w 0 (all CPUs) differs: $(cat "$dir/err")" cmp -s "$dir/w0.gz" "$dir/mixed.6.w1.gz"

# ---- Errors -------------------------------------------------------------------

# expect_fail WANT_STATUS PATTERN CMD...: exits WANT_STATUS (any non-zero
# for "nz") and prints PATTERN on stderr.
expect_fail() {
    local want=$1 pat=$2 st
    shift 2
    "$@" >"$dir/out" 2>"$dir/err" </dev/null
    st=$?
    if [ "$st" -eq 0 ] || { [ "$want" != nz ] && [ "$st" -ne "$want" ]; }; then
        fail "$* exited $st, want $want"
    elif ! grep -q -- "$pat" "$dir/err"; then
        fail "$*: stderr lacks '$pat': $(cat "$dir/err")"
    else
        ok
    fi
}
expect_fail nz "$dir/nosuch: No such file or directory" "$stcgz" "$dir/nosuch" "$dir/x.gz"
expect_fail nz "$dir/nodir/x.gz: No such file or directory" "$stcgz" "$dir/one" "$dir/nodir/x.gz"
if [ -w /dev/full ]; then
    expect_fail nz "/dev/full: write error: No space left on device" "$stcgz" "$dir/mixed" /dev/full
    expect_fail nz "/dev/full: write error: No space left on device" "$stcgz" "$dir/one" /dev/full
    expect_fail nz "stdout: write error: No space left on device" sh -c "'$stcgz' -w 2 '$dir/mixed' >/dev/full"
fi
# A write that fails mid-stream (a file size limit: EFBIG once the output
# passes 100 KiB) fails the run at a later block.
expect_fail nz "fsz.gz: write error: File too large (in thread 'out', smap item" \
    bash -c "trap '' XFSZ; ulimit -f 200; exec '$stcgz' -w 2 '$dir/mixed' '$dir/fsz.gz'"
if [ "$(uname -s)" = Linux ]; then
    # A directory opens but cannot be read: a read error from the source.
    expect_fail nz "read error" "$stcgz" "$dir" "$dir/x.gz"
fi
expect_fail 64 "unknown option '-x'" "$stcgz" -x
expect_fail 64 "usage: stcgz" "$stcgz" -x
expect_fail 64 "-w: 'two' is not a worker count" "$stcgz" -w two
expect_fail 64 "-w needs an argument" "$stcgz" -w
expect_fail 64 "too many arguments" "$stcgz" a b c
"$stcgz" -h >"$dir/out"
expect "-h prints no usage" grep -q "usage: stcgz" "$dir/out"

if [ "$failures" -gt 0 ]; then
    echo "test.sh: $failures of $((checks + failures)) checks failed" >&2
    exit 1
fi
echo "test.sh: all $checks checks passed"
