#!/bin/sh
# make-trace-shot.sh - screenshot of a `stc run --trace` file in speedscope,
# taken offline with headless Chromium. Makes docs/img/trace-speedscope.png.
#
# Needs (none of it is installed by the project):
#   apt-get install -y chromium imagemagick
#   npm install -g speedscope@1.25.0
# and a built stc (cmake -S . -B build && cmake --build build).
#
# Usage, from the repository root:
#   sh docs/img/make-trace-shot.sh [STC] [OUT.png]
# STC defaults to build/stc, OUT.png to docs/img/trace-speedscope.png.
#
# speedscope shows one thread at a time, so this takes one picture per
# worker ("Time Order" view), keeps the top strip of each (title bar, overview
# and the row of stage slices) and stacks them. The trace and the profile of
# the same run are left in the temporary directory it prints.
set -eu

STC=${1:-build/stc}
OUT=${2:-docs/img/trace-speedscope.png}
PROGRAM=bench/paper/conditional.stc
WORKERS=2

SS=$(npm root -g)/speedscope/dist/release/index.html
[ -f "$SS" ] || { echo "speedscope not found at $SS: npm install -g speedscope@1.25.0" >&2; exit 69; }
command -v chromium >/dev/null || { echo "chromium not found: apt-get install -y chromium" >&2; exit 69; }
[ -x /usr/bin/convert ] || { echo "ImageMagick not found: apt-get install -y imagemagick" >&2; exit 69; }

TMP=$(mktemp -d)
echo "work files in $TMP"

# One run, traced and profiled; the profile goes to stderr.
"$STC" run --workers "$WORKERS" --trace "$TMP/trace.json" --profile "$PROGRAM" \
    >/dev/null 2>"$TMP/profile.txt"
cat "$TMP/profile.txt"

# What `speedscope FILE` does, without opening a browser: a script that hands
# the file, base64-encoded, to speedscope, named by #localProfilePath=.
# For worker N it then presses "n" (next thread) N times.
B64=$(base64 -w0 "$TMP/trace.json")
w=0
while [ "$w" -lt "$WORKERS" ]; do
    js="$TMP/worker$w.js"
    printf 'speedscope.loadFileFromBase64("trace.json", "%s");\n' "$B64" >"$js"
    i=0
    while [ "$i" -lt "$w" ]; do
        printf 'setTimeout(function () { window.dispatchEvent(new KeyboardEvent("keypress", {key: "n"})); }, %d);\n' \
            $((1000 + 500 * i)) >>"$js"
        i=$((i + 1))
    done
    chromium --headless --no-sandbox --disable-gpu --enable-unsafe-swiftshader \
        --hide-scrollbars --window-size=1600,900 --virtual-time-budget=10000 \
        --screenshot="$TMP/worker$w.png" "file://$SS#localProfilePath=$js" 2>/dev/null
    # Title bar, overview and the slice row: the top 172 pixels.
    /usr/bin/convert "$TMP/worker$w.png" -crop 1600x172+0+0 +repage "$TMP/strip$w.png"
    w=$((w + 1))
done

/usr/bin/convert "$TMP"/strip*.png -background '#555555' -splice 0x6 -append -chop 0x6 \
    -strip "$OUT"
ls -l "$OUT"
