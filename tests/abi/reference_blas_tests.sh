#!/bin/bash
# The reference BLAS test programs of Debian's libblas-test (xblat1-3 for the
# Fortran BLAS, x?cblat1-3 for CBLAS, four precisions each) run on the
# reference BLAS (BLAS_DIR/libblas.so.3, with LD_LIBRARY_PATH so that the
# alternatives' choice does not matter) with LD_PRELOAD=libtiledblas.so:
# every routine each input file selects must pass its computational tests and
# its error-exit tests, and nothing may report a failure. SGEMM and
# cblas_sgemm run through tiledblas (the exit summary must count them).
# Usage: reference_blas_tests.sh MODE LIBRARY BLAS_DIR GPU_PROBE
#   cpu  all 24 programs, TILEDBLAS_DEVICE unset (tiny calls: the CPU path)
#   gpu  the single-precision level-3 programs with TILEDBLAS_DEVICE=gpu,
#        every SGEMM on the GPU (77 without a GPU)
# shellcheck source-path=SCRIPTDIR source=../common/script_lib.sh
source "$(dirname "$0")/../common/script_lib.sh"
mode=$1 library=$2 blas=$3 probe=$4

[[ -x $blas/xblat3s && -x $blas/xscblat3 ]] ||
    { echo "SKIP: no reference BLAS test programs in $blas (Debian: libblas-test)"; exit 77; }

# selected INPUT: the routines an input file turns on ("NAME T PUT F FOR NO TEST")
selected() {
    awk '$2 == "T" && $3 == "PUT" { print $1 }' "$1"
}

# passes NAME OUTPUT INPUT: every routine INPUT selects passed its computational
# tests (CBLAS: in both layouts), and, where the input asks for them, as many
# error-exit tests passed as routines were selected (the complex CBLAS level-2
# program reports cblas_?gerc's under cblas_?geru's name).
passes() {
    local name=$1 output=$2 input=$3 routine errors needed count
    errors=$(awk 'NR <= 6 && /TO TEST ERROR EXITS/ { print $1 }' "$input")
    for routine in $(selected "$input"); do
        needed=1
        [[ $routine == cblas_* ]] && needed=2
        count=$(grep -Ec "^ $routine +PASSED THE (COLUMN-MAJOR |ROW-MAJOR +)?COMPUTATIONAL TESTS" "$output")
        [ "$count" -ge "$needed" ] ||
            fail "$name: $routine passed $count computational test runs of $needed"
    done
    if [ "$errors" = T ]; then
        needed=$(selected "$input" | wc -l)
        count=$(grep -c 'PASSED THE TESTS OF ERROR-EXITS' "$output")
        [ "$count" -eq "$needed" ] || fail "$name: $count error-exit tests passed of $needed"
    fi
}

# level1 NAME OUTPUT: each subprogram tested says PASS
level1() {
    local tested passed
    tested=$(grep -c 'Test of subprogram number' "$2")
    passed=$(grep -c -- '----- PASS -----' "$2")
    [[ $tested -gt 0 && $tested -eq $passed ]] ||
        fail "$1: $passed of $tested subprograms passed"
}

# run_program NAME LEVEL PREFIX [VAR=VALUE...]: one program in $tmp/work, preloaded,
# with its input from BLAS_DIR; its report is its summary file (Fortran BLAS) or
# its standard output (CBLAS).
run_program() {
    local name=$1 level=$2 input=$3
    shift 3
    (cd "$tmp/work" && env LD_LIBRARY_PATH="$blas" LD_PRELOAD="$library" TILEDBLAS_VERBOSE=1 "$@" \
        "$blas/$name" <"${input:-/dev/null}" >"$tmp/$name.out" 2>"$tmp/$name.err")
    echo $? >"$tmp/$name.status"
    expect_status "$name" 0
    local report=$tmp/$name.out
    if [ -n "$input" ] && [[ $name == xblat* ]]; then
        report=$tmp/work/$(sed -n "1s/^'\([^']*\)'.*/\1/p" "$input")
    fi
    [ -s "$report" ] || { fail "$name: no report"; show "$name"; return; }
    if grep -Eq 'FAIL|\*\*\*\*' "$report"; then
        fail "$name: reports a failure:"
        grep -E -m 10 'FAIL|\*\*\*\*' "$report"
    fi
    if [ "$level" = 1 ]; then
        level1 "$name" "$report"
    else
        grep -q 'END OF TESTS' "$report" || fail "$name: no 'END OF TESTS'"
        passes "$name" "$report" "$input"
    fi
    echo "$name: $(grep -Ec 'PASS' "$report") passes"
}

# sgemm_calls NAME PATH: SGEMM calls counted on PATH (gpu, cpu) in the exit summary
sgemm_calls() {
    sed -n "s/^tiledblas: summary: .*$2 \\([0-9][0-9]*\\) calls.*/\\1/p" "$tmp/$1.err"
}

# The programs must load the reference BLAS of BLAS_DIR, whatever the alternatives say.
loaded=$(LD_LIBRARY_PATH="$blas" ldd "$blas/xblat3s" | awk '$1 == "libblas.so.3" { print $3 }')
[ "$(readlink -f "$loaded")" = "$(readlink -f "$blas/libblas.so.3")" ] ||
    fail "xblat3s loads libblas.so.3 from ${loaded:-nowhere}, not from $blas"

mkdir "$tmp/work"
case $mode in
cpu)
    for p in s d c z; do
        run_program "xblat1$p" 1 ''
        run_program "xblat2$p" 2 "$blas/${p}blat2.in"
        run_program "xblat3$p" 3 "$blas/${p}blat3.in"
        run_program "x${p}cblat1" 1 ''
        run_program "x${p}cblat2" 2 "$blas/${p}in2"
        run_program "x${p}cblat3" 3 "$blas/${p}in3"
    done
    for name in xblat3s xscblat3; do
        [ "$(sgemm_calls "$name" cpu)" -gt 0 ] 2>/dev/null ||
            { fail "$name: no SGEMM call went through tiledblas"; show "$name"; }
    done
    ;;
gpu)
    skip_without_gpu "$probe"
    run_program xblat3s 3 "$blas/sblat3.in" TILEDBLAS_DEVICE=gpu TILEDBLAS_VERBOSE=2
    run_program xscblat3 3 "$blas/sin3" TILEDBLAS_DEVICE=gpu TILEDBLAS_VERBOSE=2
    # On the CPU only what reads neither A nor B: empty products, alpha = 0 or K = 0.
    for name in xblat3s xscblat3; do
        [ "$(sgemm_calls "$name" gpu)" -gt 0 ] 2>/dev/null ||
            { fail "$name: no SGEMM call ran on the GPU"; grep -v '^tiledblas: sgemm ' "$tmp/$name.err"; }
        stray=$(grep '^tiledblas: sgemm ' "$tmp/$name.err" | grep ' path=cpu ' |
            grep -Ecv ' reason=(empty|scale-only) ')
        [ "$stray" -eq 0 ] || {
            fail "$name: $stray SGEMM calls on the CPU under TILEDBLAS_DEVICE=gpu:"
            grep '^tiledblas: sgemm ' "$tmp/$name.err" | grep ' path=cpu ' |
                grep -Ev ' reason=(empty|scale-only) ' | head -n 5
        }
    done
    ;;
*)
    echo "unknown mode $mode"
    exit 2
    ;;
esac
finish
