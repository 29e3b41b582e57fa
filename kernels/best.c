/*
 * The default kernel: per call, the faster of the two top rungs for its
 * storage orders, as measured on the H100 (docs/PERFORMANCE.md, 4096^3 and
 * 8192^3 in every transpose pair). multistage copies operands stored along m
 * or n straight into shared memory with cp.async and transposes an operand
 * stored along k with 4-byte copies, in the tile shape that keeps that operand
 * on its narrow side (45-49 TFLOP/s). With both operands stored along k
 * (column-major TN) regtile's register-staged transpose is faster (42.6
 * against 41.0). Both split K the same way (tile_common.cuh) when C is too
 * small to fill the GPU.
 */
#include "kernels.h"

static tb_kernel_id pick(const tb_gemm_args *args)
{
    const int both_along_k = args->trans_a && !args->trans_b;
    return both_along_k ? TB_KERNEL_REGTILE : TB_KERNEL_MULTISTAGE;
}

cudaError_t tb_launch_best(const tb_gemm_args *args, cudaStream_t stream)
{
    return tb_kernel_launch(pick(args), args, stream);
}

int64_t tb_best_workspace_floats(const tb_gemm_args *args)
{
    return tb_kernel_workspace_floats(pick(args), args);
}
