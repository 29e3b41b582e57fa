/*
 * The default kernel's slices of K (kernels/best.c), planned as on an H100
 * without one: the device queries the planners make are answered here (132
 * SMs, 227 KB of shared memory a block, 50 MB of L2, sm_90; the cluster
 * queries go to the real runtime, which has no GPU to offer on CI). Over
 * random shapes (K from 4000 to 70000, every transpose pair, aligned or
 * not) every slice a call runs in must plan chains of at most 4096 products,
 * with the workspace the call reserves and with none; that workspace must
 * cover each slice's own; and the plan's text must name the slices. Fixed
 * shapes pin the plans of large calls, on which the H100 rates depend: two
 * chains at 8192^3 and 5120^3, one at 4096^3, and none where K is split
 * across blocks. Host only: it runs on CI.
 */
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kernels.h"

/* The device the planners see. */
cudaError_t cudaGetDevice(int *device)
{
    *device = 0;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attribute, int device)
{
    (void)device;
    switch (attribute) {
    case cudaDevAttrMultiProcessorCount:
        *value = 132;
        break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin:
        *value = 232448;
        break;
    case cudaDevAttrL2CacheSize:
        *value = 50 << 20;
        break;
    case cudaDevAttrComputeCapabilityMajor:
        *value = 9;
        break;
    default:
        *value = 0;
    }
    return cudaSuccess;
}

#define MAX_CHAIN 4096
static int failures;

static void fail(const tb_gemm_args *args, const char *what, long long value)
{
    if (failures++ < 20)
        printf("FAIL: %c%c %lldx%lldx%lld lda %lld: %s (%lld)\n", args->trans_a ? 'T' : 'N', args->trans_b ? 'T' : 'N',
               (long long)args->m, (long long)args->n, (long long)args->k, (long long)args->lda, what, value);
}

/* 0 .. below-1 from a fixed sequence, so that a failure reproduces. */
static int64_t next_below(uint64_t *state, int64_t below)
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return (int64_t)((*state >> 33) % (uint64_t)below);
}

/* A column-major call with leading dimensions as stored, padded by `pad`, on placeholders at `base`. */
static tb_gemm_args call_of(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, int64_t pad, float *base)
{
    tb_gemm_args args = {0};
    args.trans_a = trans_a, args.trans_b = trans_b;
    args.m = m, args.n = n, args.k = k;
    args.alpha = 1.0f, args.beta = 0.0f;
    args.a = args.b = args.c = base;
    args.lda = (trans_a ? k : m) + pad, args.ldb = (trans_b ? n : k) + pad, args.ldc = m + pad;
    return args;
}

/* The slices of K the call runs in: each must plan within the bound, on the workspace the call has. */
static void check_slices(const tb_gemm_args *args)
{
    const int64_t depth = tb_best_slice_depth(args), k = args->k;
    if (depth < 1 || depth > k) {
        fail(args, "slice depth out of range", depth);
        return;
    }
    const int64_t slices = (k + depth - 1) / depth, last = k - (slices - 1) * depth;
    const int64_t depths[2] = {depth, last};
    for (int i = 0; i < 2; i++) {
        const int64_t d = depths[i];
        tb_gemm_args slice = *args;
        slice.k = d;
        const int64_t chain = tb_best_planned_chain(&slice), needs = tb_best_workspace_floats(&slice);
        const int has_room = needs == 0 || (args->workspace && args->workspace_floats >= needs);
        /* Without room its plan loses the splits: the slice itself is the chain. */
        const int64_t runs = has_room ? chain : d;
        if (runs > MAX_CHAIN)
            fail(args, has_room ? "a slice's plan sums a longer chain" : "an unsplit slice is deeper than the bound",
                 runs);
        if (args->workspace && !has_room)
            fail(args, "the call's workspace does not cover a slice's", needs);
    }
    char plan[160], named[48];
    tb_best_describe_plan(args, plan, sizeof plan);
    snprintf(named, sizeof named, "K in %lld chains", (long long)slices);
    if (slices > 1 ? !strstr(plan, named) : strstr(plan, "chains") != NULL)
        fail(args, plan, slices);
}

/* The plan of row-major NN m x n x k (column-major n x m) must name `chains` ("" for none). */
static void check_plan(int64_t m, int64_t n, int64_t k, const char *chains, float *base)
{
    tb_gemm_args args = call_of(0, 0, n, m, k, 0, base);
    args.workspace = base;
    args.workspace_floats = tb_best_workspace_floats(&args);
    char plan[160];
    tb_best_describe_plan(&args, plan, sizeof plan);
    if (chains[0] ? !strstr(plan, chains) : strstr(plan, "chains") != NULL)
        fail(&args, plan, k);
    else
        printf("%lldx%lldx%lld: %s\n", (long long)m, (long long)n, (long long)k, plan);
}

int main(void)
{
    static _Alignas(16) float placeholder[8];
    check_plan(8192, 8192, 8192, "K in 2 chains", placeholder);
    check_plan(4097, 4095, 4099, "K in 2 chains", placeholder);
    check_plan(5120, 5120, 5120, "K in 2 chains", placeholder);
    check_plan(4096, 4096, 4096, "", placeholder);
    check_plan(8192, 128, 8192, "", placeholder); /* K split across blocks keeps each chain within 4096 */
    check_plan(128, 8192, 8192, "", placeholder);

    uint64_t state = 1;
    const int shapes = 20000;
    for (int i = 0; i < shapes; i++) {
        const int trans_a = (int)next_below(&state, 2), trans_b = (int)next_below(&state, 2);
        const int64_t m = 1 + next_below(&state, next_below(&state, 2) ? 300 : 6000), n = 1 + next_below(&state, next_below(&state, 2) ? 300 : 6000), k = 4000 + next_below(&state, 66000);
        const int aligned = next_below(&state, 3) != 0;
        tb_gemm_args args = call_of(trans_a, trans_b, m, n, k, aligned ? 0 : 1, aligned ? placeholder : placeholder + 1);
        args.workspace = placeholder;
        args.workspace_floats = tb_best_workspace_floats(&args);
        check_slices(&args);
        args.workspace = NULL, args.workspace_floats = 0;
        check_slices(&args);
    }
    if (failures) {
        printf("%d failures\n", failures);
        return 1;
    }
    printf("%d random shapes: every slice within %lld products, with and without the workspace\n", shapes,
           (long long)MAX_CHAIN);
    return 0;
}
