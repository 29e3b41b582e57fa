/*
 * One GPU call from start to end: its turn (a lane, the application's
 * current context saved and put back, errors sorted by fault.c: a call that
 * failed is tried once more, on a plainer path, and only a lost context
 * disables the GPU), which lane it may take, and which path runs it: device operands the
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
#include "gpu/fault.h"
#include "gpu/gpu.h"
#include "gpu/host_copy.h"
#include "gpu/lanes.h"
#include "gpu/memory.h"
#include "gpu/pipeline.h"
#include "gpu/staged.h"
#include "kernels.h"

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
    return tb_direct_sgemm(call, 0, kernel, NULL);
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

/* Every operand the call reads or writes in device memory: nothing crosses the bus. */
static int device_operands_only(const tb_call *call, unsigned resident)
{
    const int reads_ab = call->alpha != 0.0f && call->k > 0;
    const unsigned used = TB_RESIDENT_C | (reads_ab ? TB_RESIDENT_A | TB_RESIDENT_B : 0u);
    return (resident & used) == used;
}

/*
 * Whether the second lane may run the call, as far as its pinned staging (a
 * fixed share) tells before holding it: device operands alone in the FP32
 * math (the direct path on the lane's own stream, whose only memory is a copy
 * of C and split-K's scratch); host operands, staged whole or, when large
 * enough to pipeline, as the first lane would (second_lane_runs then asks the
 * device). Calls mixing device and host operands, and the tensor math, whose
 * split operands take a large workspace, run on the first.
 */
static int second_lane_can_take(const tb_call *call, unsigned resident, int kernel)
{
    /* Where the second lane keeps no workspace (under TILEDBLAS_DEVICE_MB), split-K's scratch would be
     * allocated and freed by the call, a wait for the whole device: those calls wait for the first. */
    if (resident)
        return device_operands_only(call, resident) && kernel != TB_KERNEL_TF32X3 &&
               (tb_gpu_lane_keeps_workspace(1) || tb_direct_scratch_floats(call, resident, kernel) == 0);
    const int64_t floats = is_large(call) ? tb_pipeline_unlimited_pinned_floats(call) : tb_staged_pinned_floats(call);
    return floats > 0 && (size_t)floats <= tb_gpu_pinned_budget_of(1);
}

/*
 * Holding the second lane: device operands, always; host operands, whether
 * its buffers can grow to the call, staged, or pipelined as the first lane
 * would (one row block, the widest panels).
 * Two pipelined calls then run at once, each one's host copies beside the
 * other's transfers and kernels. A plan cut down to the second lane's
 * smaller pinned share would cost more: B over the bus once per row block,
 * or narrow panels, whose kernels fill the GPU poorly.
 */
static int second_lane_runs(const tb_call *call, unsigned resident, int kernel, tb_pipeline_plan *plan)
{
    if (resident)
        return 1;
    if (!is_large(call))
        return tb_staged_fits(call, kernel);
    return tb_pipeline_plan_for(call, kernel, plan) && tb_pipeline_plan_is_unlimited(call, plan);
}

/* Calls take turns on the lanes; the application's current context on this thread is put back. */
typedef struct {
    tb_gpu_context saved;
    tb_lane_choice lanes;
    int lane;
    tb_gpu_mark mark; /* of the application's work, for the lane's stream to wait for (event NULL: none) */
} gpu_turn;

/*
 * With `mark` (a call on device operands), the application's work is marked
 * before the call waits for a lane: the mark, on the legacy default stream,
 * can wait inside the driver behind the application's own CUDA calls on other
 * threads (pageable copies), and a lane held meanwhile would idle the GPU.
 */
static cudaError_t begin_turn(gpu_turn *turn, tb_lane_choice lanes, int mark)
{
    turn->lanes = lanes;
    tb_gpu_context_save(&turn->saved);
    cudaError_t status = cudaSetDevice(tb_gpu_device());
    /* Once more after a per-call error. */
    if (status != cudaSuccess && tb_fault_of(status) == TB_FAULT_CALL)
        status = cudaSetDevice(tb_gpu_device());
    turn->mark.event = NULL;
    if (mark && status == cudaSuccess && tb_gpu_mark_application(&turn->mark) != cudaSuccess)
        cudaGetLastError(); /* not a launch's: the lane marks again, and meets a lasting error there */
    turn->lane = tb_lane_take(lanes);
    if (turn->lane < 0)
        return status; /* the process is exiting: the call ends (turn_refused) */
    tb_gpu_budget_turn_begin();
    return status;
}

/* A turn the exit refused a lane (tb_lanes_close): it ends without work, and without a word. */
static int turn_refused(gpu_turn *turn)
{
    if (turn->lane >= 0)
        return 0;
    tb_gpu_drop_mark(&turn->mark);
    tb_gpu_context_restore(&turn->saved);
    return 1;
}

