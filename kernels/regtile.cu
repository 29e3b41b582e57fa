/*
 * Rung 3: block tiling with per-thread register tiles.
 *
 * 256 threads compute a 128x128 tile of C; each thread owns an 8x8 register
 * tile, laid out as 2x2 blocks of 4x4 so that every shared-memory read is a
 * conflict-free float4 and one k step costs 4 loads for 64 FMAs (the tiled
 * rungs pay 2 loads per FMA). Operands are read with 128-bit loads where
 * aligned and staged through registers into double-buffered shared memory, so
 * the global loads of step t+1 are in flight during the FMAs of step t.
 * Both shared tiles are k-major (tile[k][m or n]); operands stored k-contiguous
 * are transposed on the way in.
 */
#include "common.cuh"

namespace {

constexpr int BM = 128, BN = 128, THREADS = 256;
/* Row padding: keeps the transposing stores conflict-free and float4 alignment intact. */
constexpr int LDS = BM + 4;

/* Four consecutive elements p[0..3], of which the first `room` exist; zeros past the edge. */
template <bool VEC>
__device__ __forceinline__ float4 load4(const float *p, int room, bool in_range)
{
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (!in_range)
        return v;
    if (VEC && room >= 4)
        return __ldg(reinterpret_cast<const float4 *>(p));
    if (room > 0) v.x = __ldg(p + 0);
    if (room > 1) v.y = __ldg(p + 1);
    if (room > 2) v.z = __ldg(p + 2);
    if (room > 3) v.w = __ldg(p + 3);
    return v;
}

/*
 * Moves one BK x 128 tile of an operand from global memory to a k-major shared
 * tile. Element (x, kk) of the tile (x along m or n) lives at
 *   base[(k0+kk) + (x0+x)*ld]  when the operand is stored k-contiguous,
 *   base[(x0+x) + (k0+kk)*ld]  otherwise.
 * Each thread moves BK/8 float4s, read along the contiguous direction; it keeps
 * a pointer per float4 and advances it one tile along k per load (cheaper in
 * registers than 64-bit index arithmetic every step).
 */
template <int BK, bool K_CONTIGUOUS, bool VEC>
struct TileLoader {
    static constexpr int PER_THREAD = BK * BM / 4 / THREADS;
    const float *next[PER_THREAD];
    int x_room[PER_THREAD]; /* elements left along x from this thread's position */
    int64_t step;
    float4 staged[PER_THREAD];

    /* Tile coordinates of this thread's r-th float4. */
    __device__ static int tile_x(int f) { return K_CONTIGUOUS ? f / (BK / 4) : (f % (BM / 4)) * 4; }
    __device__ static int tile_k(int f) { return K_CONTIGUOUS ? (f % (BK / 4)) * 4 : f / (BM / 4); }

    __device__ TileLoader(const float *base, int64_t ld, int x0, int x_extent, int tid)
        : step(K_CONTIGUOUS ? BK : BK * ld)
    {
#pragma unroll
        for (int r = 0; r < PER_THREAD; r++) {
            const int f = tid + r * THREADS;
            const int64_t x = (int64_t)x0 + tile_x(f), k = tile_k(f);
            next[r] = K_CONTIGUOUS ? base + k + x * ld : base + x + k * ld;
            x_room[r] = max(0, min(4, x_extent - x0 - tile_x(f))); /* no int overflow near 2^31 */
        }
    }

    /* Loads the next tile; k_room is how many of its BK k-steps exist. */
    __device__ void load(int k_room)
    {
#pragma unroll
        for (int r = 0; r < PER_THREAD; r++) {
            const int kk = tile_k(tid_f(r));
            staged[r] = K_CONTIGUOUS ? load4<VEC>(next[r], k_room - kk, x_room[r] > 0)
                                     : load4<VEC>(next[r], x_room[r], kk < k_room);
            next[r] += step;
        }
    }

    __device__ void store(float (*tile)[LDS]) const
    {
#pragma unroll
        for (int r = 0; r < PER_THREAD; r++) {
            const int f = tid_f(r), x = tile_x(f), kk = tile_k(f);
            if (K_CONTIGUOUS) {
                tile[kk + 0][x] = staged[r].x;
                tile[kk + 1][x] = staged[r].y;
                tile[kk + 2][x] = staged[r].z;
                tile[kk + 3][x] = staged[r].w;
            } else {
                *reinterpret_cast<float4 *>(&tile[kk][x]) = staged[r];
            }
        }
    }

