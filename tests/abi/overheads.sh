#!/bin/bash
# The cost of going through tiledblas for tiny calls: overhead_bench.c linked
# with -ltiledblas alone (relinked), linked with -lopenblas and run with the
# library preloaded (the program's own OpenBLAS behind it), and, as the
# control, linked with -lopenblas alone; five runs of each (OpenBLAS on one
# thread). Each run times cblas_sdot on 16 elements (a forwarder) and
# cblas_sgemm 16^3 (the tiny-call gate) as the program binds them and straight
# to OpenBLAS's own entry points, in turns in one process: a shared machine's
# CPU may run at half speed in one process and full speed in the next, but not
# from one batch to the next. Of the five runs, the one with the median ratio
# counts: through tiledblas a call may cost at most 15% + 10 ns more than
# OpenBLAS's own entry point (the control, where both are OpenBLAS, too). With
# OpenBLAS's SkylakeX kernels (90-175 ns calls) the gate costs 5-19 ns, and
# the general path, which a shut gate leaves, 44-85 ns more: caught there.
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
# median_run WITH KEY: "BOUND DIRECT" of the run with the median ratio BOUND / DIRECT
median_run() {
    awk -v key="$2" '$1 == key && $3 > 0 { print $2 / $3, $2, $3 }' "$tmp/$1.all" | LC_ALL=C sort -g |
        awk '{ line[NR] = $2 " " $3 } END { if (NR) print line[int((NR + 1) / 2)] }'
}
for with in openblas preloaded tiledblas; do
    report="$with:"
    for key in sdot16 sgemm16; do
        read -r bound direct <<<"$(median_run "$with" "$key")"
        report+=" $key $bound ns (OpenBLAS's own $direct)"
        awk -v a="$bound" -v b="$direct" 'BEGIN { exit !(a != "" && b != "" && a <= 1.15 * b + 10) }' ||
            fail "$key $with: $bound ns against $direct ns for OpenBLAS's own entry point (bound 15% + 10 ns)"
    done
    echo "$report"
done
finish
