/*
 * Rung 4: FP32-accurate SGEMM on Hopper's tensor cores, error-corrected 3xTF32 with wgmma.
 *
 * Each operand element x is split into x_hi = tf32(x) and x_lo = tf32(x - x_hi)
 * (round to nearest); a * b is then a_lo*b_hi + a_hi*b_lo + a_hi*b_hi, the
 * dropped a_lo*b_lo and the rounding of the lo parts costing about 2^-22 |a b|.
 * The tensor cores sum their products with truncation, so every k-slice of 32
 * is summed into a fresh accumulator and added to the running sum of C with an
 * FP32 add that rounds to nearest: the truncation error stays within a slice,
 * and the slices sum in a two-level order (error ~ (32*3 + K/32) u rather than K u).
 *
 * Phases: a first pass (one launch) splits both operands into hi and lo parts, k contiguous
 * (op(A) as m x k, op(B) as n x k), in the workspace, and marks the rows of A
 * and columns of B that hold Inf or NaN. The GEMM block has three warpgroups:
 * one thread of the first loads 32-deep slices of the four parts with the
 * tensor memory accelerator into a ring of stages (128-byte swizzle, as wgmma
 * reads them), and the other two compute 64 rows each of a 128 x 128 tile of
 * C. Full and empty barriers per stage pass the ring between them, so neither
 * waits on a block-wide barrier; the producer gives up its registers to the
 * consumers (setmaxnreg), which hold the sum of C and two slice accumulators
 * that take turns, so that the tensor cores work on slice t+1 while slice t is
 * added to the sum. Elements of C whose row of A or column of B holds Inf or
 * NaN are computed again in FP32 at the end, so that they come out as the FP32
 * rungs' do (a correction term such as Inf * b_lo would otherwise carry the
 * sign of b_lo).
 *
 * A C whose tiles fill at most half of the GPU's SMs would leave SMs idle and
 * sum long chains of slices: K is then split across blocks (grid.y) so that
 * they fill the SMs, each split's sums left in a plane of the workspace, and
 * the planes summed in split order by split-K's second pass (splitk.cu), which
 * applies alpha and beta. That shortens the chains too, so the error grows
 * more slowly with K.
 *
 * wgmma, setmaxnreg and the tensor memory accelerator are sm_90a's: this file
 * is compiled for that target alone, and on any other GPU the launch reports
 * cudaErrorNotSupported.
 */
#include <cuda.h>
#include <cudaTypedefs.h>
#include <stdio.h>

#include "common/common.cuh"
#include "common/tile_common.cuh"

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "04_tf32x3.cu needs the sm_90a target (wgmma, setmaxnreg, the tensor memory accelerator)"
#endif

namespace {

constexpr int BM = 128, BN = 128, BK = 32, STAGES = 3;
constexpr int CONSUMERS = 2, THREADS = 128 * (CONSUMERS + 1);
constexpr int GROUP = 4; /* slices between two drains of the tensor cores' pipeline (group below) */
constexpr int MIN_SPLIT_SLICES = 8; /* the fewest slices of K a split sums, but for the last */
constexpr int TILE_FLOATS = BM * BK;          /* A and B tiles have the same size */
constexpr int STAGE_FLOATS = 4 * TILE_FLOATS; /* a_hi, a_lo, b_hi, b_lo */
constexpr uint32_t STAGE_BYTES = STAGE_FLOATS * sizeof(float);
constexpr size_t SMEM_BYTES = (size_t)STAGES * STAGE_BYTES + 2 * STAGES * sizeof(uint64_t) + 1024;

__device__ __forceinline__ uint32_t smem_u32(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

/* wgmma's shared memory descriptor: K-major, 128-byte swizzle, 8-row groups 1024 bytes apart. */
__device__ __forceinline__ uint64_t descriptor(uint32_t address)
{
    return (uint64_t)((address & 0x3FFFF) >> 4) | (uint64_t)1 << 16 | (uint64_t)(1024 >> 4) << 32 |
           (uint64_t)1 << 62;
}

__device__ __forceinline__ float tf32_round(float x)
{
    uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
    return __uint_as_float(r);
}

/* x = hi + lo + O(2^-22 |x|); near the top of the range, where rounding up would reach Inf, hi is cut. */
__device__ __forceinline__ void split(float x, float &hi, float &lo)
{
    hi = tf32_round(x);
    if (isinf(hi) && isfinite(x))
        hi = __uint_as_float(__float_as_uint(x) & 0xFFFFE000u);
    lo = isfinite(x) ? tf32_round(x - hi) : 0.0f;
}

#define TF32X3_D8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
                     "+f"(d[i + 6]), "+f"(d[i + 7])

/* d (64 x 128 per warpgroup) = A(64 x 8) B(128 x 8)^T + (accumulate ? d : 0). */
__device__ __forceinline__ void mma(float (&d)[64], uint64_t a, uint64_t b, int accumulate)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
                 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
                 "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
                 "%64, %65, p, 1, 1;\n}\n"
                 : TF32X3_D8(0), TF32X3_D8(8), TF32X3_D8(16), TF32X3_D8(24), TF32X3_D8(32), TF32X3_D8(40),
                   TF32X3_D8(48), TF32X3_D8(56)
                 : "l"(a), "l"(b), "r"(accumulate));
}
#undef TF32X3_D8

