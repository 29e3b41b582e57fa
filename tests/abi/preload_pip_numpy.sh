#!/bin/bash
# LD_PRELOAD=libtiledblas.so under pip's numpy and SciPy, whose bundled
# OpenBLAS has scipy_-prefixed names (64-bit integers for numpy): every
# float32 product must be one SGEMM traced through tiledblas and stay right.
# The packages live in a virtual environment under the build tree, made on the
# first run (numpy 2.x and SciPy from the package index) and kept; where pip
# cannot reach the index, python3 serves if it has numpy 2 and SciPy from pip,
# else the test is skipped.
# Usage: preload_pip_numpy.sh MODE LIBRARY VENV SCRIPT GPU_PROBE
#   cpu  unpreloaded: no trace; preloaded: one trace line per SGEMM, the exit
#        summary naming numpy's and SciPy's OpenBLAS as the CPU BLAS of their
#        names, and the ILP64 CPU BLAS numpy's own
#   gpu  a 4096 x 4096 product, automatic path: every call traced with
#        path=gpu; prints numpy's time for it alone and preloaded (77 without
#        a GPU)
# shellcheck source-path=SCRIPTDIR source=../common/script_lib.sh
source "$(dirname "$0")/../common/script_lib.sh"
mode=$1 library=$2 venv=$3 script=$4 probe=$5

[ "$mode" = gpu ] && skip_without_gpu "$probe"

has_pip_numpy() { # has_pip_numpy PYTHON: SciPy and pip's numpy 2 (built with scipy-openblas) importable
    "$1" -c '
import numpy, scipy, sys
blas = numpy.__config__.CONFIG["Build Dependencies"]["blas"]["name"]
sys.exit(int(numpy.__version__.split(".")[0]) < 2 or "scipy-openblas" not in blas)' 2>/dev/null
}

# make_venv: numpy 2.x and SciPy installed into $venv; 0 on success, 77 where no
# venv can be made or the index cannot be reached (saying which in $why), 1 on
# any other failure.
make_venv() {
    rm -rf "$venv"
    why="python3 -m venv failed (Debian: python3-venv)"
    python3 -m venv "$venv" >"$tmp/venv.log" 2>&1 || { cat "$tmp/venv.log"; return 77; }
    local pip=("$venv/bin/python" -m pip --disable-pip-version-check)
    why="pip cannot reach the package index"
    PIP_DEFAULT_TIMEOUT=15 PIP_RETRIES=1 "${pip[@]}" index versions numpy >"$tmp/index.log" 2>&1 ||
        { rm -rf "$venv"; return 77; }
    if ! "${pip[@]}" install --quiet 'numpy>=2,<3' scipy >"$tmp/pip.log" 2>&1; then
        cat "$tmp/pip.log"
        rm -rf "$venv"
        return 1
    fi
}

# The environment is made once, whichever test gets here first; the others wait.
exec 9>"$venv.lock"
flock 9
python=$venv/bin/python
if ! has_pip_numpy "$python"; then
    make_venv
    case $? in
    0) ;;
    77)
        python=$(command -v python3)
        has_pip_numpy "$python" || { echo "SKIP: no numpy from pip: $why, and $python has no pip numpy 2 and SciPy"; exit 77; }
        echo "$why: using $python"
        ;;
    *)
        echo "FAIL: pip could not install numpy and SciPy into $venv"
        exit 1
        ;;
    esac
fi
flock -u 9

# run_numpy NAME [VAR=VALUE...] [-- ARGS]: the script, preloaded unless NAME is "plain"
run_numpy() {
    local name=$1
    shift
    local settings=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do settings+=("$1"); shift; done
    [ "${1:-}" = -- ] && shift
    run_products "$name" pip_numpy "${settings[@]}" "$python" "$script" "$@"
    head -n 1 "$tmp/$name.out"
}

case $mode in
cpu)
    run_numpy plain
    [ "$(trace_count plain)" -eq 0 ] || { fail "plain: trace lines without the preload"; show plain; }
    run_numpy traced TILEDBLAS_VERBOSE=2
    check_trace traced "$products" 'cpu|gpu'
    # Small products ran on the CPU BLAS of their names: numpy's ILP64 OpenBLAS, SciPy's LP64 one.
    summary=$(grep '^tiledblas: summary:' "$tmp/traced.err")
    if ! grep -Eq 'libscipy_openblas64_[^ ]*\.so \(scipy64\)' <<<"$summary" ||
        ! grep -Eq 'libscipy_openblas-[^ ]*\.so \(scipy\)' <<<"$summary"; then
        fail "traced: the summary does not name numpy's and SciPy's OpenBLAS as the CPU BLAS: $summary"
    fi
    # The ILP64 CPU BLAS, after numpy's last call (scipy_cblas_sgemm64_), is numpy's own OpenBLAS.
    run backend env LD_PRELOAD="$library" "$python" -c '
import ctypes, numpy as np
a = np.ones((8, 8), np.float32)
a @ a
query = ctypes.CDLL(None).tiledblas_cpu_backend_ilp64
query.restype = ctypes.c_char_p
print(query().decode())'
    if [ "$(cat "$tmp/backend.status")" -ne 0 ] || ! grep -q 'scipy_openblas' "$tmp/backend.out"; then
        fail "backend: the ILP64 CPU BLAS of the preloaded numpy is not numpy's own OpenBLAS"
        show backend
    fi
    ;;
gpu)
    run_numpy plain -- large
    alone=$(sed -n 's/^pip_numpy: large 4096: //p' "$tmp/plain.out")
    run_numpy traced TILEDBLAS_VERBOSE=2 -- large
    check_trace traced "$products" gpu
    preloaded=$(sed -n 's/^pip_numpy: large 4096: //p' "$tmp/traced.out")
    echo "numpy 4096 x 4096 float32 matmul, end to end: numpy alone $alone; preloaded $preloaded"
    ;;
*)
    echo "unknown mode $mode"
    exit 2
    ;;
esac
finish
