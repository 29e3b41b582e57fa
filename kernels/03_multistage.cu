/*
 * Rung 3: warp tiling fed by a multi-stage ring of asynchronous copies.
 *
 * The compute side is regtile's: a block of THREADS threads computes a BM x BN
 * tile of C, each warp a WM x WN part of it, each thread a TM x TN register
 * tile of 4x4 fragments read from k-major shared tiles as conflict-free float4s.
 *
 * The load side differs. Operands go from global to shared memory with
 * cp.async, which needs no registers and no store instructions, into a ring
 * of STAGES k-slices: while slice t is computed, the copies of slices t+1 ..
 * t+STAGES-1 are in flight. One barrier per slice both publishes the next
 * slice and frees the oldest one for refilling.
 *
 * How each operand reaches its k-major tile (tile[k][m or n]):
 *  - stored m- or n-contiguous (A as is, B transposed): rows of the tile are
 *    contiguous in memory, so each thread copies 16 bytes straight into place
 *    (4-byte copies when pointers or leading dimensions are not 16-byte aligned);
 *  - stored k-contiguous (A transposed, B as is): the transpose happens in the
 *    copy, one float per cp.async, arranged so that each instruction reads a
 *    run of eight floats per column and writes 32 distinct banks (AsyncTileLoader).
 *  Either way the compute loop, and its conflict-free float4 fragment reads,
 *  is the same for all four transpose pairs.
 *
 * Edges: the ragged part of K is put in the *first* slice, zero-filled through
 * cp.async's src-size operand, so every later slice is full and branch-free.
 * Rows of A past m and columns of B past n are not zero-filled but clamped to
 * the last one that exists: they only feed parts of C that are never stored.
 *
 * When C is too small to fill the GPU and K is long, K is split across blocks
 * (grid.z): on sm_90 the blocks of a tile sum their slices in a cluster
 * (common/cluster_split.cuh), elsewhere a second pass sums them, as in regtile
 * (common/tile_common.cuh). Past one wave, a mostly empty last wave of tiles is
 * shared out by k-slices as a stream-K tail (common/stream_k.cuh).
 */
#include "common/cluster_split.cuh"
#include "common/stream_k.cuh"
#include "common/tile_common.cuh"
#include "tuning_sm90.h"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#error "03_multistage.cu needs cp.async (sm_80 or newer)"
#endif

namespace {

/*
 * A block tile (common/tile_common.cuh) with the depth of its ring of k-slices,
 * whether the transposing copies of a slice are spread over the k-steps of the
 * one before (see AsyncTileLoader::load_part) rather than issued at once, and
 * the storages (bit along_k(), as the rates are indexed) in which its FMAs go
 * in zig-zag order (outer_product_loading_next).
 */
template <int BM, int BN, int BK, int WM, int WN, int STAGES_, int MIN_BLOCKS, bool SPREAD_, unsigned ZIGZAG_>
struct StagedShape : TileShape<BM, BN, BK, WM, WN, MIN_BLOCKS> {
    static constexpr int STAGES = STAGES_;
    static constexpr bool SPREAD = SPREAD_;
    static constexpr unsigned ZIGZAG = ZIGZAG_;
    /*
     * Source pointers a thread may keep for a k-contiguous operand (AsyncTileLoader):
     * at two blocks per SM (128 registers) two more spilled; one block (the 8x16
     * tiles, 219-237 registers) has room for eight, and whole sectors per copy.
     */
    static constexpr int K_POINTERS = MIN_BLOCKS == 1 ? 8 : 2;
    /* Stage t+STAGES-1 is refilled while stage t+1 is already being read. */
    static_assert(STAGES >= 3, "the ring needs a stage being read, one ready and one filling");
    static_assert(BK % 8 == 0, "k-contiguous copies move k in groups of eight");
};

/* Row padding: keeps float4 alignment and makes the row pitch 4 banks, see above. */
constexpr int PAD = 4;

/* ---- cp.async (sm_80+): 16- or 4-byte global -> shared copies that bypass registers ---- */

__device__ __forceinline__ unsigned shared_address(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}

/*
 * Both copies ask L2 to fetch the whole 128-byte line: the next slice of an
 * operand stored along k reads on in the same lines, and the 256x128x32 tile
 * gains 2% at 8192^3 on the H100 (no change elsewhere).
 */

/* Copies src_bytes (0..16) of 16 and zero-fills the rest; src and dst 16-byte aligned. */
__device__ __forceinline__ void cp_async16(unsigned dst, const float *src, int src_bytes)
{
    asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                 "r"(src_bytes)
                 : "memory");
}