/*
 * Pins an accumulator's registers at this point of the program: the compiler may not move their
 * reads across it, so a read placed after wgmma.wait_group stays after it.
 */
__device__ __forceinline__ void pin(float (&d)[64])
{
#pragma unroll
    for (int i = 0; i < 64; ++i)
        asm volatile("" : "+f"(d[i])::"memory");
}

/* An operand as phase 1 reads it: x (rows x k), x(j, p) at src[p + j*ld], or src[j + p*ld] with `across`. */
struct SplitSource {
    const float *src;
    int64_t rows, ld;
    int across;
    float *hi, *lo; /* rows x k, row j at j*ld_out, zero past k */
    int *bad;       /* bad[j] = 1 where row j holds Inf or NaN */
};

constexpr int SPLIT_ROWS = 32, SPLIT_K = 128, SPLIT_THREADS = 256;
static_assert(SPLIT_ROWS == 32, "split_operands reads across the rows a warp's lanes");
static_assert(SPLIT_ROWS * SPLIT_K % (4 * SPLIT_THREADS) == 0 && SPLIT_THREADS % 32 == 0,
              "split_operands' threads share its tile evenly");

/*
 * Phase 1: both operands (blockIdx.z) to their hi and lo parts, a tile of SPLIT_ROWS rows by SPLIT_K
 * of k at a time. The tile is read along whichever index is contiguous, 16 independent loads per
 * thread, and written along k in 16-byte stores (ld_out is a multiple of 4, the parts 16-byte
 * aligned): a pass bound by device memory, whose writes are twice its reads.
 */
