/*
 * Calls on operands in memory of a device other than the one the GPU path
 * started on run on that device, in its primary context, the application's
 * current context put back after. They take the direct path on the device's
 * own stream, made on the first such call, with device memory of their own
 * (the lanes hold memory of the first device): no lane, so that calls on
 * different devices run side by side. Faults are sorted as on the first
 * device (fault.c); one that loses the context disables that device alone.
 * No copy of C is kept here: with beta != 0, a C in device memory after a
 * failure past the kernel's launch may hold part of the product, and nothing
 * computes the call again on it; with beta == 0 only a C the CPU can read
 * (managed memory) is computed again.
 */
#include <cuda_runtime_api.h>

#include "gpu/device.h"
#include "gpu/direct.h"
#include "gpu/fault.h"
#include "kernels.h"
#include "gpu/gpu.h"

tb_gpu_status tb_gpu_sgemm_on(int device, const tb_call *call, unsigned resident, tb_gpu_progress *progress)
{
    *progress = (tb_gpu_progress){.block_rows = call->m};
    if (tb_fault_shutting_down())
        return TB_GPU_SHUTDOWN;
    tb_gpu_context saved;
    tb_gpu_context_save(&saved);
    cudaError_t status = tb_gpu_enter_device(device);
    tb_fault fault = status == cudaSuccess ? TB_FAULT_NONE : tb_fault_of(status);
    int launched = 0;
    if (status == cudaSuccess) {
        const int kernel = tb_gpu_call_kernel(call->m, call->n, call->k);
        tb_tf32x3_ran_fp32(); /* cleared before this call's launches */
        status = tb_gpu_follow_application();
        if (status == cudaSuccess)
            status = tb_direct_sgemm(call, resident, kernel, &launched);
        progress->tensor = kernel == TB_KERNEL_TF32X3 && !tb_tf32x3_ran_fp32();
        fault = status == cudaSuccess ? TB_FAULT_NONE : tb_fault_of(status); /* asked on that device */
        tb_gpu_leave_device();
    }
    const tb_gpu_status result = tb_gpu_status_of(fault);
    if (fault == TB_FAULT_NONE) {
        *progress = (tb_gpu_progress){.rows_done = call->m, .tensor = progress->tensor};
    } else if (fault == TB_FAULT_CONTEXT) {
        tb_gpu_device_failed(device, status); /* the caller's one warning gives its reason */
    }
    /* Only a kernel writes C in place: a C copied in (host memory) lands whole or not at all. With beta == 0
     * the CPU can compute again what the kernel wrote, where it can read C (managed memory). */
    progress->c_written = result != TB_GPU_OK && (resident & TB_RESIDENT_C) && launched;
    progress->c_unknown = progress->c_written && call->beta != 0.0f;
    tb_gpu_context_restore(&saved);
    return result;
}
