/*
 * What the register-tiled rungs (regtile.cu, multistage.cu) share: the warp
 * and fragment layout of a block tile, the fragment loads, FMAs and C stores
 * that follow from it, and the wave heuristic that picks a tile shape per call.
 * The rungs differ in how operands reach shared memory; everything here runs on
 * k-major shared tiles (tile[k][m or n]) and a TM x TN accumulator per thread.
 */
#ifndef TILEDBLAS_KERNELS_TILE_COMMON_CUH
#define TILEDBLAS_KERNELS_TILE_COMMON_CUH

#include "common.cuh"

/* Block tile BM x BN x BK, warp tile WM x WN, and how many blocks per SM it is built for. */
template <int BM_, int BN_, int BK_, int WM_, int WN_, int MIN_BLOCKS_>
struct TileShape {
    static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_;
    static constexpr int MIN_BLOCKS = MIN_BLOCKS_;
    static constexpr int THREADS = (BM / WM) * (BN / WN) * 32;
    /* Lanes form an 8 x 4 grid in the warp tile; each owns FM x FN fragments of 4x4. */
    static constexpr int FM = WM / 32, FN = WN / 16;
    static constexpr int TM = 4 * FM, TN = 4 * FN;
    static_assert(BM % WM == 0 && BN % WN == 0 && WM % 32 == 0 && WN % 16 == 0, "tile shape");
};

/* Thread tid owns the fragments at rows fragment_row + 32f and columns fragment_col + 16g of the block tile. */
template <typename S>
__device__ __forceinline__ int fragment_row(int tid)
{
    const int warp = tid / 32, lane = tid % 32;
    return (warp % (S::BM / S::WM)) * S::WM + (lane % 8) * 4;
}

template <typename S>
__device__ __forceinline__ int fragment_col(int tid)
{
    const int warp = tid / 32, lane = tid % 32;
    return (warp / (S::BM / S::WM)) * S::WN + (lane / 8) * 4;
}

/*
 * One k-step's fragments from the shared tiles: a_row and b_row point at this
 * thread's first fragment in k-row kk (fragment_row, fragment_col); every read
 * is a conflict-free float4 (eight consecutive lanes read eight consecutive float4s).
 */
template <typename S>
__device__ __forceinline__ void load_fragments(const float *a_row, const float *b_row, float (&a)[S::TM],
                                               float (&b)[S::TN])
{
#pragma unroll
    for (int f = 0; f < S::FM; f++) {
        const float4 v = *reinterpret_cast<const float4 *>(a_row + 32 * f);
        a[4 * f + 0] = v.x, a[4 * f + 1] = v.y, a[4 * f + 2] = v.z, a[4 * f + 3] = v.w;
    }
#pragma unroll
    for (int g = 0; g < S::FN; g++) {
        const float4 v = *reinterpret_cast<const float4 *>(b_row + 16 * g);
        b[4 * g + 0] = v.x, b[4 * g + 1] = v.y, b[4 * g + 2] = v.z, b[4 * g + 3] = v.w;
    }
}

/* acc += a * b^T: TM*TN FMAs for one k-step. */
template <typename S>
__device__ __forceinline__ void outer_product(float (&acc)[S::TM][S::TN], const float (&a)[S::TM],
                                              const float (&b)[S::TN])
{
#pragma unroll
    for (int i = 0; i < S::TM; i++)
#pragma unroll
        for (int j = 0; j < S::TN; j++)
            acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
}

/*
 * Writes rows i..i+3 of column j of the block's C tile (alpha*acc + beta*C);
 * rows_left and cols_left are how many rows and columns of C the tile covers.
 */
template <bool VEC>
__device__ __forceinline__ void store4(const tb_gemm_args &p, float *c_tile, int i, int j,
                                       int rows_left, int cols_left, const float acc[4])
{
    if (j >= cols_left)
        return;
    float *c = c_tile + i + j * p.ldc;
    if (VEC && i + 3 < rows_left) {
        float4 out = make_float4(p.alpha * acc[0], p.alpha * acc[1], p.alpha * acc[2], p.alpha * acc[3]);
        if (p.beta != 0.0f) {
            const float4 old = *reinterpret_cast<const float4 *>(c);
            out.x = fmaf(p.beta, old.x, out.x);
            out.y = fmaf(p.beta, old.y, out.y);
            out.z = fmaf(p.beta, old.z, out.z);
            out.w = fmaf(p.beta, old.w, out.w);
        }
        *reinterpret_cast<float4 *>(c) = out;
        return;
    }
#pragma unroll
    for (int r = 0; r < 4; r++)
        if (i + r < rows_left)
            store_c(c + r, acc[r], p.alpha, p.beta);
}

/* 128-bit accesses need 16-byte aligned bases and leading dimensions that keep columns aligned. */
static inline bool vector_friendly(const tb_gemm_args *p)
{
    const auto aligned = [](const void *ptr, int64_t ld) {
        return ((uintptr_t)ptr % 16 == 0) && ld % 4 == 0;
    };
    return aligned(p->a, p->lda) && aligned(p->b, p->ldb) && aligned(p->c, p->ldc);
}

static inline int sm_count()
{
    static int count;
    if (!count) {
        int device = 0, value = 0;
        if (cudaGetDevice(&device) == cudaSuccess &&
            cudaDeviceGetAttribute(&value, cudaDevAttrMultiProcessorCount, device) == cudaSuccess)
            count = value;
        else
            count = 1;
    }
    return count;
}

/* Blocks of a bm x bn tile over C. */
static inline int64_t tiles(const tb_gemm_args *args, int bm, int bn)
{
    return blocks_for(args->m, bm) * (int64_t)blocks_for(args->n, bn);
}

/*
 * The entry of a shape table (fields bm, bn, blocks_per_sm, rate) with the
 * least predicted time: whole waves of blocks over the machine, each wave
 * costing its flops at the shape's rate (a grid that leaves SMs idle in its
 * last wave pays for the whole wave). Ties go to the earlier entry.
 */
template <typename Shape, int N>
int fastest_shape(const Shape (&shapes)[N], const tb_gemm_args *args)
{
    const int64_t sms = sm_count();
    int shape = 0;
    double best = 0.0;
    for (int s = 0; s < N; s++) {
        const int64_t slots = sms * shapes[s].blocks_per_sm;
        const int64_t waves = (tiles(args, shapes[s].bm, shapes[s].bn) + slots - 1) / slots;
        const double time = (double)waves * shapes[s].blocks_per_sm * shapes[s].bm * shapes[s].bn /
                            shapes[s].rate;
        if (s == 0 || time < best)
            best = time, shape = s;
    }
    return shape;
}

#endif /* TILEDBLAS_KERNELS_TILE_COMMON_CUH */