    __device__ static int tid_f(int r) { return threadIdx.x + r * THREADS; }
};

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

template <int BK, bool TA, bool TB, bool VEC>
__global__ void __launch_bounds__(THREADS, 2) sgemm_regtile(tb_gemm_args p)
{
    __shared__ __align__(16) float As[2][BK][LDS];
    __shared__ __align__(16) float Bs[2][BK][LDS];

    /* Dimensions fit an int (BLAS LP64); only address offsets need 64 bits. */
    const int m = (int)p.m, n = (int)p.n, k = (int)p.k;
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int i0 = blockIdx.x * BM, j0 = blockIdx.y * BN;
    /* Warps form a 2 x 4 grid of 64x32 warp tiles; lanes an 8 x 4 grid inside. Eight
     * consecutive lanes read eight consecutive float4s of As: no bank conflict. */
    const int row = (warp % 2) * 64 + (lane % 8) * 4; /* and row + 32 */
    const int col = (warp / 2) * 32 + (lane / 8) * 4; /* and col + 16 */

    /* op(A) is k-contiguous when A is transposed; op(B) when B is not. */
    TileLoader<BK, TA, VEC> a_tile(p.a, p.lda, i0, m, tid);
    TileLoader<BK, !TB, VEC> b_tile(p.b, p.ldb, j0, n, tid);
    /* k steps that exist in tile t. */
    const auto k_room = [&](int t) { return min(BK, k - t * BK); };

    float acc[8][8] = {};
    const int k_tiles = (k + BK - 1) / BK;
    if (k_tiles > 0) {
        a_tile.load(k_room(0));
        b_tile.load(k_room(0));
        a_tile.store(As[0]);
        b_tile.store(Bs[0]);
        __syncthreads();
    }
    for (int t = 0; t < k_tiles; t++) {
        const int cur = t & 1;
        const bool more = t + 1 < k_tiles;
        if (more) {
            a_tile.load(k_room(t + 1));
            b_tile.load(k_room(t + 1));
        }
#pragma unroll
        for (int kk = 0; kk < BK; kk++) {
            const float4 a_lo = *reinterpret_cast<const float4 *>(&As[cur][kk][row]);
            const float4 a_hi = *reinterpret_cast<const float4 *>(&As[cur][kk][row + 32]);
            const float4 b_lo = *reinterpret_cast<const float4 *>(&Bs[cur][kk][col]);
            const float4 b_hi = *reinterpret_cast<const float4 *>(&Bs[cur][kk][col + 16]);
            const float a[8] = {a_lo.x, a_lo.y, a_lo.z, a_lo.w, a_hi.x, a_hi.y, a_hi.z, a_hi.w};
            const float b[8] = {b_lo.x, b_lo.y, b_lo.z, b_lo.w, b_hi.x, b_hi.y, b_hi.z, b_hi.w};
#pragma unroll
            for (int i = 0; i < 8; i++)
#pragma unroll
                for (int j = 0; j < 8; j++)
                    acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        /* The other buffer was last read before the previous barrier: safe to refill. */
        if (more) {
            a_tile.store(As[cur ^ 1]);
            b_tile.store(Bs[cur ^ 1]);
        }
        __syncthreads();
    }

    float *c_tile = p.c + i0 + (int64_t)j0 * p.ldc;
#pragma unroll
    for (int j = 0; j < 8; j++) {
        const int cj = col + (j < 4 ? j : 16 + j - 4);
        const float lo[4] = {acc[0][j], acc[1][j], acc[2][j], acc[3][j]};
        const float hi[4] = {acc[4][j], acc[5][j], acc[6][j], acc[7][j]};
        store4<VEC>(p, c_tile, row, cj, m - i0, n - j0, lo);
        store4<VEC>(p, c_tile, row + 32, cj, m - i0, n - j0, hi);
    }
}

/* 128-bit accesses need 16-byte aligned bases and leading dimensions that keep columns aligned. */
bool vector_friendly(const tb_gemm_args *p)
{
    const auto aligned = [](const void *ptr, int64_t ld) {
        return ((uintptr_t)ptr % 16 == 0) && ld % 4 == 0;
    };
    return aligned(p->a, p->lda) && aligned(p->b, p->ldb) && aligned(p->c, p->ldc);
}

template <int BK>
struct Regtile {
    template <bool TA, bool TB>
    struct Launch {
        template <bool VEC>
        static cudaError_t launch(const tb_gemm_args *args, cudaStream_t stream)
        {
            return for_each_column_slab<TB>(args, BN, [&](const tb_gemm_args &slab) {
                const dim3 grid(blocks_for(slab.m, BM), blocks_for(slab.n, BN));
                sgemm_regtile<BK, TA, TB, VEC><<<grid, THREADS, 0, stream>>>(slab);
            });
        }
        static cudaError_t run(const tb_gemm_args *args, cudaStream_t stream)
        {
            return vector_friendly(args) ? launch<true>(args, stream) : launch<false>(args, stream);
        }
    };
};

} // namespace

extern "C" cudaError_t tb_launch_regtile(const tb_gemm_args *args, cudaStream_t stream)
{
    return launch_for_trans<Regtile<8>::Launch>(args, stream);
}
