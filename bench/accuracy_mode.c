/*
 * --accuracy: the error of tiledblas's two maths (cblas_sgemm on device
 * pointers, tiledblas_set_math FP32 and tensor) beside cuBLAS's SGEMM and
 * its TF32 mode, on the same inputs, against an FP64 reference: the largest
 * and the median of |c - ref| / (|ref| + 1e-3) over C, for each shape and
 * each kind of input:
 *   uniform   uniform in (-1, 1)
 *   normal    standard normal
 *   positive  uniform in (0, 1): no cancellation
 *   spread    uniform magnitude in [1, 2) times 2^e, e uniform in -20..20, random sign
 *   specials  uniform, with 0.1% +Inf, 0.1% -Inf, 0.1% NaN, 5% subnormal, 5% zero
 * With specials, a result with Inf or NaN where cuBLAS's SGEMM has none (or the
 * other way round, or another Inf) fails its check. The tensor math is left out
 * where the GPU or the build has no tensor-core path.
 */
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

enum { UNIFORM, NORMAL, POSITIVE, SPREAD, SPECIALS, INPUTS };
static const char *const input_names[INPUTS] = {"uniform", "normal", "positive", "spread", "specials"};

enum { TILEDBLAS_FP32, TILEDBLAS_TENSOR, CUBLAS, CUBLAS_TF32, WAYS };
static const char *const way_names[WAYS] = {"fp32", "tensor", "cublas", "cublas-tf32"};

/* In [0, 1), from the hash of the element's index. */
static double unit(uint64_t seed, size_t index, int draw)
{
    return (double)(bench_hash(seed * 0x100000001b3ull + index * 4 + (uint64_t)draw) >> 11) * 0x1p-53;
}

static float element(int input, uint64_t seed, size_t index)
{
    const double u = unit(seed, index, 0), v = unit(seed, index, 1);
    switch (input) {
    case NORMAL:
        return (float)(sqrt(-2.0 * log(1.0 - u)) * cos(6.283185307179586 * v));
    case POSITIVE:
        return (float)u;
    case SPREAD:
        return (float)ldexp((v < 0.5 ? -1.0 : 1.0) * (1.0 + u), (int)(unit(seed, index, 2) * 41.0) - 20);
    case SPECIALS: {
        const double w = unit(seed, index, 2);
        return w < 0.001   ? INFINITY
               : w < 0.002 ? -INFINITY
               : w < 0.003 ? NAN
               : w < 0.053 ? (float)((2.0 * u - 1.0) * 1e-39)
               : w < 0.103 ? 0.0f
                           : (float)(2.0 * u - 1.0);
    }
    default:
        return (float)(2.0 * u - 1.0);
    }
}

static float *device_input(int input, uint64_t seed, size_t n)
{
    float *host = bench_xmalloc(n * sizeof *host), *device;
    for (size_t e = 0; e < n; e++)
        host[e] = element(input, seed, e);
    CUDA_CHECK(cudaMalloc((void **)&device, n * sizeof *device));
    CUDA_CHECK(cudaMemcpy(device, host, n * sizeof *device, cudaMemcpyHostToDevice));
    free(host);
    return device;
}

