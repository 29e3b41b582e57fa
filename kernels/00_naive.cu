/*
 * Rung 0: one thread per element of C, every operand read straight from global
 * memory (no reuse). The baseline the other rungs are measured against.
 */
#include "common/common.cuh"

template <bool TA, bool TB>
__global__ void sgemm_naive(tb_gemm_args p)
{
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    const int64_t j = blockIdx.y * (int64_t)blockDim.y + threadIdx.y;
    if (i >= p.m || j >= p.n)
        return;
    float acc = 0.0f;
    for (int64_t q = 0; q < p.k; q++)
        acc += op_elem<TA>(p.a, p.lda, i, q) * op_elem<TB>(p.b, p.ldb, q, j);
    store_c(&p.c[i + j * p.ldc], acc, p.alpha, p.beta);
}

template <bool TA, bool TB>
struct NaiveLaunch {
    static cudaError_t run(const tb_gemm_args *args, cudaStream_t stream)
    {
        /* threadIdx.x walks rows: consecutive threads touch consecutive elements of column-major C. */
        const dim3 block(32, 8);
        return for_each_column_slab<TB>(args, block.y, [&](const tb_gemm_args &slab) {
            const dim3 grid(blocks_for(slab.m, block.x), blocks_for(slab.n, block.y));
            sgemm_naive<TA, TB><<<grid, block, 0, stream>>>(slab);
        });
    }
};

extern "C" cudaError_t tb_launch_naive(const tb_gemm_args *args, cudaStream_t stream)
{
    return launch_for_trans<NaiveLaunch>(args, stream);
}