__global__ void __launch_bounds__(SPLIT_THREADS, 4)
    split_operands(const SplitSource a, const SplitSource b, int64_t k, int64_t ld_out)
{
    const SplitSource x = blockIdx.z ? b : a;
    __shared__ float tile[SPLIT_ROWS][SPLIT_K + 1];
    const int64_t p0 = (int64_t)blockIdx.x * SPLIT_K;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    /* grid.y is at most 65535: more rows than SPLIT_ROWS times that take several row tiles per block. */
    for (int64_t j0 = (int64_t)blockIdx.y * SPLIT_ROWS; j0 < x.rows; j0 += (int64_t)gridDim.y * SPLIT_ROWS) {
#pragma unroll
        for (int i = 0; i < SPLIT_ROWS * SPLIT_K / SPLIT_THREADS; ++i) {
            /* Across: lanes along the rows, else along k. */
            const int r = x.across ? lane : (threadIdx.x + i * SPLIT_THREADS) / SPLIT_K;
            const int q = x.across ? warp + i * (SPLIT_THREADS / 32) : (threadIdx.x + i * SPLIT_THREADS) % SPLIT_K;
            const int64_t j = j0 + r, p = p0 + q;
            float value = 0.0f;
            if (j < x.rows && p < k)
                value = x.across ? x.src[j + p * x.ld] : x.src[p + j * x.ld];
            tile[r][q] = value;
        }
        __syncthreads();
#pragma unroll
        for (int i = 0; i < SPLIT_ROWS * SPLIT_K / 4 / SPLIT_THREADS; ++i) {
            const int f = threadIdx.x + i * SPLIT_THREADS, r = f / (SPLIT_K / 4), q = f % (SPLIT_K / 4) * 4;
            const int64_t j = j0 + r, p = p0 + q;
            if (j >= x.rows || p >= ld_out)
                continue;
            float4 h, l;
            split(tile[r][q], h.x, l.x);
            split(tile[r][q + 1], h.y, l.y);
            split(tile[r][q + 2], h.z, l.z);
            split(tile[r][q + 3], h.w, l.w);
            /* Past k the tile holds zeros, which are finite. */
            if (!isfinite(tile[r][q]) || !isfinite(tile[r][q + 1]) || !isfinite(tile[r][q + 2]) ||
                !isfinite(tile[r][q + 3]))
                x.bad[j] = 1;
            *(float4 *)(x.hi + p + j * ld_out) = h;
            *(float4 *)(x.lo + p + j * ld_out) = l;
        }
        __syncthreads(); /* the tile is refilled for the next row tile */
    }
}

/* ---- mbarriers and the tensor memory accelerator ---- */

__device__ __forceinline__ void bar_init(uint64_t *bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(count) : "memory");
}

__device__ __forceinline__ void bar_wait(uint64_t *bar, unsigned parity)
{
    asm volatile("{\n.reg .pred done;\nwait:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 "@!done bra wait;\n}\n" ::"r"(smem_u32(bar)),
                 "r"(parity)
                 : "memory");
}

__device__ __forceinline__ void bar_arrive(uint64_t *bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_u32(bar)) : "memory");
}

__device__ __forceinline__ void bar_expect(uint64_t *bar, uint32_t bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(bytes)
                 : "memory");
}

/* A box of 32 (k) x 128 (rows) floats at (k0, row0) of `map` into `dst`, counted on `bar`. */
__device__ __forceinline__ void tma_load(void *dst, const CUtensorMap *map, int k0, int row0, uint64_t *bar)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(smem_u32(dst)),
                 "l"(map), "r"(k0), "r"(row0), "r"(smem_u32(bar))
                 : "memory");
}

/* The four parts as tensor maps: phase 2's operands. */
struct Maps {
    CUtensorMap a_hi, a_lo, b_hi, b_lo;
};

/* Slice `stage` into `part` (this consumer's 64 rows): the two correction terms, then hi * hi. */
__device__ __forceinline__ void issue(const float *stage, int consumer, float (&part)[64])
{
    const uint32_t a_hi = smem_u32(stage) + consumer * 64 * 128, a_lo = a_hi + TILE_FLOATS * 4;
    const uint32_t b_hi = smem_u32(stage) + 2 * TILE_FLOATS * 4, b_lo = b_hi + TILE_FLOATS * 4;
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int ks = 0; ks < BK / 8; ++ks) {
        mma(part, descriptor(a_lo + ks * 32), descriptor(b_hi + ks * 32), ks > 0);
        mma(part, descriptor(a_hi + ks * 32), descriptor(b_lo + ks * 32), 1);
    }
#pragma unroll
    for (int ks = 0; ks < BK / 8; ++ks)
        mma(part, descriptor(a_hi + ks * 32), descriptor(b_hi + ks * 32), 1);
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

/* The ring: stages of the four parts, and per stage a full (loaded) and an empty (read) barrier. */
struct Ring {
    float *stage;
    uint64_t *full, *empty;
};

/* Slice t to the tensor cores into `part`, once it is loaded. */
__device__ __forceinline__ void consume(const Ring &ring, int64_t t, int consumer, float (&part)[64])
{
    const int s = (int)(t % STAGES);
    bar_wait(&ring.full[s], (unsigned)((t / STAGES) & 1));
    pin(part);
    issue(ring.stage + s * STAGE_FLOATS, consumer, part);
    pin(part);
}