/* Copies src_bytes (0 or 4) of one float and zero-fills the rest. */
__device__ __forceinline__ void cp_async4(unsigned dst, const float *src, int src_bytes)
{
    asm volatile("cp.async.ca.shared.global.L2::128B [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src),
                 "r"(src_bytes)
                 : "memory");
}

__device__ __forceinline__ void cp_async_commit()
{
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}

/* Waits until at most N of this thread's committed groups are still in flight. */
template <int N>
__device__ __forceinline__ void cp_async_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

/*
 * Copies BK x BX tiles of one operand, slice after slice, into a ring of
 * k-major shared tiles (rows of PITCH = BX + PAD floats). Element (x, kk) of a
 * tile lives at
 *   base[(k0+kk) + (x0+x)*ld]  when the operand is stored k-contiguous,
 *   base[(x0+x) + (k0+kk)*ld]  otherwise.
 * Registers are what limits the ring at two blocks per SM, so a thread keeps
 * few source pointers: k-contiguous, one per column, advanced one slice per
 * load, its copies at constant offsets from it; m-contiguous, one that walks
 * down the k-rows copy by copy (the next slice starts where a slice ends).
 *
 * m-contiguous: ROW_THREADS threads cover a k-row of the tile with 16- (or
 * 4-) byte copies, ROWS k-rows at a time; a thread keeps its x.
 *
 * k-contiguous: TPC threads share a column x (along m or n) and split its k:
 * thread h takes k-rows RUN*h .. RUN*h+RUN-1 of each group of eight (RUN =
 * 8/TPC), and COLS columns COL_STEP apart. One copy instruction then reads one
 * 32-byte sector (at most two) per column and writes k-row RUN*h + c of 32/TPC
 * consecutive columns: with a pitch of 4 banks that is bank (32/TPC)*h + column
 * + const, 32 distinct banks. TPC trades sectors per instruction (32/TPC)
 * against pointers per thread (COLS, at most MAX_POINTERS). A sector read by
 * TPC < 8 threads is read again by the next RUN - 1 instructions: with B
 * along k in the 256-wide side (8192x128x8192), TPC 8 instead of 2 ran the
 * call 8-10% faster on the H100.
 */
constexpr int k_contiguous_tpc(int bx, int threads, int max_pointers)
{
    int tpc = 8;
    while (tpc > 1 && bx * tpc / threads > max_pointers)
        tpc /= 2;
    return tpc;
}

template <int BX, int BK, int THREADS, int MAX_POINTERS, bool K_CONTIGUOUS, bool VEC>
struct AsyncTileLoader {
    static constexpr int PITCH = BX + PAD;             /* floats per k-row of the tile */
    static_assert(PITCH % 32 == 4, "the transposing writes rely on a row pitch of 4 banks");
    static constexpr bool WIDE = VEC && !K_CONTIGUOUS; /* 16-byte copies */
    static constexpr int ELEMS = WIDE ? 4 : 1;         /* floats per copy */

    /* m-contiguous geometry */
    static constexpr int ROW_THREADS = BX / ELEMS, ROWS = THREADS / ROW_THREADS;
    /* k-contiguous geometry */
    static constexpr int TPC = k_contiguous_tpc(BX, THREADS, MAX_POINTERS), RUN = 8 / TPC;
    static constexpr int COL_STEP = THREADS / TPC, COLS = BX / COL_STEP;

