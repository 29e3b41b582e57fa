/*
 * What the register-tiled rungs (02_regtile.cu, 03_multistage.cu) share: the warp
 * and fragment layout of a block tile, the fragment loads, FMAs and C stores
 * that follow from it, and the wave heuristic that picks a tile shape per call.
 * The rungs differ in how operands reach shared memory; everything here runs on
 * k-major shared tiles (tile[k][m or n]) and a TM x TN accumulator per thread.
 */
#ifndef TILEDBLAS_KERNELS_TILE_COMMON_CUH
#define TILEDBLAS_KERNELS_TILE_COMMON_CUH

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>

#include "common/common.cuh"
#include "common/stream_k.cuh"
#include "tuning_sm90.h"

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

/* Four consecutive fragment values from one float4 in shared memory. */
__device__ __forceinline__ void load4(float *dst, const float *src)
{
    const float4 v = *reinterpret_cast<const float4 *>(src);
    dst[0] = v.x, dst[1] = v.y, dst[2] = v.z, dst[3] = v.w;
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
    for (int f = 0; f < S::FM; f++)
        load4(&a[4 * f], a_row + 32 * f);
#pragma unroll
    for (int g = 0; g < S::FN; g++)
        load4(&b[4 * g], b_row + 16 * g);
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
 * acc += a * b^T for one k-step while the next k-step's fragments load (when
 * has_next), from a_row and b_row as in load_fragments: the FMAs go column group
 * by column group of b, and each group's float4 is reloaded as soon as its FMAs
 * are issued. Loaded whole after the FMAs, ptxas issued all six float4 reads
 * of a k-step back to back, which stalled the FMA stream behind them; spread
 * this way, the 256x128 tiles ran 2-4% faster on the H100 and the 128x256 one 7%.
 *
 * ZIGZAG: odd rows take the group's columns backwards, so that consecutive
 * FMAs share an operand at every turn as well (b[j] there, a[i] along a row).
 * ptxas then marks 0.84 operand reads per FMA of the 8x16 tiles to come from
 * the reuse cache instead of 0.74, and register file reads cost energy: at
 * the H100's power cap those tiles run 0.7-3.3% faster with one operand
 * stored along k. Other tiles and storages gain less or lose (tuning_sm90.h).
 */
