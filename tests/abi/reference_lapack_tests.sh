#!/bin/bash
# The single-precision reference LAPACK test programs of Debian's
# liblapack-test (xlintsts: linear equations; xeigtsts: the SVD and the
# symmetric eigenproblem), run on the reference LAPACK and BLAS (LAPACK_DIR,
# BLAS_DIR, through LD_LIBRARY_PATH) with LD_PRELOAD=libtiledblas.so: the
# blocked algorithms make their SGEMM calls through tiledblas (the exit
# summary must count them), and every test must pass its threshold and its
# error exits, nothing reporting a failure.
# Usage: reference_lapack_tests.sh LIBRARY BLAS_DIR LAPACK_DIR
# shellcheck source-path=SCRIPTDIR source=../common/script_lib.sh
source "$(dirname "$0")/../common/script_lib.sh"
library=$1 blas=$2 lapack=$3

[[ -x $lapack/xlintsts && -x $lapack/xeigtsts && -r $blas/libblas.so.3 ]] ||
    { echo "SKIP: no reference LAPACK test programs in $lapack (Debian: liblapack-test)"; exit 77; }

# run_program NAME PROGRAM INPUT: one program in $tmp/work on INPUT, preloaded
run_program() {
    local name=$1 program=$2 input=$3
    (cd "$tmp/work" && env LD_LIBRARY_PATH="$blas:$lapack" LD_PRELOAD="$library" TILEDBLAS_VERBOSE=1 \
        "$lapack/$program" <"$lapack/$input" >"$tmp/$name.out" 2>"$tmp/$name.err")
    echo $? >"$tmp/$name.status"
    expect_status "$name" 0
    grep -q 'End of tests' "$tmp/$name.out" || { fail "$name: no 'End of tests'"; show "$name"; }
    if grep -Eiq 'fail|\*\*\*' "$tmp/$name.out"; then
        fail "$name: reports a failure:"
        grep -Ei -m 10 'fail|\*\*\*' "$tmp/$name.out"
    fi
    local passed calls
    passed=$(grep -c 'passed the threshold' "$tmp/$name.out")
    [ "$passed" -gt 0 ] || fail "$name: no test passed its threshold"
    calls=$(sed -n 's/^tiledblas: summary: .* cpu \([0-9][0-9]*\) calls.*/\1/p' "$tmp/$name.err")
    [ "${calls:-0}" -gt 0 ] || { fail "$name: no SGEMM call went through tiledblas"; show "$name"; }
    echo "$name: $passed groups passed their threshold, ${calls:-0} SGEMM calls through tiledblas"
}

# The programs must load the reference libraries of BLAS_DIR and LAPACK_DIR, whatever the alternatives say.
for lib in "$blas/libblas.so.3" "$lapack/liblapack.so.3"; do
    loaded=$(LD_LIBRARY_PATH="$blas:$lapack" ldd "$lapack/xlintsts" |
        awk -v name="$(basename "$lib")" '$1 == name { print $3 }')
    [ "$(readlink -f "$loaded")" = "$(readlink -f "$lib")" ] ||
        fail "xlintsts loads $(basename "$lib") from ${loaded:-nowhere}, not $lib"
done

mkdir "$tmp/work"
run_program linear xlintsts stest.in
run_program svd xeigtsts svd.in
run_program symmetric_eigen xeigtsts sep.in
finish
