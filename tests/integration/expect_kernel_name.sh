#!/bin/bash
# TILEDBLAS_KERNEL naming no rung of the ladder: the GPU layer reports it once,
# when it starts on a usable GPU, and runs the default kernel; where no GPU is
# usable the variable is never consulted and nothing is printed. Either way
# every product must be right.
# Usage: expect_kernel_name.sh PROBE PROGRAM [ARGS...]
# shellcheck source-path=SCRIPTDIR source=../common/script_lib.sh
source "$(dirname "$0")/../common/script_lib.sh"
probe=$1 program=$2
shift

expected=0
"$probe" && expected=1
run named env TILEDBLAS_KERNEL=bogus "$@"
expect_status named 0
[ -n "$(products_ok named "$(basename "$program")")" ] || { fail "no 'all N products OK' line"; show named; }
warnings=$(grep -c '^tiledblas: warning: ignoring TILEDBLAS_KERNEL=bogus (unknown kernel; using best)$' \
    "$tmp/named.err")
[ "$warnings" -eq "$expected" ] || { fail "$warnings warnings about the kernel, expected $expected"; show named; }
[ "$(grep -vc '^tiledblas: warning: ignoring TILEDBLAS_KERNEL=' "$tmp/named.err")" -eq 0 ] ||
    { fail "other output on stderr"; show named; }
echo "$warnings warning(s) about TILEDBLAS_KERNEL=bogus, GPU usable: $expected"
finish
