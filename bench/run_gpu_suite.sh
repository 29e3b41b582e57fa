#!/usr/bin/env bash
# The whole GPU session of tiledblas in one command: configure, build, ctest,
# then the benchmarks. Run it from the repository root on the GPU machine,
# after `source .gpu/env.sh` (OpenBLAS for the CPU path and the baseline):
#
#     STEPS="test bench shapes sanitize" bash bench/run_gpu_suite.sh
#
# STEPS picks what runs after the build (default "test bench"): test (ctest),
# bench (the ladder at 1024..8192, host-to-host, the stages of one call),
# policy (auto mode against OpenBLAS alone and the forced GPU, interleaved in one
# process, 16..16384 and skinny shapes; OpenBLAS's threads spinning after a call,
# as by default, and parked), shapes (the fast-kernel shape list and every transpose),
# tune (every tile shape of the regtile and multistage rungs on that list), sanitize
# (compute-sanitizer).
# It writes, under $OUT (./suite-out when unset):
#   build.log   configure and build output
#   ctest.log   ctest --output-on-failure
#   sanitize.log compute-sanitizer output
#   bench.txt   nvidia-smi, then every benchmark's setup, progress and table
#   bench.csv   every benchmark row, the step's name first
# and ends with a summary: the ctest verdict and the tables. A failed step is
# recorded and the next one runs anyway; the exit status is 1 if any failed.
# Every step has a time limit, and all of them end by DEADLINE, well inside
# the device machine's 10 minutes a command.
set -u -o pipefail

OUT=${OUT:-$PWD/suite-out}
BUILD=${BUILD:-build-gpu}
BENCH=$BUILD/bench/tiledblas-bench
PARTS=$BUILD/suite # one CSV per benchmark step, merged into bench.csv
LOG=$OUT/bench.txt
DEADLINE=${DEADLINE:-540} # seconds after the start
STEPS=${STEPS:-test bench} # any of: test bench policy shapes tune sanitize
failed=()

mkdir -p "$OUT" "$PARTS"
: >"$LOG"

# step NAME LIMIT LOGFILE COMMAND...: runs COMMAND into LOGFILE for at most
# LIMIT seconds (less when the deadline is nearer) and records a failure.
step() {
    local name=$1 limit=$2 log=$3 rc start=$SECONDS
    shift 3
    local left=$((DEADLINE - SECONDS))
    ((limit > left)) && limit=$left
    if ((limit < 10)); then
        echo "== $name: not run, out of time" | tee -a "$log"
        failed+=("$name (not run, out of time)")
        return
    fi
    echo "== $name (limit ${limit}s): $*" | tee -a "$log"
    timeout -k 10 "$limit" "$@" >>"$log" 2>&1
    rc=$?
    echo "== $name: exit $rc after $((SECONDS - start))s$( ((rc == 124)) && echo ', timed out')" |
        tee -a "$log"
    ((rc == 0)) || failed+=("$name (exit $rc)")
}

# bench NAME LIMIT [VAR=VALUE...] -- ARGS...: one tiledblas-bench run into bench.txt.
bench() {
    local name=$1 limit=$2
    shift 2
    local envs=()
    while [[ $1 != -- ]]; do envs+=("$1"); shift; done
    shift
    step "$name" "$limit" "$LOG" env "${envs[@]}" "$BENCH" "$@" --csv "$PARTS/$name.csv"
    echo >>"$LOG"
}

{
    echo "tiledblas GPU suite, $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo none)"
    echo "host: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
    lscpu 2>/dev/null | grep -E '^(Thread|Core|Socket|NUMA)'
    echo "nvcc: $(nvcc --version | tail -1); $(cmake --version | head -1)"
    echo "OPENBLAS_LIB=${OPENBLAS_LIB:-(unset)}"
    nvidia-smi 2>&1
    echo
} | tee -a "$LOG"

want() { [[ " $STEPS " == *" $1 "* ]]; }

generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
: >"$OUT/build.log"
step configure 120 "$OUT/build.log" cmake -S . -B "$BUILD" "${generator[@]}" \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release
step build 240 "$OUT/build.log" cmake --build "$BUILD" -j16
if want test; then
    : >"$OUT/ctest.log"
    step ctest 300 "$OUT/ctest.log" ctest --test-dir "$BUILD" --output-on-failure -j4 --timeout 280
fi

