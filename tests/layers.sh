#!/bin/bash
# layers.sh - the source folders depend on each other in one direction only.
#
#   bash tests/layers.sh SOURCE_DIR
#
# Each folder of src/ has a place in LAYERS below, lowest first; a file
# may include headers of its own folder and of folders below it, never of
# one above (docs/DESIGN.md section 1 says what each layer holds and why
# the order is this one).  cli/ is the top and sees the library only
# through the public header: its quoted includes are stc.h and cli/'s own
# files.  Fails, naming every offending line, on an include pointing up,
# on a folder of src/ missing from LAYERS, on an include that climbs out
# with "../", and when docs/DESIGN.md no longer states this order.
set -u
ROOT=${1:?usage: layers.sh SOURCE_DIR}

LAYERS=(util sched trace value ir lang eval flow api mpi cli)

declare -A RANK
for i in "${!LAYERS[@]}"; do RANK[${LAYERS[$i]}]=$i; done
bad=0
fail() { echo "layers: $*" >&2; bad=1; }

for dir in "$ROOT"/src/*/; do
    d=$(basename "$dir")
    [ -n "${RANK[$d]:-}" ] || fail "src/$d is not in the layer order (tests/layers.sh LAYERS, docs/DESIGN.md section 1)"
done

# Every #include line of src/ and cli/, as FILE:LINE:TEXT.
while IFS= read -r hit; do
    f=${hit%%:*}
    rest=${hit#*:}
    n=${rest%%:*}
    line=${rest#*:}
    rel=${f#"$ROOT"/}
    from=${rel%/*}
    from=${from##*/}
    [[ $line =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*[\"\<]([^\"\>]*)[\"\>] ]] || continue
    inc=${BASH_REMATCH[1]}
    case $inc in
    *../*) fail "$rel:$n: includes \"$inc\": no climbing out of a folder"; continue ;;
    esac
    to=${inc%%/*}
    if [ "$from" = cli ]; then
        if [[ $line == *\"* ]]; then
            [ "$inc" = stc.h ] || [ "$inc" = stc_mpi.h ] || [ -f "$ROOT/cli/$inc" ] ||
                fail "$rel:$n: cli/ includes \"$inc\"; it may use only stc.h (and cli/'s own headers)"
        elif [ "$to" != "$inc" ] && [ -n "${RANK[$to]:-}" ]; then
            fail "$rel:$n: cli/ includes <$inc>; it may use only stc.h"
        fi
        continue
    fi
    [ "$to" != "$inc" ] && [ -n "${RANK[$to]:-}" ] || continue # stc.h, <stdio.h>, a sibling
    if [ "${RANK[$to]}" -gt "${RANK[$from]}" ]; then
        fail "$rel:$n: $from includes \"$inc\", a layer above it (order: ${LAYERS[*]})"
    fi
done < <(grep -nE '^[[:space:]]*#[[:space:]]*include' "$ROOT"/src/*/*.[ch] "$ROOT"/cli/*.[ch])

order="${LAYERS[*]}"
grep -qF "Layer order, lowest first: ${order// / < }" "$ROOT/docs/DESIGN.md" ||
    fail "docs/DESIGN.md section 1 does not state the order \"${order// / < }\""

[ $bad -eq 0 ] && echo "layers: every include points down (${LAYERS[*]})"
exit $bad
