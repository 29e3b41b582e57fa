/*
 * Rung 4 in a build without the sm_90a target (see CMakeLists.txt): the
 * tensor-core rung is not offered, and a launch says so.
 */
#include <stdio.h>

#include "kernels.h"

int64_t tb_tf32x3_workspace_floats(const tb_gemm_args *args)
{
    (void)args;
    return 0;
}

int tb_tf32x3_supported(void)
{
    return 0;
}

int tb_tf32x3_ran_fp32(void)
{
    return 0;
}

void tb_tf32x3_describe_plan(const tb_gemm_args *args, char *text, size_t size)
{
    (void)args;
    snprintf(text, size, "not built: this build has no sm_90a target");
}

cudaError_t tb_launch_tf32x3(const tb_gemm_args *args, cudaStream_t stream)
{
    (void)args;
    (void)stream;
    return cudaErrorNotSupported;
}
