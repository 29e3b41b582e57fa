/*
 * Split-K summed inside a thread block cluster (sm_90 and newer; used by multistage).
 *
 * A split launch otherwise leaves one partial m x n plane per slice of K in
 * the workspace and sums them in a second pass (splitk.cu): every partial
 * crosses L2 twice, and the pass is a launch of its own after the last block.
 * Launched in clusters of (1, 1, splits) blocks, the slices of one tile run
 * together in one cluster instead. Each block parks its partial tile in its
 * own shared memory (the ring of k-slices is free by then); after a cluster
 * barrier, block z sums every z-th float4 of the tile over all the blocks'
 * shared memory (distributed shared memory), in slice order as the pass does,
 * and stores C. With beta = 0 both give the same bits; with beta != 0 the
 * 128-bit store rounds alpha * sum + beta * C as fmaf(beta, C, alpha * sum),
 * the pass as fmaf(alpha, sum, beta * C).
 *
 * Nothing waits on a block outside the cluster, and the hardware starts a
 * cluster's blocks together, so any grid is correct; how many clusters are
 * resident at once (cluster_capacity) only decides whether it is fast.
 */
#ifndef TILEDBLAS_KERNELS_CLUSTER_SPLIT_CUH
#define TILEDBLAS_KERNELS_CLUSTER_SPLIT_CUH

#include <cooperative_groups.h>

#include "common/common.cuh"

/* Slices of K one cluster sums at most: 8 blocks is the portable cluster size. */
constexpr int CLUSTER_SPLIT_MAX = 8;

/* Shared memory a block needs to park its partial BM x BN tile. */
template <typename S>
constexpr int cluster_partial_bytes()
{
    return S::BM * S::BN * (int)sizeof(float);
}

/* Whether this block's slice of K is summed in its cluster: a split launched in clusters along z. */
__device__ inline bool split_in_cluster()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    return gridDim.z > 1 && cooperative_groups::this_cluster().dim_blocks().z == gridDim.z;
#else
    return false;
#endif
}

/*
 * After a block's k loop, in a cluster split: sums the tile's slices and
 * stores them through store(f, j, sums), where sums are rows 4f..4f+3 of the
 * thread's column j (acc[4f..4f+3][j]). `parked` is the block's dynamic
 * shared memory, cluster_partial_bytes<S>() at least. Partials keep each
 * thread's values in its own lanes, float4 v of thread x at v * THREADS + x
 * (as stream_k_finish does in global memory): every access is conflict-free,
 * and the thread that sums a float4 stores it, from the registers it summed in.
 */
template <typename S, typename Store>
__device__ inline void cluster_split_sum(const float (&acc)[S::TM][S::TN], float4 *parked, Store store)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    namespace cg = cooperative_groups;
    constexpr int VECS = S::FM * S::TN; /* float4s per thread */
    cg::cluster_group cluster = cg::this_cluster();
    const int splits = (int)gridDim.z, tid = threadIdx.x;
    /* Every warp has read its last fragments from the ring before it is overwritten. */
    __syncthreads();
#pragma unroll
    for (int j = 0; j < S::TN; j++)
#pragma unroll
        for (int f = 0; f < S::FM; f++)
            parked[(j * S::FM + f) * S::THREADS + tid] =
                make_float4(acc[4 * f][j], acc[4 * f + 1][j], acc[4 * f + 2][j], acc[4 * f + 3][j]);
    /* Every block's partial is parked and visible to the cluster. The cluster's blocks are
     * ranked along z alone, so rank q holds slice q. */
    cluster.sync();
#pragma unroll 1
    for (int v = (int)blockIdx.z; v < VECS; v += splits) {
        float4 part[CLUSTER_SPLIT_MAX];
#pragma unroll
        for (int q = 0; q < CLUSTER_SPLIT_MAX; q++) /* all loads in flight before the first add */
            if (q < splits)
                part[q] = *cluster.map_shared_rank(parked + v * S::THREADS + tid, q);
        float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f); /* from zero, as splitk.cu: the same bits */
#pragma unroll
        for (int q = 0; q < CLUSTER_SPLIT_MAX; q++)
            if (q < splits)
                sum.x += part[q].x, sum.y += part[q].y, sum.z += part[q].z, sum.w += part[q].w;
        const float sums[4] = {sum.x, sum.y, sum.z, sum.w};
        store(v % S::FM, v / S::FM, sums);
    }
    /* No block leaves, taking its shared memory with it, while another still reads it. */
    cluster.sync();
#else
    (void)acc, (void)parked, (void)store;
    __trap(); /* never launched in clusters before sm_90 */
#endif
}

#endif /* TILEDBLAS_KERNELS_CLUSTER_SPLIT_CUH */
