/*
 * One GPU call from start to end: its turn (a lane, the application's
 * current context saved and put back, errors sorted into out-of-memory and
 * fatal), which lane it may take, and which path runs it: device operands the
 * direct path; host operands the staged path when small, the pipelined path
 * when large (TILEDBLAS_PIPELINE_MIN_FLOPS), the direct path's plain copies
 * when neither fits the pinned staging.
 */
#include <cuda_runtime_api.h>
#include <stddef.h>

#include "core/config.h"
#include "core/report.h"
#include "gpu/device.h"
#include "gpu/direct.h"
#include "gpu/gpu.h"
#include "gpu/host_copy.h"
#include "gpu/lanes.h"
#include "gpu/memory.h"
#include "gpu/pipeline.h"
#include "gpu/staged.h"

static int is_large(const tb_call *call)
{
    return 2.0 * call->m * call->n * call->k >= tb_config_get()->pipeline_min_flops;
}

/*
 * Host operands: large calls are pipelined, smaller ones staged through pinned
 * memory whole; a call too large for both (tiny N, huge A) falls back to plain
 * pageable copies, and one too large for the device to the CPU. On the second
 * lane a call runs as second_lane_runs admitted it: `admitted` is its plan
 * when pipelined.
 */
static cudaError_t run_host_path(const tb_call *call, unsigned pinned, int kernel, const tb_pipeline_plan *admitted,
                                 tb_gpu_progress *progress)
{
    const int large = is_large(call);
    if (tb_gpu_lane() != 0)
        return large ? tb_pipeline_sgemm(call, pinned, kernel, admitted, progress)
                     : tb_staged_sgemm(call, pinned, kernel, progress);
    if (!large && tb_staged_fits(call, kernel))
        return tb_staged_sgemm(call, pinned, kernel, progress);
    tb_pipeline_plan plan;
    if (tb_pipeline_plan_for(call, kernel, &plan))
        return tb_pipeline_sgemm(call, pinned, kernel, &plan, progress);
    if (large && tb_staged_fits(call, kernel))
        return tb_staged_sgemm(call, pinned, kernel, progress);
    return tb_direct_sgemm(call, 0, kernel);
}

/*
 * The largest operand the host copies through pinned staging, in bytes (0:
 * none). A pinned C is copied too unless beta == 0: only then do the copy
 * engines write it directly.
 */
static size_t largest_host_copied_operand(const tb_call *call, unsigned pinned)
{
    const size_t a = pinned & TB_RESIDENT_A ? 0 : (size_t)call->m * (size_t)call->k;
    const size_t b = pinned & TB_RESIDENT_B ? 0 : (size_t)call->k * (size_t)call->n;
    const size_t c = pinned & TB_RESIDENT_C && call->beta == 0.0f ? 0 : (size_t)call->m * (size_t)call->n;
    const size_t most = a > b ? a : b;
    return (most > c ? most : c) * sizeof(float);
}

/*
 * The host copies of one call come in a burst of jobs: the copy threads wait
 * for them awake. A call whose copies the caller makes alone (small operands,
 * or pinned ones) leaves them asleep: spinning, they would only take CPUs
 * from the application.
 */
static cudaError_t run_on_host_operands(const tb_call *call, unsigned pinned, int kernel,
                                        const tb_pipeline_plan *admitted, tb_gpu_progress *progress)
{
    const int burst = largest_host_copied_operand(call, pinned) >= TB_HOST_COPY_POOL_MIN_BYTES;
    if (burst)
        tb_host_copy_burst(1);
    const cudaError_t status = run_host_path(call, pinned, kernel, admitted, progress);
    if (burst)
        tb_host_copy_burst(0);
    return status;
}

/*
 * Whether the second lane may run the call, as far as its pinned staging (a
 * fixed share) tells before holding it: host operands, staged whole or, when
 * large enough to pipeline, as the first lane would (second_lane_runs then
 * asks the device).
 */