    static constexpr int POINTERS = K_CONTIGUOUS ? COLS : 1;
    static constexpr int COPIES = K_CONTIGUOUS ? BK / TPC : BK / ROWS; /* per pointer */
    static_assert(K_CONTIGUOUS ? COLS * COL_STEP == BX && COL_STEP * TPC == THREADS
                               : ROWS * ROW_THREADS == THREADS && COPIES * ROWS == BK,
                  "loader shape");
    static_assert(POINTERS * COPIES * ELEMS * THREADS == BK * BX, "loader shape");

    /* Where this thread's first copy goes in the tile, and copy (j, c) relative to it. */
    __device__ static int thread_x()
    {
        return K_CONTIGUOUS ? threadIdx.x / TPC : threadIdx.x % ROW_THREADS * ELEMS;
    }
    __device__ static int thread_k()
    {
        return K_CONTIGUOUS ? threadIdx.x % TPC * RUN : threadIdx.x / ROW_THREADS;
    }
    __host__ __device__ static constexpr int copy_dx(int j) { return K_CONTIGUOUS ? j * COL_STEP : 0; }
    __host__ __device__ static constexpr int copy_dk(int c) { return K_CONTIGUOUS ? c % RUN + 8 * (c / RUN) : c * ROWS; }

    const float *next[POINTERS]; /* source of copy (j, 0) in the next slice */
    int64_t row_step;            /* m-contiguous: floats between a thread's k-rows */
    int64_t step;                /* floats between slices */
    unsigned dst;                /* shared address of this thread's first copy, stage 0 */
    int bytes;                   /* WIDE: bytes of this thread's float4 that exist (4..16) */

    /*
     * x0, extent: the block's first row (or column) and the operand's size along x.
     * shift: how many leading k-rows of the first slice lie before k = 0.
     */
    __device__ AsyncTileLoader(const float *base, int64_t ld, int64_t x0, int64_t extent, int shift,
                               float *tile)
        : row_step(ROWS * ld), step(K_CONTIGUOUS ? BK : BK * ld),
          dst(shared_address(tile + thread_k() * PITCH + thread_x())), bytes(16)
    {
        /* Past the edge: the last row (or aligned float4) that exists; see the file comment. */
        const int64_t last = WIDE ? (extent - 1) & ~(int64_t)3 : extent - 1;
        const int64_t kk = thread_k() - shift; /* negative: before k = 0, never read */
#pragma unroll
        for (int j = 0; j < POINTERS; j++) {
            const int64_t x = min(x0 + thread_x() + copy_dx(j), last);
            if (WIDE)
                bytes = 4 * (int)min((int64_t)4, extent - x);
            next[j] = base + (K_CONTIGUOUS ? kk + x * ld : x + kk * ld);
        }
    }

    /* Shared byte offset of copy (j, c) from this thread's first copy of a stage. */
    __device__ static unsigned offset(int j, int c)
    {
        return 4u * (unsigned)(copy_dk(c) * PITCH + copy_dx(j));
    }

    __device__ const float *source(int j, int c) const
    {
        return K_CONTIGUOUS ? next[j] + copy_dk(c) : next[j] + c * row_step;
    }

    /* The first slice: its k-rows before k = 0 are zero-filled, read from a valid address (base). */
    __device__ void load_first(const float *base, int shift)
    {
#pragma unroll
        for (int j = 0; j < POINTERS; j++) {
#pragma unroll
            for (int c = 0; c < COPIES; c++) {
                const bool live = thread_k() + copy_dk(c) >= shift;
                const float *src = live ? source(j, c) : base;
                if (WIDE)
                    cp_async16(dst + offset(j, c), src, live ? bytes : 0);
                else
                    cp_async4(dst + offset(j, c), src, live ? 4 : 0);
            }
            next[j] += step;
        }
    }