/* Slice t, in `part`, complete once at most IN_FLIGHT newer groups are: its stage freed, `part` summed. */
template <int IN_FLIGHT>
__device__ __forceinline__ void retire(const Ring &ring, int64_t t, float (&part)[64], float (&sum)[64])
{
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(IN_FLIGHT) : "memory");
    pin(part);
    bar_arrive(&ring.empty[t % STAGES]);
#pragma unroll
    for (int i = 0; i < 64; ++i)
        sum[i] += part[i];
}

/*
 * Slices t0 .. t0+G-1, each issued while the one before is still on the tensor cores; nothing is
 * in flight before or after, so that no accumulator a wgmma may still write crosses a branch.
 */
template <int G>
__device__ __forceinline__ void group(const Ring &ring, int64_t t0, int consumer, float (&part)[2][64],
                                      float (&sum)[64])
{
    consume(ring, t0, consumer, part[0]);
#pragma unroll
    for (int j = 1; j < G; ++j) {
        consume(ring, t0 + j, consumer, part[j % 2]);
        retire<1>(ring, t0 + j - 1, part[(j - 1) % 2], sum);
    }
    retire<0>(ring, t0 + G - 1, part[(G - 1) % 2], sum);
}

/*
 * Phase 2: C = alpha * A B^T + beta * C from the parts; C column-major. The original operands
 * (op(A)(i, p) at a[p + i*lda] with trans_a, else a[i + p*lda]; op(B)(p, j) at b[j + p*ldb]
 * with trans_b, else b[p + j*ldb]) are read only for elements the FP32 path computes. Split
 * (`partial` not NULL), block row y sums slices [y * split_slices, (y + 1) * split_slices) of K
 * into plane y of `partial` (m x n, leading dimension m), alpha and beta left to the second pass.
 */
