#!/bin/bash
# LD_PRELOAD=libtiledblas.so under numpy, whose BLAS is loaded in a local
# scope: float32 products must be traced through tiledblas and stay right.
# Usage: preload_numpy.sh MODE LIBRARY PYTHON NUMPY_SCRIPT GPU_PROBE
#   cpu  unpreloaded: no trace; preloaded: one trace line per product
#   gpu  forced GPU: every product traced with path=gpu (77 without a GPU)
# shellcheck source-path=SCRIPTDIR source=../common/script_lib.sh
source "$(dirname "$0")/../common/script_lib.sh"
mode=$1 library=$2 python=$3 script=$4 probe=$5

"$python" -c 'import numpy' 2>/dev/null || { echo "SKIP: $python has no numpy"; exit 77; }

# run_numpy NAME [VAR=VALUE...]: the script, preloaded unless NAME is "plain"
run_numpy() {
    local name=$1
    shift
    run_products "$name" preload_numpy "$@" "$python" "$script"
}

case $mode in
cpu)
    run_numpy plain
    [ "$(trace_count plain)" -eq 0 ] || { fail "plain: trace lines without the preload"; show plain; }
    run_numpy traced TILEDBLAS_VERBOSE=2
    check_trace traced "$products" 'cpu|gpu'
    ;;
gpu)
    skip_without_gpu "$probe"
    run_numpy forced_gpu TILEDBLAS_VERBOSE=2 TILEDBLAS_DEVICE=gpu
    check_trace forced_gpu "$products" gpu
    ;;
*)
    echo "unknown mode $mode"
    exit 2
    ;;
esac
finish