    /*
     * The copies of a full slice due at k-step kk (of BK), into the ring stage
     * whose first copy for this thread is at shared address stage_dst;
     * advance() then moves to the next slice. SPREAD: a slice's copies go out
     * over the k-steps of the one before rather than in one burst.
     */
    template <bool SPREAD>
    __device__ void load_part(unsigned stage_dst, int kk)
    {
        constexpr int TOTAL = POINTERS * COPIES;
#pragma unroll
        for (int q = 0; q < TOTAL; q++) {
            const int due = SPREAD ? q * BK / TOTAL : 0;
            if (due != kk)
                continue;
            const int j = q / COPIES, c = q % COPIES;
            /* m-contiguous: the copies walk down the slice's rows (an add, not a 64-bit multiply each). */
            const float *src = K_CONTIGUOUS ? source(j, c) : next[0];
            if (WIDE)
                cp_async16(stage_dst + offset(j, c), src, bytes);
            else
                cp_async4(stage_dst + offset(j, c), src, 4);
            if (!K_CONTIGUOUS)
                next[0] += row_step;
        }
    }

    /* To the next slice; an m-contiguous loader got there by walking its rows. */
    __device__ void advance()
    {
#pragma unroll
        for (int j = 0; j < POINTERS; j++)
            if (K_CONTIGUOUS)
                next[j] += step;
    }

    /* Bytes of shared memory between ring stages. */
    static constexpr unsigned STAGE_BYTES = 4u * BK * PITCH;

    /* A full slice into ring stage `stage` at once (the prologue). */
    __device__ void load(int stage)
    {
        load_part<false>(dst + stage * STAGE_BYTES, 0);
        advance();
    }
};

template <typename S>
constexpr int smem_bytes()
{
    return S::STAGES * S::BK * (S::BM + PAD + S::BN + PAD) * (int)sizeof(float);
}

