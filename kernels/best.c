/*
 * The default kernel: per call, the faster of the two top rungs for its
 * storage orders, as measured on the H100 (docs/PERFORMANCE.md, 4096^3 in
 * every transpose pair). multistage copies operands stored along m or n
 * straight into shared memory with cp.async (0.88-0.93 of cuBLAS against
 * regtile's 0.84-0.87) and still wins with one operand stored along k, which
 * it transposes with 4-byte copies; with both stored along k (column-major
 * TN) regtile's register-staged transpose is faster (0.83 against 0.81).
 * Calls regtile would split along K stay with regtile, whose split-K
 * multistage lacks.
 */
#include "kernels.h"

static tb_kernel_id pick(const tb_gemm_args *args)
{
    const int both_along_k = args->trans_a && !args->trans_b;
    return both_along_k || tb_regtile_workspace_floats(args) > 0 ? TB_KERNEL_REGTILE : TB_KERNEL_MULTISTAGE;
}

cudaError_t tb_launch_best(const tb_gemm_args *args, cudaStream_t stream)
{
    return tb_kernel_launch(pick(args), args, stream);
}

int64_t tb_best_workspace_floats(const tb_gemm_args *args)
{
    return tb_kernel_workspace_floats(pick(args), args);
}
