/* Pieces every kernel of the ladder shares: operand access, epilogue, launch plumbing. */
#ifndef TILEDBLAS_KERNELS_COMMON_CUH
#define TILEDBLAS_KERNELS_COMMON_CUH

#include <stdint.h>

#include "kernels.h"

/* Element (i, p) of op(X) for column-major X; 64-bit so that p*ld cannot wrap. */
template <bool TRANS>
__device__ __forceinline__ float op_elem(const float *x, int64_t ld, int64_t i, int64_t p)
{
    return TRANS ? x[p + i * ld] : x[i + p * ld];
}

/* C = alpha*acc + beta*C. beta == 0 must not read C: NaN or Inf already there must not leak. */
__device__ __forceinline__ void store_c(float *c, float acc, float alpha, float beta)
{
    *c = beta == 0.0f ? alpha * acc : fmaf(alpha, acc, beta * *c);
}

/* Picks the template instance for the call's transpose pair: L<TA, TB>::run(args, stream, extra...). */
template <template <bool, bool> class L, typename... Extra>
cudaError_t launch_for_trans(const tb_gemm_args *args, cudaStream_t stream, Extra... extra)
{
    if (args->trans_a)
        return args->trans_b ? L<true, true>::run(args, stream, extra...)
                             : L<true, false>::run(args, stream, extra...);
    return args->trans_b ? L<false, true>::run(args, stream, extra...)
                         : L<false, false>::run(args, stream, extra...);
}

/*
 * grid.y is limited to 65535 blocks, so a very wide C is launched in slabs of
 * columns; each slab is an independent problem on shifted B and C pointers.
 */
template <bool TB, typename LaunchSlab>
cudaError_t for_each_column_slab(const tb_gemm_args *args, int block_cols, LaunchSlab launch_slab)
{
    const int64_t slab_cols = (int64_t)65535 * block_cols;
    for (int64_t j0 = 0; j0 < args->n; j0 += slab_cols) {
        tb_gemm_args slab = *args;
        slab.n = args->n - j0 < slab_cols ? args->n - j0 : slab_cols;
        slab.b = args->b + (TB ? j0 : j0 * args->ldb);
        slab.c = args->c + j0 * args->ldc;
        launch_slab(slab);
        cudaError_t status = cudaGetLastError();
        if (status != cudaSuccess)
            return status;
    }
    return cudaSuccess;
}

static inline unsigned blocks_for(int64_t extent, int block)
{
    return (unsigned)((extent + block - 1) / block);
}

#endif /* TILEDBLAS_KERNELS_COMMON_CUH */
