/*
 * The yardstick for --kernels: a plain FP64 GEMM (one thread per element of C,
 * inputs upcast, so its own rounding error is far below FP32's) and the
 * comparison of a result against it.
 */
#include "bench.h"

/* threadIdx.x runs along m, the contiguous dimension of column-major C. */
#define REF_BLOCK_X 32
#define REF_BLOCK_Y 8
#define CMP_THREADS 256
#define CMP_BLOCKS 1024

__global__ void reference_gemm_kernel(tb_gemm_args g, double *ref)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t j = (int64_t)blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= g.m || j >= g.n)
        return;
    double sum = 0.0;
    for (int64_t p = 0; p < g.k; p++) {
        const double a = g.trans_a ? g.a[p + i * g.lda] : g.a[i + p * g.lda];
        const double b = g.trans_b ? g.b[j + p * g.ldb] : g.b[p + j * g.ldb];
        sum += a * b;
    }
    double c = (double)g.alpha * sum;
    if (g.beta != 0.0f)
        c += (double)g.beta * g.c[i + j * g.ldc];
    ref[i + j * g.ldc] = c;
}

extern "C" cudaError_t bench_reference_gemm(const tb_gemm_args *args, double *ref,
                                            cudaStream_t stream)
{
    const int64_t rows = (args->m + REF_BLOCK_X - 1) / REF_BLOCK_X;
    const int64_t cols = (args->n + REF_BLOCK_Y - 1) / REF_BLOCK_Y;
    if (cols > 65535)
        return cudaErrorInvalidValue; /* gridDim.y limit: n up to 524280 */
    const dim3 block(REF_BLOCK_X, REF_BLOCK_Y);
    const dim3 grid((unsigned)rows, (unsigned)cols);
    reference_gemm_kernel<<<grid, block, 0, stream>>>(*args, ref);
    return cudaGetLastError();
}

__device__ double warp_sum(double v)
{
    for (int d = 16; d > 0; d /= 2)
        v += __shfl_down_sync(0xffffffffu, v, d);
    return v;
}

__global__ void compare_kernel(const float *c, const double *ref, size_t count, bench_err *acc)
{
    double diff2 = 0.0, ref2 = 0.0, bad = 0.0, most = 0.0;
    for (size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < count;
         e += (size_t)gridDim.x * blockDim.x) {
        const double r = ref[e];
        ref2 += r * r;
        if (!isfinite(c[e])) {
            bad += 1.0;
            continue;
        }
        const double d = (double)c[e] - r;
        diff2 += d * d;
        most = fmax(most, fabs(d) / (fabs(r) + 1e-3));
    }
    /* One atomic per warp: at most a few thousand, next to millions of reads. */
    diff2 = warp_sum(diff2);
    ref2 = warp_sum(ref2);
    bad = warp_sum(bad);
    for (int offset = 16; offset > 0; offset /= 2)
        most = fmax(most, __shfl_xor_sync(0xffffffffu, most, offset));
    if (threadIdx.x % 32 == 0) {
        atomicAdd(&acc->diff2, diff2);
        atomicAdd(&acc->ref2, ref2);
        atomicAdd(&acc->nonfinite, (unsigned long long)bad);
        /* Non-negative doubles order as their bit patterns do. */
        atomicMax((unsigned long long *)&acc->max_relative, (unsigned long long)__double_as_longlong(most));
    }
}

extern "C" cudaError_t bench_compare(const float *c, const double *ref, size_t count,
                                     bench_err *scratch, bench_err *out, cudaStream_t stream)
{
    cudaError_t err = cudaMemsetAsync(scratch, 0, sizeof *scratch, stream);
    if (err != cudaSuccess)
        return err;
    compare_kernel<<<CMP_BLOCKS, CMP_THREADS, 0, stream>>>(c, ref, count, scratch);
    err = cudaGetLastError();
    if (err != cudaSuccess)
        return err;
    err = cudaMemcpyAsync(out, scratch, sizeof *out, cudaMemcpyDeviceToHost, stream);
    if (err != cudaSuccess)
        return err;
    return cudaStreamSynchronize(stream);
}