bench_from=$(($(wc -l <"$LOG") + 1))
if want bench; then
    bench kernels 120 -- --kernels --sizes 1024,2048,4096,8192
    bench e2e-gpu 90 TILEDBLAS_DEVICE=gpu -- --e2e --sizes 1024,2048,4096
    bench e2e-auto 90 TILEDBLAS_DEVICE=auto -- --e2e --sizes 1024,2048,4096
    bench e2e-8192 90 TILEDBLAS_DEVICE=gpu -- --e2e --sizes 8192 --no-openblas --reps 5
    # beta = 1 and beta = 0, alternating call by call in one process (their ratio is the beta column).
    bench e2e-beta 90 TILEDBLAS_DEVICE=gpu -- --e2e --sizes 2048,4096,8192 --beta 1 --no-openblas --reps 9
    # NVIDIA's NVBLAS on the same host memory, pinned automatically, OpenBLAS for its CPU part.
    nvblas=$(ls /usr/local/cuda/lib64/libnvblas.so 2>/dev/null)
    if [[ -n $nvblas ]]; then
        printf 'NVBLAS_LOGFILE %s\nNVBLAS_CPU_BLAS_LIB %s\nNVBLAS_GPU_LIST ALL\nNVBLAS_AUTOPIN_MEM_ENABLED\n' \
            "$BUILD/nvblas.log" "${OPENBLAS_LIB:-libopenblas.so.0}" >"$BUILD/nvblas.conf"
        bench e2e-nvblas 120 TILEDBLAS_DEVICE=gpu NVBLAS_CONFIG_FILE="$BUILD/nvblas.conf" -- \
            --e2e --sizes 4096,8192 --no-openblas --reps 9 --nvblas "$nvblas"
    fi
    # The plain-copy baseline: no pinned staging, cudaMemcpy from pageable memory, one kernel.
    bench e2e-pageable 90 TILEDBLAS_DEVICE=gpu TILEDBLAS_PINNED_MB=0 -- --e2e --sizes 1024,2048,4096,8192 \
        --no-openblas --reps 5
    # The host copy pool with fewer of the CPUs than the default (all of them, at most 16).
    for threads in 8 12; do
        bench e2e-copy$threads 90 TILEDBLAS_DEVICE=gpu TILEDBLAS_COPY_THREADS=$threads -- --e2e \
            --sizes 2048,4096,8192 --no-openblas --reps 5
    done
    # Four threads calling at once against the same calls one at a time.
    bench e2e-threads 90 TILEDBLAS_DEVICE=gpu -- --e2e --sizes 256,512,1024,2048,4096 --threads 4 --no-openblas --reps 10
    # Where the time of one call goes, stage by stage.
    bench timeline 90 TILEDBLAS_DEVICE=gpu -- --timeline --sizes 2048,4096,8192 --reps 5
fi
if want policy; then
    grep '^cpu ' /proc/stat | sed 's/^/before policy: /' >>"$LOG"
    # Auto mode against each path forced, interleaved in one process; OpenBLAS up to 4096
    # and on the skinny shapes, the forced GPU alone beyond.
    small=16,32,64,96,128,192,256,384,512,768,1024,2048,4096
    skinny=4096x4096x16,4096x16x4096,16x4096x4096,4096x4096x64,8192x8192x256,8192x128x8192,128x8192x8192,1000,4097x4095x4099
    # TILEDBLAS_VERBOSE stays unset, as for users: its accounting takes a lock per call (tens of ns: a few % of a 16^3 call).
    bench policy 180 -- --policy --reps 20 --sizes $small,$skinny
    # The same with OpenBLAS's threads parked right after each call (by default they spin ~0.1 s):
    # auto mode's CPU calls then leave no threads spinning into its GPU calls, but each
    # multithreaded OpenBLAS call wakes its threads anew.
    bench policy-parked 240 OPENBLAS_THREAD_TIMEOUT=4 -- --policy --reps 30 --sizes $small,$skinny
    bench policy-large 90 -- --policy --reps 3 --sizes 8192,16384 --no-openblas
    grep '^cpu ' /proc/stat | sed 's/^/after policy: /' >>"$LOG"
fi
if want shapes; then
    bench kernel-shapes 150 -- --kernels \
        --sizes 1000,4097x4095x4099,8192x8192x256,8192x128x8192,128x8192x8192,4096x4096x64
    # Grids whose last wave of large tiles is mostly empty on 132 SMs: stream-K tails.
    bench kernel-tails 90 -- --kernels --sizes 3072,5120,2304x2304x1029
    bench kernel-trans-row 90 -- --kernels --sizes 4096 --trans NN,NT,TN,TT --layout row
    bench kernel-trans-col 90 -- --kernels --sizes 4096 --trans NN,NT,TN,TT --layout col
fi
if want tune; then
    bench tune 300 -- --tune --sizes \
        1024,2048,4096,8192,1000,4097x4095x4099,8192x8192x256,8192x128x8192,128x8192x8192,4096x4096x64
