#!/bin/bash
# In secure-execution mode every TILEDBLAS_* variable is ignored, as the loader
# ignores LD_PRELOAD there: a setuid-root copy of APP, run by an unprivileged
# user with TILEDBLAS_CPU_BLAS naming HOSTILE (a library whose constructor
# creates a file and whose sgemm_ is wrong) and TILEDBLAS_VERBOSE=2, must not
# load it, must print no trace, and must compute the right product.
# Skips (77) where a setuid program cannot be made and run here: not root,
# no setpriv or nobody, a nosuid file system, or no secure-execution mode.
# Usage: expect_secure_env.sh APP HOSTILE
# shellcheck source-path=SCRIPTDIR source=../common/script_lib.sh
source "$(dirname "$0")/../common/script_lib.sh"
app=$1 hostile=$2
skip() { echo "SKIP: $*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "making a setuid-root program needs root"
command -v setpriv >/dev/null || skip "no setpriv"
nobody=$(id -u nobody 2>/dev/null) || skip "no user nobody"
as_nobody() { setpriv --reuid="$nobody" --regid="$(id -g nobody)" --clear-groups "$@"; }

chmod 755 "$tmp"
cp "$app" "$tmp/app"
chown root:root "$tmp/app"
chmod 4755 "$tmp/app"
marker=$tmp/marker
chmod 1777 "$tmp"
as_nobody test -r "$hostile" -a -x "$tmp/app" || skip "nobody cannot reach the programs under $tmp"

run secure as_nobody env TILEDBLAS_CPU_BLAS="$hostile" TILEDBLAS_VERBOSE=2 TILEDBLAS_DEVICE=cpu \
    TB_HOSTILE_MARKER="$marker" "$tmp/app"
grep -qx 'secure: 1' "$tmp/secure.out" || { show secure; skip "not run in secure-execution mode (nosuid?)"; }
expect_status secure 0
[ -n "$(products_ok secure secure_env_app)" ] || { fail "wrong product: the hostile sgemm_ ran"; show secure; }
[ ! -e "$marker" ] || { fail "the library loaded TILEDBLAS_CPU_BLAS in a setuid program"; show secure; }
grep -q "cpu backend: .*$(basename "$hostile")" "$tmp/secure.out" && { fail "the hostile library is the CPU BLAS"; show secure; }
[ "$(trace_count secure)" -eq 0 ] || { fail "TILEDBLAS_VERBOSE was read in a setuid program"; show secure; }
grep '^cpu backend' "$tmp/secure.out"
finish
