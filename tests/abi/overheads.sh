#!/bin/bash
# The cost of going through tiledblas for tiny calls: overhead_bench.c linked
# with -ltiledblas alone and with -lopenblas, run in turn five times each
# (OpenBLAS on one thread); for each figure the fastest of the five medians.
# Through tiledblas, cblas_sdot on 16 elements (a forwarder) and cblas_sgemm
# 16^3 (the tiny-call gate) must cost at most 25% + 20 ns more than OpenBLAS
# alone: a loose bound, for a figure measured on a shared machine.
# Usage: overheads.sh LIBRARY CC SOURCE
# shellcheck source-path=SCRIPTDIR source=../common/script_lib.sh
source "$(dirname "$0")/../common/script_lib.sh"
# shellcheck source-path=SCRIPTDIR source=abi_lib.sh
source "$(dirname "$0")/abi_lib.sh"
library=$1 cc=$2 source=$3

link_openblas_or_skip bench_openblas "$source" "$cc"
link_or_fail bench_tiledblas "$source" tiledblas "$library" "$cc" || finish
for round in 1 2 3 4 5; do
    for with in openblas tiledblas; do
        run "$with.$round" env OPENBLAS_NUM_THREADS=1 "$tmp/bench_$with"
        expect_status "$with.$round" 0
        cat "$tmp/$with.$round.out" >>"$tmp/$with.all"
    done
done
# fastest WITH FIGURE: the smallest of the rounds' medians
fastest() {
    awk -v key="$2" '$1 == key && (best == "" || $2 < best) { best = $2 } END { print best }' "$tmp/$1.all"
}
for figure in sdot16 sgemm16; do
    ours=$(fastest tiledblas "$figure") theirs=$(fastest openblas "$figure")
    echo "$figure: through tiledblas $ours ns per call, OpenBLAS alone $theirs ns"
    awk -v a="$ours" -v b="$theirs" 'BEGIN { exit !(a != "" && b != "" && a <= 1.25 * b + 20) }' ||
        fail "$figure: $ours ns through tiledblas against $theirs ns for OpenBLAS alone (bound 25% + 20 ns)"
done
finish