__global__ void __launch_bounds__(THREADS, 1)
    gemm(const __grid_constant__ Maps maps, int64_t m, int64_t n, int64_t k, int64_t split_slices, float alpha,
         const int *__restrict__ a_bad, const int *__restrict__ b_bad, int trans_a, const float *__restrict__ a,
         int64_t lda, int trans_b, const float *__restrict__ b, int64_t ldb, float beta, float *__restrict__ c,
         int64_t ldc, float *__restrict__ partial)
{
    extern __shared__ unsigned char raw[];
    float *smem = (float *)(((uintptr_t)raw + 1023) & ~(uintptr_t)1023);
    uint64_t *bars = (uint64_t *)(smem + STAGES * STAGE_FLOATS);
    const Ring ring = {smem, bars, bars + STAGES};

    /* Tiles in bands of 16 block rows, so that blocks running together share A and B in L2. */
    const int64_t tiles_m = (m + BM - 1) / BM, tiles_n = (n + BN - 1) / BN;
    const int64_t band = 16, id = blockIdx.x, per_band = band * tiles_n;
    const int64_t first_m = id / per_band * band;
    const int64_t rows = tiles_m - first_m < band ? tiles_m - first_m : band;
    const int64_t m0 = (first_m + (id % per_band) % rows) * BM, n0 = (id % per_band) / rows * BN;
    const int64_t k_tiles = (k + BK - 1) / BK;
    const int64_t first = (int64_t)blockIdx.y * split_slices;
    const int64_t slices = (first + split_slices < k_tiles ? first + split_slices : k_tiles) - first;

    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            bar_init(&ring.full[s], 1);
            bar_init(&ring.empty[s], 128 * CONSUMERS);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();

    const int warpgroup = threadIdx.x / 128;
    if (warpgroup == 0) {
        /* The producer: one thread issues every load; the warpgroup's registers go to the consumers. */
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
        if (threadIdx.x == 0) {
            for (int64_t t = 0; t < slices; ++t) {
                const int s = (int)(t % STAGES);
                if (t >= STAGES)
                    bar_wait(&ring.empty[s], (unsigned)((t / STAGES - 1) & 1));
                float *stage = ring.stage + s * STAGE_FLOATS;
                bar_expect(&ring.full[s], STAGE_BYTES);
                const int k0 = (int)((first + t) * BK);
                tma_load(stage, &maps.a_hi, k0, (int)m0, &ring.full[s]);
                tma_load(stage + TILE_FLOATS, &maps.a_lo, k0, (int)m0, &ring.full[s]);
                tma_load(stage + 2 * TILE_FLOATS, &maps.b_hi, k0, (int)n0, &ring.full[s]);
                tma_load(stage + 3 * TILE_FLOATS, &maps.b_lo, k0, (int)n0, &ring.full[s]);
            }
        }
        return;
    }

    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
    const int consumer = warpgroup - 1, warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
    float sum[64], part[2][64];
#pragma unroll
    for (int i = 0; i < 64; ++i)
        sum[i] = part[0][i] = part[1][i] = 0.0f;
    int64_t t = 0;
    for (; t + GROUP <= slices; t += GROUP)
        group<GROUP>(ring, t, consumer, part, sum);
    switch (slices - t) {
    case 3:
        group<3>(ring, t, consumer, part, sum);
        break;
    case 2:
        group<2>(ring, t, consumer, part, sum);
        break;
    case 1:
        group<1>(ring, t, consumer, part, sum);
        break;
    }

    /* wgmma's accumulator layout: row warp*16 + lane/4 (+8), columns in pairs every 8. */
    const int64_t row0 = m0 + consumer * 64 + warp * 16 + lane / 4, col0 = n0 + (lane % 4) * 2;
    const auto row_of = [&](int i) { return row0 + 8 * ((i >> 1) & 1); };
    const auto col_of = [&](int i) { return col0 + (i >> 2) * 8 + (i & 1); };
    float *const plane = partial ? partial + (int64_t)blockIdx.y * m * n : nullptr;
    const auto put = [&](int64_t row, int64_t col, float value) {
        if (plane)
            plane[row + col * m] = value;
        else
            store_c(c + row + col * ldc, value, alpha, beta);
    };
    uint64_t redo = 0; /* bit i: element i's row of A or column of B holds Inf or NaN */
#pragma unroll
    for (int i = 0; i < 64; ++i) {
        const int64_t row = row_of(i), col = col_of(i);
        if (row < m && col < n) {
            if (a_bad[row] | b_bad[col])
                redo |= 1ull << i;
            else
                put(row, col, sum[i]);
        }
    }
    /*
     * Those elements again, as the FP32 path computes them, so that Inf and NaN land where they would
     * there. The loop is kept out of the unrolled one above: a copy of it per element makes the kernel
     * 1.4 MB of code, which every block fetches anew for its epilogue, leaving the tensor cores idle
     * about a third of the time at 4096^3.
     */
    const int64_t p_begin = first * BK, p_end = (first + slices) * BK < k ? (first + slices) * BK : k;
#pragma unroll 1
    for (; redo; redo &= redo - 1) {
        const int i = __ffsll((long long)redo) - 1;
        const int64_t row = row_of(i), col = col_of(i);
        float value = 0.0f;
        for (int64_t p = p_begin; p < p_end; ++p)
            value = fmaf(trans_a ? a[p + row * lda] : a[row + p * lda], trans_b ? b[col + p * ldb] : b[p + col * ldb],
                         value);
        put(row, col, value);
    }
}

} // namespace

/*
 * The splits of K for a C whose tiles fill at most half of the SMs: as many as fill them, each at
 * least MIN_SPLIT_SLICES slices deep but for the last, none empty; 1 otherwise.
 */
static int64_t k_splits(const tb_gemm_args *args)
{
    const int64_t tiles = ((args->m + BM - 1) / BM) * ((args->n + BN - 1) / BN), slices = (args->k + BK - 1) / BK;
    const int64_t sms = sm_count();
    if (tiles == 0 || tiles >= sms)
        return 1;
    int64_t splits = sms / tiles;
    if (splits > slices / MIN_SPLIT_SLICES)
        splits = slices / MIN_SPLIT_SLICES;
    if (splits <= 1)
        return 1;
    const int64_t per_split = (slices + splits - 1) / splits;
    return (slices + per_split - 1) / per_split;
}

