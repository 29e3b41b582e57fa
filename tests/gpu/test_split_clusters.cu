/*
 * Split-K summed in thread block clusters (the kernels' cluster_split.cuh)
 * against the second pass it replaces, for every multistage tile shape, each
 * of 2 to 8 slices of K (the last ragged or empty), all four transpose pairs,
 * edge tiles and unaligned operands: with beta = 0 both sum the same partials
 * in the same order and must give the same bits, into a C filled with NaN
 * (never read); with beta != 0 both must be within the FP32 error bound of an
 * FP64 reference. Either way the padding rows of C must be left as they were.
 * Exits 77 without a GPU, on one older than sm_90, or where no shape has a
 * cluster launch (kernels built for older GPUs only). An argument N runs the
 * first N cases only (the sanitizers' runs).
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
static int cluster_launches;

/* Elements of C's padding rows (between m and ldc) that differ from `before`, bit for bit. */
static int64_t padding_changed(const std::vector<float> &c, const std::vector<float> &before, int64_t m,
                               int64_t ldc, int64_t n)
{
    int64_t changed = 0;
    for (int64_t j = 0; j < n; j++)
        changed += memcmp(c.data() + m + j * ldc, before.data() + m + j * ldc, (ldc - m) * sizeof(float)) != 0;
    return changed;
}

