#!/bin/bash
# LD_PRELOAD=libtiledblas.so on netlib_error_app, linked to the reference BLAS
# and CBLAS in NETLIB_DIR: the reference alone reports the first error with
# its parameter number and exits; preloaded, tiledblas's handlers stand in
# front of the reference's and must hand the report on to them, so the program
# sees exactly what it sees without tiledblas.
# Usage: preload_netlib_errors.sh LIBRARY APP NETLIB_DIR
# shellcheck source-path=SCRIPTDIR source=../common/script_lib.sh
source "$(dirname "$0")/../common/script_lib.sh"
library=$1 app=$2 netlib=$3

run plain env LD_LIBRARY_PATH="$netlib" "$app"
grep -q '^Parameter 5 to routine cblas_ssymm' "$tmp/plain.err" ||
    { fail "plain: not the reference's report (is $netlib the reference BLAS?)"; show plain; }

plain_status=$(cat "$tmp/plain.status")

run preloaded env LD_LIBRARY_PATH="$netlib" LD_PRELOAD="$library" "$app"
expect_status preloaded "$plain_status"
diff -u "$tmp/plain.err" "$tmp/preloaded.err" || fail "preloaded: stderr differs (above: plain vs preloaded)"
diff -u "$tmp/plain.out" "$tmp/preloaded.out" || fail "preloaded: stdout differs (above: plain vs preloaded)"
finish
