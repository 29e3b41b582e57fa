#!/bin/bash
# ilp64_sgemm.c compiled as a user compiles it and linked with -ltiledblas
# alone, then run: the ILP64 SGEMM names against libopenblas64.so.0 and their
# invalid-argument reports (see the program). 77 without libopenblas64.so.0.
# Usage: ilp64.sh LIBRARY CC SOURCE
# shellcheck source-path=SCRIPTDIR source=../common/script_lib.sh
source "$(dirname "$0")/../common/script_lib.sh"
# shellcheck source-path=SCRIPTDIR source=abi_lib.sh
source "$(dirname "$0")/abi_lib.sh"
library=$1 cc=$2 source=$3

reference=$(/sbin/ldconfig -p 2>/dev/null | awk '$1 == "libopenblas64.so.0" { print $NF; exit }')
[ -n "$reference" ] || { echo "SKIP: no libopenblas64.so.0 (Debian: libopenblas64-0-pthread)"; exit 77; }
if link_or_fail ilp64_sgemm "$source" tiledblas "$library" "$cc"; then
    needs_no_other_blas "$tmp/ilp64_sgemm"
    run ilp64 "$tmp/ilp64_sgemm" "$reference"
    status=$(cat "$tmp/ilp64.status")
    [ "$status" -eq 77 ] && { cat "$tmp/ilp64.out"; exit 77; }
    expect_status ilp64 0
    tail -n 1 "$tmp/ilp64.out"
fi
finish
