/*
 * The default kernel's chains (kernels/best.c): K longer than 4096 runs as
 * launches over slices of it, each after the first adding to C. Small C with
 * long K, all four transpose pairs, aligned and unaligned operands, each run
 * with the workspace its plan asks for (K split across blocks) and with none
 * (the splits dropped: slices of at most 4096, each unsplit). Either way C
 * must be within the FP32 error bound of an FP64 reference, with beta = 0
 * into a C filled with NaN (never read) and with beta != 0, and C's padding
 * rows untouched; without scratch the plan must name ceil(K/4096) chains.
 * The plans of large calls are checked by name: 8192^3 runs in two chains,
 * 4096^3 in one. Exits 77 without a GPU.
 */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#include "kernel_case.cuh"
#include "kernels.h"

static int failures;

static void fail(const char *what, const char *detail, long long count)
{
    if (failures++ < 20)
        printf("FAIL: %s: %s (%lld)\n", what, detail, count);
}

static void run_case(const Case &c)
{
    const Operands ops = make_operands(c);
    const int64_t lda = ops.lda, ldb = ops.ldb, ldc = ops.ldc;
    const std::vector<float> &a = ops.a, &b = ops.b, &c0 = ops.c0;
    const std::vector<double> &exact = ops.exact, &magnitude = ops.magnitude;
    std::vector<float> got(ldc * c.n);

    tb_gemm_args args = {};
    args.trans_a = c.trans_a, args.trans_b = c.trans_b;
    args.m = c.m, args.n = c.n, args.k = c.k;
    args.alpha = 1.5f;
    args.lda = lda, args.ldb = ldb, args.ldc = ldc;
    const int64_t scratch = tb_best_workspace_floats(&args);

    float *d_a, *d_b, *d_c, *d_work = NULL;
    const size_t c_bytes = c0.size() * sizeof(float);
    CHECK_CUDA(cudaMalloc((void **)&d_a, a.size() * sizeof(float)));
    CHECK_CUDA(cudaMalloc((void **)&d_b, b.size() * sizeof(float)));
    CHECK_CUDA(cudaMalloc((void **)&d_c, c_bytes));
    if (scratch > 0)
        CHECK_CUDA(cudaMalloc((void **)&d_work, scratch * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_a, a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(d_b, b.data(), b.size() * sizeof(float), cudaMemcpyHostToDevice));
    args.a = d_a, args.b = d_b, args.c = d_c;

    for (int with_scratch = 1; with_scratch >= 0; with_scratch--)
        for (const float beta : {0.0f, -0.75f}) {
            args.beta = beta;
            args.workspace = with_scratch ? d_work : NULL;
            args.workspace_floats = with_scratch ? scratch : 0;
            char plan[160], what[320];
            tb_best_describe_plan(&args, plan, sizeof plan);
            snprintf(what, sizeof what, "%lldx%lldx%lld %c%c, pad %lld, %s, beta %g (plan: %s)", (long long)c.m,
                     (long long)c.n, (long long)c.k, c.trans_a ? 'T' : 'N', c.trans_b ? 'T' : 'N',
                     (long long)c.pad, with_scratch ? "with its scratch" : "no scratch", beta, plan);
            /* Short of the scratch its plans ask, the call runs in slices of at most 4096 (unsplit). */
            char slices[48];
            snprintf(slices, sizeof slices, "K in %lld chains", (long long)((c.k + 4095) / 4096));
            if (!with_scratch && scratch > 0 && !strstr(plan, slices))
                fail(what, "expected slices of at most 4096 without scratch", (long long)c.k);
            /* C before the call: NaN where beta = 0 (never read), else c0. */
            std::vector<float> before(c0);
            if (beta == 0.0f)
                memset(before.data(), 0xff, c_bytes);
            CHECK_CUDA(cudaMemcpy(d_c, before.data(), c_bytes, cudaMemcpyHostToDevice));
            CHECK_CUDA(tb_launch_best(&args, 0));
            CHECK_CUDA(cudaDeviceSynchronize());
            CHECK_CUDA(cudaMemcpy(got.data(), d_c, c_bytes, cudaMemcpyDeviceToHost));
            /* alpha op(A) op(B) + beta C within (k + 2) eps of |alpha| |op(A)| |op(B)| + |beta C|. */
            long long bad = 0, padding = 0;
            for (int64_t j = 0; j < c.n; j++) {
                for (int64_t i = 0; i < c.m; i++) {
                    const double old = beta == 0.0f ? 0.0 : (double)c0[i + j * ldc];
                    const double want = 1.5 * exact[i + j * c.m] + beta * old;
                    const double bound =
                        (double)(c.k + 2) * 0x1p-24 * (1.5 * magnitude[i + j * c.m] + fabs(beta * old));
                    bad += !(fabs((double)got[i + j * ldc] - want) <= bound);
                }
                padding += memcmp(got.data() + c.m + j * ldc, before.data() + c.m + j * ldc,
                                  (ldc - c.m) * sizeof(float)) != 0;
            }
            if (bad)
                fail(what, "elements off the reference", bad);
            if (padding)
                fail(what, "columns whose padding rows were written", padding);
        }
    cudaFree(d_a);
    cudaFree(d_b);
    cudaFree(d_c);
    cudaFree(d_work);
}

/* The plan of a call of this shape (no memory needed to plan) must name `chains` ("" for none). */
static void check_plan(int64_t m, int64_t n, int64_t k, const char *chains)
{
    tb_gemm_args args = {};
    args.m = m, args.n = n, args.k = k, args.lda = m, args.ldb = k, args.ldc = m;
    char plan[160];
    tb_best_describe_plan(&args, plan, sizeof plan);
    const bool chained = strstr(plan, "chains") != NULL;
    if (chains[0] ? !strstr(plan, chains) : chained)
        fail(plan, chains[0] ? "expected chains missing" : "unexpected chains", (long long)k);
    else
        printf("%lldx%lldx%lld: %s\n", (long long)m, (long long)n, (long long)k, plan);
}

int main()
{
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        printf("no usable GPU: skipped\n");
        return 77;
    }
    check_plan(8192, 8192, 8192, "K in 2 chains");
    check_plan(4096, 4096, 4096, "");
    /* Without scratch: 9000 in slices of 3072, 3072, 2856; 8193 in 2816, 2816, 2561; 4500 in 2304 and 2196;
     * 70000 in 17 of 3968 and 2544. With it, 70000 (A re-stored, K split 16 ways per slice) runs in two on
     * the H100: chains and scratch together. */
    const Case cases[] = {
        {200, 150, 9000, 0, 0, 0}, {129, 77, 8193, 1, 0, 1}, {65, 130, 4500, 0, 1, 0},
        {100, 90, 9000, 1, 1, 1},  {8, 15, 70000, 1, 0, 0},
    };
    for (const Case &c : cases)
        run_case(c);
    if (failures) {
        printf("%d failures\n", failures);
        return 1;
    }
    printf("chains within the FP32 bound: %d cases, with and without scratch\n", (int)(sizeof cases / sizeof cases[0]));
    return 0;
}