template <typename S, bool TA, bool TB, bool VEC>
__global__ void __launch_bounds__(S::THREADS, S::MIN_BLOCKS)
    sgemm_multistage(tb_gemm_args p, const __grid_constant__ StreamKTail tail)
{
    constexpr int BM = S::BM, BN = S::BN, BK = S::BK, STAGES = S::STAGES;
    constexpr int A_PITCH = BM + PAD, B_PITCH = BN + PAD;
    constexpr bool zigzag = (S::ZIGZAG >> along_k(TA, TB)) & 1;
    extern __shared__ float4 smem4[];
    float *const As = reinterpret_cast<float *>(smem4); /* [STAGES][BK][A_PITCH] */
    float *const Bs = As + STAGES * BK * A_PITCH;       /* [STAGES][BK][B_PITCH] */

    int64_t i0, j0, k_begin, k_len;
    if (!tail.tiles) {
        i0 = (int64_t)blockIdx.x * BM, j0 = (int64_t)blockIdx.y * BN;
        k_slice<BK>(p, k_begin, k_len);
    } else if (!stream_k_block<BM, BN, BK>(p, tail, i0, j0, k_begin, k_len)) {
        return;
    }
    /* Dimensions fit an int (BLAS LP64); only address offsets need 64 bits. */
    const int m = (int)p.m, n = (int)p.n, k = (int)k_len;
    const int tid = threadIdx.x;
    /* This thread's fragments start at rows row + 32f and columns col + 16g. */
    const int row = fragment_row<S>(tid), col = fragment_col<S>(tid);

    float acc[S::TM][S::TN] = {};
    /* a: fragments of k-steps kk (in use) and kk+1 (loading); b: one k-step's, replaced as they are used */
    float a[2][S::TM], b[S::TN];

    const int k_tiles = (int)(((int64_t)k + BK - 1) / BK);
    if (k_tiles > 0) {
        /* K's ragged end goes first: slice 0 starts `shift` k-rows before k = 0. */
        const int shift = (int)((int64_t)k_tiles * BK - k);
        /* op(A) is k-contiguous when A is transposed; op(B) when B is not. */
        const float *a_slice = p.a + (TA ? k_begin : k_begin * p.lda);
        const float *b_slice = p.b + (TB ? k_begin * p.ldb : k_begin);
        AsyncTileLoader<BM, BK, S::THREADS, S::K_POINTERS, TA, VEC> a_tile(a_slice, p.lda, i0, m, shift, As);
        AsyncTileLoader<BN, BK, S::THREADS, S::K_POINTERS, !TB, VEC> b_tile(b_slice, p.ldb, j0, n, shift, Bs);

        /* Prologue: slices 0 .. STAGES-2 in flight, one commit group each (empty past K). */
        a_tile.load_first(p.a, shift);
        b_tile.load_first(p.b, shift);
        cp_async_commit();
#pragma unroll
        for (int s = 1; s < STAGES - 1; s++) {
            if (s < k_tiles) {
                a_tile.load(s);
                b_tile.load(s);
            }
            cp_async_commit();
        }
        /* Groups committed: STAGES-1; slice 0 is the oldest. */
        cp_async_wait<STAGES - 2>();
        __syncthreads();
        load_fragments<S>(As + row, Bs + col, a[0], b);

        /*
         * Spread the refills where an operand is stored along k, whose many 4-byte
         * copies would otherwise reach the memory pipeline in one burst: on the
         * H100 this gains 3-9% for the one-block-per-SM tiles with such an operand;
         * it loses 3-4% where both operands take 16-byte copies, and up to 8% for
         * the 8x8-per-thread tiles (several blocks per SM), which stay unspread.
         */
        constexpr bool spread = S::SPREAD && (TA || !TB);
        /*
         * The stage being refilled, as this thread's first shared address in it:
         * carried from slice to slice rather than recomputed from a stage index,
         * which ptxas otherwise redoes with an IMAD (an FMA-pipe slot) per copy.
         */
        constexpr unsigned A_RING = STAGES * decltype(a_tile)::STAGE_BYTES;
        unsigned a_write = a_tile.dst + (STAGES - 1) * decltype(a_tile)::STAGE_BYTES;
        unsigned b_write = b_tile.dst + (STAGES - 1) * decltype(b_tile)::STAGE_BYTES;
        int read_stage = 0;
        for (int t = 0; t < k_tiles; t++) {
            /*
             * This iteration refills the stage of slice t-1 with slice t+STAGES-1: every
             * warp finished reading slice t-1 before the previous iteration's barrier
             * (t = 0: the stage was never filled). One commit group per slice, even
             * when empty, after its last copy.
             */
            const bool refill = t + STAGES - 1 < k_tiles;
            const auto refill_part = [&](int kk) {
                if (refill) {
                    a_tile.template load_part<spread>(a_write, kk);
                    b_tile.template load_part<spread>(b_write, kk);
                }
                if (kk == (spread ? BK - 1 : 0)) {
                    if (refill) {
                        a_tile.advance();
                        b_tile.advance();
                    }
                    cp_async_commit();
                    a_write += decltype(a_tile)::STAGE_BYTES;
                    b_write += decltype(b_tile)::STAGE_BYTES;
                    if (a_write == a_tile.dst + A_RING) {
                        a_write = a_tile.dst;
                        b_write = b_tile.dst;
                    }
                }
            };
#pragma unroll
            for (int kk = 0; kk < BK; kk++) {
                if (spread) /* before the wait below, which at kk = BK-1 needs this slice's commit */
                    refill_part(kk);
                bool has_next = true;
                int next_row = read_stage * BK + kk + 1; /* the ring row of k-step kk+1 */
                if (kk == BK - 1) {
                    if (t + 1 < k_tiles) {
                        /*
                         * Groups committed so far: STAGES+t, group g holding slice g. Leaving
                         * STAGES-2 in flight means slices up to t+1 have landed for this thread;
                         * the barrier makes every thread's copies visible, and it also marks
                         * that every warp has read all of slice t (its last fragments were
                         * loaded during the k-step before), so the next iteration may refill its stage.
                         */
                        cp_async_wait<STAGES - 2>();
                        __syncthreads();
                        read_stage = read_stage + 1 == STAGES ? 0 : read_stage + 1;
                        next_row = read_stage * BK;
                    } else {
                        has_next = false;
                    }
                }
                if (!spread)
                    refill_part(kk);
                outer_product_loading_next<S, zigzag>(acc, a[kk % 2], a[(kk + 1) % 2], b, has_next,
                                                      As + next_row * A_PITCH + row, Bs + next_row * B_PITCH + col);
            }
        }
        /* Only empty groups can remain; drain them so no copy outlives the block. */
        cp_async_wait<0>();
    }

    const bool in_cluster = split_in_cluster();
    const tb_gemm_args out = in_cluster ? p : split_output(p);
    float *c_tile = out.c + i0 + j0 * out.ldc;
    /* Rows 4f..4f+3 of the thread's column j: fragment row f, fragment column j / 4. */
    const auto store = [&](int f, int j, const float sums[4]) {
        const int cj = col + 16 * (j / 4) + j % 4;
        store4<VEC>(out, c_tile, row + 32 * f, cj, (int)(m - i0), (int)(n - j0), sums);
    };
    if (in_cluster) {
        cluster_split_sum<S>(acc, smem4, store);
        return;
    }
    if (tail.tiles && !stream_k_finish<S>(p, tail, acc, store))
        return;
#pragma unroll
    for (int j = 0; j < S::TN; j++) {
#pragma unroll
        for (int f = 0; f < S::FM; f++) {
            const float sums[4] = {acc[4 * f][j], acc[4 * f + 1][j], acc[4 * f + 2][j], acc[4 * f + 3][j]};
            store(f, j, sums);
        }
    }
}