template <typename S, bool ZIGZAG>
__device__ __forceinline__ void outer_product_loading_next(float (&acc)[S::TM][S::TN], const float (&a)[S::TM],
                                                           float (&a_next)[S::TM], float (&b)[S::TN],
                                                           bool has_next, const float *a_row, const float *b_row)
{
#pragma unroll
    for (int g = 0; g < S::FN; g++) {
#pragma unroll
        for (int i = 0; i < S::TM; i++)
#pragma unroll
            for (int t = 0; t < 4; t++) {
                const int j = 4 * g + (ZIGZAG && i % 2 ? 3 - t : t);
                acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
            }
        if (!has_next)
            continue;
        load4(&b[4 * g], b_row + 16 * g);
        if (g < S::FM)
            load4(&a_next[4 * g], a_row + 32 * g);
    }
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

/* An attribute of the current device, read once (a process uses one device), or `fallback`.
 * Atomic: calls on both lanes plan their launches at once. */
template <cudaDeviceAttr ATTRIBUTE>
static inline int device_attribute(int fallback)
{
    static std::atomic<int> value;
    int known = value.load(std::memory_order_relaxed);
    if (!known) {
        int device = 0, read = 0;
        const bool ok = cudaGetDevice(&device) == cudaSuccess &&
                        cudaDeviceGetAttribute(&read, ATTRIBUTE, device) == cudaSuccess && read > 0;
        known = ok ? read : fallback;
        value.store(known, std::memory_order_relaxed);
    }
    return known;
}

static inline int sm_count()
{
    return device_attribute<cudaDevAttrMultiProcessorCount>(1);
}

/* The most dynamic shared memory a block may opt in to on this GPU. */
static inline int max_block_smem()
{
    return device_attribute<cudaDevAttrMaxSharedMemoryPerBlockOptin>(48 * 1024);
}

/* The L2 cache's bytes, where split-K's partial sums stay when they fit. */
static inline int l2_bytes()
{
    return device_attribute<cudaDevAttrL2CacheSize>(0);
}

/*
 * The share of an SM's full rate that `warps` resident warps reach: with one
 * per scheduler (four per SM) a block's FMAs wait on its loads; measured in
 * tuning_sm90.h.
 */
static inline double occupancy_share(int warps)
{
    const int per_scheduler = warps / 4;
    return per_scheduler < 2   ? TB_TUNE_SHARE_ONE_WARP_PER_SCHEDULER
           : per_scheduler < 3 ? TB_TUNE_SHARE_TWO_WARPS_PER_SCHEDULER
                               : 1.0;
}

/* Blocks of a bm x bn tile over C. */
static inline int64_t tiles(const tb_gemm_args *args, int bm, int bn)
{
    return blocks_for(args->m, bm) * (int64_t)blocks_for(args->n, bn);
}

/*
 * One row of a rung's table of tile shapes: the tile, how many blocks of it an
 * SM holds, what fastest_plan weighs, and the launchers: in `splits` slices of
 * K, with a stream-K tail (stream_k.cuh), in `splits` slices summed in
 * clusters (cluster_split.cuh); NULL: the shape has no such launch.
 */
struct ShapeEntry {
    const char *name;
    int bm, bn, bk, blocks_per_sm;
    int warps;         /* per block */
    int smem;          /* dynamic shared memory per block: the GPU must allow it */
    int min_k;         /* K per block below which another shape is preferred (0: none) */
    bool aligned_only; /* measured with 16-byte copies only: not for unaligned operands */
    double rate[4];    /* TFLOP/s by along_k(); 0: not measured there, never chosen */
    cudaError_t (*launch)(const tb_gemm_args *args, cudaStream_t stream, int splits);
    cudaError_t (*launch_tail)(const tb_gemm_args *args, cudaStream_t stream);
    cudaError_t (*launch_clusters)(const tb_gemm_args *args, cudaStream_t stream, int splits);
    int (*cluster_capacity)(int splits); /* clusters of `splits` blocks resident at once; 0: none */
};

/*
 * How a call is launched: a tile shape from the rung's table, slices of K (1:
 * no split) summed by a second pass or in clusters, or a stream-K tail, and
 * the predicted time.
 */
struct Plan {
    int shape;
    int splits;
    bool tail;
    bool clusters;
    double seconds;
};

/* A bm x bn x bk tile's stream-K tail for a call (tiles == 0: none), as the plan weighs it and the launch runs it. */
static inline StreamKTail call_tail(const tb_gemm_args *args, int bm, int bn, int bk, int blocks_per_sm)
{
    return stream_k_layout(blocks_for(args->m, bm), blocks_for(args->n, bn), (int64_t)sm_count() * blocks_per_sm,
                           blocks_for(args->k, bk));
}

static inline StreamKTail planned_tail(const ShapeEntry &shape, const tb_gemm_args *args)
{
    return call_tail(args, shape.bm, shape.bn, shape.bk, shape.blocks_per_sm);
}

/*
 * Which operands are stored along k, the index of a shape's rates: a tile
 * loads those with 4-byte copies that transpose on the way (0: neither,
 * 1: B, 2: A, 3: both), which costs more the wider that operand's tile.
 */
__host__ __device__ constexpr int along_k(bool trans_a, bool trans_b)
{
    return (trans_a ? 2 : 0) | (trans_b ? 0 : 1);
}

static inline int along_k(const tb_gemm_args *args)
{
    return along_k(args->trans_a != 0, args->trans_b != 0);
}

/*
 * The plan with the least predicted time over a shape table and slices of K,
 * among the shapes this GPU has the shared memory for, that have a rate for
 * this storage (and alignment), and whose slices of K are at least min_k deep
 * (a deep ring mostly fills and drains on a short K; where no shape
 * qualifies, depth is not required). A plan is charged, at the costs
 * tuning_sm90.h gives with what measured them (TB_TUNE_...):
 *  - the time of the kernel's busiest SM: its blocks' flops at the shape's
 *    rate, less where fewer blocks than it holds leave its schedulers short
 *    of warps (occupancy_share). Charged as whole waves instead, a grid of
 *    two 64x64 blocks per SM at 1000^3 was predicted at 120 us and ran in
 *    64.5, so the plan split it, for 69;
 *  - the ring's fill and drain, FILL_STEPS k-steps per block and at least
 *    MIN_FILL_SECONDS in all;
 *  - where C fills less than one wave and K is split into slices of at least
 *    MIN_K_PER_SLICE (scratch: one m x n plane per slice), the second pass:
 *    the partial planes written and read back, and C, at L2 speed where they
 *    fit in it, else at device memory speed. On the H100 these rules run
 *    768^3-1000^3 at 0.95-1.15 of cuBLAS, where whole waves and device memory
 *    speed ran them at 0.89-1.02, for 3% at 1024^3 and 2% at 8192x8192x256;
 *  - where the GPU holds all the tiles' clusters at once, the slices summed in
 *    clusters instead (cluster_split.cuh), at CLUSTER_SUM_BYTES_PER_SECOND
 *    per SM;
 *  - past one wave, a stream-K tail in place of the last wave: its longest
 *    range of k-slices, plus TAIL_EXTRA_SLICES, plus TAIL_SLACK of a tile.
 * Ties go to the earlier shape and the fewer slices, and to no tail.
 */
template <int N>
Plan fastest_plan(const ShapeEntry (&shapes)[N], const tb_gemm_args *args)
{
    constexpr int64_t MAX_SPLITS = TB_MAX_SPLITS, MIN_K_PER_SLICE = TB_TUNE_MIN_K_PER_SLICE,
                      FILL_STEPS = TB_TUNE_FILL_STEPS, TAIL_EXTRA_SLICES = TB_TUNE_TAIL_EXTRA_SLICES;
    constexpr double MIN_FILL_SECONDS = TB_TUNE_MIN_FILL_SECONDS, TAIL_SLACK = TB_TUNE_TAIL_SLACK,
                     SPLIT_BYTES_PER_SECOND = TB_TUNE_SPLIT_BYTES_PER_SECOND,
                     SPLIT_L2_BYTES_PER_SECOND = TB_TUNE_SPLIT_L2_BYTES_PER_SECOND,
                     SPLIT_LAUNCH_SECONDS = TB_TUNE_SPLIT_LAUNCH_SECONDS,
                     CLUSTER_SUM_BYTES_PER_SECOND = TB_TUNE_CLUSTER_SUM_BYTES_PER_SECOND;
    const int64_t sms = sm_count();
    const int storage = along_k(args);
    const double plane_bytes = (double)args->m * args->n * sizeof(float);
    const bool aligned = vector_friendly(args);
    const int64_t most_splits = std::min(MAX_SPLITS, std::max((int64_t)1, args->k / MIN_K_PER_SLICE));
    /* A block's time over `depth` of K, in units of its flops' time: the ring's fill and drain added (K = 0: C scaled). */
    const auto with_fill = [](double depth, int bk) {
        const double steps = std::max(1.0, std::ceil(depth / bk));
        return (steps + FILL_STEPS) / steps;
    };
    Plan plan = {N - 1, 1, false, false, 0.0}; /* the last shape is the smallest, fit for any GPU */
    double best = -1.0;
    const auto consider = [&](int shape, int splits, bool tail, bool clusters, double time) {
        if (best < 0.0 || time < best)
            best = time, plan = {shape, splits, tail, clusters, time};
    };
    for (int pass = 0; pass < 2 && best < 0.0; pass++) { /* pass 1: K too short for every shape */
        for (int s = 0; s < N; s++) {
            if (shapes[s].smem > max_block_smem() || shapes[s].rate[storage] <= 0.0 ||
                (shapes[s].aligned_only && !aligned))
                continue;
            const int64_t slots = sms * shapes[s].blocks_per_sm;
            const int64_t blocks = tiles(args, shapes[s].bm, shapes[s].bn);
            const double flops_per_k = 2.0 * (double)slots * shapes[s].bm * shapes[s].bn; /* a wave, one k */
            const double seconds_per_k = flops_per_k / (shapes[s].rate[storage] * 1e12);
            const bool may_split = blocks < slots && blocks_for(args->n, shapes[s].bn) <= 65535;
            const int bps = shapes[s].blocks_per_sm, warps = shapes[s].warps;
            for (int64_t splits = 1; splits <= (may_split ? most_splits : 1); splits++) {
                const int64_t per_sm = (blocks * splits + sms - 1) / sms; /* on the busiest SM */
                const double k_slice = (double)((args->k + splits - 1) / splits);
                if (pass == 0 && k_slice < shapes[s].min_k)
                    continue;
                /* Past bps blocks an SM stays full until its last ones: a block starts as another ends
                 * (six 64x64x8 blocks per SM ran in six times one block's time at four). */
                const double share = occupancy_share((int)std::min(per_sm, (int64_t)bps) * warps) /
                                     occupancy_share(bps * warps);
                const double flops_time = (double)per_sm / bps * seconds_per_k * k_slice / share;
                double time = flops_time + std::max(flops_time * (with_fill(k_slice, shapes[s].bk) - 1.0),
                                                    MIN_FILL_SECONDS);
                const bool clusters = splits > 1 && shapes[s].cluster_capacity &&
                                      blocks <= shapes[s].cluster_capacity((int)splits);
                if (clusters) {
                    time += (double)per_sm * 2.0 * shapes[s].bm * shapes[s].bn * sizeof(float) /
                            CLUSTER_SUM_BYTES_PER_SECOND;
                } else if (splits > 1) {
                    const double bytes = (2.0 * splits + 2.0) * plane_bytes;
                    time += bytes / (bytes <= l2_bytes() ? SPLIT_L2_BYTES_PER_SECOND : SPLIT_BYTES_PER_SECOND) +
                            SPLIT_LAUNCH_SECONDS;
                }
                consider(s, (int)splits, false, clusters, time);
            }
            const StreamKTail tail = shapes[s].launch_tail ? planned_tail(shapes[s], args) : StreamKTail{};
            if (tail.tiles) {
                const double tail_k =
                    ((double)(longest_range(tail) + TAIL_EXTRA_SLICES) + TAIL_SLACK * tail.slices) * shapes[s].bk;
                const double dp_k = (double)(tail.dp_tiles / slots) * args->k * with_fill(args->k, shapes[s].bk);
                consider(s, 1, true, false, seconds_per_k * (dp_k + tail_k));
            }
        }
    }
    return plan;
}

/* Scratch floats for a plan's partial sums: one m x n plane per slice of K. */
static inline int64_t split_workspace_floats(const tb_gemm_args *args, int splits)
{
    return splits > 1 ? splits * args->m * args->n : 0;
}

/* Without the scratch for the partial sums a call runs unsplit: slower, still right. */
static inline int affordable_splits(const tb_gemm_args *args, int splits)
{
    const bool room = args->workspace && args->workspace_floats >= split_workspace_floats(args, splits);
    return splits > 1 && room ? splits : 1;
}

/* The depth of each of `splits` slices of K but the last: whole bk tiles. */
__host__ __device__ inline int64_t split_chunk(int64_t k, int64_t splits, int64_t bk)
{
    return ((k + splits - 1) / splits + bk - 1) / bk * bk;
}

/*
 * Split-K: in a launch of gridDim.z > 1 slices, block z sums K from k_begin
 * for k_len (whole BK tiles, only the last slice ragged); unsplit, all of K.
 */
template <int BK>
__device__ __forceinline__ void k_slice(const tb_gemm_args &p, int64_t &k_begin, int64_t &k_len)
{
    const int64_t chunk = split_chunk(p.k, gridDim.z, BK);
    k_begin = min(p.k, blockIdx.z * chunk);
    k_len = gridDim.z == 1 ? p.k : min(chunk, p.k - k_begin);
}

/*
 * Where a block's results go: C, or in a split launch plane z of the workspace
 * (leading dimension m, alpha 1, beta 0), which tb_launch_splitk_reduce sums.
 * Kernels call it after their k loop, so that none of it holds registers there.
 */
__device__ __forceinline__ tb_gemm_args split_output(const tb_gemm_args &p)
{
    tb_gemm_args out = p;
    if (gridDim.z > 1) {
        out.c = p.workspace + blockIdx.z * p.m * p.n;
        out.ldc = p.m;
        out.alpha = 1.0f;
        out.beta = 0.0f;
    }
    return out;
}

/* Whether the 128-bit path applies: split slices store to the workspace, not C. */
static inline bool vector_friendly(const tb_gemm_args *args, int splits)
{
    tb_gemm_args target = *args;
    if (splits > 1)
        target.c = args->workspace, target.ldc = args->m;
    return vector_friendly(&target);
}

/*
 * Launches a BM x BN tiled kernel over C: launch_grid(args, grid) starts one
 * grid. Split: one grid of slices (grid.z) and the summing pass. Unsplit: a
 * grid per slab of columns (for_each_column_slab).
 */
template <bool TB, typename LaunchGrid>
cudaError_t launch_tiles(const tb_gemm_args *args, int bm, int bn, int splits, cudaStream_t stream,
                         LaunchGrid launch_grid)
{
    if (splits > 1) {
        launch_grid(*args, dim3(blocks_for(args->m, bm), blocks_for(args->n, bn), splits));
        const cudaError_t status = cudaGetLastError();
        return status != cudaSuccess ? status : tb_launch_splitk_reduce(args, splits, stream);
    }
    return for_each_column_slab<TB>(args, bn, [&](const tb_gemm_args &slab) {
        launch_grid(slab, dim3(blocks_for(slab.m, bm), blocks_for(slab.n, bn)));
    });
}

/* A rung's entry points over its shape table: by name for the tuning benchmark, planned for calls. */
template <int N>
const char *shape_name(const ShapeEntry (&shapes)[N], int shape)
{
    return shape >= 0 && shape < N ? shapes[shape].name : "unknown";
}

/* An empty C needs no launch (and a zero-sized grid would not launch). */
template <int N>
cudaError_t launch_shape(const ShapeEntry (&shapes)[N], int shape, const tb_gemm_args *args,
                         cudaStream_t stream)
{
    if (shape < 0 || shape >= N)
        return cudaErrorInvalidValue;
    return args->m <= 0 || args->n <= 0 ? cudaSuccess : shapes[shape].launch(args, stream, 1);
}

/* A shape with its stream-K tail, for the tuning benchmark; unsplit as launch_shape where it has none. */
template <int N>
cudaError_t launch_shape_tail(const ShapeEntry (&shapes)[N], int shape, const tb_gemm_args *args,
                              cudaStream_t stream)
{
    if (shape < 0 || shape >= N || !shapes[shape].launch_tail)
        return launch_shape(shapes, shape, args, stream);
    return args->m <= 0 || args->n <= 0 ? cudaSuccess : shapes[shape].launch_tail(args, stream);
}

/*
 * A shape in `splits` slices of K summed by the second pass (scratch: one
 * m x n plane per slice) or in clusters, for tests; cudaErrorNotSupported
 * where the shape or the GPU has no cluster launch.
 */
template <int N>
cudaError_t launch_shape_split(const ShapeEntry (&shapes)[N], int shape, const tb_gemm_args *args,
                               cudaStream_t stream, int splits, bool clusters)
{
    if (shape < 0 || shape >= N || splits < 1)
        return cudaErrorInvalidValue;
    const ShapeEntry &entry = shapes[shape];
    if (clusters && (!entry.cluster_capacity || !entry.cluster_capacity(splits)))
        return cudaErrorNotSupported;
    if (args->m <= 0 || args->n <= 0)
        return cudaSuccess;
    return clusters ? entry.launch_clusters(args, stream, splits) : entry.launch(args, stream, splits);
}

/* A tail's scratch, with 3 floats more for aligning it to float4; 0 where the shape has none. */
template <int N>
int64_t tail_workspace_floats(const ShapeEntry (&shapes)[N], int shape, const tb_gemm_args *args)
{
    if (shape < 0 || shape >= N || !shapes[shape].launch_tail)
        return 0;
    const StreamKTail tail = planned_tail(shapes[shape], args);
    return tail.tiles ? stream_k_workspace_floats(tail, shapes[shape].bm, shapes[shape].bn) + 3 : 0;
}

template <int N>
int64_t planned_workspace_floats(const ShapeEntry (&shapes)[N], const tb_gemm_args *args)
{
    const Plan plan = fastest_plan(shapes, args);
    if (plan.clusters)
        return 0;
    return plan.tail ? tail_workspace_floats(shapes, plan.shape, args) : split_workspace_floats(args, plan.splits);
}

/* What the plan predicts, for choosing between rungs (best.c). */
template <int N>
double planned_seconds(const ShapeEntry (&shapes)[N], const tb_gemm_args *args)
{
    return args->m <= 0 || args->n <= 0 ? 0.0 : fastest_plan(shapes, args).seconds;
}

/*
 * The most products one element of C sums in one chain under the plan: a
 * slice of K, whole BK tiles deep as k_slice cuts them (best.c bounds it).
 */
template <int N>
int64_t planned_chain(const ShapeEntry (&shapes)[N], const tb_gemm_args *args)
{
    if (args->m <= 0 || args->n <= 0)
        return 0;
    const Plan plan = fastest_plan(shapes, args);
    if (plan.tail || plan.splits <= 1)
        return args->k;
    return std::min(args->k, split_chunk(args->k, plan.splits, shapes[plan.shape].bk));
}

/* The plan in words: the tile shape, then its slices of K or its stream-K tail. */
template <int N>
void describe_plan(const ShapeEntry (&shapes)[N], const tb_gemm_args *args, char *text, size_t size)
{
    const Plan plan = fastest_plan(shapes, args);
    const ShapeEntry &shape = shapes[plan.shape];
    const StreamKTail tail = plan.tail ? planned_tail(shape, args) : StreamKTail{};
    if (plan.tail)
        snprintf(text, size, "%s, stream-K tail of %d tiles in %d ranges", shape.name, tail.tiles, tail.ranges);
    else if (plan.splits > 1)
        snprintf(text, size, "%s, K in %d slices%s", shape.name, plan.splits,
                 plan.clusters ? " summed in clusters" : "");
    else
        snprintf(text, size, "%s", shape.name);
}

template <int N>
cudaError_t launch_planned(const ShapeEntry (&shapes)[N], const tb_gemm_args *args, cudaStream_t stream)
{
    if (args->m <= 0 || args->n <= 0)
        return cudaSuccess;
    const Plan plan = fastest_plan(shapes, args);
    if (plan.tail)
        return shapes[plan.shape].launch_tail(args, stream);
    if (plan.clusters)
        return shapes[plan.shape].launch_clusters(args, stream, plan.splits);
    return shapes[plan.shape].launch(args, stream, affordable_splits(args, plan.splits));
}

#endif /* TILEDBLAS_KERNELS_TILE_COMMON_CUH */