static void run_case(const Case &c, int shapes)
{
    const Operands ops = make_operands(c);
    const int64_t lda = ops.lda, ldb = ops.ldb, ldc = ops.ldc;
    const std::vector<float> &a = ops.a, &b = ops.b, &c0 = ops.c0;
    const std::vector<double> &exact = ops.exact, &magnitude = ops.magnitude;
    std::vector<float> got(ldc * c.n), pass(ldc * c.n);

    float *d_a, *d_b, *d_c, *d_work;
    const size_t c_bytes = c0.size() * sizeof(float);
    CHECK_CUDA(cudaMalloc((void **)&d_a, a.size() * sizeof(float)));
    CHECK_CUDA(cudaMalloc((void **)&d_b, b.size() * sizeof(float)));
    CHECK_CUDA(cudaMalloc((void **)&d_c, c_bytes));
    CHECK_CUDA(cudaMalloc((void **)&d_work, 8 * c.m * c.n * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_a, a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(d_b, b.data(), b.size() * sizeof(float), cudaMemcpyHostToDevice));

    tb_gemm_args args = {};
    args.trans_a = c.trans_a, args.trans_b = c.trans_b;
    args.m = c.m, args.n = c.n, args.k = c.k;
    args.alpha = 1.5f;
    args.a = d_a, args.lda = lda, args.b = d_b, args.ldb = ldb, args.c = d_c, args.ldc = ldc;
    args.workspace = d_work, args.workspace_floats = 8 * c.m * c.n;

    /* C before the call: NaN where beta = 0 (never read), else c0. */
    const auto run = [&](int shape, int splits, int clusters, float beta, std::vector<float> &out) {
        args.beta = beta;
        if (beta == 0.0f)
            CHECK_CUDA(cudaMemset(d_c, 0xff, c_bytes));
        else
            CHECK_CUDA(cudaMemcpy(d_c, c0.data(), c_bytes, cudaMemcpyHostToDevice));
        const cudaError_t status = tb_launch_multistage_shape_split(shape, &args, 0, splits, clusters);
        if (status == cudaErrorNotSupported)
            return false;
        CHECK_CUDA(status);
        cluster_launches += clusters;
        CHECK_CUDA(cudaDeviceSynchronize());
        CHECK_CUDA(cudaMemcpy(out.data(), d_c, c_bytes, cudaMemcpyDeviceToHost));
        return true;
    };

    for (int shape = 0; shape < shapes; shape++)
        for (int splits = 2; splits <= 8; splits++) {
            char what[160];
            snprintf(what, sizeof what, "%s, %lldx%lldx%lld %c%c, pad %lld, %d slices",
                     tb_multistage_shape_name(shape), (long long)c.m, (long long)c.n, (long long)c.k,
                     c.trans_a ? 'T' : 'N', c.trans_b ? 'T' : 'N', (long long)c.pad, splits);
            if (!run(shape, splits, 1, 0.0f, got)) {
                printf("%s: no cluster launch for this shape, skipped\n", what);
                continue;
            }
            run(shape, splits, 0, 0.0f, pass);
            int64_t differ = 0;
            for (int64_t j = 0; j < c.n; j++)
                differ += memcmp(&got[j * ldc], &pass[j * ldc], c.m * sizeof(float)) != 0;
            if (differ && failures++ < 20)
                printf("FAIL: %s, beta 0: %lld columns differ from the second pass\n", what, (long long)differ);
            std::vector<float> poisoned(got.size()); /* C as it was: every bit set */
            memset(poisoned.data(), 0xff, poisoned.size() * sizeof(float));
            if (padding_changed(got, poisoned, c.m, ldc, c.n) && failures++ < 20)
                printf("FAIL: %s, beta 0, clusters: C's padding rows were written\n", what);
            /* beta != 0: alpha op(A) op(B) + beta C within (k + 2) eps of |alpha| |op(A)| |op(B)| + |beta C|. */
            const float beta = -0.75f;
            for (int clusters = 0; clusters <= 1; clusters++) {
                run(shape, splits, clusters, beta, got);
                int64_t bad = 0;
                for (int64_t j = 0; j < c.n; j++)
                    for (int64_t i = 0; i < c.m; i++) {
                        const double want = 1.5 * exact[i + j * c.m] + beta * (double)c0[i + j * ldc];
                        const double bound = (double)(c.k + 2) * 0x1p-24 *
                                             (1.5 * magnitude[i + j * c.m] + fabs(beta * (double)c0[i + j * ldc]));
                        bad += !(fabs((double)got[i + j * ldc] - want) <= bound);
                    }
                if (bad && failures++ < 20)
                    printf("FAIL: %s, beta %g, %s: %lld elements off the reference\n", what, beta,
                           clusters ? "clusters" : "second pass", (long long)bad);
                if (padding_changed(got, c0, c.m, ldc, c.n) && failures++ < 20)
                    printf("FAIL: %s, beta %g, %s: C's padding rows were written\n", what, beta,
                           clusters ? "clusters" : "second pass");
            }
        }
    cudaFree(d_a);
    cudaFree(d_b);
    cudaFree(d_c);
    cudaFree(d_work);
}

int main(int argc, char **argv)
{
    int devices = 0, major = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0 ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0) != cudaSuccess) {
        printf("no usable GPU: skipped\n");
        return 77;
    }
    if (major < 9) {
        printf("compute capability %d.x has no thread block clusters: skipped\n", major);
        return 77;
    }
    const int shapes = tb_multistage_shape_count();
    for (int shape = 0; shape < shapes; shape++) {
        printf("%s: clusters resident at once, by slices 2..8:", tb_multistage_shape_name(shape));
        for (int splits = 2; splits <= 8; splits++)
            printf(" %d", tb_multistage_shape_cluster_capacity(shape, splits));
        printf("\n");
    }
    /* The first is small enough for racecheck: one tile of the large shapes, unaligned, and with 8 slices
     * of whole k-slices of 32 its last slices empty. */
    const Case cases[] = {
        {130, 70, 263, 0, 1, 1},   {256, 256, 2048, 0, 0, 0}, {300, 200, 1037, 1, 0, 1}, {256, 256, 2048, 1, 1, 0},
        {300, 200, 1037, 0, 1, 0}, {129, 257, 771, 0, 0, 1},  {129, 257, 771, 1, 1, 0},
    };
    const int all = (int)(sizeof cases / sizeof cases[0]);
    const int count = argc > 1 && atoi(argv[1]) > 0 && atoi(argv[1]) < all ? atoi(argv[1]) : all;
    for (int i = 0; i < count; i++)
        run_case(cases[i], shapes);
    if (failures) {
        printf("%d failures\n", failures);
        return 1;
    }
    if (!cluster_launches) {
        printf("no tile shape has a cluster launch in this build: skipped\n");
        return 77;
    }
    printf("cluster sums match the second pass: %d tile shapes, 2-8 slices, %d cases\n", shapes, count);
    return 0;
}