static int compare_doubles(const void *x, const void *y)
{
    const double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Largest and median error of c against ref over the finite pairs, and the Inf/NaN positions that differ from
 * `like` (NULL: none counted). */
static void errors(const float *c, const double *ref, const float *like, size_t n, double *most, double *median,
                   size_t *differ)
{
    double *e = bench_xmalloc(n * sizeof *e);
    size_t count = 0;
    *differ = 0;
    for (size_t i = 0; i < n; i++) {
        if (like && (isfinite(c[i]) != isfinite(like[i]) || (isinf(c[i]) && c[i] != like[i]) ||
                     isnan(c[i]) != isnan(like[i])))
            (*differ)++;
        if (isfinite(c[i]) && isfinite(ref[i]))
            e[count++] = fabs((double)c[i] - ref[i]) / (fabs(ref[i]) + 1e-3);
    }
    qsort(e, count, sizeof *e, compare_doubles);
    *most = count ? e[count - 1] : 0.0;
    *median = count ? e[count / 2] : 0.0;
    free(e);
}

static void run_way(int way, cublasHandle_t cublas, int64_t m, int64_t n, int64_t k, const float *a, const float *b,
                    float *c)
{
    const float one = 1.0f, zero = 0.0f;
    if (way == TILEDBLAS_FP32 || way == TILEDBLAS_TENSOR) {
        tiledblas_set_math(way == TILEDBLAS_TENSOR ? TILEDBLAS_MATH_TENSOR : TILEDBLAS_MATH_FP32);
        cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0f, a, (int)m, b, (int)k,
                    0.0f, c, (int)m);
        return;
    }
    CUBLAS_CHECK(
        way == CUBLAS ? cublasSgemm(cublas, CUBLAS_OP_N, CUBLAS_OP_N, (int)m, (int)n, (int)k, &one, a, (int)m, b,
                                    (int)k, &zero, c, (int)m)
                      : cublasGemmEx(cublas, CUBLAS_OP_N, CUBLAS_OP_N, (int)m, (int)n, (int)k, &one, a, CUDA_R_32F,
                                     (int)m, b, CUDA_R_32F, (int)k, &zero, c, CUDA_R_32F, (int)m,
                                     CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
    CUDA_CHECK(cudaDeviceSynchronize());
}

int bench_accuracy(const bench_opts *o, bench_table *t)
{
    cublasHandle_t cublas;
    CUBLAS_CHECK(cublasCreate(&cublas));
    const int tensor = tb_tf32x3_supported();
    printf("error: largest and median |c - ref| / (|ref| + 1e-3) over C, ref in FP64 on the GPU; column-major NN\n");
    printf("tiledblas: cblas_sgemm on device pointers, math fp32 and%s tensor\n", tensor ? "" : " (not offered here)");
    fflush(stdout);
    const tiledblas_math math_before = tiledblas_get_math();
    for (int s = 0; s < o->nshapes; s++)
        for (int input = 0; input < INPUTS; input++) {
            const int64_t m = o->shapes[s].m, n = o->shapes[s].n, k = o->shapes[s].k;
            const size_t nc = (size_t)(m * n);
            float *a = device_input(input, 11 + (uint64_t)input, (size_t)(m * k));
            float *b = device_input(input, 97 + (uint64_t)input, (size_t)(k * n));
            float *c, *host[WAYS];
            double *ref, *ref_host = bench_xmalloc(nc * sizeof *ref_host);
            CUDA_CHECK(cudaMalloc((void **)&c, nc * sizeof *c));
            CUDA_CHECK(cudaMalloc((void **)&ref, nc * sizeof *ref));
            const tb_gemm_args g = {.m = m, .n = n, .k = k, .alpha = 1.0f, .a = a, .lda = m, .b = b, .ldb = k,
                                    .c = c, .ldc = m};
            CUDA_CHECK(bench_reference_gemm(&g, ref, NULL));
            CUDA_CHECK(cudaMemcpy(ref_host, ref, nc * sizeof *ref, cudaMemcpyDeviceToHost));
            for (int way = 0; way < WAYS; way++) {
                host[way] = NULL;
                if (way == TILEDBLAS_TENSOR && !tensor)
                    continue;
                run_way(way, cublas, m, n, k, a, b, c);
                host[way] = bench_xmalloc(nc * sizeof *host[way]);
                CUDA_CHECK(cudaMemcpy(host[way], c, nc * sizeof *c, cudaMemcpyDeviceToHost));
            }
            char shape[48];
            snprintf(shape, sizeof shape, "%lldx%lldx%lld", (long long)m, (long long)n, (long long)k);
            for (int way = 0; way < WAYS; way++) {
                if (!host[way])
                    continue;
                char variant[32];
                snprintf(variant, sizeof variant, "%s %s", input_names[input], way_names[way]);
                const bench_case bc = {.m = m, .n = n, .k = k, .lda = m, .ldb = k, .ldc = m, .op = "col NN"};
                bench_row *row = bench_table_add(t, &bc, variant);
                snprintf(row->shape, sizeof row->shape, "%s", shape);
                size_t differ;
                /* Inf and NaN as cuBLAS's SGEMM puts them, for the inputs that have them. */
                const float *like = input == SPECIALS && way != CUBLAS ? host[CUBLAS] : NULL;
                errors(host[way], ref_host, like, nc, &row->error, &row->error_median, &differ);
                if (differ && way != CUBLAS_TF32) {
                    char why[64];
                    snprintf(why, sizeof why, "%zu Inf/NaN positions unlike cuBLAS's SGEMM", differ);
                    bench_row_fail(row, why);
                } else {
                    snprintf(row->status, sizeof row->status, "ok");
                }
                fprintf(stderr, "[accuracy] %s %s: max %.2e, median %.2e%s\n", shape, variant, row->error,
                        row->error_median, differ ? " (Inf/NaN positions differ)" : "");
            }
            for (int way = 0; way < WAYS; way++)
                free(host[way]);
            free(ref_host);
            CUDA_CHECK(cudaFree(a));
            CUDA_CHECK(cudaFree(b));
            CUDA_CHECK(cudaFree(c));
            CUDA_CHECK(cudaFree(ref));
        }
    tiledblas_set_math(math_before);
    cublasDestroy(cublas);
    return 0;
}
