/*
 * Split-K's second pass, shared by the register-tiled rungs: slice z of K
 * left its partial product in plane z of the workspace (m x n, leading
 * dimension m, alpha = 1, beta = 0); this sums the planes in slice order, so
 * the result does not depend on scheduling, and applies alpha and beta.
 */
#include "common/common.cuh"

namespace {

__global__ void splitk_reduce(tb_gemm_args p, int splits)
{
    const int64_t plane = p.m * p.n;
    const int64_t at = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (at >= plane)
        return;
    float sum = 0.0f;
    for (int z = 0; z < splits; z++)
        sum += p.workspace[z * plane + at];
    store_c(&p.c[at % p.m + at / p.m * p.ldc], sum, p.alpha, p.beta);
}

} // namespace

extern "C" cudaError_t tb_launch_splitk_reduce(const tb_gemm_args *args, int splits, cudaStream_t stream)
{
    splitk_reduce<<<blocks_for(args->m * args->n, 256), 256, 0, stream>>>(*args, splits);
    return cudaGetLastError();
}
