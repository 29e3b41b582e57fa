#!/bin/bash
# LD_PRELOAD=libtiledblas.so on netlib_error_app, linked to the reference BLAS
# and CBLAS in NETLIB_DIR: the reference alone reports the first error with
# its parameter number and exits; preloaded, tiledblas's handlers must report
# both errors with the same numbers and return.
# Usage: preload_netlib_errors.sh LIBRARY APP NETLIB_DIR
# shellcheck source-path=SCRIPTDIR source=../common/script_lib.sh
source "$(dirname "$0")/../common/script_lib.sh"
library=$1 app=$2 netlib=$3

run plain env LD_LIBRARY_PATH="$netlib" "$app"
grep -q '^Parameter 5 to routine cblas_ssymm' "$tmp/plain.err" ||
    { fail "plain: not the reference's report (is $netlib the reference BLAS?)"; show plain; }

run preloaded env LD_LIBRARY_PATH="$netlib" LD_PRELOAD="$library" "$app"
expect_status preloaded 0
printf '%s\n' 'tiledblas: parameter 5 to cblas_ssymm was invalid' \
    'tiledblas: parameter 9 to cblas_dgemm was invalid' >"$tmp/err.expected"
diff -u "$tmp/err.expected" "$tmp/preloaded.err" || fail "preloaded: stderr differs (above: expected vs actual)"
diff -u <(printf 'returned\n') "$tmp/preloaded.out" || fail "preloaded: stdout differs (above: expected vs actual)"
finish
