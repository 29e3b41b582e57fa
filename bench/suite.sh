#!/usr/bin/env bash
# bench/suite.sh: configure, build, test and benchmark tiledblas in one command,
# on any Linux machine with an NVIDIA GPU, the CUDA toolkit and OpenBLAS.
#
#   bench/suite.sh [--out DIR] [--build DIR] [--steps "STEP..."] [--deadline SECONDS]
#                  [--jobs N] [--cuda-arch LIST] [--fresh]
#
#   --out DIR         where the results go [./suite-out]
#   --build DIR       the CMake build folder [<repository>/build-suite]
#   --steps "..."     what runs after the build [test bench], any of:
#                       test      ctest
#                       bench     the kernel ladder at 1024..8192 against cuBLAS; cblas_sgemm
#                                 host to host against OpenBLAS and NVBLAS (GPU and auto
#                                 mode, beta = 1, pageable copies, copy threads, four
#                                 threads at once); the stages of one call; cblas_sgemm on
#                                 device pointers against cuBLAS, listed and random shapes;
#                                 the error of both maths beside cuBLAS's on five inputs
#                       policy    auto mode against OpenBLAS alone and the forced GPU,
#                                 interleaved in one process, 16..16384 and skinny shapes,
#                                 with OpenBLAS's threads spinning after a call and parked
#                       shapes    the default kernel on awkward shapes, stream-K tails and
#                                 every transpose
#                       tune      every tile shape of the regtile and multistage rungs
#                       numpy     numpy's float32 matmul (python3's numpy) alone and with the
#                                 library preloaded, 2048..8192, processes in turns
#                       sanitize  compute-sanitizer (memcheck, racecheck) on every rung
#   --deadline S      stop by S seconds after the start: a step whose usual length would
#                     take it past that is not started (and is reported), a running one
#                     is stopped there [no limit]
#   --fresh           discard the results an earlier run left in --out
#   --jobs N          parallel build jobs [the number of CPUs]; ctest runs half that many
#                     tests at once, at least 4 and at most 8: the GPU tests share one device
#   --cuda-arch LIST  CMAKE_CUDA_ARCHITECTURES [the compute capability of the GPUs
#                     nvidia-smi lists, else the project's default list]
#
# OpenBLAS, for the library's CPU path and as the CPU baseline, is found as on any
# user's machine: $OPENBLAS_LIB if set, else pkg-config's openblas (its libdir's
# libopenblas.so.0), else the loader's libopenblas.so.0. It is run at its best for
# this CPU: where its own detection picks an older core than the CPU's flags
# support (a DYNAMIC_ARCH build may not recognise a virtual CPU and fall back to
# Prescott), OPENBLAS_CORETYPE is set to SkylakeX (AVX-512) or Haswell (AVX2) for
# every step. An OPENBLAS_CORETYPE already set is kept. The library's own CPU path
# takes the same OpenBLAS (TILEDBLAS_CPU_BLAS, unless already set). NVBLAS (libnvblas.so of
# the CUDA toolkit, or $NVBLAS_LIB) is configured as its documentation advises:
# all GPUs, pinned memory automatically, the same OpenBLAS as its CPU BLAS.
#
# Runs on the same commit add up in one --out folder, so the steps can be split over
# several shorter runs (say "test bench", then "policy"): each benchmark step's CSV is
# kept under steps/ until that step runs again, and bench.csv holds them all. Results
# of another commit (or --fresh) are discarded first.
#
# Writes, under the --out folder:
#   environment.txt  "key: value" lines: date, commit, GPUs, driver, CUDA, compilers,
#                    CPU and its flags, OpenBLAS and the core it runs, NVBLAS config
#   build.log        configure and build output
#   ctest.log        ctest --output-on-failure (step test)
#   soak.txt         the GPU soak's whole output, its figures at the end (step test)
#   sanitize.log     compute-sanitizer output (step sanitize)
#   bench.txt        every benchmark's setup, progress and table
#   bench.csv        every benchmark row, the step's name first
#   nvblas.conf      the NVBLAS configuration used
#   steps/           each benchmark step's CSV, the commit and the steps run on it
# and ends with a summary. A failed step is recorded and the next one runs anyway;
# the exit status is 1 if a step failed or was not started, 2 for bad usage.
# bench/report.py turns bench.csv and environment.txt into docs/PERFORMANCE.md.
set -u -o pipefail

usage() {
    sed -n '2,/^set -u/{/^set -u/d;s/^# \{0,1\}//;p}' "$0"
}

