#!/usr/bin/env bash
# run.sh - the `install` test: installs the build into a temporary prefix and
# builds examples/embed.c against it, with pkg-config (shared and static) and
# with find_package(stc) (stc::stc and stc::stc_static); every build must
# print examples/embed.expected.  Then runs the README's embedding commands
# as written there.
#
#   bash tests/install/run.sh BUILD_DIR SOURCE_DIR LIBDIR CC [SANITIZE]
#
# Exits 77 (ctest: skipped) when pkg-config is not installed.
set -euo pipefail

build=$1 src=$2 libdir=$3 cc=$4 sanitize=${5:-}

if ! command -v pkg-config >/dev/null 2>&1; then
    echo "install: pkg-config is not installed; skipping (apt-get install pkg-config)"
    exit 77
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
fail() { echo "install: FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" || {
    cat "$tmp/install.log"
    fail "cmake --install"
}

for f in include/stc.h "$libdir/libstc.a" "$libdir/libstc.so" bin/stc \
         "$libdir/pkgconfig/stc.pc" "$libdir/cmake/stc/stcConfig.cmake" \
         "$libdir/cmake/stc/stcConfigVersion.cmake" "$libdir/cmake/stc/stcTargets.cmake"; do
    [ -e "$prefix/$f" ] || fail "missing $f"
done

version=$("$prefix/bin/stc" --version)
expected_version="stc $(sed -n 's/^#define STC_VERSION_STRING "\(.*\)"/\1/p' "$src/include/stc.h")"
[ "$version" = "$expected_version" ] || fail "stc --version printed '$version', expected '$expected_version'"

if command -v readelf >/dev/null 2>&1; then
    soname=$(readelf -d "$prefix/$libdir/libstc.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
    case $soname in
        libstc.so.[0-9]*) [ -e "$prefix/$libdir/$soname" ] || fail "SONAME $soname is not installed" ;;
        *) fail "libstc.so has SONAME '$soname'" ;;
    esac
fi
if command -v nm >/dev/null 2>&1; then
    # Only the public API is exported (cmake/stc.map).
    leaked=$(nm -D --defined-only "$prefix/$libdir/libstc.so" | awk '$3 !~ /^stc_/ && $2 ~ /[TDBR]/ {print $3}')
    [ -z "$leaked" ] || fail "libstc.so exports internal symbols: $(echo $leaked | head -c 300)"
fi

san=()
[ -n "$sanitize" ] && san=("-fsanitize=$sanitize")
export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig"
pkg-config --exists stc || fail "pkg-config does not find stc"

# pkg-config, shared library.
"$cc" "${san[@]}" -std=c11 -Wall -Wextra -Werror "$src/examples/embed.c" \
    $(pkg-config --cflags --libs stc) -o "$tmp/embed_pc"
LD_LIBRARY_PATH="$prefix/$libdir" "$tmp/embed_pc" >"$tmp/out_pc"
diff -u "$src/examples/embed.expected" "$tmp/out_pc" || fail "pkg-config shared build: wrong output"

# pkg-config, static library.
"$cc" "${san[@]}" -std=c11 -Wall -Wextra -Werror "$src/examples/embed.c" \
    $(pkg-config --cflags stc) "$prefix/$libdir/libstc.a" \
    $(pkg-config --static --libs-only-other --libs-only-l stc | sed 's/-lstc//') -o "$tmp/embed_static"
"$tmp/embed_static" >"$tmp/out_static"
diff -u "$src/examples/embed.expected" "$tmp/out_static" || fail "pkg-config static build: wrong output"

# find_package(stc).
mkdir -p "$tmp/consumer"
cat >"$tmp/consumer/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.16)
project(consumer C)
find_package(stc 0.1 REQUIRED)
add_executable(embed_shared "$src/examples/embed.c")
target_link_libraries(embed_shared PRIVATE stc::stc)
add_executable(embed_static "$src/examples/embed.c")
target_link_libraries(embed_static PRIVATE stc::stc_static)
EOF
cmake -S "$tmp/consumer" -B "$tmp/consumer/build" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="${san[*]}" -DCMAKE_EXE_LINKER_FLAGS="${san[*]}" \
    >"$tmp/consumer.log" 2>&1 || { cat "$tmp/consumer.log"; fail "find_package(stc) configure"; }
cmake --build "$tmp/consumer/build" >>"$tmp/consumer.log" 2>&1 || {
    cat "$tmp/consumer.log"
    fail "find_package(stc) build"
}
for exe in embed_shared embed_static; do
    "$tmp/consumer/build/$exe" >"$tmp/out_$exe"
    diff -u "$src/examples/embed.expected" "$tmp/out_$exe" || fail "find_package $exe: wrong output"
