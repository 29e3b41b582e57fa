/*
 * Stream-K for the last wave of a launch (used by multistage).
 *
 * With one block of a large tile per SM, a grid of T tiles runs in ceil(T/S)
 * waves over S block slots, and a part-empty last wave costs about as much as
 * a full one: 3072^3 in 256x128 tiles is 2.18 waves run as 3, 8192^3 is 15.5
 * run as 16. So the launch runs the whole waves as usual and shares the k-slices of
 * the `tiles` left over evenly between the slots: their tiles * slices
 * k-slices, in tile order, are cut into `ranges` equal ranges. A range shorter
 * than a tile covers parts of at most two tiles, and the grid gets one block
 * per part (a piece), so that no block loops over tiles: a loop around the tile
 * loop cost 40 registers and spilled.
 *
 * Order: the whole-tile blocks, then every piece of the tail, longest first.
 * Blocks start in index order on whichever slot frees first, so this is
 * longest-processing-time-first list scheduling: the slot whose first piece
 * was shortest takes the longest piece left (about the rest of its range),
 * and slots that finished their whole tiles late get the short pieces. That
 * matters because SMs differ: on the H100 8 of the 132 run a tile 5% slower
 * (a per-block trace), so after W waves of whole tiles they lag by 5% of W
 * tiles. Giving each slot the parts of its own range instead (longer parts
 * first in range order) left the slow SMs a long piece at the end: 4096^3 ran
 * 3.5% slower than without a tail. The plan (fastest_plan) takes a tail
 * only where it gains, which leaves out a mostly full last wave (4096^3).
 *
 * A tile cut into several pieces is summed by its last piece to finish: every
 * piece writes its partial tile to the workspace and counts itself in; the one
 * that counts last adds the parts in k order (the result does not depend on
 * timing) and stores C. Nothing waits on another block, so any number of
 * blocks may be resident.
 */
#ifndef TILEDBLAS_KERNELS_STREAM_K_CUH
#define TILEDBLAS_KERNELS_STREAM_K_CUH

#include <algorithm>

#include "common/common.cuh"

/* Ranges at most: more block slots than any GPU has (the H100: 132 of the large tiles). */
constexpr int STREAM_K_MAX_RANGES = 512;
/* k-slices per range at least: each piece pays a ring fill and a partial tile's round trip. */
constexpr int STREAM_K_MIN_SLICES = 8;

/* The tail of a launch; tiles == 0: none, every block is a whole tile. */
struct StreamKTail {
    int64_t dp_tiles; /* whole tiles first, one block each, in C's tile order (along m first) */
    int tiles;        /* the tiles after them, shared out by k-slices */
    int slices;       /* k-slices of BK per tile */
    int ranges;       /* equal ranges of the tail's tiles * slices k-slices */
    int crossing;     /* ranges that cross a tile boundary, in two pieces */
    unsigned short pieces[2 * STREAM_K_MAX_RANGES]; /* 2 * range + part (0: first), longest first */
};

/* Where range g starts among the tail's k-slices; range_start(t, t.ranges) is their count. */
__host__ __device__ inline int64_t range_start(const StreamKTail &t, int g)
{
    return (int64_t)g * t.tiles * t.slices / t.ranges;
}

/* The range that holds k-slice x of the tail: the last g with range_start(g) <= x. */
__host__ __device__ inline int range_of(const StreamKTail &t, int64_t x)
{
    return (int)(((x + 1) * t.ranges - 1) / ((int64_t)t.tiles * t.slices));
}

/* Blocks the tail adds to the grid: a piece per range, two for a range that crosses a tile boundary. */
__host__ __device__ inline int64_t tail_blocks(const StreamKTail &t)
{
    return t.tiles ? t.ranges + t.crossing : 0;
}

/*
 * The tail for a grid of tiles_m x tiles_n tiles over `slots` block slots, K
 * in `slices` k-slices; tiles == 0 where it cannot gain: no whole wave before
 * it, a last wave already full, too few k-slices to share out. Counts only:
 * stream_k_order fills in the pieces' order.
 */
inline StreamKTail stream_k_layout(int64_t tiles_m, int64_t tiles_n, int64_t slots, int64_t slices)
{
    StreamKTail t = {};
    const int64_t tiles = tiles_m * tiles_n, rest = tiles % slots;
    if (tiles < slots || rest == 0 || slices < 2 * STREAM_K_MIN_SLICES || slices > INT32_MAX)
        return t;
    const int64_t ranges = std::min({slots, (int64_t)STREAM_K_MAX_RANGES, rest * slices / STREAM_K_MIN_SLICES});
    /* A range as long as a tile gains nothing; grid.y may not pass 65535 with the pieces added. */
    if (ranges <= rest || (tiles - rest + 2 * ranges) / tiles_m >= 65535)
        return t;
    t.dp_tiles = tiles - rest;
    t.tiles = (int)rest;
    t.slices = (int)slices;
    t.ranges = (int)ranges;
    return t;
}

