#!/bin/bash
# Runs test_default_xerbla with no TILEDBLAS_* settings and requires exactly
# the two default error lines on stderr and "done" on stdout.
# Usage: check_default_xerbla.sh PROGRAM
set -u
program=$1
for var in $(compgen -e | grep '^TILEDBLAS_'); do unset "$var"; done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$program" >"$tmp/out" 2>"$tmp/err"
status=$?

printf '%s\n' 'tiledblas: parameter 4 (M) to cblas_sgemm was invalid' \
    'tiledblas: parameter 3 (M) to SGEMM was invalid' >"$tmp/err.expected"
printf 'done\n' >"$tmp/out.expected"

ok=1
if [ "$status" -ne 0 ]; then
    echo "FAIL: exit status $status"
    ok=0
fi
if ! diff -u "$tmp/err.expected" "$tmp/err"; then
    echo "FAIL: stderr differs (above: expected vs actual)"
    ok=0
fi
if ! diff -u "$tmp/out.expected" "$tmp/out"; then
    echo "FAIL: stdout differs (above: expected vs actual)"
    ok=0
fi
[ "$ok" = 1 ] && echo "default handlers OK"
[ "$ok" = 1 ]
