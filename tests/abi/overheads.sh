#!/bin/bash
# The cost of going through tiledblas for tiny calls: overhead_bench.c linked
# with -ltiledblas alone (relinked), linked with -lopenblas and run with the
# library preloaded (the program's own OpenBLAS behind it), and linked with
# -lopenblas alone, run in turn five times each (OpenBLAS on one thread); for
# each figure the fastest of the five medians. Both ways, cblas_sdot on 16
# elements (a forwarder) and cblas_sgemm 16^3 (the tiny-call gate) must cost at
# most 25% + 20 ns more than OpenBLAS alone: a loose bound, for a figure
# measured on a shared machine.
# Usage: overheads.sh LIBRARY CC SOURCE
# shellcheck source-path=SCRIPTDIR source=../common/script_lib.sh
source "$(dirname "$0")/../common/script_lib.sh"
# shellcheck source-path=SCRIPTDIR source=abi_lib.sh
source "$(dirname "$0")/abi_lib.sh"
library=$1 cc=$2 source=$3

link_openblas_or_skip bench_openblas "$source" "$cc"
link_or_fail bench_tiledblas "$source" tiledblas "$library" "$cc" || finish
for round in 1 2 3 4 5; do
    for with in openblas tiledblas preloaded; do
        case $with in
        preloaded) run "$with.$round" env OPENBLAS_NUM_THREADS=1 LD_PRELOAD="$library" "$tmp/bench_openblas" ;;
        *) run "$with.$round" env OPENBLAS_NUM_THREADS=1 "$tmp/bench_$with" ;;
        esac
        expect_status "$with.$round" 0
        cat "$tmp/$with.$round.out" >>"$tmp/$with.all"
    done
done
# fastest WITH FIGURE: the smallest of the rounds' medians
fastest() {
    awk -v key="$2" '$1 == key && (best == "" || $2 < best) { best = $2 } END { print best }' "$tmp/$1.all"
}
theirs_sdot=$(fastest openblas sdot16) theirs_sgemm=$(fastest openblas sgemm16)
# within NAME OURS THEIRS: OURS at most 25% + 20 ns above THEIRS
within() {
    awk -v a="$2" -v b="$3" 'BEGIN { exit !(a != "" && b != "" && a <= 1.25 * b + 20) }' ||
        fail "$1: $2 ns through tiledblas against $3 ns for OpenBLAS alone (bound 25% + 20 ns)"
}
for with in preloaded tiledblas; do
    sdot=$(fastest "$with" sdot16) sgemm=$(fastest "$with" sgemm16)
    echo "$with: sdot16 $sdot ns (OpenBLAS alone $theirs_sdot), sgemm16 $sgemm ns (OpenBLAS alone $theirs_sgemm)"
    within "sdot16 $with" "$sdot" "$theirs_sdot"
    within "sgemm16 $with" "$sgemm" "$theirs_sgemm"
done
finish