/* How a launch covers C: whole tiles (K in slices summed by a second pass), a stream-K tail,
 * or slices summed in clusters. */
enum class Cover { TILES, TAIL, CLUSTERS };

/* Launches tile shape S for a transpose pair over C as `cover` says, in `splits` slices of K (1: no split). */
template <typename S>
struct Multistage {
    /* The ring, or in a cluster split the parked partial tile where that is larger. */
    static constexpr int CLUSTER_BYTES = std::max(smem_bytes<S>(), cluster_partial_bytes<S>());

    /*
     * Above 48 KB of dynamic shared memory a kernel has to opt in, for what the
     * launch uses: CLUSTER_BYTES only in clusters, since it can pass what a block
     * may have where the ring fits (sm_86/89/120: 99 KB, 128 KB parked).
     */
    template <typename Kernel>
    static cudaError_t allow_smem(Kernel kernel, int bytes)
    {
        return bytes <= 48 * 1024 ? cudaSuccess
                                  : cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
    }

    /* A launch of `grid` whose blocks along z form one cluster: the slices of K of one tile. */
    static cudaLaunchConfig_t cluster_config(dim3 grid, cudaStream_t stream, cudaLaunchAttribute *cluster)
    {
        cluster->id = cudaLaunchAttributeClusterDimension;
        cluster->val.clusterDim.x = 1;
        cluster->val.clusterDim.y = 1;
        cluster->val.clusterDim.z = grid.z;
        cudaLaunchConfig_t config = {};
        config.gridDim = grid;
        config.blockDim = dim3(S::THREADS);
        config.dynamicSmemBytes = CLUSTER_BYTES;
        config.stream = stream;
        config.attrs = cluster;
        config.numAttrs = 1;
        return config;
    }