die_usage() {
    echo "bench/suite.sh: $1 (see --help)" >&2
    exit 2
}

out=suite-out
build=
steps="test bench"
deadline=0
jobs=$(nproc 2>/dev/null || echo 4)
cuda_arch=
fresh=0
while (($#)); do
    case $1 in
    -h | --help) usage; exit 0 ;;
    --fresh) fresh=1; shift; continue ;;
    --out | --build | --steps | --deadline | --jobs | --cuda-arch)
        (($# >= 2)) || die_usage "$1 needs a value"
        case $1 in
        --out) out=$2 ;;
        --build) build=$2 ;;
        --steps) steps=$2 ;;
        --deadline) deadline=$2 ;;
        --jobs) jobs=$2 ;;
        --cuda-arch) cuda_arch=$2 ;;
        esac
        shift 2
        ;;
    *) die_usage "unknown argument '$1'" ;;
    esac
done
[[ $deadline =~ ^[0-9]+$ ]] || die_usage "--deadline takes whole seconds"
[[ $jobs =~ ^[1-9][0-9]*$ ]] || die_usage "--jobs takes a positive number"
test_jobs=$((jobs / 2 < 4 ? 4 : jobs / 2 > 8 ? 8 : jobs / 2))
read -ra step_list <<<"$steps"
for s in ${step_list[@]+"${step_list[@]}"}; do
    [[ " test bench policy shapes tune numpy sanitize " == *" $s "* ]] || die_usage "unknown step '$s'"
done

# Paths given relative to where the suite is started from; the work runs from the repository root.
absolute() { mkdir -p "$1" && (cd "$1" && pwd); }
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=$(absolute "$out") || die_usage "cannot create --out $out"
BUILD=$(absolute "${build:-$repo/build-suite}") || die_usage "cannot create --build $build"
cd "$repo" || exit 1

BENCH=$BUILD/bench/tiledblas-bench
PARTS=$OUT/steps # one CSV per benchmark step, merged into bench.csv
LOG=$OUT/bench.txt
ENV_FILE=$OUT/environment.txt
failed=()  # steps that ran and failed
not_run=() # steps not started
# Every benchmark step in the order of bench.csv.
all_bench_steps=(kernels e2e-gpu e2e-auto e2e-8192 e2e-beta e2e-nvblas e2e-pageable e2e-copy8 e2e-copy12
    e2e-threads e2e-tensor e2e-16384 timeline api api-random api-tensor api-tensor-ops accuracy policy policy-parked policy-large kernel-shapes kernel-tails kernel-trans-row
    kernel-trans-col tune numpy)

: >"$OUT/build.log"

want() { [[ " $steps " == *" $1 "* ]]; }

# step NAME BUDGET LOGFILE COMMAND...: runs COMMAND, its output appended to LOGFILE.
# BUDGET is about the longest the step takes on a current GPU (an H100; seconds):
# with --deadline, a step that would end past the deadline is not started, and a
# started one is stopped at the deadline. Returns COMMAND's status.
step() {
    local name=$1 budget=$2 log=$3 rc start=$SECONDS limit=()
    shift 3
    if ((deadline)); then
        local left=$((deadline - SECONDS))
        if ((budget > left || left < 1)); then
            echo "== $name: not started, it takes about ${budget}s and ${left}s are left before the deadline" |
                tee -a "$log"
            not_run+=("$name (deadline)")
            return 1
        fi
        limit=(timeout -k 10 "$left")
    fi
    echo "== $name: $*" | tee -a "$log"
    ${limit[@]+"${limit[@]}"} "$@" >>"$log" 2>&1
    rc=$?
    echo "== $name: exit $rc after $((SECONDS - start))s$( ((rc == 124 && deadline)) && echo ', stopped at the deadline')" |
        tee -a "$log"
    case $rc in
    0) ;;
    77) failed+=("$name (exit 77: skipped, no usable GPU or no OpenBLAS)") ;;
    124) failed+=("$name (exit 124: $( ((deadline)) && echo 'stopped at the deadline' || echo 'timed out'))") ;;
    *) failed+=("$name (exit $rc)") ;;
    esac
    return "$rc"
}

