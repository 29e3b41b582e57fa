/* The pipelined path for large calls on host operands (pipeline_plan.c, pipeline.c), on either lane. */
#ifndef TILEDBLAS_GPU_PIPELINE_H
#define TILEDBLAS_GPU_PIPELINE_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#include "core/call.h"
#include "gpu/gpu.h"

/* How one call is cut: row blocks of C (op(A)'s block resident), each in panels of columns. */
typedef struct tb_pipeline_plan {
    int64_t rows, width;
} tb_pipeline_plan;

/* Whether the call can be pipelined within the calling lane's memory budgets, and how. */
int tb_pipeline_plan_for(const tb_call *call, int kernel, tb_pipeline_plan *plan);
/* Whether the plan is the one unlimited budgets give: one row block, the widest panels. */
int tb_pipeline_plan_is_unlimited(const tb_call *call, const tb_pipeline_plan *plan);
/* The least pinned staging that plan needs, in floats (0: the call cannot be pipelined, N < 256). */
int64_t tb_pipeline_unlimited_pinned_floats(const tb_call *call);
/* Runs the call by the plan; operands named in `pinned` (TB_RESIDENT_*) skip the host copies. */
cudaError_t tb_pipeline_sgemm(const tb_call *call, unsigned pinned, int kernel, const tb_pipeline_plan *plan,
                              tb_gpu_progress *progress);

#endif /* TILEDBLAS_GPU_PIPELINE_H */
