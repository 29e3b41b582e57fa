#!/bin/bash
# Installs the build into a fresh prefix and builds examples/consumer against
# it, then runs the result with only that prefix's library directory.
# Usage: install_consumer.sh pkgconfig|cmake BUILD_DIR CONSUMER_DIR CMAKE C_COMPILER
# shellcheck source-path=SCRIPTDIR source=../common/script_lib.sh
source "$(dirname "$0")/../common/script_lib.sh"
mode=$1 build=$2 consumer=$3 cmake=$4 cc=$5
prefix=$tmp/prefix

run install "$cmake" --install "$build" --prefix "$prefix"
expect_status install 0
# GNUInstallDirs picks lib or lib64: find where the library landed.
library=$(find "$prefix" -name 'libtiledblas.so' | head -n 1)
[ -n "$library" ] || { fail "no libtiledblas.so under $prefix"; show install; finish; }
libdir=$(dirname "$library")
[ -f "$prefix/include/tiledblas.h" ] || fail "no include/tiledblas.h in the prefix"

case $mode in
pkgconfig)
    command -v pkg-config >/dev/null || { echo "SKIP: no pkg-config"; exit 77; }
    [ -f "$libdir/pkgconfig/tiledblas.pc" ] || { fail "no $libdir/pkgconfig/tiledblas.pc"; finish; }
    run flags env PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --cflags --libs tiledblas
    expect_status flags 0
    read -ra flags <"$tmp/flags.out"
    program=$tmp/consumer
    run compile "$cc" -std=c11 -Wall -Wextra -Werror -o "$program" "$consumer/main.c" \
        "${flags[@]}" -lm
    expect_status compile 0
    ;;
cmake)
    [ -f "$libdir/cmake/tiledblas/tiledblasConfig.cmake" ] ||
        { fail "no $libdir/cmake/tiledblas/tiledblasConfig.cmake"; finish; }
    run configure "$cmake" -S "$consumer" -B "$tmp/build" -DCMAKE_PREFIX_PATH="$prefix" \
        -DCMAKE_C_COMPILER="$cc" -DCMAKE_COMPILE_WARNING_AS_ERROR=ON
    expect_status configure 0
    run compile "$cmake" --build "$tmp/build"
    expect_status compile 0
    program=$tmp/build/consumer
    ;;
*)
    echo "unknown mode $mode"
    exit 2
    ;;
esac

[ -x "$program" ] || { fail "no consumer program was built"; finish; }
run consumer env LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$program"
expect_status consumer 0
grep -qx 'consumer: OK' "$tmp/consumer.out" || { fail "consumer did not report OK"; show consumer; }
# The run must use the installed copy, not the build tree's.
run ldd env LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ldd "$program"
grep -q "libtiledblas.so.* => $libdir/" "$tmp/ldd.out" ||
    { fail "the consumer does not resolve libtiledblas from $libdir"; show ldd; }
cat "$tmp/consumer.out"
finish
