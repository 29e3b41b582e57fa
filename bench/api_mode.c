/*
 * --api: cblas_sgemm of libtiledblas on device pointers against cublasSgemm, as
 * an application sees each: the wall clock from the call to C final (cuBLAS's
 * call and a synchronisation of its stream), the two called in turn, medians.
 * What the library adds to its kernel on such a call (pointer queries,
 * synchronisation, the choice of kernel) is in its time; cuBLAS's own host cost
 * is in cuBLAS's. Error, for both: the largest |c - ref| / (|ref| + 1e-3) over
 * C, ref in FP64 on the GPU, the measure the ratio of the two is judged by.
 */
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

/* The device buffers of one shape, its FP64 reference and the comparison's device-side sums. */
typedef struct {
    float *a, *b, *c, *c0;
    double *ref;
    bench_err *err_sums;
    size_t nc;
} api_bufs;

/* One call of either: ctx is the api_call. */
typedef struct {
    const bench_case *bc;
    const api_bufs *d;
    cublasHandle_t cublas;
    cudaStream_t stream;
    int use_cublas;
} api_call;

static float *device_random(size_t n, uint64_t seed)
{
    float *host = bench_random_buffer(n, seed), *device;
    CUDA_CHECK(cudaMalloc((void **)&device, n * sizeof *device));
    CUDA_CHECK(cudaMemcpy(device, host, n * sizeof *device, cudaMemcpyHostToDevice));
    free(host);
    return device;
}

static void run_call(const api_call *r)
{
    const bench_case *bc = r->bc;
    if (!r->use_cublas) {
        const bench_host_call call = {cblas_sgemm, bc, r->d->a, r->d->b, r->d->c};
        bench_host_run(&call); /* returns with C final, as any BLAS call does */
        return;
    }
    const tb_gemm_args g = bench_colmajor(bc, r->d->a, r->d->b, r->d->c);
    const float one = 1.0f;
    /* bench_parse keeps every dimension within int. */
    CUBLAS_CHECK(cublasSgemm(r->cublas, g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                             (int)g.m, (int)g.n, (int)g.k, &one, g.a, (int)g.lda, g.b, (int)g.ldb, &g.beta, g.c,
                             (int)g.ldc));
    CUDA_CHECK(cudaStreamSynchronize(r->stream));
}

static double timed_call(void *ctx)
{
    const double start = bench_now_ms();
    run_call(ctx);
    return bench_now_ms() - start;
}

/* The checked call: C from C0 (beta != 0) or poisoned with NaN (beta == 0: written unread). */
static void check(bench_row *row, const api_call *r)
{
    const api_bufs *d = r->d;
    if (r->bc->beta == 0.0f)
        CUDA_CHECK(cudaMemset(d->c, 0xff, d->nc * sizeof *d->c));
    else
        CUDA_CHECK(cudaMemcpy(d->c, d->c0, d->nc * sizeof *d->c, cudaMemcpyDeviceToDevice));
    run_call(r);
    CUDA_CHECK(cudaDeviceSynchronize());
    bench_err e;
    CUDA_CHECK(bench_compare(d->c, d->ref, d->nc, d->err_sums, &e, r->stream));
    row->error = e.max_relative;
    if (e.nonfinite)
        bench_row_fail(row, "NaN/Inf in C");
}