/* The grid of a launch with a tail: the tiles along m, as many rows of them as the blocks need. */
inline dim3 stream_k_grid(const StreamKTail &t, unsigned tiles_m)
{
    return dim3(tiles_m, (unsigned)((t.dp_tiles + tail_blocks(t) + tiles_m - 1) / tiles_m));
}

/* The most k-slices one slot computes in the tail. */
inline int64_t longest_range(const StreamKTail &t)
{
    return ((int64_t)t.tiles * t.slices + t.ranges - 1) / t.ranges;
}

/* Where a range's part (0: the first or only one, 1: after the tile boundary) starts and ends. */
__host__ __device__ inline void range_part(const StreamKTail &t, int g, int part, int64_t &start, int64_t &end)
{
    start = range_start(t, g);
    end = range_start(t, g + 1);
    const int64_t boundary = (start / t.slices + 1) * t.slices;
    if (end > boundary) {
        if (part == 0)
            end = boundary;
        else
            start = boundary;
    }
}

/* Lists the tail's pieces longest first (ties in k order). */
inline void stream_k_order(StreamKTail &t)
{
    int64_t length[2 * STREAM_K_MAX_RANGES]; /* by piece code, 2 * range + part */
    int n = 0;
    t.crossing = 0;
    for (int g = 0; g < t.ranges; g++) {
        int64_t start, end;
        range_part(t, g, 0, start, end);
        const bool crosses = end < range_start(t, g + 1);
        t.crossing += crosses;
        for (int part = 0; part <= (int)crosses; part++) {
            range_part(t, g, part, start, end);
            length[2 * g + part] = end - start;
            t.pieces[n++] = (unsigned short)(2 * g + part);
        }
    }
    std::stable_sort(t.pieces, t.pieces + n,
                     [&](unsigned short x, unsigned short y) { return length[x] > length[y]; });
}

/* Scratch floats of a tail: two partial tiles per range (its parts), then a counter per tile. */
inline int64_t stream_k_workspace_floats(const StreamKTail &t, int bm, int bn)
{
    return t.tiles ? 2 * (int64_t)t.ranges * bm * bn + t.tiles : 0;
}

/* The tail's counters of pieces finished, one per tile, after the partial tiles. */
__host__ __device__ inline int *stream_k_arrivals(float *workspace, const StreamKTail &t, int bm, int bn)
{
    return reinterpret_cast<int *>(workspace + 2 * (int64_t)t.ranges * bm * bn);
}

/* A block of the tail: k-slices [first, last) of one of its tiles, and how that tile was cut. */
struct StreamKPiece {
    int tile;         /* in the tail */
    int first, last;  /* the tile's k-slices this piece computes */
    int parts;        /* pieces of the tile */
    int index;        /* this piece's place among them, in k order */
    int first_range;  /* the range of the tile's first piece */
    bool first_split; /* whether that piece is the second part of its range */
};

/* Piece `piece` (0-based after the whole tiles) of the tail. */
__host__ __device__ inline StreamKPiece stream_k_piece(const StreamKTail &t, int64_t piece)
{
    const int g = t.pieces[piece] / 2;
    int64_t start, end;
    range_part(t, g, t.pieces[piece] % 2, start, end);
    StreamKPiece p;
    p.tile = (int)(start / t.slices);
    const int64_t tile_start = (int64_t)p.tile * t.slices;
    p.first = (int)(start - tile_start);
    p.last = (int)(end - tile_start);
    p.first_range = range_of(t, tile_start);
    p.parts = range_of(t, tile_start + t.slices - 1) - p.first_range + 1;
    p.index = g - p.first_range;
    p.first_split = range_start(t, p.first_range) < tile_start;
    return p;
}

/* The part of K a piece sums: its k-slices of BK, the first of which starts bk * slices - k before 0. */
__host__ __device__ inline void piece_k_range(const StreamKPiece &s, int bk, int64_t k, int64_t &k_begin,
                                              int64_t &k_len)
{
    const int64_t slices = (k + bk - 1) / bk, shift = slices * bk - k;
    k_begin = s.first == 0 ? 0 : (int64_t)s.first * bk - shift;
    k_len = (int64_t)s.last * bk - shift - k_begin;
}

/*
 * Which tile of C this block computes (its first row i0 and column j0) and
 * which of K (k_begin, k_len), in a grid of tiles along m first; false: a
 * spare block past the tail's pieces. A tail piece starts and ends on the
 * tile's k-slices, the first of which holds K's ragged part (03_multistage.cu).
 */
template <int BM, int BN, int BK>
__device__ inline bool stream_k_block(const tb_gemm_args &p, const StreamKTail &t, int64_t &i0, int64_t &j0,
                                      int64_t &k_begin, int64_t &k_len)
{
    int64_t tile = blockIdx.x + (int64_t)blockIdx.y * gridDim.x;
    k_begin = 0;
    k_len = p.k;
    if (tile >= t.dp_tiles) {
        const int64_t piece = tile - t.dp_tiles;
        if (piece >= tail_blocks(t))
            return false;
        const StreamKPiece s = stream_k_piece(t, piece);
        tile = t.dp_tiles + s.tile;
        piece_k_range(s, BK, p.k, k_begin, k_len);
    }
    i0 = tile % gridDim.x * BM;
    j0 = tile / gridDim.x * BN;
    return true;
}