static int second_lane_can_take(const tb_call *call, unsigned resident)
{
    if (resident)
        return 0;
    const int64_t floats = is_large(call) ? tb_pipeline_unlimited_pinned_floats(call) : tb_staged_pinned_floats(call);
    return floats > 0 && (size_t)floats <= tb_gpu_pinned_budget_of(1);
}

/*
 * Holding the second lane: whether its buffers can grow to the call, staged,
 * or pipelined as the first lane would (one row block, the widest panels).
 * Two pipelined calls then run at once, each one's host copies beside the
 * other's transfers and kernels. A plan cut down to the second lane's
 * smaller pinned share would cost more: B over the bus once per row block,
 * or narrow panels, whose kernels fill the GPU poorly.
 */
static int second_lane_runs(const tb_call *call, int kernel, tb_pipeline_plan *plan)
{
    if (!is_large(call))
        return tb_staged_fits(call, kernel);
    return tb_pipeline_plan_for(call, kernel, plan) && tb_pipeline_plan_is_unlimited(call, plan);
}

/* Calls take turns on the lanes; the application's current context on this thread is put back. */
typedef struct {
    tb_gpu_context saved;
    tb_lane_choice lanes;
    int lane;
} gpu_turn;

static cudaError_t begin_turn(gpu_turn *turn, tb_lane_choice lanes)
{
    turn->lanes = lanes;
    turn->lane = tb_lane_take(lanes);
    tb_gpu_context_save(&turn->saved);
    tb_gpu_budget_turn_begin();
    return cudaSetDevice(tb_gpu_device());
}

/* Out of memory leaves the GPU usable (later calls may fit); any other error disables it. */
static tb_gpu_status end_turn(gpu_turn *turn, cudaError_t status)
{
    tb_gpu_status result = TB_GPU_OK;
    const cudaError_t refusal = tb_gpu_budget_refusal();
    if (status == cudaErrorMemoryAllocation && refusal != cudaSuccess)
        status = refusal; /* out of memory only because the device could not say */
    if (status == cudaErrorMemoryAllocation) {
        cudaGetLastError(); /* not sticky */
        result = TB_GPU_NO_MEMORY;
    } else if (status != cudaSuccess) {
        tb_gpu_disable("CUDA error", status);
        /* Once: calls already waiting for their turn fail the same way. */
        TB_WARN_ONCE("GPU path failed (%s); this and later calls use the CPU BLAS", tb_gpu_unusable_reason());
        result = TB_GPU_FAILED;
    }
    tb_gpu_context_restore(&turn->saved);
    tb_lane_give(turn->lane, turn->lanes);
    return result;
}

tb_gpu_status tb_gpu_sgemm(const tb_call *call, unsigned resident, unsigned pinned, tb_gpu_progress *progress)
{
    const int kernel = tb_gpu_kernel();
    gpu_turn turn;
    tb_pipeline_plan admitted = {0, 0};
    *progress = (tb_gpu_progress){0, call->m, 0};
    cudaError_t status = begin_turn(&turn, second_lane_can_take(call, resident) ? TB_EITHER_LANE : TB_FIRST_LANE);
    if (status == cudaSuccess && tb_gpu_lane() != 0 && !second_lane_runs(call, kernel, &admitted)) {
        /* The second lane cannot run it as the first would (second_lane_runs): the first takes it. */
        end_turn(&turn, cudaSuccess);
        status = begin_turn(&turn, TB_FIRST_LANE);
    }
    if (status == cudaSuccess)
        status = resident ? tb_direct_sgemm(call, resident, kernel)
                          : run_on_host_operands(call, pinned, kernel, &admitted, progress);
    if (status == cudaSuccess) {
        *progress = (tb_gpu_progress){call->m, 0, 0};
        status = tb_gpu_release_large_workspace();
    }
    return end_turn(&turn, status);
}

tb_gpu_status tb_gpu_time_kernel(int n, double *seconds)
{
    gpu_turn turn;
    cudaError_t status = begin_turn(&turn, TB_BOTH_LANES); /* no other kernel beside the timed one */
    if (status == cudaSuccess)
        status = tb_direct_time_kernel(tb_gpu_kernel(), n, seconds);
    return end_turn(&turn, status);
}