    template <bool TA, bool TB, bool VEC>
    static cudaError_t launch(const tb_gemm_args *args, cudaStream_t stream, int splits, Cover cover)
    {
        constexpr int bytes = smem_bytes<S>();
        const auto kernel = sgemm_multistage<S, TA, TB, VEC>;
        const StreamKTail no_tail = {};
        cudaError_t status = allow_smem(kernel, cover == Cover::CLUSTERS ? CLUSTER_BYTES : bytes);
        if (status != cudaSuccess)
            return status;
        if (cover == Cover::CLUSTERS) {
            const dim3 grid(blocks_for(args->m, S::BM), blocks_for(args->n, S::BN), splits);
            cudaLaunchAttribute cluster;
            const cudaLaunchConfig_t config = cluster_config(grid, stream, &cluster);
            return cudaLaunchKernelEx(&config, kernel, *args, no_tail);
        }
        if (cover == Cover::TAIL) {
            StreamKTail tail = call_tail(args, S::BM, S::BN, S::BK, S::MIN_BLOCKS);
            tb_gemm_args p = *args;
            if (tail.tiles && stream_k_scratch(&p, tail, S::BM, S::BN)) {
                stream_k_order(tail);
                status = cudaMemsetAsync(stream_k_arrivals(p.workspace, tail, S::BM, S::BN), 0,
                                         tail.tiles * sizeof(int), stream);
                if (status != cudaSuccess)
                    return status;
                const dim3 grid = stream_k_grid(tail, blocks_for(args->m, S::BM));
                kernel<<<grid, S::THREADS, bytes, stream>>>(p, tail);
                return cudaGetLastError();
            }
        }
        return launch_tiles<TB>(args, S::BM, S::BN, splits, stream, [&](const tb_gemm_args &p, dim3 grid) {
            kernel<<<grid, S::THREADS, bytes, stream>>>(p, no_tail);
        });
    }

    /* The same test gates the 16-byte cp.async copies; in clusters C is stored directly, not the workspace. */
    template <bool TA, bool TB>
    static cudaError_t run(const tb_gemm_args *args, cudaStream_t stream, int splits, Cover cover)
    {
        return vector_friendly(args, cover == Cover::CLUSTERS ? 1 : splits)
                   ? launch<TA, TB, true>(args, stream, splits, cover)
                   : launch<TA, TB, false>(args, stream, splits, cover);
    }
    template <bool TA, bool TB>
    struct Split {
        static cudaError_t run(const tb_gemm_args *args, cudaStream_t stream, int splits)
        {
            return Multistage::run<TA, TB>(args, stream, splits, Cover::TILES);
        }
    };
    template <bool TA, bool TB>
    struct Tail {
        static cudaError_t run(const tb_gemm_args *args, cudaStream_t stream)
        {
            return Multistage::run<TA, TB>(args, stream, 1, Cover::TAIL);
        }
    };
    template <bool TA, bool TB>
    struct Clusters {
        static cudaError_t run(const tb_gemm_args *args, cudaStream_t stream, int splits)
        {
            return Multistage::run<TA, TB>(args, stream, splits, Cover::CLUSTERS);
        }
    };

    /*
     * Clusters of `splits` blocks the GPU holds at once (0: none), for the plan.
     * None where the kernel was not compiled for sm_90 or newer, whatever the
     * GPU: PTX of an older architecture, JIT-compiled, has no cluster code and
     * would leave its partials in a workspace the plan did not provide. The
     * row-major NN kernel stands for all four: they share the block size, shared
     * memory and MIN_BLOCKS. Asked once per count of slices (one device per
     * process); a failed query is cleared, so that no later launch reports it.
     */
    static int cluster_capacity(int splits)
    {
        static std::atomic<int> capacity[CLUSTER_SPLIT_MAX + 1]; /* 0: not asked yet; -1: none */
        if (splits < 2 || splits > CLUSTER_SPLIT_MAX || CLUSTER_BYTES > max_block_smem() ||
            device_attribute<cudaDevAttrComputeCapabilityMajor>(0) < 9)
            return 0;
        int known = capacity[splits].load(std::memory_order_relaxed);
        if (!known) {
            const auto kernel = sgemm_multistage<S, false, false, true>;
            cudaFuncAttributes compiled;
            cudaLaunchAttribute cluster;
            const cudaLaunchConfig_t config = cluster_config(dim3(1, 1, splits), 0, &cluster);
            int clusters = 0;
            const bool ok = cudaFuncGetAttributes(&compiled, kernel) == cudaSuccess && compiled.ptxVersion >= 90 &&
                            allow_smem(kernel, CLUSTER_BYTES) == cudaSuccess &&
                            cudaOccupancyMaxActiveClusters(&clusters, kernel, &config) == cudaSuccess;
            if (!ok)
                cudaGetLastError();
            known = ok && clusters > 0 ? clusters : -1;
            capacity[splits].store(known, std::memory_order_relaxed);
        }
        return known > 0 ? known : 0;
    }
};

