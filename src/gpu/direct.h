/* The direct path: device operands in place, host ones copied whole (direct.c). */
#ifndef TILEDBLAS_GPU_DIRECT_H
#define TILEDBLAS_GPU_DIRECT_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#include "core/call.h"

/* Runs the call on the calling lane with kernel `kernel`; operands named in `resident` (TB_RESIDENT_*)
 * are used in place, the stream made to follow the application's work first (tb_gpu_follow_application)
 * by the caller. After an error nothing queued outlives the call. *launched (unless NULL): whether the
 * kernel was launched, so that a resident C may have been written. */
cudaError_t tb_direct_sgemm(const tb_call *call, unsigned resident, int kernel, int *launched);
/* Floats of workspace the call's operands not named in `resident` take, copied in. */
size_t tb_direct_copied_floats(const tb_call *call, unsigned resident);
/* Floats of scratch the call's launch of `kernel` asks for (split-K), besides the copied operands. */
int64_t tb_direct_scratch_floats(const tb_call *call, unsigned resident, int kernel);
/* The time of one n^3 launch of `kernel` on the workspace, in seconds (CUDA events, after a warm-up). */
cudaError_t tb_direct_time_kernel(int kernel, int n, double *seconds);

#endif /* TILEDBLAS_GPU_DIRECT_H */
