/* The direct path: device operands in place, host ones copied whole (direct.c). */
#ifndef TILEDBLAS_GPU_DIRECT_H
#define TILEDBLAS_GPU_DIRECT_H

#include <cuda_runtime_api.h>

#include "core/call.h"

/* Runs the call on the calling lane with kernel `kernel`; operands named in `resident` (TB_RESIDENT_*)
 * are used in place. After an error nothing queued outlives the call. */
cudaError_t tb_direct_sgemm(const tb_call *call, unsigned resident, int kernel);
/* The time of one n^3 launch of `kernel` on the workspace, in seconds (CUDA events, after a warm-up). */
cudaError_t tb_direct_time_kernel(int kernel, int n, double *seconds);

#endif /* TILEDBLAS_GPU_DIRECT_H */
