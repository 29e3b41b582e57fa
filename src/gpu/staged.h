/* The staged path for calls on host memory too small to pipeline (staged.c), on either lane. */
#ifndef TILEDBLAS_GPU_STAGED_H
#define TILEDBLAS_GPU_STAGED_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#include "core/call.h"
#include "gpu/gpu.h"

/* The pinned staging a staged call takes, in floats. */
int64_t tb_staged_pinned_floats(const tb_call *call);
/* Whether the calling lane's pinned staging and device memory hold the call. */
int tb_staged_fits(const tb_call *call, int kernel);
/* Operands named in `pinned` (TB_RESIDENT_*) skip the staging; progress->cols_done counts C's columns delivered. */
cudaError_t tb_staged_sgemm(const tb_call *call, unsigned pinned, int kernel, tb_gpu_progress *progress);

#endif /* TILEDBLAS_GPU_STAGED_H */