done

# libstc_mpi, when stc was built with MPI (the package above needed none):
# examples/embed_mpi.c built against the installed files with mpicc and
# pkg-config, and with find_package(stc COMPONENTS mpi), run as one
# process (MPI's singleton), prints what the build tree's copy prints.
mpi_note=""
if [ -e "$prefix/include/stc_mpi.h" ]; then
    for f in "$libdir/libstc_mpi.a" "$libdir/libstc_mpi.so" "$libdir/pkgconfig/stc_mpi.pc" \
             "$libdir/cmake/stc/stcMpiTargets.cmake"; do
        [ -e "$prefix/$f" ] || fail "missing $f (stc was built with MPI)"
    done
    if command -v mpicc >/dev/null 2>&1 && [ -x "$build/embed_mpi_example" ]; then
        export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" # Open MPI's own leaks
        "$build/embed_mpi_example" --workers 2 >"$tmp/out_mpi_build" || fail "embed_mpi_example failed"
        OMPI_CC="$cc" mpicc "${san[@]}" -std=c11 -Wall -Wextra -Werror "$src/examples/embed_mpi.c" \
            $(pkg-config --cflags --libs stc_mpi) -o "$tmp/embed_mpi_pc"
        LD_LIBRARY_PATH="$prefix/$libdir" "$tmp/embed_mpi_pc" --workers 2 >"$tmp/out_mpi_pc"
        diff -u "$tmp/out_mpi_build" "$tmp/out_mpi_pc" || fail "pkg-config stc_mpi build: wrong output"
        mkdir -p "$tmp/consumer_mpi"
        printf '%s\n' 'cmake_minimum_required(VERSION 3.16)' 'project(consumer_mpi C)' \
            'find_package(stc 0.1 REQUIRED COMPONENTS mpi)' \
            "add_executable(embed_mpi \"$src/examples/embed_mpi.c\")" \
            'target_link_libraries(embed_mpi PRIVATE stc::stc_mpi)' >"$tmp/consumer_mpi/CMakeLists.txt"
        cmake -S "$tmp/consumer_mpi" -B "$tmp/consumer_mpi/build" -DCMAKE_PREFIX_PATH="$prefix" \
            -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="${san[*]}" -DCMAKE_EXE_LINKER_FLAGS="${san[*]}" \
            >"$tmp/consumer_mpi.log" 2>&1 || { cat "$tmp/consumer_mpi.log"; fail "find_package(stc COMPONENTS mpi) configure"; }
        cmake --build "$tmp/consumer_mpi/build" >>"$tmp/consumer_mpi.log" 2>&1 || {
            cat "$tmp/consumer_mpi.log"
            fail "find_package(stc COMPONENTS mpi) build"
        }
        "$tmp/consumer_mpi/build/embed_mpi" --workers 2 >"$tmp/out_mpi_cmake"
        diff -u "$tmp/out_mpi_build" "$tmp/out_mpi_cmake" || fail "find_package stc::stc_mpi: wrong output"
        mpi_note=", libstc_mpi by pkg-config and find_package(stc COMPONENTS mpi)"
    fi
fi

# The README's embedding commands, exactly as written there (the block after
# its "tests/install/run.sh runs" comment), in a copy of the repository's
# layout with HOME in the temporary directory and no LD_LIBRARY_PATH: the
# built program must find libstc.so by itself.
readme_block=$(awk '/tests\/install\/run.sh runs the commands/ { want = 1; next }
                    want && /^```/ { if (inside) exit; inside = 1; next }
                    inside { print }' "$src/README.md")
[ -n "$readme_block" ] || fail "README.md has no embedding block"
mkdir -p "$tmp/readme/home"
ln -s "$(cd "$build" && pwd)" "$tmp/readme/build"
ln -s "$src/examples" "$tmp/readme/examples"
# `cc` is the test's compiler, with the sanitizer of this build if any.
cc_def="cc() { command \"$cc\" ${san[*]} \"\$@\"; }"
(cd "$tmp/readme" && env -u LD_LIBRARY_PATH -u PKG_CONFIG_PATH HOME="$tmp/readme/home" \
    bash -euo pipefail -c "$cc_def"$'\n'"$readme_block") >"$tmp/readme.out" 2>"$tmp/readme.err" || {
    cat "$tmp/readme.out" "$tmp/readme.err"
    fail "the README's embedding commands failed"
}
tail -n "$(wc -l <"$src/examples/embed.expected")" "$tmp/readme.out" | diff -u "$src/examples/embed.expected" - ||
    fail "the README's embedding commands: wrong output"

echo "install: ok (pkg-config shared+static, find_package stc::stc and stc::stc_static, the README's commands$mpi_note)"
