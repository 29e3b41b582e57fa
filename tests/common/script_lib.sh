# shellcheck shell=bash
# Shared by the test scripts of api/ and integration/ (sourced, bash). Starts from an
# environment without TILEDBLAS_* settings, whatever ctest passed down, and
# gives each script a private temporary directory.
set -u
for var in $(compgen -e | grep '^TILEDBLAS_'); do unset "$var"; done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# run NAME COMMAND...: runs it, keeping $tmp/NAME.out, $tmp/NAME.err, $tmp/NAME.status
run() {
    local name=$1
    shift
    "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
    echo $? >"$tmp/$name.status"
}

# show NAME: the saved output, for the log of a failed check
show() {
    echo "--- $1: exit status $(cat "$tmp/$1.status"), stdout:"
    cat "$tmp/$1.out"
    echo "--- $1: stderr:"
    cat "$tmp/$1.err"
    echo "---"
}

expect_status() { # expect_status NAME CODE
    local status
    status=$(cat "$tmp/$1.status")
    [ "$status" -eq "$2" ] || { fail "$1: exit status $status, expected $2"; show "$1"; }
}

# products_ok NAME PROGRAM: prints N from "PROGRAM: all N products OK", the last stdout line
products_ok() {
    tail -n 1 "$tmp/$1.out" | sed -n "s/^$2: all \\([0-9][0-9]*\\) products OK\$/\\1/p"
}

# run_products NAME PROGRAM [VAR=VALUE...] COMMAND...: runs COMMAND with the
# settings, and LD_PRELOAD=$library unless NAME is "plain"; it must succeed and
# end with "PROGRAM: all N products OK". Sets products to N (0 without that line).
run_products() {
    local name=$1 program=$2
    shift 2
    if [ "$name" = plain ]; then
        run "$name" env "$@"
    else
        run "$name" env LD_PRELOAD="$library" "$@"
    fi
    expect_status "$name" 0
    products=$(products_ok "$name" "$program")
    [ -n "$products" ] || { fail "$name: no 'all N products OK' line"; show "$name"; products=0; }
}

# skip_without_gpu PROBE: exits 77 (skipped) unless the probe finds a usable GPU
skip_without_gpu() {
    "$1" || { echo "SKIP: no usable GPU"; exit 77; }
}

# trace_count NAME: per-call trace lines on stderr
trace_count() {
    grep -c '^tiledblas: sgemm ' "$tmp/$1.err"
}

# check_trace NAME COUNT PATHS: exactly COUNT well-formed trace lines, each path in PATHS (e.g. 'cpu|gpu')
check_trace() {
    local name=$1 count=$2 paths=$3 found
    found=$(trace_count "$name")
    [ "$found" -eq "$count" ] || { fail "$name: $found trace lines, expected $count"; show "$name"; }
    local bad
    bad=$(grep '^tiledblas: sgemm ' "$tmp/$name.err" |
        grep -Ecv " path=($paths) .*reason=[^ ]+|reason=[^ ]+.* path=($paths) ")
    [ "$bad" -eq 0 ] || { fail "$name: $bad trace lines without path=($paths) and reason="; show "$name"; }
    bad=$(grep '^tiledblas: sgemm ' "$tmp/$name.err" | grep -Ecv 'M=[0-9]+ N=[0-9]+ K=[0-9]+')
    [ "$bad" -eq 0 ] || { fail "$name: $bad trace lines without M= N= K="; show "$name"; }
    echo "$name: $found trace lines (expected $count, path=$paths)"
}

# expect_summary NAME: exactly one summary line on stderr
expect_summary() {
    [ "$(grep -c '^tiledblas: summary:' "$tmp/$1.err")" -eq 1 ] ||
        { fail "$1: not exactly one summary line"; show "$1"; }
}

finish() {
    if [ "$failures" -eq 0 ]; then
        echo "PASS"
        exit 0
    fi
    echo "$failures check(s) failed"
    exit 1
}
