#!/usr/bin/env bash
# Forks with threads in flight on the CPU BLAS the process finds by itself (OpenBLAS as
# it comes: its own thread pool, OPENBLAS_NUM_THREADS unset), silent and verbose, and
# reports which children hang and whose lock they wait for: every thread's stack of the
# first few hung children (gdb attached while they hang) and, for each, the innermost
# frame outside the C library, with its object. A report, not a test: the built-in
# backend's runs (ctest fork_threads_verbose0/1) are the library's own pass/fail.
#   tests/api/fork_report.sh [BUILD_DIR]
# FORKS (1000), CALLERS (4), CHILD_SECONDS (2: a child is hung after half of it) and
# STACKS (3: hung children whose stacks are printed, per run) may be set.
set -uo pipefail
build=${1:-build}
program=$build/tests/test_fork_threads
[ -x "$program" ] || { echo "no $program: build the test_fork_threads target first" >&2; exit 2; }
command -v gdb >/dev/null || { echo "gdb is needed (apt-get install gdb)" >&2; exit 2; }
for var in $(compgen -e | grep -E '^(TILEDBLAS_|OPENBLAS_|OMP_|GOTO_)'); do unset "$var"; done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Run by the test with a hung child's pid: its stacks, for the first STACKS children.
cat >"$tmp/on_hang" <<'HOOK'
#!/usr/bin/env bash
n=$(($(cat "$REPORT_DIR/hung" 2>/dev/null || echo 0) + 1))
echo "$n" >"$REPORT_DIR/hung"
[ "$n" -le "$STACKS" ] || exit 0
gdb -batch -nx -p "$1" -ex 'thread apply all bt' >"$REPORT_DIR/stack.$n" 2>/dev/null
HOOK
chmod +x "$tmp/on_hang"

for verbose in 0 1; do
    echo "=== TILEDBLAS_VERBOSE=$verbose, CPU BLAS as the process finds it, OPENBLAS_NUM_THREADS unset"
    rm -f "$tmp"/hung "$tmp"/stack.*
    REPORT_DIR=$tmp STACKS=${STACKS:-3} TILEDBLAS_VERBOSE=$verbose TB_FORKS=${FORKS:-1000} \
        TB_FORK_CALLERS=${CALLERS:-4} TB_FORK_SECONDS=${CHILD_SECONDS:-2} \
        TB_FORK_ON_HANG="$tmp/on_hang" "$program" 2>"$tmp/stderr" | grep -v '^PASS$\|^FAIL$'
    grep -v 'still running after' "$tmp/stderr" | grep -v '^tiledblas:' | head -5
    for stack in "$tmp"/stack.*; do
        [ -e "$stack" ] || continue
        echo "--- hung child ${stack##*.}: stacks"
        grep '^#\|^Thread' "$stack"
        # The innermost frame outside libc and the dynamic loader: whose lock it is.
        owner=$(grep '^#' "$stack" | grep -v 'libc\.so\|ld-linux\|__lll_\|futex\|pthread_mutex\|pthread_cond' |
                head -1 | sed 's/^#[0-9]* *\(0x[0-9a-f]* in \)\?//')
        echo "--- waits in: ${owner:-no stack (gdb could not attach: the child ended first)}"
    done
done