/* The fault behind a path's status; out of memory only because the device could not say is that error. */
static tb_fault fault_of(cudaError_t status)
{
    const cudaError_t refusal = tb_gpu_budget_refusal();
    if (status == cudaErrorMemoryAllocation && refusal != cudaSuccess)
        status = refusal;
    return tb_fault_of(status);
}

/*
 * What the turn's fault means for the caller. Only a lost context disables the
 * GPU. One warning, unless `quiet`: the caller says it failed itself (a call on
 * device operands). At shutdown nothing is said: the process is exiting.
 */
static tb_gpu_status end_turn(gpu_turn *turn, tb_fault fault, cudaError_t status, int quiet)
{
    if (fault == TB_FAULT_CALL && !quiet)
        TB_WARN_ONCE("a GPU call failed (%s); the CPU BLAS finished it, and the GPU stays in use",
                     cudaGetErrorString(status));
    if (fault == TB_FAULT_CONTEXT) {
        tb_gpu_disable("CUDA error", status);
        /* Once: calls already waiting for their turn fail the same way. */
        if (!quiet)
            TB_WARN_ONCE("GPU path failed (%s); this and later calls use the CPU BLAS", tb_gpu_unusable_reason());
    }
    tb_gpu_drop_mark(&turn->mark); /* a mark the call did not wait for */
    tb_gpu_context_restore(&turn->saved);
    tb_lane_give(turn->lane, turn->lanes);
    return tb_gpu_status_of(fault);
}

/*
 * A kernel writes a C in device memory in place: with beta != 0 a failed call
 * could not be done again from it, so it is copied first (where memory allows;
 * without the copy, a failure after the kernel leaves C unknown).
 */
typedef struct {
    float *copy;
    int64_t ld;
} c_keeper;

static cudaError_t keep_c(const tb_call *call, unsigned resident, c_keeper *keeper)
{
    keeper->copy = NULL;
    keeper->ld = call->m;
    if (!(resident & TB_RESIDENT_C) || call->beta == 0.0f)
        return cudaSuccess;
    if (tb_gpu_c_copy((size_t)call->m * (size_t)call->n, tb_direct_copied_floats(call, resident), &keeper->copy) !=
        cudaSuccess) {
        cudaGetLastError(); /* not sticky: the call runs without the copy */
        keeper->copy = NULL;
        return cudaSuccess;
    }
    cudaError_t status = tb_gpu_copy_block(keeper->copy, keeper->ld, call->c, call->ldc, call->m, call->n,
                                           cudaMemcpyDeviceToDevice, tb_gpu_stream());
    if (status == cudaSuccess)
        status = cudaStreamSynchronize(tb_gpu_stream());
    return status;
}

/* After a failed attempt that did not lose the context: whether C is as the caller gave it again. */
static int c_restored(const tb_call *call, unsigned resident, const c_keeper *keeper)
{
    if (!(resident & TB_RESIDENT_C) || call->beta == 0.0f)
        return 1;
    if (!keeper->copy)
        return 0;
    const cudaError_t status = tb_gpu_copy_block(call->c, call->ldc, keeper->copy, keeper->ld, call->m, call->n,
                                                 cudaMemcpyDeviceToDevice, tb_gpu_stream());
    return status == cudaSuccess && cudaStreamSynchronize(tb_gpu_stream()) == cudaSuccess;
}

/*
 * Device operands: the direct path, tried again once after a fault that left
 * the context working (C put back first where the kernel may have written it).
 */
static tb_fault run_resident(const tb_call *call, unsigned resident, int kernel, tb_gpu_mark *mark,
                             tb_gpu_progress *progress, cudaError_t *status)
{
    c_keeper keeper = {NULL, call->m};
    int followed = 0, kept = 0;
    tb_fault fault = TB_FAULT_NONE;
    int written = 0; /* a kernel ran on C, and C was not put back since */
    for (int attempt = 0; attempt < 2; attempt++) {
        int launched = 0;
        /* The application may still be writing the operands on the default stream or a blocking one: the
         * lane's stream waits for that work once, before the copy of C and the kernel are queued on it,
         * for the mark made before the lane was taken (begin_turn), else for one made now. */
        if (!followed) {
            *status = mark->event ? tb_gpu_wait_application(mark) : tb_gpu_follow_application();
            followed = (fault = fault_of(*status)) == TB_FAULT_NONE;
        }
        if (followed && !kept)
            kept = (fault = fault_of(*status = keep_c(call, resident, &keeper))) == TB_FAULT_NONE;
        if (kept)
            fault = fault_of(*status = tb_direct_sgemm(call, resident, kernel, &launched));
        written |= launched;
        if (fault != TB_FAULT_CALL && fault != TB_FAULT_NO_MEMORY)
            break;
        /* Only a launched kernel writes C in place; before it, C is as the caller left it. */
        if (launched && !c_restored(call, resident, &keeper)) {
            progress->c_unknown = 1;
            break;
        }
        if (launched && call->beta != 0.0f)
            written = 0; /* put back from the copy; with beta == 0 nothing needs to be */
    }
    progress->c_written = fault != TB_FAULT_NONE && written && (resident & TB_RESIDENT_C);
    /* A failed call may go on to the CPU BLAS, which reads managed operands in place: the host waits
     * first for the application's work the GPU was to wait for (queued on the stream, and with it
     * whatever the failed attempts left there). */
    if (fault == TB_FAULT_CALL || fault == TB_FAULT_NO_MEMORY) {
        const cudaError_t synced = cudaStreamSynchronize(tb_gpu_stream());
        if (fault_of(synced) == TB_FAULT_CONTEXT)
            fault = fault_of(*status = synced);
    }
    return fault;
}

