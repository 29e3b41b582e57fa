/*
 * Rung 1: the classic shared-memory tiled kernel, with T = 16 (tiled16) and
 * T = 32 (tiled32). A block of T x T threads computes a T x T tile of C, one
 * element per thread. Per step of K the block stages a T x T tile of op(A) and
 * one of op(B) in shared memory (zeros past the edges) and each thread adds T
 * products from them, between two barriers: one before the tiles are read,
 * one before they are overwritten. Each element read from global memory
 * serves T threads.
 */
#include "common/common.cuh"

template <int T, bool TA, bool TB>
__global__ void __launch_bounds__(T *T) sgemm_tiled(tb_gemm_args p)
{
    /* Both tiles are stored k-major (tile[kk][row or col]) so the inner loop reads
     * As along a row; +1 padding keeps the transposing stores free of bank conflicts. */
    __shared__ float As[T][T + 1];
    __shared__ float Bs[T][T + 1];

    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t i0 = (int64_t)blockIdx.x * T, j0 = (int64_t)blockIdx.y * T;

    float acc = 0.0f;
    for (int64_t k0 = 0; k0 < p.k; k0 += T) {
        /* Consecutive tx read consecutive addresses of the stored operand (coalesced). */
        if (TA) { /* stored k x m: k is contiguous */
            const int64_t q = k0 + tx, i = i0 + ty;
            As[tx][ty] = (i < p.m && q < p.k) ? p.a[q + i * p.lda] : 0.0f;
        } else {  /* stored m x k: m is contiguous */
            const int64_t i = i0 + tx, q = k0 + ty;
            As[ty][tx] = (i < p.m && q < p.k) ? p.a[i + q * p.lda] : 0.0f;
        }
        if (TB) { /* stored n x k: n is contiguous */
            const int64_t j = j0 + tx, q = k0 + ty;
            Bs[ty][tx] = (j < p.n && q < p.k) ? p.b[j + q * p.ldb] : 0.0f;
        } else {  /* stored k x n: k is contiguous */
            const int64_t q = k0 + tx, j = j0 + ty;
            Bs[tx][ty] = (j < p.n && q < p.k) ? p.b[q + j * p.ldb] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < T; kk++)
            acc += As[kk][tx] * Bs[kk][ty];
        __syncthreads();
    }

    const int64_t i = i0 + tx, j = j0 + ty;
    if (i < p.m && j < p.n)
        store_c(&p.c[i + j * p.ldc], acc, p.alpha, p.beta);
}

template <int T>
struct Tiled {
    template <bool TA, bool TB>
    struct Launch {
        static cudaError_t run(const tb_gemm_args *args, cudaStream_t stream)
        {
            const dim3 block(T, T);
            return for_each_column_slab<TB>(args, T, [&](const tb_gemm_args &slab) {
                const dim3 grid(blocks_for(slab.m, T), blocks_for(slab.n, T));
                sgemm_tiled<T, TA, TB><<<grid, block, 0, stream>>>(slab);
            });
        }
    };
};

extern "C" cudaError_t tb_launch_tiled16(const tb_gemm_args *args, cudaStream_t stream)
{
    return launch_for_trans<Tiled<16>::Launch>(args, stream);
}

extern "C" cudaError_t tb_launch_tiled32(const tb_gemm_args *args, cudaStream_t stream)
{
    return launch_for_trans<Tiled<32>::Launch>(args, stream);
}