fi
if want sanitize; then
    # Every rung under memcheck and racecheck on the grid's small shapes.
    : >"$OUT/sanitize.log"
    # Split-K (long K, small C) and every tile shape, all transposes, under memcheck.
    step memcheck-splitk 90 "$OUT/sanitize.log" compute-sanitizer --tool memcheck --error-exitcode 9 \
        "$BENCH" --kernels --sizes 100x70x3000,128x128x2048 --trans NN,NT,TN,TT --reps 1
    # The default kernel's re-storing of one operand when both are stored along k.
    step memcheck-restore 90 "$OUT/sanitize.log" compute-sanitizer --tool memcheck --error-exitcode 9 \
        "$BENCH" --kernels --sizes 1021x1027x1023,2045x2043x2047 --trans NT,TN --layout row --reps 1
    step memcheck-shapes 90 "$OUT/sanitize.log" compute-sanitizer --tool memcheck --error-exitcode 9 \
        "$BENCH" --tune --sizes 257x129x65 --trans NN,NT,TN,TT --reps 1
    # Split-K summed in clusters (sm_90): every tile shape, 2-8 slices; memcheck on an unaligned
    # small case and two larger ones, racecheck (far slower) on the small one.
    step memcheck-clusters 120 "$OUT/sanitize.log" compute-sanitizer --tool memcheck --error-exitcode 9 \
        "$BUILD/tests/test_split_clusters" 3
    step racecheck-clusters 180 "$OUT/sanitize.log" compute-sanitizer --tool racecheck --error-exitcode 9 \
        "$BUILD/tests/test_split_clusters" 1
    # The default kernel's launches over slices of a long K, with and without scratch.
    step memcheck-chains 120 "$OUT/sanitize.log" compute-sanitizer --tool memcheck --error-exitcode 9 \
        "$BUILD/tests/test_chains"
    # The pipelined host path, host memory in and out: op(A)'s rows x K odd (the panels after it packed
    # to stay aligned), five panels with the last in halves; beta = 1 and, in alternation, 0.
    step memcheck-pipeline 120 "$OUT/sanitize.log" env TILEDBLAS_DEVICE=gpu TILEDBLAS_PIPELINE_MIN_FLOPS=0 \
        compute-sanitizer --tool memcheck --error-exitcode 9 \
        "$BENCH" --e2e --sizes 1023x1025x513,67x1280x600 --trans NN,TT --no-openblas --reps 1 --beta 1
    # Stream-K tails (on 132 SMs): tiles cut in two pieces, and in about six.
    step memcheck-stream-k 120 "$OUT/sanitize.log" compute-sanitizer --tool memcheck --error-exitcode 9 \
        "$BENCH" --kernels --sizes 2304x2304x1029,2176x2176x4100 --trans NN,TT --reps 1
    for kernel in naive tiled16 tiled32 regtile multistage best; do
        step "memcheck-$kernel" 60 "$OUT/sanitize.log" env TILEDBLAS_DEVICE=gpu TILEDBLAS_KERNEL=$kernel \
            compute-sanitizer --tool memcheck --error-exitcode 9 \
            "$BUILD/tests/test_sgemm_grid" --max-dim 65
    done
    # racecheck tracks every shared-memory access: a few launches of each rung and shape.
    step racecheck-ladder 120 "$OUT/sanitize.log" compute-sanitizer --tool racecheck --error-exitcode 9 \
        "$BENCH" --kernels --sizes 100x70x33 --trans NN,TT --reps 1
    step racecheck-shapes 120 "$OUT/sanitize.log" compute-sanitizer --tool racecheck --error-exitcode 9 \
        "$BENCH" --tune --sizes 130x70x20 --trans NT,TN --reps 1
fi

# One CSV: the step's name, then the benchmark's columns.
first=1
for name in kernels e2e-gpu e2e-auto e2e-8192 e2e-beta e2e-nvblas e2e-pageable e2e-copy8 e2e-copy12 e2e-threads timeline \
    policy policy-parked policy-large kernel-shapes kernel-tails kernel-trans-row kernel-trans-col tune; do
    part=$PARTS/$name.csv
    [[ -f $part ]] || continue
    ((first)) && sed -n '1s/^/step,/p' "$part"
    sed -n "2,\$s/^/$name,/p" "$part"
    first=0
done >"$OUT/bench.csv"

echo
echo "===== summary ($((SECONDS))s)"
if want test; then
    grep -E 'tests passed|No tests were found' "$OUT/ctest.log" || echo "ctest: no summary line (see ctest.log)"
    sed -n '/^The following tests FAILED/,$p' "$OUT/ctest.log"
fi
echo
tail -n +"$bench_from" "$LOG" | grep -v -E '^\[(kernels|e2e|policy)\] '
if ((${#failed[@]})); then
    printf 'FAILED STEP: %s\n' "${failed[@]}"
    exit 1
fi
echo "all steps passed"