/* One case: both checked, then timed in turn, the ratio on tiledblas's row. */
static void run_case(const bench_opts *o, const bench_case *bc, const api_bufs *d, cublasHandle_t cublas,
                     cudaStream_t stream, bench_table *t)
{
    const size_t first = t->len;
    bench_table_add(t, bc, "tiledblas");
    bench_table_add(t, bc, "cublas");
    api_call calls[2];
    double *times[2];
    for (int v = 0; v < 2; v++) {
        calls[v] = (api_call){bc, d, cublas, stream, v};
        check(&t->rows[first + (size_t)v], &calls[v]);
        times[v] = bench_xmalloc(sizeof(double) * (size_t)o->reps);
    }
    /* The first call's time sets how many both get; each round swaps which of the two goes first. */
    const double first_ms = timed_call(&calls[0]);
    const int reps = bench_reps_within_budget(first_ms, o->reps);
    for (int i = 0; i < reps; i++)
        for (int v = 0; v < 2; v++)
            times[i % 2 ? 1 - v : v][i] = timed_call(&calls[i % 2 ? 1 - v : v]);
    for (int v = 0; v < 2; v++) {
        bench_row *row = &t->rows[first + (size_t)v];
        row->reps = reps;
        row->ms = bench_median(times[v], reps);
        row->gflops = bench_gflops(bc, row->ms);
        if (!row->failed)
            snprintf(row->status, sizeof row->status, "ok");
        free(times[v]);
    }
    bench_row *ours = &t->rows[first], *theirs = &t->rows[first + 1];
    if (theirs->gflops > 0.0)
        ours->ratio = ours->gflops / theirs->gflops;
    fprintf(stderr, "[api] %s %s: tiledblas %.3f ms, cuBLAS %.3f ms (x %.3f), error %.2e against %.2e\n", bc->shape,
            bc->op, ours->ms, theirs->ms, ours->ratio, ours->error, theirs->error);
}

int bench_api(const bench_opts *o, bench_table *t)
{
    cublasHandle_t cublas;
    cudaStream_t stream;
    int version;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CUBLAS_CHECK(cublasCreate(&cublas));
    CUBLAS_CHECK(cublasSetStream(cublas, stream));
    CUBLAS_CHECK(cublasSetMathMode(cublas, CUBLAS_DEFAULT_MATH));
    CUBLAS_CHECK(cublasGetVersion(cublas, &version));
    printf("baseline: cuBLAS %d.%d.%d cublasSgemm (FP32, no TF32) on its own stream, synchronised\n",
           version / 10000, version / 100 % 100, version % 100);
    printf("timing: wall clock from the call to C final, tiledblas and cuBLAS in turn, median of up to %d\n",
           o->reps);
    printf("error: largest |c - ref| / (|ref| + 1e-3), ref in FP64 on the GPU\n");
    fflush(stdout);

    for (int s = 0; s < o->nshapes; s++)
        for (int i = 0; i < o->ntrans; i++) {
            const bench_case bc = bench_case_make(o, o->shapes[s], o->trans[i]);
            api_bufs d = {.nc = (size_t)bc.m * (size_t)bc.n}; /* every operand packed */
            d.a = device_random((size_t)bc.m * (size_t)bc.k, 1);
            d.b = device_random((size_t)bc.k * (size_t)bc.n, 2);
            d.c0 = device_random(d.nc, 3);
            CUDA_CHECK(cudaMalloc((void **)&d.c, d.nc * sizeof *d.c));
            CUDA_CHECK(cudaMalloc((void **)&d.ref, d.nc * sizeof *d.ref));
            CUDA_CHECK(cudaMalloc((void **)&d.err_sums, sizeof *d.err_sums));
            const tb_gemm_args ref_args = bench_colmajor(&bc, d.a, d.b, d.c0);
            CUDA_CHECK(bench_reference_gemm(&ref_args, d.ref, stream));
            CUDA_CHECK(cudaStreamSynchronize(stream));
            run_case(o, &bc, &d, cublas, stream, t);
            CUDA_CHECK(cudaFree(d.a));
            CUDA_CHECK(cudaFree(d.b));
            CUDA_CHECK(cudaFree(d.c0));
            CUDA_CHECK(cudaFree(d.c));
            CUDA_CHECK(cudaFree(d.ref));
            CUDA_CHECK(cudaFree(d.err_sums));
        }
    cublasDestroy(cublas);
    CUDA_CHECK(cudaStreamDestroy(stream));
    return 0;
}
