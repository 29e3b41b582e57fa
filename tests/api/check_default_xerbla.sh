#!/bin/bash
# Runs test_default_xerbla with no TILEDBLAS_* settings and requires exactly
# the default error lines on stderr and "done" on stdout.
# Usage: check_default_xerbla.sh PROGRAM
# shellcheck source-path=SCRIPTDIR source=../common/script_lib.sh
source "$(dirname "$0")/../common/script_lib.sh"
program=$1

run default "$program"
expect_status default 0
printf '%s\n' 'tiledblas: parameter 4 (M) to cblas_sgemm was invalid' \
    'tiledblas: parameter 3 (M) to SGEMM was invalid' \
    'tiledblas: parameter 5 to cblas_ssymm was invalid' \
    'tiledblas: parameter 9 to cblas_dgemm was invalid' \
    'tiledblas: parameter 6 to cblas_zher2k was invalid' >"$tmp/err.expected"
diff -u "$tmp/err.expected" "$tmp/default.err" || fail "stderr differs (above: expected vs actual)"
diff -u <(printf 'done\n') "$tmp/default.out" || fail "stdout differs (above: expected vs actual)"
finish
