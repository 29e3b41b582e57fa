#!/bin/bash
# tiledblas-info reports what the library finds, and --check agrees on every path:
# its version, a GPU line consistent with the probe, both CPU BLAS lines, the
# symbol counts (the whole ABI exported, all but tiledblas's own forwarded),
# the variables in force, the OpenBLAS core warning when an old core is forced
# on a CPU with AVX2 (none when the fitting core is), the manual and a bad option.
# Usage: info.sh TOOL GPU_PROBE VERSION
# shellcheck source-path=SCRIPTDIR source=../common/script_lib.sh
source "$(dirname "$0")/../common/script_lib.sh"
tool=$1 probe=$2 version=$3

# expect_line NAME REGEX WHAT: a line of NAME's output matches REGEX
expect_line() {
    grep -Eq "$2" "$tmp/$1.out" || { fail "$1: $3"; show "$1"; }
}

run info env TILEDBLAS_VERBOSE=1 OPENBLAS_NUM_THREADS=2 "$tool"
expect_status info 0
cat "$tmp/info.out"
expect_line info "^tiledblas: +$version\$" "no version line"
expect_line info '^cpu blas lp64: +[^ ]' "no LP64 CPU BLAS line"
expect_line info '^cpu blas ilp64: +[^ ]' "no ILP64 CPU BLAS line"
expect_line info '^(environment:)? +TILEDBLAS_VERBOSE=1$' "TILEDBLAS_VERBOSE not listed"
expect_line info '^(environment:)? +OPENBLAS_NUM_THREADS=2$' "OPENBLAS_NUM_THREADS not listed"
if "$probe" >/dev/null; then
    expect_line info '^gpu 0: +[^ ]' "a usable GPU, but no device line"
    expect_line info '^gpu usable: +yes$' "a usable GPU, not reported usable"
else
    expect_line info '^gpu: +none: .|^gpu usable: +no' "no usable GPU, but no reason given"
fi
exported=$(sed -n 's/^symbols: *\([0-9]*\) exported, \([0-9]*\) of them forwarded.*/\1/p' "$tmp/info.out")
forwarded=$(sed -n 's/^symbols: *\([0-9]*\) exported, \([0-9]*\) of them forwarded.*/\2/p' "$tmp/info.out")
# BLAS, CBLAS and LAPACK make well over a thousand names; tiledblas runs a few itself.
[[ -n $exported && -n $forwarded && $exported -ge 1000 && $forwarded -gt 0 && $forwarded -lt $exported ]] ||
    fail "info: symbol counts '${exported:-none}' exported, '${forwarded:-none}' forwarded"

# The core warning: forced to Prescott on a CPU with AVX2, it names the fitting core; forced to that, none.
best=$(awk -F: '/^flags/ {
    f = " " $2 " "
    if (f ~ / avx512f / && f ~ / avx512bw / && f ~ / avx512dq / && f ~ / avx512vl /) print "SkylakeX"
    else if (f ~ / avx2 / && f ~ / fma /) print "Haswell"
    exit }' /proc/cpuinfo)
if [ -n "$best" ] && grep -q '^  openblas core:' "$tmp/info.out"; then
    run old env OPENBLAS_CORETYPE=Prescott "$tool"
    expect_status old 0
    expect_line old "^  warning: OpenBLAS runs its Prescott kernels.* set OPENBLAS_CORETYPE=$best\$" \
        "no warning for Prescott kernels on a CPU that runs $best's"
    run fitting env OPENBLAS_CORETYPE="$best" "$tool"
    expect_status fitting 0
    ! grep -q '^  warning: OpenBLAS runs' "$tmp/fitting.out" ||
        { fail "fitting: a warning with OPENBLAS_CORETYPE=$best"; show fitting; }
fi

run check "$tool" --check
expect_status check 0
cat "$tmp/check.out"
expect_line check '^check cpu: +.* agrees ' "the CPU path does not agree"
expect_line check '^check auto: +.* agrees ' "the automatic path does not agree"
if "$probe" >/dev/null; then
    expect_line check '^check gpu: +.* agrees ' "the GPU path does not agree"
else
    expect_line check '^check gpu: +skipped' "no GPU, but the GPU path not skipped"
fi

run manual "$tool" --help
expect_status manual 0
expect_line manual '^SYNOPSIS$' "--help: no manual"
run bad "$tool" --bogus
expect_status bad 2
finish
