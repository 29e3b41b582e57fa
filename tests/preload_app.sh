#!/bin/bash
# LD_PRELOAD=libtiledblas.so on sgemm_app, a program linked to OpenBLAS only.
# Usage: preload_app.sh MODE LIBRARY SGEMM_APP GPU_PROBE
#   cpu       unpreloaded: no trace; preloaded: every call traced, the summary
#             at exit (TILEDBLAS_VERBOSE=1 gives it alone), forced CPU honoured
#   gpu       forced GPU: every call traced with path=gpu (77 without a GPU)
#   fallback  forced GPU without a GPU: one warning line, right results (77 with one)
#   silent    preloaded with no TILEDBLAS_* setting: nothing but the app's output
source "$(dirname "$0")/script_lib.sh"
mode=$1 library=$2 app=$3 probe=$4
size=512

# run_app NAME [VAR=VALUE...]: the app, preloaded unless NAME is "plain"
run_app() {
    local name=$1
    shift
    if [ "$name" = plain ]; then
        run "$name" env "$@" "$app" "$size"
    else
        run "$name" env LD_PRELOAD="$library" "$@" "$app" "$size"
    fi
    expect_status "$name" 0
    calls=$(products_ok "$name" sgemm_app)
    [ -n "$calls" ] || { fail "$name: no 'all N products OK' line"; show "$name"; calls=0; }
}

case $mode in
cpu)
    run_app plain
    if grep -q tiledblas "$tmp/plain.out" "$tmp/plain.err"; then
        fail "plain: tiledblas output without the preload"
        show plain
    fi

    run_app traced TILEDBLAS_VERBOSE=2
    check_trace traced "$calls" 'cpu|gpu'
    grep -q "^tiledblas: sgemm .*M=$size N=$size K=$size" "$tmp/traced.err" ||
        { fail "traced: no trace line for the ${size}^3 call"; show traced; }
    [ "$(grep -c '^tiledblas: summary:' "$tmp/traced.err")" -eq 1 ] ||
        { fail "traced: not exactly one summary line"; show traced; }

    run_app summary TILEDBLAS_VERBOSE=1
    if ! { [ "$(grep -c . "$tmp/summary.err")" -eq 1 ] &&
        grep -q '^tiledblas: summary:' "$tmp/summary.err"; }; then
        fail "summary: stderr is not exactly one summary line"
        show summary
    fi

    run_app forced_cpu TILEDBLAS_VERBOSE=2 TILEDBLAS_DEVICE=cpu
    check_trace forced_cpu "$calls" cpu
    ;;
gpu)
    "$probe" || { echo "SKIP: no usable GPU"; exit 77; }
    run_app forced_gpu TILEDBLAS_VERBOSE=2 TILEDBLAS_DEVICE=gpu
    check_trace forced_gpu "$calls" gpu
    ;;
fallback)
    if "$probe"; then
        echo "SKIP: a GPU is available, nothing to fall back from"
        exit 77
    fi
    run_app fallback TILEDBLAS_DEVICE=gpu
    if ! { [ "$(grep -c . "$tmp/fallback.err")" -eq 1 ] &&
        grep -q '^tiledblas: ' "$tmp/fallback.err"; }; then
        fail "fallback: stderr is not exactly one tiledblas warning line"
        show fallback
    fi
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
