/*
 * The GPU kernel family behind tiledblas, seen from C.
 *
 * Every variant computes one column-major problem
 *     C = alpha * op(A) * op(B) + beta * C        (C is m x n, op(A) m x k)
 * reading A and B directly from their storage in either orientation:
 * op(A)(i,p) = trans_a ? a[p + i*lda] : a[i + p*lda], likewise for B.
 * beta == 0 never reads C; k == 0 with alpha == 0 only scales C.
 * m, n and k fit an int (the BLAS interface is LP64); offsets are 64-bit.
 * All pointers are device pointers; the launch is asynchronous on `stream`.
 */
#ifndef TILEDBLAS_KERNELS_H
#define TILEDBLAS_KERNELS_H

#include <stdint.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tb_gemm_args {
    int trans_a, trans_b;  /* 0: as stored, 1: transposed */
    int64_t m, n, k;
    float alpha, beta;
    const float *a;
    int64_t lda;
    const float *b;
    int64_t ldb;
    float *c;
    int64_t ldc;
    /* Device scratch a kernel may use (split-K partial sums); see tb_kernel_workspace_floats. */
    float *workspace;
    int64_t workspace_floats;
} tb_gemm_args;

typedef cudaError_t (*tb_launch_fn)(const tb_gemm_args *args, cudaStream_t stream);

/* The ladder, slowest first. */
typedef enum tb_kernel_id {
    TB_KERNEL_NAIVE = 0, /* one thread per element of C, no reuse */
    TB_KERNEL_TILED16,   /* the textbook shared-memory tile, 16x16 */
    TB_KERNEL_TILED32,   /* the same with 32x32 tiles */
    TB_KERNEL_REGTILE,   /* block tile, a register tile per thread, float4, double buffer */
    TB_KERNEL_MULTISTAGE, /* warp tiles fed by a ring of cp.async stages (sm_80+) */
    TB_KERNEL_TF32X3,    /* FP32-accurate on the tensor cores: 3xTF32 with wgmma (sm_90a only; see below) */
    TB_KERNEL_BEST,      /* not a rung: per call, the fastest of regtile and multistage (best.c) */
    TB_KERNEL_COUNT
} tb_kernel_id;

#define TB_KERNEL_DEFAULT TB_KERNEL_BEST

/* The most slices of K split-K plans cut a call into (regtile and multistage). */
#define TB_MAX_SPLITS 16

/* Short name ("naive", "tiled16", ...) used by TILEDBLAS_KERNEL and the benchmark. */
const char *tb_kernel_name(tb_kernel_id id);
/* Id for a name, or -1. */
int tb_kernel_from_name(const char *name);
/* Launch variant `id`; returns the launch status (cudaGetLastError after it). */
cudaError_t tb_kernel_launch(tb_kernel_id id, const tb_gemm_args *args, cudaStream_t stream);
/* Scratch floats variant `id` would use for this call; it runs without (slower) if given less. */
int64_t tb_kernel_workspace_floats(tb_kernel_id id, const tb_gemm_args *args);
/* How variant `id` plans to run this call, in words (tile shape, split or stream-K tail); "" if it has no plan. */
void tb_kernel_describe_plan(tb_kernel_id id, const tb_gemm_args *args, char *text, size_t size);

/* One launcher per file of the ladder. */
cudaError_t tb_launch_naive(const tb_gemm_args *args, cudaStream_t stream);
cudaError_t tb_launch_tiled16(const tb_gemm_args *args, cudaStream_t stream);
cudaError_t tb_launch_tiled32(const tb_gemm_args *args, cudaStream_t stream);
cudaError_t tb_launch_regtile(const tb_gemm_args *args, cudaStream_t stream);
cudaError_t tb_launch_multistage(const tb_gemm_args *args, cudaStream_t stream);
cudaError_t tb_launch_tf32x3(const tb_gemm_args *args, cudaStream_t stream);
cudaError_t tb_launch_best(const tb_gemm_args *args, cudaStream_t stream);
int64_t tb_best_workspace_floats(const tb_gemm_args *args);
void tb_best_describe_plan(const tb_gemm_args *args, char *text, size_t size);
/* The depth of the slices of K best runs a call in with the workspace it has (K itself: one launch),
 * and the longest chain of products one launch's plan sums for an element of C. */
