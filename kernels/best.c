/*
 * The default kernel: per call, the faster of the two top rungs for its
 * storage orders, as measured on the H100 (docs/PERFORMANCE.md, 4096^3 in
 * every transpose pair). multistage copies operands stored along m or n
 * straight into shared memory with cp.async (0.88-0.93 of cuBLAS against
 * regtile's 0.84-0.87) and still wins with one operand stored along k, which
 * it transposes with 4-byte copies; with both stored along k (column-major
 * TN) regtile's register-staged transpose is faster (0.83 against 0.81).
 * Calls regtile splits along K (it has the scratch for it) stay with
 * regtile, whose split-K multistage lacks.
 */
#include "kernels.h"

static tb_kernel_id pick(const tb_gemm_args *args)
{
    const int both_along_k = args->trans_a && !args->trans_b;
    const int64_t split_scratch = tb_regtile_workspace_floats(args);
    const int splits = split_scratch > 0 && args->workspace && args->workspace_floats >= split_scratch;
    return both_along_k || splits ? TB_KERNEL_REGTILE : TB_KERNEL_MULTISTAGE;
}

cudaError_t tb_launch_best(const tb_gemm_args *args, cudaStream_t stream)
{
    return tb_kernel_launch(pick(args), args, stream);
}

/* What a split would need: given it, pick() chooses regtile's split. */
int64_t tb_best_workspace_floats(const tb_gemm_args *args)
{
    return tb_regtile_workspace_floats(args);
}
