#!/bin/bash
# Runs a program linked to tiledblas with TILEDBLAS_VERBOSE=2 and requires
# success, well-formed per-call trace lines and one summary line.
# Usage: expect_trace.sh PROGRAM [ARGS...]
# shellcheck source-path=SCRIPTDIR source=../common/script_lib.sh
source "$(dirname "$0")/../common/script_lib.sh"

run traced env TILEDBLAS_VERBOSE=2 "$@"
expect_status traced 0
[ "$(trace_count traced)" -gt 0 ] || { fail "no trace lines"; show traced; }
check_trace traced "$(trace_count traced)" 'cpu|gpu'
expect_summary traced
cat "$tmp/traced.out"
finish
