#!/bin/bash
# A BLAS user's program (relink_blas.c: levels 1-3, four precisions, CBLAS
# and Fortran, sgesv_ and dgesvd_) linked with -ltiledblas alone must build,
# need no other BLAS, and print what it prints linked to OpenBLAS: identical
# results for every routine OpenBLAS runs either way ("exact" lines), SGEMM
# results (tiledblas's own) within their element-wise bound ("sgemm" lines).
# OpenBLAS runs one thread in both, so that its results repeat bit for bit.
# Usage: relink.sh LIBRARY CC SOURCE
# shellcheck source-path=SCRIPTDIR source=../common/script_lib.sh
source "$(dirname "$0")/../common/script_lib.sh"
# shellcheck source-path=SCRIPTDIR source=abi_lib.sh
source "$(dirname "$0")/abi_lib.sh"
library=$1 cc=$2 source=$3

link_openblas_or_skip with_openblas "$source" "$cc"
if link_or_fail with_tiledblas "$source" tiledblas "$library" "$cc"; then
    needs_no_other_blas "$tmp/with_tiledblas"
    run openblas env OPENBLAS_NUM_THREADS=1 "$tmp/with_openblas"
    expect_status openblas 0
    run tiledblas env OPENBLAS_NUM_THREADS=1 "$tmp/with_tiledblas"
    expect_status tiledblas 0
    # Line by line: same label; "exact" lines equal; "sgemm" lines value by value within the bound.
    report=$(awk '
        function compare(label, a, b,   na, nb, fa, fb, i, va, vb) {
            na = split(a, fa, " "); nb = split(b, fb, " ")
            if (na != nb) { print label ": " na " values, expected " nb; return }
            for (i = 1; i <= na; i++) {
                split(fa[i], va, ":"); split(fb[i], vb, ":")
                d = va[1] - vb[1]; if (d < 0) d = -d
                if (!(d <= vb[2])) { print label ": value " i " is " va[1] ", OpenBLAS " vb[1] ", bound " vb[2]; bad++ }
            }
        }
        NR == FNR { expected[FNR] = $0; lines = FNR; next }
        {
            n++
            if (n > lines) { print "extra line: " substr($0, 1, 60); next }
            split(expected[n], e, ": "); split($0, g, ": ")
            if (e[1] != g[1]) { print "line " n ": " g[1] ", expected " e[1]; next }
            if (g[1] ~ /^exact /) { if ($0 != expected[n]) print g[1] ": differs from OpenBLAS" }
            else compare(g[1], g[2], e[2])
        }
        END { if (n < lines) print "missing lines from " n + 1 " of " lines }
    ' "$tmp/openblas.out" "$tmp/tiledblas.out")
    if [ -n "$report" ]; then
        fail "results differ from OpenBLAS's:"
        head -n 30 <<<"$report"
    else
        echo "$(grep -c '^exact ' "$tmp/tiledblas.out") exact results identical," \
            "$(grep -c '^sgemm ' "$tmp/tiledblas.out") SGEMM results within their bound"
    fi
fi
finish
