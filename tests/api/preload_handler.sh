#!/bin/bash
# handler_app calls dgesv_ with N = -1; its error handler lives in a shared
# library it links (xerbla_handler_lib), which ends the program with status 3.
# Preloaded in front of it, tiledblas's xerbla_ comes first and must hand the
# report to that handler: the same output and status as without tiledblas.
# RELINKED_APP is the same program linked to tiledblas alone: its dgesv_ is
# forwarded to the CPU BLAS tiledblas loads itself, whose handler does not
# count as the program's, so tiledblas's own handler prints its line and returns.
# Usage: preload_handler.sh LIBRARY APP RELINKED_APP
# shellcheck source-path=SCRIPTDIR source=../common/script_lib.sh
source "$(dirname "$0")/../common/script_lib.sh"
library=$1 app=$2 relinked=$3

run plain "$app"
expect_status plain 3
grep -q '^application handler: parameter 1 to DGESV' "$tmp/plain.out" ||
    { fail "plain: the application's handler did not run"; show plain; }

run preloaded env LD_PRELOAD="$library" "$app"
expect_status preloaded 3
diff -u "$tmp/plain.out" "$tmp/preloaded.out" || fail "preloaded: stdout differs (above: plain vs preloaded)"
diff -u "$tmp/plain.err" "$tmp/preloaded.err" || fail "preloaded: stderr differs (above: plain vs preloaded)"

run relinked "$relinked"
expect_status relinked 0
diff -u <(printf 'tiledblas: parameter 1 to DGESV was invalid\n') "$tmp/relinked.err" ||
    fail "relinked: stderr differs (above: expected vs actual)"
diff -u <(printf 'returned, info -1\n') "$tmp/relinked.out" || fail "relinked: stdout differs (above: expected vs actual)"
finish