/*
 * Host operands: after a per-call error before any of C was final, the call
 * runs again on the first lane's plainest path (pageable copies, no staging),
 * which does not use pinned memory the first attempt may have been refused.
 */
static tb_fault run_host(const tb_call *call, unsigned pinned, int kernel, const tb_pipeline_plan *admitted,
                         tb_gpu_progress *progress, cudaError_t *status)
{
    tb_fault fault = fault_of(*status = run_on_host_operands(call, pinned, kernel, admitted, progress));
    if (fault == TB_FAULT_CALL && tb_gpu_lane() == 0 && progress->rows_done == 0 && progress->cols_done == 0) {
        *progress = (tb_gpu_progress){.block_rows = call->m};
        fault = fault_of(*status = tb_direct_sgemm(call, 0, kernel, NULL));
    }
    return fault;
}

tb_gpu_status tb_gpu_sgemm(const tb_call *call, unsigned resident, unsigned pinned, tb_gpu_progress *progress)
{
    *progress = (tb_gpu_progress){.block_rows = call->m};
    if (tb_fault_shutting_down())
        return TB_GPU_SHUTDOWN;
    const int kernel = tb_gpu_call_kernel(call->m, call->n, call->k);
    tb_tf32x3_ran_fp32(); /* cleared: what this call's launches leave is read at its end */
    gpu_turn turn;
    tb_pipeline_plan admitted = {0, 0};
    cudaError_t status = begin_turn(
        &turn, second_lane_can_take(call, resident, kernel) ? TB_EITHER_LANE : TB_FIRST_LANE, resident != 0);
    if (turn_refused(&turn))
        return TB_GPU_SHUTDOWN;
    if (status == cudaSuccess && tb_gpu_lane() != 0 && !second_lane_runs(call, resident, kernel, &admitted)) {
        /* The second lane cannot run it as the first would (second_lane_runs): the first takes it. */
        end_turn(&turn, TB_FAULT_NONE, cudaSuccess, 1);
        status = begin_turn(&turn, TB_FIRST_LANE, resident != 0);
        if (turn_refused(&turn))
            return TB_GPU_SHUTDOWN;
    }
    tb_fault fault = fault_of(status);
    if (fault == TB_FAULT_NONE)
        fault = resident ? run_resident(call, resident, kernel, &turn.mark, progress, &status)
                         : run_host(call, pinned, kernel, &admitted, progress, &status);
    /* Any launch that ran in FP32 for want of workspace makes the call's math FP32, as does a pipelined
     * call none of whose launches was large enough for the tensor cores. */
    progress->tensor = kernel == TB_KERNEL_TF32X3 && !tb_tf32x3_ran_fp32() && !progress->no_tensor_runs;
    if (fault == TB_FAULT_NONE) {
        *progress = (tb_gpu_progress){.rows_done = call->m, .tensor = progress->tensor};
        /* C is complete: a failure to release memory concerns later calls only. */
        if (fault_of(status = tb_gpu_release_large_workspace()) == TB_FAULT_CONTEXT)
            tb_gpu_disable("CUDA error", status);
    }
    return end_turn(&turn, fault, status, resident != 0);
}

tb_gpu_status tb_gpu_time_kernel(int n, double *seconds)
{
    gpu_turn turn;
    cudaError_t status = begin_turn(&turn, TB_BOTH_LANES, 0); /* no other kernel beside the timed one */
    if (turn_refused(&turn))
        return TB_GPU_SHUTDOWN;
    if (status == cudaSuccess)
        status = tb_direct_time_kernel(tb_gpu_kernel(), n, seconds);
    const tb_fault fault = fault_of(status);
    /* After a failed timing the cost model tries again, and says so when it gives up. */
    return end_turn(&turn, fault, status, fault == TB_FAULT_CALL);
}