int64_t tb_best_slice_depth(const tb_gemm_args *args);
int64_t tb_best_planned_chain(const tb_gemm_args *args);

/*
 * The tensor-core rung needs an sm_90a GPU: without one, or in a build without the sm_90a target, it
 * returns cudaErrorNotSupported and computes nothing. It asks for room for the operands split into
 * hi and lo parts and, where it splits K, for a plane of C per split. Given too little for the parts
 * it runs the call on `best`, in FP32, and tb_tf32x3_ran_fp32 (which also clears it) then says so
 * for the calling thread; given room for the parts alone, it does not split K. Its error bound is
 * the FP32 rungs' plus about 2^-20 |alpha| (|op(A)| |op(B)|).
 */
int64_t tb_tf32x3_workspace_floats(const tb_gemm_args *args);
/* Whether the rung runs on the current device: built for sm_90a, a compute capability 9.0 GPU, a driver
 * with tensor maps. */
int tb_tf32x3_supported(void);
int tb_tf32x3_ran_fp32(void);
void tb_tf32x3_describe_plan(const tb_gemm_args *args, char *text, size_t size);

/* The time a rung's plan predicts for a call from its measured rates (seconds), for best.c's choice. */
double tb_regtile_predicted_seconds(const tb_gemm_args *args);
double tb_multistage_predicted_seconds(const tb_gemm_args *args);
/* The most products one element of C sums in one chain under a rung's plan: K, or a slice of it. */
int64_t tb_regtile_planned_chain(const tb_gemm_args *args);
int64_t tb_multistage_planned_chain(const tb_gemm_args *args);
void tb_regtile_describe_plan(const tb_gemm_args *args, char *text, size_t size);
void tb_multistage_describe_plan(const tb_gemm_args *args, char *text, size_t size);

/* The tile shapes behind TB_KERNEL_REGTILE, one by one, for the tuning benchmark. */
int tb_regtile_shape_count(void);
int64_t tb_regtile_workspace_floats(const tb_gemm_args *args);
const char *tb_regtile_shape_name(int shape);
cudaError_t tb_launch_regtile_shape(int shape, const tb_gemm_args *args, cudaStream_t stream);

/* The tile shapes behind TB_KERNEL_MULTISTAGE, one by one, for the tuning benchmark. */
int tb_multistage_shape_count(void);
int64_t tb_multistage_workspace_floats(const tb_gemm_args *args);
const char *tb_multistage_shape_name(int shape);
cudaError_t tb_launch_multistage_shape(int shape, const tb_gemm_args *args, cudaStream_t stream);
/* The same with the shape's stream-K tail for this call where it has one, and the scratch that needs. */
cudaError_t tb_launch_multistage_shape_tail(int shape, const tb_gemm_args *args, cudaStream_t stream);
int64_t tb_multistage_shape_tail_workspace_floats(int shape, const tb_gemm_args *args);
/*
 * The same in `splits` slices of K, summed by the second pass (clusters == 0;
 * the workspace holds splits * m * n floats) or in thread block clusters;
 * cudaErrorNotSupported where this GPU or shape has no cluster launch.
 */
cudaError_t tb_launch_multistage_shape_split(int shape, const tb_gemm_args *args, cudaStream_t stream, int splits,
                                             int clusters);
/* Clusters of `splits` blocks of the shape this GPU holds at once; 0: no cluster launch. */
int tb_multistage_shape_cluster_capacity(int shape, int splits);

/* dst (cols x rows, leading dimension ld_dst) = src^T for column-major src (rows x cols); transpose.cu. */
cudaError_t tb_launch_transpose(const float *src, int64_t rows, int64_t cols, int64_t ld_src, float *dst,
                                int64_t ld_dst, cudaStream_t stream);

/* Split-K's summing pass (splitk.cu): C = alpha * (sum of `splits` workspace planes) + beta * C. */
cudaError_t tb_launch_splitk_reduce(const tb_gemm_args *args, int splits, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif /* TILEDBLAS_KERNELS_H */
