#!/bin/bash
# symbols.sh - the library defines no global name a host could clash with.
#
#   bash tests/symbols.sh LIBSTC_A [LIBSTC_SO]
#
# Public names are stc_ (include/stc.h); internal ones are stc__ followed by
# their module's prefix (stc__eval_expr, stc__buf_put), as libuv's uv__.
# Fails, naming them, on any global symbol libstc.a defines without the
# stc_ prefix, and on any stc__ name the shared library exports (its
# version script, cmake/stc.map, exports the public names only).
set -u
a=${1:?usage: symbols.sh LIBSTC_A [LIBSTC_SO]}
so=${2:-}
bad=0
names=$(nm -g --defined-only "$a" | awk 'NF == 3 && $2 ~ /^[A-Z]$/ { print $3 }') || { echo "symbols: nm failed on $a" >&2; exit 1; }
[ -n "$names" ] || { echo "symbols: no global symbols in $a" >&2; exit 1; }
# Sanitizer builds add names of their own (__odr_asan.NAME, __asan_..., __tsan_...).
loose=$(printf '%s\n' "$names" | grep -v '^stc_' | grep -Ev '^__(odr_asan|asan|tsan|ubsan|sanitizer|sancov)' | sort -u)
if [ -n "$loose" ]; then
    echo "symbols: $a defines global names without the stc_ prefix (internal names are stc__MODULE_...):" >&2
    printf '  %s\n' $loose >&2
    bad=1
fi
if [ -n "$so" ]; then
    leaked=$(nm -D --defined-only "$so" | awk '{ print $NF }' | grep '^stc__' | sort -u)
    if [ -n "$leaked" ]; then
        echo "symbols: $so exports internal names:" >&2
        printf '  %s\n' $leaked >&2
        bad=1
    fi
fi
[ $bad = 0 ] && echo "symbols: ok ($(printf '%s\n' "$names" | wc -l) global names, all stc_-prefixed)"
exit $bad
