#!/bin/bash
# Runs a program linked to tiledblas on the GPU with TILEDBLAS_VERBOSE=3 and
# every call large enough pipelined. It must succeed with all its products
# right, and print the stages of its pipelined calls: well-formed lines
# (0 <= begin <= end, in ms), and for every panel computed, that panel's C
# going out.
# Usage: expect_pipeline_trace.sh PROBE PROGRAM [ARGS...]
# shellcheck source-path=SCRIPTDIR source=../common/script_lib.sh
source "$(dirname "$0")/../common/script_lib.sh"
probe=$1 program=$2
shift
skip_without_gpu "$probe"

run traced env TILEDBLAS_DEVICE=gpu TILEDBLAS_VERBOSE=3 TILEDBLAS_PIPELINE_MIN_FLOPS=0 "$@"
expect_status traced 0
[ -n "$(products_ok traced "$(basename "$program")")" ] || { fail "no 'all N products OK' line"; show traced; }

stages="$tmp/stages"
grep -E '^tiledblas: pipeline +[0-9]' "$tmp/traced.err" >"$stages"
[ -s "$stages" ] || { fail "no pipeline stage lines"; show traced; }
bad=$(awk '!($3 >= 0 && $3 <= $4 && $5 == "ms" && ($6 == "gpu" || $6 == "host") && $NF ~ /^[0-9]+$/ &&
    ($(NF - 1) == "panel" || $(NF - 1) == "piece"))' "$stages" | wc -l)
[ "$bad" -eq 0 ] || { fail "$bad malformed stage lines"; show traced; }
computed=$(grep ' gpu  kernel panel ' "$stages" | awk '{print $NF}' | sort -u | tr '\n' ' ')
drained=$(grep ' gpu  DMA out C panel ' "$stages" | awk '{print $NF}' | sort -u | tr '\n' ' ')
[ -n "$computed" ] && [ "$computed" = "$drained" ] ||
    { fail "panels computed ($computed) and gone out ($drained) differ"; show traced; }
echo "traced: $(wc -l <"$stages") stage lines, panels $computed"
finish
