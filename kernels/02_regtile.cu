/*
 * Rung 2: block tiling with per-thread register tiles.
 *
 * A block of THREADS threads computes a BM x BN tile of C; each thread owns a
 * TM x TN register tile made of 4x4 fragments spread across its warp's tile,
 * so that every shared-memory read is a conflict-free float4 (eight
 * consecutive lanes read eight consecutive float4s) and one k step costs
 * TM/4 + TN/4 loads for TM*TN FMAs (the tiled rungs pay 2 loads per FMA).
 * Operands are read with 128-bit loads where aligned and staged through
 * registers into double-buffered shared memory, so the global loads of step
 * t+1 are in flight during the FMAs of step t. Both shared tiles are k-major
 * (tile[k][m or n]); operands stored k-contiguous are transposed on the way in.
 *
 * The tile shape is a template parameter; the table of shapes with their
 * measured rates (tuning_sm90.h) and the plan (common/tile_common.cuh) pick
 * one per call.
 */
#include "common/tile_common.cuh"
#include "tuning_sm90.h"

namespace {

/* Row padding: keeps the transposing stores conflict-free and float4 alignment intact. */
constexpr int PAD = 4;

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
 * Moves one BK x BX tile of an operand from global memory to a k-major shared
 * tile. Element (x, kk) of the tile (x along m or n) lives at
 *   base[(k0+kk) + (x0+x)*ld]  when the operand is stored k-contiguous,
 *   base[(x0+x) + (k0+kk)*ld]  otherwise.
 * Each thread moves BK/8 float4s, read along the contiguous direction; it keeps
 * a pointer per float4 and advances it one tile along k per load (cheaper in
 * registers than 64-bit index arithmetic every step).
 */
template <int BX, int BK, int THREADS, bool K_CONTIGUOUS, bool VEC>
struct TileLoader {
    static constexpr int PER_THREAD = BK * BX / 4 / THREADS;
    static_assert(PER_THREAD >= 1 && PER_THREAD * 4 * THREADS == BK * BX, "loader shape");
    const float *next[PER_THREAD];
    int x_room[PER_THREAD]; /* elements left along x from this thread's position */
    int64_t step;
    float4 staged[PER_THREAD];

    /* Tile coordinates of this thread's r-th float4. */
    __device__ static int tile_x(int f) { return K_CONTIGUOUS ? f / (BK / 4) : (f % (BX / 4)) * 4; }
    __device__ static int tile_k(int f) { return K_CONTIGUOUS ? (f % (BK / 4)) * 4 : f / (BX / 4); }

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

    __device__ void store(float (*tile)[BX + PAD]) const
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

template <typename S, bool TA, bool TB, bool VEC>
__global__ void __launch_bounds__(S::THREADS, S::MIN_BLOCKS) sgemm_regtile(tb_gemm_args p)
{
    constexpr int BM = S::BM, BN = S::BN, BK = S::BK;
    __shared__ __align__(16) float As[2][BK][BM + PAD];
    __shared__ __align__(16) float Bs[2][BK][BN + PAD];

    int64_t k_begin, k_len;
    k_slice<BK>(p, k_begin, k_len);
    /* Dimensions fit an int (BLAS LP64); only address offsets need 64 bits. */
    const int m = (int)p.m, n = (int)p.n, k = (int)k_len;
    const int tid = threadIdx.x;
    const int i0 = blockIdx.x * BM, j0 = blockIdx.y * BN;
    /* This thread's fragments start at rows row + 32f and columns col + 16g. */
    const int row = fragment_row<S>(tid), col = fragment_col<S>(tid);

    /* op(A) is k-contiguous when A is transposed; op(B) when B is not. */
    TileLoader<BM, BK, S::THREADS, TA, VEC> a_tile(p.a + (TA ? k_begin : k_begin * p.lda), p.lda, i0, m, tid);
    TileLoader<BN, BK, S::THREADS, !TB, VEC> b_tile(p.b + (TB ? k_begin * p.ldb : k_begin), p.ldb, j0, n, tid);
    /* k steps that exist in tile t. */
    const auto k_room = [&](int t) { return min(BK, k - t * BK); };

    float acc[S::TM][S::TN] = {};
    const int k_tiles = (int)(((int64_t)k + BK - 1) / BK);
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
            float a[S::TM], b[S::TN];
            load_fragments<S>(&As[cur][kk][row], &Bs[cur][kk][col], a, b);
            outer_product<S>(acc, a, b);
        }
        /* The other buffer was last read before the previous barrier: safe to refill. */
        if (more) {
            a_tile.store(As[cur ^ 1]);
            b_tile.store(Bs[cur ^ 1]);
        }
        __syncthreads();
    }