/* A row of the shape table: the ring's shape, its rates by storage and whether it needs aligned operands. */
template <typename S>
constexpr ShapeEntry entry(const char *name, double none, double b, double a, double both, bool aligned_only)
{
    /* The 16- and 32-deep rings want 16 slices of K; the 8-deep ones are fine with less. */
    return {name, S::BM, S::BN, S::BK, S::MIN_BLOCKS, S::THREADS / 32, smem_bytes<S>(), S::BK >= 16 ? 16 * S::BK : 0,
            aligned_only, {none, b, a, both},
            launch_for_trans<Multistage<S>::template Split, int>,
            launch_for_trans<Multistage<S>::template Tail>,
            launch_for_trans<Multistage<S>::template Clusters, int>,
            Multistage<S>::cluster_capacity};
}

/* The storages with a flag set, as bits by along_k(): neither, B, A, both. */
constexpr unsigned storages(bool none, bool b, bool a, bool both)
{
    return (none ? 1u : 0u) | (b ? 2u : 0u) | (a ? 4u : 0u) | (both ? 8u : 0u);
}

/* The tile shapes with their measured rates and zig-zag storages (tuning_sm90.h): the plan's inputs. */
#define SHAPE(BM, BN, BK, WM, WN, STAGES, BLOCKS, SPREAD, ALIGNED_ONLY, NONE, B, A, BOTH, ...) \
    entry<StagedShape<BM, BN, BK, WM, WN, STAGES, BLOCKS, SPREAD, storages(__VA_ARGS__)>>(     \
        #BM "x" #BN "x" #BK, NONE, B, A, BOTH, ALIGNED_ONLY),
const ShapeEntry shapes[] = {TB_TUNE_MULTISTAGE_SHAPES(SHAPE)};
#undef SHAPE
} // namespace

extern "C" int tb_multistage_shape_count(void)
{
    return sizeof shapes / sizeof shapes[0];
}

extern "C" const char *tb_multistage_shape_name(int shape)
{
    return shape_name(shapes, shape);
}

extern "C" cudaError_t tb_launch_multistage_shape(int shape, const tb_gemm_args *args, cudaStream_t stream)
{
    return launch_shape(shapes, shape, args, stream);
}

extern "C" cudaError_t tb_launch_multistage_shape_tail(int shape, const tb_gemm_args *args, cudaStream_t stream)
{
    return launch_shape_tail(shapes, shape, args, stream);
}

extern "C" cudaError_t tb_launch_multistage_shape_split(int shape, const tb_gemm_args *args, cudaStream_t stream,
                                                        int splits, int clusters)
{
    return launch_shape_split(shapes, shape, args, stream, splits, clusters != 0);
}

extern "C" int tb_multistage_shape_cluster_capacity(int shape, int splits)
{
    const int count = sizeof shapes / sizeof shapes[0];
    return shape >= 0 && shape < count ? shapes[shape].cluster_capacity(splits) : 0;
}

extern "C" int64_t tb_multistage_shape_tail_workspace_floats(int shape, const tb_gemm_args *args)
{
    return tail_workspace_floats(shapes, shape, args);
}

extern "C" int64_t tb_multistage_workspace_floats(const tb_gemm_args *args)
{
    return planned_workspace_floats(shapes, args);
}

extern "C" double tb_multistage_predicted_seconds(const tb_gemm_args *args)
{
    return planned_seconds(shapes, args);
}

extern "C" int64_t tb_multistage_planned_chain(const tb_gemm_args *args)
{
    return planned_chain(shapes, args);
}

extern "C" void tb_multistage_describe_plan(const tb_gemm_args *args, char *text, size_t size)
{
    describe_plan(shapes, args, text, size);
}

extern "C" cudaError_t tb_launch_multistage(const tb_gemm_args *args, cudaStream_t stream)
{
    return launch_planned(shapes, args, stream);
}
