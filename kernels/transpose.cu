/*
 * Out-of-place transpose, for the default kernel's re-storing of an operand
 * (best.c): dst (cols x rows) = src^T, both column-major. A block moves a
 * 32 x 32 tile through shared memory, so that both the reads of src and the
 * writes of dst are coalesced; the padded row keeps the transposed reads of
 * the tile free of bank conflicts.
 */
#include "common/common.cuh"

namespace {

constexpr int TILE = 32, ROWS_PER_PASS = 8; /* a block is TILE x ROWS_PER_PASS threads */

__global__ void transpose(const float *src, int64_t rows, int64_t cols, int64_t ld_src, float *dst,
                          int64_t ld_dst)
{
    __shared__ float tile[TILE][TILE + 1];
    const int64_t r0 = (int64_t)blockIdx.x * TILE;
    /* grid.y is at most 65535: wider matrices take several column tiles per block. */
    for (int64_t c0 = (int64_t)blockIdx.y * TILE; c0 < cols; c0 += (int64_t)gridDim.y * TILE) {
        for (int j = threadIdx.y; j < TILE; j += ROWS_PER_PASS) {
            const int64_t r = r0 + threadIdx.x, c = c0 + j;
            if (r < rows && c < cols)
                tile[j][threadIdx.x] = src[r + c * ld_src];
        }
        __syncthreads();
        for (int j = threadIdx.y; j < TILE; j += ROWS_PER_PASS) {
            const int64_t c = c0 + threadIdx.x, r = r0 + j;
            if (r < rows && c < cols)
                dst[c + r * ld_dst] = tile[threadIdx.x][j];
        }
        __syncthreads(); /* the tile is refilled for the next column tile */
    }
}

} // namespace

extern "C" cudaError_t tb_launch_transpose(const float *src, int64_t rows, int64_t cols, int64_t ld_src,
                                           float *dst, int64_t ld_dst, cudaStream_t stream)
{
    if (rows <= 0 || cols <= 0)
        return cudaSuccess;
    const unsigned column_tiles = blocks_for(cols, TILE);
    const dim3 grid(blocks_for(rows, TILE), column_tiles < 65535 ? column_tiles : 65535);
    transpose<<<grid, dim3(TILE, ROWS_PER_PASS), 0, stream>>>(src, rows, cols, ld_src, dst, ld_dst);
    return cudaGetLastError();
}