    const tb_gemm_args out = split_output(p);
    float *c_tile = out.c + i0 + (int64_t)j0 * out.ldc;
#pragma unroll
    for (int j = 0; j < S::TN; j++) {
        const int cj = col + 16 * (j / 4) + j % 4;
#pragma unroll
        for (int f = 0; f < S::FM; f++) {
            const float sums[4] = {acc[4 * f][j], acc[4 * f + 1][j], acc[4 * f + 2][j], acc[4 * f + 3][j]};
            store4<VEC>(out, c_tile, row + 32 * f, cj, m - i0, n - j0, sums);
        }
    }
}

/* Launches tile shape S for a transpose pair, in `splits` slices of K (1: no split). */
template <typename S>
struct Regtile {
    template <bool TA, bool TB>
    struct Launch {
        template <bool VEC>
        static cudaError_t launch(const tb_gemm_args *args, cudaStream_t stream, int splits)
        {
            return launch_tiles<TB>(args, S::BM, S::BN, splits, stream, [&](const tb_gemm_args &p, dim3 grid) {
                sgemm_regtile<S, TA, TB, VEC><<<grid, S::THREADS, 0, stream>>>(p);
            });
        }
        static cudaError_t run(const tb_gemm_args *args, cudaStream_t stream, int splits)
        {
            return vector_friendly(args, splits) ? launch<true>(args, stream, splits)
                                                 : launch<false>(args, stream, splits);
        }
    };
};

/* A row of the shape table: the tile shape and its rates by storage. */
template <typename S>
constexpr ShapeEntry entry(const char *name, double none, double b, double a, double both)
{
    return {name, S::BM, S::BN, S::BK, S::MIN_BLOCKS, S::THREADS / 32, 0, 0, false, {none, b, a, both},
            launch_for_trans<Regtile<S>::template Launch, int>, nullptr, nullptr, nullptr};
}

/* The tile shapes and their measured rates (tuning_sm90.h): the plan's inputs. */
#define SHAPE(BM, BN, BK, WM, WN, BLOCKS, NONE, B, A, BOTH) \
    entry<TileShape<BM, BN, BK, WM, WN, BLOCKS>>(#BM "x" #BN "x" #BK, NONE, B, A, BOTH),
const ShapeEntry shapes[] = {TB_TUNE_REGTILE_SHAPES(SHAPE)};
#undef SHAPE
} // namespace

extern "C" int tb_regtile_shape_count(void)
{
    return sizeof shapes / sizeof shapes[0];
}

extern "C" const char *tb_regtile_shape_name(int shape)
{
    return shape_name(shapes, shape);
}

extern "C" cudaError_t tb_launch_regtile_shape(int shape, const tb_gemm_args *args, cudaStream_t stream)
{
    return launch_shape(shapes, shape, args, stream);
}

extern "C" int64_t tb_regtile_workspace_floats(const tb_gemm_args *args)
{
    return planned_workspace_floats(shapes, args);
}

extern "C" double tb_regtile_predicted_seconds(const tb_gemm_args *args)
{
    return planned_seconds(shapes, args);
}

extern "C" int64_t tb_regtile_planned_chain(const tb_gemm_args *args)
{
    return planned_chain(shapes, args);
}

extern "C" void tb_regtile_describe_plan(const tb_gemm_args *args, char *text, size_t size)
{
    describe_plan(shapes, args, text, size);
}

extern "C" cudaError_t tb_launch_regtile(const tb_gemm_args *args, cudaStream_t stream)
{
    return launch_planned(shapes, args, stream);
}