/* Floats of the four parts (k rounded up to 4) and of a flag per row of A and B. */
static int64_t parts_floats(const tb_gemm_args *args)
{
    const int64_t ld = (args->k + 3) / 4 * 4;
    return 2 * (args->m + args->n) * ld + args->m + args->n;
}

/* Floats of the parts and flags, and of a plane of C per split of K. */
static int64_t workspace_floats(const tb_gemm_args *args, int64_t splits)
{
    return parts_floats(args) + (splits > 1 ? splits * args->m * args->n : 0);
}

extern "C" int64_t tb_tf32x3_workspace_floats(const tb_gemm_args *args)
{
    return workspace_floats(args, k_splits(args));
}

/* The splits a launch with the call's workspace makes: none where it cannot hold their planes. */
static int64_t planned_splits(const tb_gemm_args *args)
{
    const int64_t splits = k_splits(args);
    return args->workspace_floats >= workspace_floats(args, splits) ? splits : 1;
}

extern "C" void tb_tf32x3_describe_plan(const tb_gemm_args *args, char *text, size_t size)
{
    const int64_t splits = planned_splits(args);
    const int printed = snprintf(text, size, "3xTF32 on wgmma, %dx%d tiles, slices of %d, %d stages", BM, BN, BK,
                                 STAGES);
    if (splits > 1 && printed >= 0 && (size_t)printed < size)
        snprintf(text + printed, size - (size_t)printed, ", K in %lld splits summed in order", (long long)splits);
}

/* grid.y of the split pass: a block per SPLIT_ROWS rows, up to the limit of 65535 (the kernel loops past it). */
static unsigned row_tiles(int64_t rows)
{
    const int64_t tiles = (rows + SPLIT_ROWS - 1) / SPLIT_ROWS;
    return (unsigned)(tiles < 65535 ? tiles : 65535);
}

/* A part (rows x k floats, row j at j*ld) as a tensor map of 32 x 128 boxes, 128-byte swizzled. */
static cudaError_t part_map(CUtensorMap *map, const float *part, int64_t rows, int64_t k, int64_t ld)
{
    static const PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
        void *function = nullptr;
        cudaDriverEntryPointQueryResult found;
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &function, 12000, cudaEnableDefault,
                                             &found) != cudaSuccess ||
            found != cudaDriverEntryPointSuccess)
            function = nullptr;
        return (PFN_cuTensorMapEncodeTiled_v12000)function;
    }();
    if (!encode)
        return cudaErrorNotSupported;
    const cuuint64_t dims[2] = {(cuuint64_t)k, (cuuint64_t)rows};
    const cuuint64_t strides[1] = {(cuuint64_t)ld * sizeof(float)};
    const cuuint32_t box[2] = {BK, BM}, steps[2] = {1, 1};
    const CUresult status = encode(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, (void *)part, dims, strides, box, steps,
                                   CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                   CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    return status == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

extern "C" int tb_tf32x3_supported(void)
{
    CUtensorMap probe;
    const float *somewhere = (const float *)(uintptr_t)256; /* encoding checks alignment, not memory */
    int device = 0, major = 0, minor = 0;
    cudaFuncAttributes attributes;
    const int ok = cudaGetDevice(&device) == cudaSuccess &&
                   cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess &&
                   cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) == cudaSuccess &&
                   major == 9 && minor == 0 && cudaFuncGetAttributes(&attributes, gemm) == cudaSuccess &&
                   part_map(&probe, somewhere, BM, BK, BK) == cudaSuccess;
    cudaGetLastError(); /* a query that failed leaves nothing sticky */
    return ok;
}

/* Set where a launch of this thread ran the FP32 kernels instead (a workspace too small). */
static thread_local int ran_fp32;

