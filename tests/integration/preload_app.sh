#!/bin/bash
# LD_PRELOAD=libtiledblas.so on sgemm_app, a program linked to OpenBLAS only.
# Usage: preload_app.sh MODE LIBRARY SGEMM_APP GPU_PROBE
#   cpu       unpreloaded: no trace; preloaded: every call traced, the summary
#             at exit (TILEDBLAS_VERBOSE=1 gives it alone, with auto mode's
#             classes), forced CPU honoured
#   gpu       forced GPU: every call traced with path=gpu (77 without a GPU)
#   fallback  forced GPU without a GPU: one warning line, right results (77 with one)
#   silent    preloaded with no TILEDBLAS_* setting: nothing but the app's output
# shellcheck source-path=SCRIPTDIR source=../common/script_lib.sh
source "$(dirname "$0")/../common/script_lib.sh"
mode=$1 library=$2 app=$3 probe=$4
size=512

# run_app NAME [VAR=VALUE...]: the app, preloaded unless NAME is "plain"
run_app() {
    local name=$1
    shift
    run_products "$name" sgemm_app "$@" "$app" "$size"
}

# expect_single_line NAME PATTERN WHAT: stderr is exactly one line, matching PATTERN
expect_single_line() {
    if ! { [ "$(grep -c . "$tmp/$1.err")" -eq 1 ] && grep -q "$2" "$tmp/$1.err"; }; then
        fail "$1: stderr is not exactly one $3"
        show "$1"
    fi
}

case $mode in
cpu)
    run_app plain
    if grep -q tiledblas "$tmp/plain.out" "$tmp/plain.err"; then
        fail "plain: tiledblas output without the preload"
        show plain
    fi

    run_app traced TILEDBLAS_VERBOSE=2
    check_trace traced "$products" 'cpu|gpu'
    grep -q "^tiledblas: sgemm .*M=$size N=$size K=$size" "$tmp/traced.err" ||
        { fail "traced: no trace line for the ${size}^3 call"; show traced; }
    expect_summary traced

    # The summary alone: its line, then a line per class of calls auto mode measured near the crossover (if any).
    run_app summary TILEDBLAS_VERBOSE=1
    if ! { head -n 1 "$tmp/summary.err" | grep -q '^tiledblas: summary:' &&
        [ "$(tail -n +2 "$tmp/summary.err" | grep -vc '^tiledblas: near the crossover: ')" -eq 0 ]; }; then
        fail "summary: stderr is not the summary line and its classes"
        show summary
    fi

    run_app forced_cpu TILEDBLAS_VERBOSE=2 TILEDBLAS_DEVICE=cpu
    check_trace forced_cpu "$products" cpu
    ;;
gpu)
    skip_without_gpu "$probe"
    run_app forced_gpu TILEDBLAS_VERBOSE=2 TILEDBLAS_DEVICE=gpu
    check_trace forced_gpu "$products" gpu
    ;;
fallback)
    if "$probe"; then
        echo "SKIP: a GPU is available, nothing to fall back from"
        exit 77
    fi
    run_app fallback TILEDBLAS_DEVICE=gpu
    expect_single_line fallback '^tiledblas: ' "tiledblas warning line"
    ;;
silent)
    run_app silent
    [ -s "$tmp/silent.err" ] && { fail "silent: stderr is not empty"; show silent; }
    if grep -qv '^sgemm_app: ' "$tmp/silent.out"; then
        fail "silent: stdout has lines that are not the app's"
        show silent
    fi
    ;;
*)
    echo "unknown mode $mode"
    exit 2
    ;;
esac
finish
