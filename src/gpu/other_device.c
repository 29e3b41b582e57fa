/*
 * Calls on operands in memory of a device other than the one the GPU path
 * started on run on that device, in its primary context, the application's
 * current context put back after. They take the direct path on the device's
 * own stream, made on the first such call, with device memory of their own
 * (the lanes hold memory of the first device): no lane, so that calls on
 * different devices run side by side. An error other than out of memory
 * disables that device alone.
 */
#include <cuda_runtime_api.h>

#include "core/report.h"
#include "gpu/device.h"
#include "gpu/direct.h"
#include "gpu/gpu.h"

tb_gpu_status tb_gpu_sgemm_on(int device, const tb_call *call, unsigned resident, tb_gpu_progress *progress)
{
    *progress = (tb_gpu_progress){0, call->m, 0};
    tb_gpu_context saved;
    tb_gpu_context_save(&saved);
    cudaError_t status = tb_gpu_enter_device(device);
    if (status == cudaSuccess) {
        status = tb_direct_sgemm(call, resident, tb_gpu_kernel());
        tb_gpu_leave_device();
    }
    tb_gpu_status result = TB_GPU_OK;
    if (status == cudaSuccess) {
        *progress = (tb_gpu_progress){call->m, 0, 0};
    } else if (status == cudaErrorMemoryAllocation) {
        cudaGetLastError(); /* not sticky */
        result = TB_GPU_NO_MEMORY;
    } else {
        tb_gpu_device_failed(device, status);
        TB_WARN_ONCE("GPU path failed on device %d (%s); calls on its memory are refused from now on", device,
                     cudaGetErrorString(status));
        result = TB_GPU_FAILED;
    }
    tb_gpu_context_restore(&saved);
    return result;
}
