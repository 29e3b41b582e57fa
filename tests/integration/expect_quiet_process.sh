#!/bin/bash
# The exit summary belongs to the process that made the calls. Preloaded, the
# library sits in every program a shell starts: one that makes no SGEMM call
# must print nothing, whatever the settings say, and read none of them (an
# invalid TILEDBLAS_DEVICE would warn); a forked child must not print its
# parent's totals again, only its own calls'.
# Usage: expect_quiet_process.sh MODE LIBRARY PROGRAM
#   no-calls  LD_PRELOAD=LIBRARY PROGRAM (e.g. /bin/true), TILEDBLAS_VERBOSE=1 and an
#             invalid TILEDBLAS_DEVICE: stderr empty
#   fork      PROGRAM is fork_summary_app, TILEDBLAS_VERBOSE=1: two summary lines, the parent's
#             (one CPU call) and its calling child's (two), none from the child that made none
# shellcheck source-path=SCRIPTDIR source=../common/script_lib.sh
source "$(dirname "$0")/../common/script_lib.sh"
mode=$1 library=$2 program=$3

case $mode in
no-calls)
    run quiet env LD_PRELOAD="$library" TILEDBLAS_DEVICE=bogus TILEDBLAS_VERBOSE=1 "$program"
    expect_status quiet 0
    [ -s "$tmp/quiet.err" ] && { fail "no-calls: stderr is not empty"; show quiet; }
    ;;
fork)
    run fork env TILEDBLAS_VERBOSE=1 TILEDBLAS_DEVICE=cpu "$program"
    expect_status fork 0
    summaries=$(grep -c '^tiledblas: summary:' "$tmp/fork.err")
    [ "$summaries" -eq 2 ] ||
        { fail "fork: $summaries summary lines, expected 2 (the parent's and the calling child's)"; show fork; }
    for calls in 1 2; do
        grep -q "^tiledblas: summary: gpu 0 calls .*, cpu $calls calls " "$tmp/fork.err" ||
            { fail "fork: no summary of $calls CPU call(s)"; show fork; }
    done
    ;;
*)
    echo "unknown mode $mode"
    exit 2
    ;;
esac
finish
