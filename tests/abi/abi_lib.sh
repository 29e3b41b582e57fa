# shellcheck shell=bash disable=SC2154 # tmp: set by common/script_lib.sh
# Shared by the scripts of abi/ (sourced, bash, after common/script_lib.sh):
# programs compiled at test time, as a user compiles them, linked to
# tiledblas alone or to OpenBLAS, so that what the library exports is itself
# under test (a missing routine is a link error in the test, not in the build).

# link_program OUTPUT SOURCE tiledblas|openblas LIBRARY CC [FLAGS...]: compiles
# SOURCE into $tmp/OUTPUT linked to tiledblas (LIBRARY, with its folder as run
# path) or to -lopenblas; 0 on success, else the compiler's messages are in
# $tmp/OUTPUT.link.
link_program() {
    local output=$1 source=$2 with=$3 library=$4 cc=$5
    shift 5
    local libs
    if [ "$with" = tiledblas ]; then
        local dir
        dir=$(dirname "$library")
        libs=(-L"$dir" -ltiledblas "-Wl,-rpath,$dir")
    else
        libs=(-lopenblas)
    fi
    "$cc" -std=c11 -O2 -Wall -Wextra -D_POSIX_C_SOURCE=200809L "$@" -o "$tmp/$output" "$source" \
        "${libs[@]}" -lm -ldl >"$tmp/$output.link" 2>&1
}

# link_or_fail OUTPUT SOURCE tiledblas LIBRARY CC [FLAGS...]: as link_program,
# a failure being a failed check that shows the linker's messages.
link_or_fail() {
    link_program "$@" && return 0
    fail "$1: does not link with -ltiledblas alone:"
    sed 's/^/    /' "$tmp/$1.link" | head -n 20
    return 1
}

# link_openblas_or_skip OUTPUT SOURCE CC [FLAGS...]: the OpenBLAS build, or exit 77.
link_openblas_or_skip() {
    local output=$1 source=$2 cc=$3
    shift 3
    link_program "$output" "$source" openblas none "$cc" "$@" && return 0
    echo "SKIP: cannot link to OpenBLAS (-lopenblas; Debian: libopenblas-dev)"
    sed 's/^/    /' "$tmp/$output.link" | head -n 5
    exit 77
}

# needs_no_other_blas PROGRAM: its NEEDED entries name tiledblas and no other BLAS or LAPACK
needs_no_other_blas() {
    local needed
    needed=$(readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
    grep -q '^libtiledblas\.so' <<<"$needed" || fail "$(basename "$1"): libtiledblas not NEEDED: $needed"
    local others
    others=$(grep -E 'blas|lapack|mkl|flexiblas' <<<"$needed" | grep -v '^libtiledblas\.so')
    [ -z "$others" ] || fail "$(basename "$1"): needs another BLAS: $others"
}
