#!/bin/bash
# handler_app calls dgesv_ with N = -1; its error handler lives in a shared
# library it links (xerbla_handler_lib), which ends the program with status 3.
# Preloaded in front of it, tiledblas's xerbla_ comes first and must hand the
# report to that handler: the same output and status as without tiledblas.
# Usage: preload_handler.sh LIBRARY APP
# shellcheck source-path=SCRIPTDIR source=../common/script_lib.sh
source "$(dirname "$0")/../common/script_lib.sh"
library=$1 app=$2

run plain "$app"
expect_status plain 3
grep -q '^application handler: parameter 1 to DGESV' "$tmp/plain.out" ||
    { fail "plain: the application's handler did not run"; show plain; }

run preloaded env LD_PRELOAD="$library" "$app"
expect_status preloaded 3
diff -u "$tmp/plain.out" "$tmp/preloaded.out" || fail "preloaded: stdout differs (above: plain vs preloaded)"
diff -u "$tmp/plain.err" "$tmp/preloaded.err" || fail "preloaded: stderr differs (above: plain vs preloaded)"
finish