# bench NAME BUDGET [VAR=VALUE...] -- ARGS...: one tiledblas-bench run into bench.txt and its CSV.
bench() {
    local name=$1 budget=$2 envs=()
    shift 2
    while [[ $1 != -- ]]; do envs+=("$1"); shift; done
    shift
    if [[ ! -x $BENCH ]]; then
        echo "== $name: not started, $BENCH was not built" | tee -a "$LOG"
        not_run+=("$name (not built)")
        return
    fi
    csv_step "$name" "$budget" env ${envs[@]+"${envs[@]}"} "$BENCH" "$@"
}

# csv_step NAME BUDGET COMMAND...: a benchmark step whose COMMAND takes --csv FILE, into
# bench.txt and the step's CSV. A step not started (the deadline) keeps an earlier run's
# result; one that ran replaces it.
csv_step() {
    local name=$1 budget=$2 not_started=${#not_run[@]}
    shift 2
    rm -f "$PARTS/$name.csv.new"
    step "$name" "$budget" "$LOG" "$@" --csv "$PARTS/$name.csv.new"
    if ((${#not_run[@]} == not_started)); then
        rm -f "$PARTS/$name.csv"
        [[ -e $PARTS/$name.csv.new ]] && mv "$PARTS/$name.csv.new" "$PARTS/$name.csv"
    fi
    echo >>"$LOG"
}

# A test program of the build, wherever tests/ puts it.
test_program() {
    find "$BUILD/tests" -type f -name "$1" -perm -u+x 2>/dev/null | head -n 1
}

# sanitize NAME BUDGET TOOL PROGRAM ARGS...: one compute-sanitizer run into sanitize.log.
sanitize() {
    local name=$1 budget=$2 tool=$3 program=$4
    shift 4
    if [[ -z $program || ! -x $program ]]; then
        echo "== $name: not started, its program was not built" | tee -a "$OUT/sanitize.log"
        not_run+=("$name (not built)")
        return
    fi
    step "$name" "$budget" "$OUT/sanitize.log" "$sanitizer" --tool "$tool" --error-exitcode 9 "$program" "$@"
}

# ---- OpenBLAS: which library, and which of its cores runs --------------------

ldconfig=$(command -v ldconfig || echo /sbin/ldconfig) # /sbin is not on every user's PATH
openblas_from=
if [[ -n ${OPENBLAS_LIB:-} ]]; then
    openblas_from="OPENBLAS_LIB"
elif libdir=$(pkg-config --variable=libdir openblas 2>/dev/null) && [[ -n $libdir ]]; then
    for f in "$libdir/libopenblas.so.0" "$libdir/libopenblas.so"; do
        if [[ -e $f ]]; then
            OPENBLAS_LIB=${f//\/\///}
            openblas_from="pkg-config openblas (libdir $libdir)"
            break
        fi
    done
fi
if [[ -z $openblas_from ]]; then
    OPENBLAS_LIB=$("$ldconfig" -p 2>/dev/null | awk '$1 == "libopenblas.so.0" { print $NF; exit }')
    OPENBLAS_LIB=${OPENBLAS_LIB:-libopenblas.so.0}
    openblas_from="the loader (libopenblas.so.0)"
fi
# tiledblas-bench's baseline, tiny_calls and the library's own CPU path all take this one.
export OPENBLAS_LIB
export TILEDBLAS_CPU_BLAS=${TILEDBLAS_CPU_BLAS:-$OPENBLAS_LIB}

# The flags that decide which OpenBLAS kernels this CPU can run, and the ones worth recording.
cpu_flags=" $(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | cut -d: -f2) "
has_flag() { [[ $cpu_flags == *" $1 "* ]]; }
flags_present=() flags_absent=()
for f in avx avx2 fma avx512f avx512dq avx512cd avx512bw avx512vl avx512_vnni avx512_bf16 avx512_fp16 \
    amx_tile amx_bf16 amx_int8; do
    if has_flag "$f"; then flags_present+=("$f"); else flags_absent+=("$f"); fi
done

# The best OpenBLAS core for these flags, and the detected cores that are as good for SGEMM.
# Cooperlake and SapphireRapids add bfloat16 kernels (sbgemm) to SkylakeX's, the same SGEMM.
best_core='' as_good='' best_why=''
if has_flag avx512f && has_flag avx512bw && has_flag avx512dq && has_flag avx512vl; then
    best_core=SkylakeX as_good="skylakex cooperlake sapphirerapids"
    best_why="AVX-512: avx512f avx512bw avx512dq avx512vl"
elif has_flag avx2 && has_flag fma; then
    best_core=Haswell as_good="haswell zen skylakex cooperlake sapphirerapids"
    best_why="AVX2: avx2 fma"
fi

info_tool=$BUILD/openblas_info
${CC:-cc} -std=c11 -O2 -Wall -Wextra -o "$info_tool" bench/openblas_info.c -ldl >>"$OUT/build.log" 2>&1 ||
    info_tool=
# openblas_field KEY [VAR=VALUE...]: one line of bench/openblas_info's output, under that environment.
openblas_field() {
    local key=$1
    shift
    [[ -n $info_tool ]] || { echo unknown; return; }
    env "$@" "$info_tool" "$OPENBLAS_LIB" 2>/dev/null | sed -n "s/^$key: //p" | grep . || echo unknown
}
lower() { tr '[:upper:]' '[:lower:]' <<<"$1"; }

openblas_file=$(openblas_field file -u OPENBLAS_CORETYPE)
[[ -e $openblas_file ]] && openblas_file=$(readlink -f "$openblas_file")
core_detected=$(openblas_field corename -u OPENBLAS_CORETYPE)
if [[ -n ${OPENBLAS_CORETYPE:-} ]]; then
    core_used=$(openblas_field corename)
    core_why="OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE, set by the user"
elif [[ $core_detected == unknown ]]; then
    core_used=unknown
    core_why="OPENBLAS_CORETYPE unset: the library does not say which core it runs"
elif [[ $(openblas_field config -u OPENBLAS_CORETYPE) != *DYNAMIC_ARCH* ]]; then
    core_used=$core_detected
    core_why="OPENBLAS_CORETYPE unset: a build for one core (no DYNAMIC_ARCH), nothing to choose"
elif [[ -z $best_core ]]; then
    core_used=$core_detected
    core_why="OPENBLAS_CORETYPE unset: the detected core kept (no AVX2 or AVX-512 on this CPU)"
elif [[ " $as_good " == *" $(lower "$core_detected") "* ]]; then
    core_used=$core_detected
    core_why="OPENBLAS_CORETYPE unset: the detected core has this CPU's widest SGEMM kernels"
else
    core_used=$(openblas_field corename OPENBLAS_CORETYPE="$best_core")
    if [[ $(lower "$core_used") == "$(lower "$best_core")" ]]; then
        export OPENBLAS_CORETYPE=$best_core
        core_why="OPENBLAS_CORETYPE=$best_core, set by bench/suite.sh: OpenBLAS detects $core_detected, older than this CPU supports"
    else
        core_why="OPENBLAS_CORETYPE unset: $best_core asked for, the library ran $core_used; its detected core kept"
        core_used=$core_detected
    fi
fi

# openblas_get_config() names the core too: the one the runs use.
openblas_config=$(openblas_field config)

# ---- NVBLAS ------------------------------------------------------------------

nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
cuda_bin=$(dirname "$(readlink -f "$nvcc")")
nvblas=${NVBLAS_LIB:-}
if [[ -z $nvblas ]]; then
    for f in "$cuda_bin/../lib64/libnvblas.so" "$cuda_bin/../lib/libnvblas.so"; do
        [[ -e $f ]] && { nvblas=$(readlink -f "$f"); break; }
    done
fi
if [[ -z $nvblas ]]; then
    nvblas=$("$ldconfig" -p 2>/dev/null | awk '$1 ~ /^libnvblas\.so/ { print $NF; exit }')
fi
nvblas_config="not measured (no libnvblas.so found; set NVBLAS_LIB)"
if [[ -n $nvblas ]]; then
    printf 'NVBLAS_LOGFILE %s\nNVBLAS_CPU_BLAS_LIB %s\nNVBLAS_GPU_LIST ALL\nNVBLAS_AUTOPIN_MEM_ENABLED\n' \
        "$BUILD/nvblas.log" "$OPENBLAS_LIB" >"$OUT/nvblas.conf"
    nvblas_config=$(grep -v '^NVBLAS_LOGFILE' "$OUT/nvblas.conf" | paste -sd ';' - | sed 's/;/; /g')
fi

# ---- results of earlier runs -------------------------------------------------------

# Results add up over runs of one tree in one environment: the same commit and
# uncommitted changes, host, GPUs and driver, OpenBLAS and the core it runs,
# NVBLAS, and the TILEDBLAS_*, OPENBLAS_* and NVBLAS_* variables. Any other
# run's are discarded, so that environment.txt describes every row of bench.csv.
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if ! git diff --quiet HEAD 2>/dev/null; then
    commit+=" (with uncommitted changes $(git diff HEAD 2>/dev/null | cksum | cut -d' ' -f1))"
fi
run_key=$(
    echo "commit $commit"
    echo "host $(uname -n) $(nproc)"
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
    echo "openblas $openblas_file $core_used"
    echo "nvblas ${nvblas:-none}"
    env | grep -E '^(TILEDBLAS|OPENBLAS|NVBLAS)_' | sort
)
mkdir -p "$PARTS"
if ((fresh)) || [[ $(cat "$PARTS/key" 2>/dev/null) != "$run_key" ]]; then
    [[ -e $PARTS/key ]] && ! ((fresh)) &&
        echo "bench/suite.sh: results in $OUT are of another tree or environment: discarded" >&2
    rm -f "$PARTS"/*.csv "$PARTS/groups" "$OUT/bench.csv" "$OUT/ctest.log" "$OUT/soak.txt" "$OUT/sanitize.log"
    : >"$LOG"
fi
echo "$run_key" >"$PARTS/key"
# The step groups run in this tree and environment so far, in their usual order: the command that redoes them all.
for g in test bench policy shapes tune numpy sanitize; do
    [[ " $steps $(cat "$PARTS/groups" 2>/dev/null) " == *" $g "* ]] && echo "$g"
done | paste -sd ' ' - >"$PARTS/groups.new"
mv "$PARTS/groups.new" "$PARTS/groups"

# ---- configure and build -------------------------------------------------------

if [[ -z $cuda_arch ]] && command -v nvidia-smi >/dev/null; then
    cuda_arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | tr -d '. ' |
        grep -E '^[0-9]+$' | sort -u | paste -sd ';' -)
fi
configure=(cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release)
command -v ninja >/dev/null && [[ ! -e $BUILD/CMakeCache.txt || -e $BUILD/build.ninja ]] && configure+=(-G Ninja)
[[ -n $cuda_arch ]] && configure+=("-DCMAKE_CUDA_ARCHITECTURES=$cuda_arch")
if step configure 0 "$OUT/build.log" "${configure[@]}"; then
    step build 0 "$OUT/build.log" cmake --build "$BUILD" -j "$jobs"
else
    not_run+=("build (configure failed)")
fi

# ---- environment.txt --------------------------------------------------------------

cache() { sed -n "s/^$1:[A-Z]*=//p" "$BUILD/CMakeCache.txt" 2>/dev/null | head -n 1; }
first_line() { "$@" 2>/dev/null | head -n 1 || true; }
smi() { nvidia-smi --query-gpu="$1" --format=csv,noheader 2>/dev/null; }

cc_path=$(cache CMAKE_C_COMPILER)
lscpu_field() { lscpu 2>/dev/null | sed -n "s/^$1:[[:space:]]*//p" | head -n 1; }
groups=$(cat "$PARTS/groups")
{
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "commit: $commit"
    echo "command: bench/suite.sh --steps \"$groups\""
    echo "steps: ${groups:-none} (this run: ${steps:-build only})"
    echo "deadline: $( ((deadline)) && echo "${deadline}s" || echo none)"
    if command -v nvidia-smi >/dev/null; then
        echo "gpu: $(smi name,memory.total,compute_cap | sed 's/, \([0-9]*\) MiB, / (\1 MiB, compute capability /; s/$/)/' |
            sort | uniq -c | sed 's/^ *1 //; s/^ *\([0-9]*\) /\1 x /' | paste -sd ';' - | sed 's/;/; /g')"
        echo "gpu count: $(smi name | wc -l)"
        echo "driver: $(smi driver_version | head -n 1)"
        echo "cuda driver api: $(nvidia-smi 2>/dev/null | sed -n 's/.*CUDA Version: *\([0-9.]*\).*/\1/p' | head -n 1)"
    else
        echo "gpu: none found (no nvidia-smi)"
    fi
    echo "cuda toolkit: $("$nvcc" --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\), V\([0-9.]*\).*/\2/p') ($nvcc; the runtime is linked statically)"
    echo "cuda architectures: ${cuda_arch:-the project default}"
    echo "c compiler: $(first_line "${cc_path:-${CC:-cc}}" --version)"
    echo "cuda host compiler: $(first_line "${CUDAHOSTCXX:-g++}" --version)"
    echo "cmake: $(first_line cmake --version | sed 's/^cmake version //')"
    echo "os: $(sed -n 's/^PRETTY_NAME="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' /etc/os-release 2>/dev/null), kernel $(uname -r)"
    echo "cpu model: $(lscpu_field 'Model name')"
    echo "cpus: $(nproc) online; $(lscpu_field 'Socket(s)') socket(s), $(lscpu_field 'Core(s) per socket') cores per socket, $(lscpu_field 'Thread(s) per core') thread(s) per core"
    echo "cpu flags: ${flags_present[*]:-none of the checked ones}"
    echo "cpu flags absent: ${flags_absent[*]:-none}"
    echo "openblas library: $openblas_file"
    echo "openblas found by: $openblas_from"
    echo "openblas config: $openblas_config"
    echo "openblas core detected: $core_detected (OPENBLAS_CORETYPE unset)"
    echo "openblas core best for cpu: ${best_core:-none known} (${best_why:-no AVX2 or AVX-512})"
    echo "openblas core used: $core_used"
    echo "openblas coretype: $core_why"
    echo "openblas threads: $(openblas_field threads) (OPENBLAS_NUM_THREADS ${OPENBLAS_NUM_THREADS:-unset})"
    echo "tiledblas cpu blas: $TILEDBLAS_CPU_BLAS"
    echo "nvblas library: ${nvblas:-not found}"
    echo "nvblas config: $nvblas_config"
} >"$ENV_FILE"

{
    echo "tiledblas benchmark suite, steps \"$steps\""
    cat "$ENV_FILE"
    echo
    command -v nvidia-smi >/dev/null && nvidia-smi 2>&1
    echo
} | tee -a "$LOG"

# ---- tests and benchmarks ----------------------------------------------------------

if want test; then
    : >"$OUT/ctest.log"
    if [[ -e $BUILD/CTestTestfile.cmake ]]; then
        # Passed tests keep their whole output in LastTest.log (ctest keeps 1 kB by default), so that the
        # soak's figures (calls, wrong results, memory before and after, throughput) reach soak.txt.
        step ctest 450 "$OUT/ctest.log" ctest --test-dir "$BUILD" --output-on-failure -j "$test_jobs" --timeout 600 \
            --test-output-size-passed 1048576
        awk '/Test: soak_gpu$/ { on = 1 } on { print } on && /<end of output>/ { exit }' \
            "$BUILD/Testing/Temporary/LastTest.log" >"$OUT/soak.txt" 2>/dev/null
    else
        echo "== ctest: not started, the build was not configured" | tee -a "$OUT/ctest.log"
        not_run+=("ctest (not configured)")
    fi
fi

bench_from=$(($(wc -l <"$LOG") + 1))
if want bench; then
    bench kernels 30 -- --kernels --sizes 1024,2048,4096,8192
    bench e2e-gpu 20 TILEDBLAS_DEVICE=gpu -- --e2e --sizes 1024,2048,4096
    bench e2e-auto 20 TILEDBLAS_DEVICE=auto -- --e2e --sizes 1024,2048,4096
    bench e2e-8192 10 TILEDBLAS_DEVICE=gpu -- --e2e --sizes 8192 --no-openblas --reps 5
    # beta = 1 and beta = 0, alternating call by call in one process (their ratio is the beta column).
    bench e2e-beta 10 TILEDBLAS_DEVICE=gpu -- --e2e --sizes 2048,4096,8192 --beta 1 --no-openblas --reps 9
    # NVIDIA's NVBLAS on the same host memory (nvblas.conf above).
    if [[ -n $nvblas ]]; then
        bench e2e-nvblas 15 TILEDBLAS_DEVICE=gpu NVBLAS_CONFIG_FILE="$OUT/nvblas.conf" -- \
            --e2e --sizes 4096,8192 --no-openblas --reps 9 --nvblas "$nvblas"
    fi
    # The plain-copy baseline: no pinned staging, cudaMemcpy from pageable memory, one kernel.
    bench e2e-pageable 10 TILEDBLAS_DEVICE=gpu TILEDBLAS_PINNED_MB=0 -- --e2e --sizes 1024,2048,4096,8192 \
        --no-openblas --reps 5
    # The host copy pool with fewer of the CPUs than the default (all of them, at most 16).
    for threads in 8 12; do
        bench "e2e-copy$threads" 10 TILEDBLAS_DEVICE=gpu TILEDBLAS_COPY_THREADS=$threads -- --e2e \
            --sizes 2048,4096,8192 --no-openblas --reps 5
    done
    # Four threads calling at once against the same calls one at a time.
    bench e2e-threads 15 TILEDBLAS_DEVICE=gpu -- --e2e --sizes 256,512,1024,2048,4096 --threads 4 \
        --no-openblas --reps 10
    # Host to host with the tensor math against the FP32 math: 4096 and 8192 from e2e-gpu and
    # e2e-8192, 16384 here, where the FP32 kernel bounds the pipeline.
    bench e2e-tensor 40 TILEDBLAS_DEVICE=gpu TILEDBLAS_MATH=tensor -- --e2e --sizes 4096,8192,16384 \
        --no-openblas --reps 5
    bench e2e-16384 30 TILEDBLAS_DEVICE=gpu -- --e2e --sizes 16384 --no-openblas --reps 5
    # Where the time of one call goes, stage by stage.
    bench timeline 10 TILEDBLAS_DEVICE=gpu -- --timeline --sizes 2048,4096,8192 --reps 5
    # cblas_sgemm on device pointers against cublasSgemm as a user times them: the listed shapes, then
    # shapes drawn at random (fixed seed), which no tuning table was made from.
    bench api 30 -- --api --layout col --reps 10 \
        --sizes 1000,1024,2048,4096,8192,4097x4095x4099,8192x128x8192,128x8192x8192
    bench api-random 30 -- --api --layout col --reps 10 --random 16
    bench api-tensor 30 TILEDBLAS_MATH=tensor -- --api --layout col --reps 10 \
        --sizes 2048,4096,8192,4097x4095x4099
    bench api-tensor-ops 30 TILEDBLAS_MATH=tensor -- --api --layout row --trans NN,NT,TN,TT --reps 10 \
        --sizes 4096,8192
    # The error of both maths beside cuBLAS's SGEMM and TF32, on five kinds of input, K from 16 to 16384.
    bench accuracy 60 -- --accuracy --sizes 1280x1280x16,1280x1280x128,1280x1280x1024,1280x1280x4096,1280x1280x16384
fi
if want policy; then
    # The CPU time counters before and after: steal time shows a virtual host's CPUs taken away.
    grep '^cpu ' /proc/stat | sed 's/^/before policy: /' >>"$LOG"
    # Auto mode against each path forced, interleaved in one process; OpenBLAS up to 4096
    # and on the skinny shapes, the forced GPU alone beyond.
    small=16,32,64,96,128,192,256,384,512,768,1024,2048,4096
    skinny=4096x4096x16,4096x16x4096,16x4096x4096,4096x4096x64,8192x8192x256,8192x128x8192,128x8192x8192,1000
    skinny+=,4097x4095x4099
    # TILEDBLAS_VERBOSE stays unset, as for users: its accounting takes a lock per call
    # (tens of ns: a few % of a 16^3 call).
    bench policy 200 -- --policy --reps 20 --sizes "$small,$skinny"
    # The same with OpenBLAS's threads parked right after each call (by default they spin
    # ~0.1 s): auto mode's CPU calls then leave no threads spinning into its GPU calls,
    # but each multithreaded OpenBLAS call wakes its threads anew.
    bench policy-parked 260 OPENBLAS_THREAD_TIMEOUT=4 -- --policy --reps 30 --sizes "$small,$skinny"
    bench policy-large 20 -- --policy --reps 3 --sizes 8192,16384 --no-openblas
    grep '^cpu ' /proc/stat | sed 's/^/after policy: /' >>"$LOG"
fi
if want shapes; then
    bench kernel-shapes 15 -- --kernels \
        --sizes 1000,4097x4095x4099,8192x8192x256,8192x128x8192,128x8192x8192,4096x4096x64
    # Grids whose last wave of large tiles is mostly empty on 132 SMs (H100 SXM): stream-K tails.
    bench kernel-tails 15 -- --kernels --sizes 3072,5120,2304x2304x1029
    bench kernel-trans-row 30 -- --kernels --sizes 4096 --trans NN,NT,TN,TT --layout row
    bench kernel-trans-col 30 -- --kernels --sizes 4096 --trans NN,NT,TN,TT --layout col
fi
if want tune; then
    bench tune 40 -- --tune --sizes \
        1024,2048,4096,8192,1000,4097x4095x4099,8192x8192x256,8192x128x8192,128x8192x8192,4096x4096x64
fi
if want numpy; then
    # As a numpy user runs it: the python3 on PATH, its own BLAS, the library preloaded.
    if python3 -c 'import numpy' 2>/dev/null && [[ -e $BUILD/libtiledblas.so ]]; then
        csv_step numpy 90 python3 "$repo/bench/numpy_matmul.py" "$BUILD/libtiledblas.so"
    else
        echo "== numpy: not started, python3 has no numpy or the library was not built" | tee -a "$LOG"
        not_run+=("numpy (no numpy or no library)")
    fi
fi
if want sanitize; then
    : >"$OUT/sanitize.log"
    sanitizer=$(command -v compute-sanitizer || echo "$cuda_bin/compute-sanitizer")
    # Split-K (long K, small C) and every tile shape, all transposes.
    sanitize memcheck-splitk 10 memcheck "$BENCH" \
        --kernels --sizes 100x70x3000,128x128x2048 --trans NN,NT,TN,TT --reps 1
    # The default kernel's re-storing of one operand when both are stored along k.
    sanitize memcheck-restore 45 memcheck "$BENCH" \
        --kernels --sizes 1021x1027x1023,2045x2043x2047 --trans NT,TN --layout row --reps 1
    sanitize memcheck-shapes 10 memcheck "$BENCH" --tune --sizes 257x129x65 --trans NN,NT,TN,TT --reps 1
    # Split-K summed in clusters (sm_90): every tile shape, 2-8 slices; memcheck on an
    # unaligned small case and two larger ones, racecheck (far slower) on the small one.
    sanitize memcheck-clusters 15 memcheck "$(test_program test_split_clusters)" 3
    sanitize racecheck-clusters 180 racecheck "$(test_program test_split_clusters)" 1
    # The default kernel's launches over slices of a long K, with and without scratch.
    sanitize memcheck-chains 10 memcheck "$(test_program test_chains)"
    # The pipelined host path, host memory in and out: op(A)'s rows x K odd (the panels
    # after it packed to stay aligned), five panels with the last in halves; beta = 1
    # and, in alternation, 0.
    TILEDBLAS_DEVICE=gpu TILEDBLAS_PIPELINE_MIN_FLOPS=0 sanitize memcheck-pipeline 10 memcheck "$BENCH" \
        --e2e --sizes 1023x1025x513,67x1280x600 --trans NN,TT --no-openblas --reps 1 --beta 1
    # Stream-K tails (on 132 SMs): tiles cut in two pieces, and in about six.
    sanitize memcheck-stream-k 100 memcheck "$BENCH" \
        --kernels --sizes 2304x2304x1029,2176x2176x4100 --trans NN,TT --reps 1
    for kernel in naive tiled16 tiled32 regtile multistage tf32x3 best; do
        TILEDBLAS_DEVICE=gpu TILEDBLAS_KERNEL=$kernel sanitize "memcheck-$kernel" 10 memcheck \
            "$(test_program test_sgemm_grid)" --max-dim 65
    done
    # racecheck tracks every shared-memory access: a few launches of each rung and shape.
    sanitize racecheck-ladder 15 racecheck "$BENCH" --kernels --sizes 100x70x33 --trans NN,TT --reps 1
    sanitize racecheck-shapes 15 racecheck "$BENCH" --tune --sizes 130x70x20 --trans NT,TN --reps 1
fi

# One CSV: the step's name, then the benchmark's columns, every step run on this commit.
first=1
for name in "${all_bench_steps[@]}"; do
    part=$PARTS/$name.csv
    [[ -s $part ]] || continue
    ((first)) && sed -n '1s/^/step,/p' "$part"
    sed -n "2,\$s/^/$name,/p" "$part"
    first=0
done >"$OUT/bench.csv"
cublas=$(sed -n 's/^baseline: cuBLAS \([0-9.]*\).*/\1/p' "$LOG" | head -n 1)
[[ -n $cublas ]] && echo "cublas: $cublas" >>"$ENV_FILE"

echo
echo "===== summary ($((SECONDS))s), results in $OUT"
if want test && [[ -s $OUT/ctest.log ]]; then
    grep -E 'tests passed|No tests were found' "$OUT/ctest.log" || echo "ctest: no summary line (see ctest.log)"
    sed -n '/^The following tests FAILED/,$p' "$OUT/ctest.log"
fi
echo
tail -n +"$bench_from" "$LOG" | grep -v -E '^\[(kernels|e2e|policy)\] '
status=0
if ((${#not_run[@]})); then
    printf 'NOT STARTED: %s\n' "${not_run[@]}" | tee -a "$LOG"
    status=1
fi
if ((${#failed[@]})); then
    printf 'FAILED STEP: %s\n' "${failed[@]}" | tee -a "$LOG"
    status=1
fi
((status)) || echo "all steps passed" | tee -a "$LOG"
exit "$status"