/*
 * After a block's k loop: true when the block stores acc itself, as whole
 * tiles and uncut tail tiles do. A piece of a cut tile instead writes its
 * partial tile to the workspace and counts itself in; the last to finish sums
 * the partials from memory in k order and stores them through
 * store(f, j, sums), where sums are rows 4f..4f+3 of the thread's column j
 * (acc[4f..4f+3][j]). Summing from memory rather than into acc keeps the
 * accumulators out of the epilogue, which would otherwise spill.
 * Partial tiles keep each thread's values in its own lanes: float4 v of
 * thread x at v * THREADS + x, so every store and load is coalesced.
 */
template <typename S, typename Store>
__device__ inline bool stream_k_finish(const tb_gemm_args &p, const StreamKTail &t,
                                       const float (&acc)[S::TM][S::TN], Store store)
{
    const int64_t block = blockIdx.x + (int64_t)blockIdx.y * gridDim.x;
    if (block < t.dp_tiles)
        return true;
    /* Decoded again rather than kept from stream_k_block: held across the k loop it would take registers. */
    const StreamKPiece s = stream_k_piece(t, block - t.dp_tiles);
    if (s.parts == 1)
        return true;

    constexpr int VECS = S::FM * S::TN;                     /* float4s per thread */
    constexpr int64_t PARTIAL = (int64_t)VECS * S::THREADS; /* float4s per partial tile */
    const float4 *const partials = reinterpret_cast<const float4 *>(p.workspace);
    const auto part = [&](int q) {
        return partials + (2 * (int64_t)(s.first_range + q) + (q == 0 && s.first_split)) * PARTIAL + threadIdx.x;
    };

    float4 *const mine = const_cast<float4 *>(part(s.index));
#pragma unroll
    for (int j = 0; j < S::TN; j++)
#pragma unroll
        for (int f = 0; f < S::FM; f++)
            __stcg(mine + (j * S::FM + f) * S::THREADS,
                   make_float4(acc[4 * f][j], acc[4 * f + 1][j], acc[4 * f + 2][j], acc[4 * f + 3][j]));
    /* Every thread's partial is visible device-wide before the block counts itself in. */
    __threadfence();
    __syncthreads();
    int *const arrivals = stream_k_arrivals(p.workspace, t, S::BM, S::BN);
    const bool last = __syncthreads_or(threadIdx.x == 0 && atomicAdd(&arrivals[s.tile], 1) == s.parts - 1);
    if (!last)
        return false;
    __threadfence(); /* the other pieces' partials, written before they counted themselves in */
    /* CHUNK float4s of every part in flight at once: one round trip to L2 per part and chunk. */
    constexpr int CHUNK = VECS < 16 ? VECS : 16;
    static_assert(VECS % CHUNK == 0, "chunks of a thread's float4s");
#pragma unroll 1
    for (int v0 = 0; v0 < VECS; v0 += CHUNK) {
        float4 sum[CHUNK];
#pragma unroll
        for (int c = 0; c < CHUNK; c++)
            sum[c] = __ldcg(part(0) + (v0 + c) * S::THREADS);
        for (int q = 1; q < s.parts; q++) {
            float4 x[CHUNK];
#pragma unroll
            for (int c = 0; c < CHUNK; c++)
                x[c] = __ldcg(part(q) + (v0 + c) * S::THREADS);
#pragma unroll
            for (int c = 0; c < CHUNK; c++)
                sum[c].x += x[c].x, sum[c].y += x[c].y, sum[c].z += x[c].z, sum[c].w += x[c].w;
        }
#pragma unroll
        for (int c = 0; c < CHUNK; c++) {
            const float sums[4] = {sum[c].x, sum[c].y, sum[c].z, sum[c].w};
            store((v0 + c) % S::FM, (v0 + c) / S::FM, sums);
        }
    }
    return false;
}

/* Aligns a tail's scratch to float4 (the partial tiles' stores); false when the workspace has no room for it. */
inline bool stream_k_scratch(tb_gemm_args *args, const StreamKTail &t, int bm, int bn)
{
    const uintptr_t at = ((uintptr_t)args->workspace + 15) & ~(uintptr_t)15;
    const int64_t skipped = (int64_t)(at - (uintptr_t)args->workspace) / (int64_t)sizeof(float);
    if (!args->workspace || args->workspace_floats - skipped < stream_k_workspace_floats(t, bm, bn))
        return false;
    args->workspace = reinterpret_cast<float *>(at);
    args->workspace_floats -= skipped;
    return true;
}

#endif /* TILEDBLAS_KERNELS_STREAM_K_CUH */