extern "C" int tb_tf32x3_ran_fp32(void)
{
    const int ran = ran_fp32;
    ran_fp32 = 0;
    return ran;
}

/*
 * cudaErrorNotSupported where this GPU has no sm_90a or the driver no tensor maps. Calls with no
 * products to sum (k == 0 or alpha == 0, where A and B are not read) only scale C, as the FP32
 * rungs do it; without room for the split operands the call runs on the FP32 rungs, and
 * tb_tf32x3_ran_fp32 says so; with room for them but not for the planes of a split K
 * (tb_tf32x3_workspace_floats), K is not split. The paths hand over either the whole
 * workspace asked for or none, so in a call from the library only the first case arises.
 */
extern "C" cudaError_t tb_launch_tf32x3(const tb_gemm_args *args, cudaStream_t stream)
{
    const int64_t m = args->m, n = args->n, k = args->k;
    if (m == 0 || n == 0)
        return cudaSuccess;
    if (k == 0 || args->alpha == 0.0f)
        return tb_launch_best(args, stream);
    /* The tensor maps need the parts 16-byte aligned: so is every workspace the paths hand over. */
    if (args->workspace_floats < parts_floats(args) || (uintptr_t)args->workspace % 16 != 0) {
        ran_fp32 = 1;
        return tb_launch_best(args, stream);
    }
    cudaError_t status = cudaFuncSetAttribute(gemm, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)SMEM_BYTES);
    if (status != cudaSuccess) {
        cudaGetLastError(); /* not sticky: the GPU has no sm_90a, nothing else went wrong */
        return cudaErrorNotSupported;
    }
    const int64_t ld = (k + 3) / 4 * 4;
    float *a_hi = args->workspace, *a_lo = a_hi + m * ld, *b_hi = a_lo + m * ld, *b_lo = b_hi + n * ld;
    int *a_bad = (int *)(b_lo + n * ld), *b_bad = a_bad + m;
    Maps maps;
    if ((status = part_map(&maps.a_hi, a_hi, m, k, ld)) != cudaSuccess ||
        (status = part_map(&maps.a_lo, a_lo, m, k, ld)) != cudaSuccess ||
        (status = part_map(&maps.b_hi, b_hi, n, k, ld)) != cudaSuccess ||
        (status = part_map(&maps.b_lo, b_lo, n, k, ld)) != cudaSuccess)
        return status;
    if ((status = cudaMemsetAsync(a_bad, 0, (size_t)(m + n) * sizeof(int), stream)) != cudaSuccess)
        return status;
    const SplitSource a_parts = {args->a, m, args->lda, !args->trans_a, a_hi, a_lo, a_bad};
    const SplitSource b_parts = {args->b, n, args->ldb, args->trans_b, b_hi, b_lo, b_bad};
    split_operands<<<dim3((unsigned)((ld + SPLIT_K - 1) / SPLIT_K), row_tiles(m > n ? m : n), 2), SPLIT_THREADS, 0,
                     stream>>>(a_parts, b_parts, k, ld);
    if ((status = cudaGetLastError()) != cudaSuccess)
        return status;
    const int64_t blocks = ((m + BM - 1) / BM) * ((n + BN - 1) / BN);
    const int64_t splits = planned_splits(args);
    const int64_t slices = (k + BK - 1) / BK, split_slices = (slices + splits - 1) / splits;
    float *const planes = splits > 1 ? (float *)(b_bad + n) : nullptr;
    gemm<<<dim3((unsigned)blocks, (unsigned)splits), THREADS, SMEM_BYTES, stream>>>(
        maps, m, n, k, split_slices, args->alpha, a_bad, b_bad, args->trans_a, args->a, args->lda, args->trans_b,
        args->b, args->ldb, args->beta, args->c, args->ldc, planes);
    if ((status = cudaGetLastError()) != cudaSuccess || splits == 1)
        return status;
    tb_gemm_args sum = *args;
    sum.workspace = planes;
    sum.workspace_floats = splits * m * n;
    return tb_launch_splitk_reduce(&sum, (int)splits, stream);
}
