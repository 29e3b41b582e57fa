/*
 * --kernels: every rung of the ladder and cuBLAS, on device memory; where the
 * tensor-core rung runs, also cuBLAS on TF32 tensor cores, its ceiling.
 * --tune: the same with the tile shapes behind the regtile and multistage rungs
 * instead of the ladder, named "reg 256x128x8", "multi 128x128x16", ..., then
 * the multistage shapes again with their stream-K tails, "sk 256x128x32", ...
 * (the same launch as "multi" where the call leaves no part-filled last wave).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "bench.h"

/* Errors of the benchmark's own calls end the run (CUDA_CHECK, CUBLAS_CHECK); a variant's are reported. */
typedef struct kernels_run {
    cudaStream_t stream;
    cudaEvent_t start, stop;
    cublasHandle_t cublas;
    int tune;          /* variants are tile shapes, not the ladder's rungs */
    int regtile_shapes; /* --tune: variants 0..regtile_shapes-1 are regtile's, then multistage's */
    int multistage_shapes; /* --tune: each twice, without and then with a stream-K tail */
    int cublas_id;     /* variants 0..cublas_id-1 are ours; cublas_id is cuBLAS */
    int tf32_id;       /* cuBLAS on TF32 tensor cores, the tensor rung's ceiling; -1 with --tune */
    int variant;
    tb_gemm_args args; /* the column-major problem, device pointers */
    char error[64];    /* why the last call failed */
    int fatal;         /* the failure came from execution: the context is lost */
} kernels_run;

/* Device buffers of one shape; C0 (beta != 0 only) is what C starts from. */
typedef struct kernels_bufs {
    float *a, *b, *c, *c0;
    float *workspace; /* split-K scratch of the regtile rung */
    int64_t workspace_floats;
    double *ref;
    bench_err *err_sums; /* bench_compare's device-side sums */
    size_t nc;
} kernels_bufs;

/* Short enough for the table's 16-character variant column. */
static void variant_name(const kernels_run *r, int variant, char *name, size_t size)
{
    if (variant == r->cublas_id)
        snprintf(name, size, "cublas");
    else if (variant == r->tf32_id)
        snprintf(name, size, "cublas-tf32");
    else if (!r->tune)
        snprintf(name, size, "%s", tb_kernel_name((tb_kernel_id)variant));
    else if (variant < r->regtile_shapes)
        snprintf(name, size, "reg %s", tb_regtile_shape_name(variant));
    else if (variant < r->regtile_shapes + r->multistage_shapes)
        snprintf(name, size, "multi %s", tb_multistage_shape_name(variant - r->regtile_shapes));
    else
        snprintf(name, size, "sk %s",
                 tb_multistage_shape_name(variant - r->regtile_shapes - r->multistage_shapes));
}

static cublasOperation_t cublas_op(int trans)
{
    return trans ? CUBLAS_OP_T : CUBLAS_OP_N;
}

/* Queues one call of the variant; returns 0, or -1 with r->error set. */
static int launch(kernels_run *r)
{
    const tb_gemm_args *g = &r->args;
    if (r->variant == r->cublas_id) {
        /* bench_parse keeps every dimension within int. */
        cublasStatus_t st = cublasSgemm(r->cublas, cublas_op(g->trans_a), cublas_op(g->trans_b),
                                        (int)g->m, (int)g->n, (int)g->k, &g->alpha, g->a,
                                        (int)g->lda, g->b, (int)g->ldb, &g->beta, g->c,
                                        (int)g->ldc);
        if (st != CUBLAS_STATUS_SUCCESS) {
            snprintf(r->error, sizeof r->error, "cublasSgemm: %s", cublasGetStatusString(st));
            return -1;
        }
        return 0;
    }
    if (r->variant == r->tf32_id) {
        cublasStatus_t st = cublasGemmEx(r->cublas, cublas_op(g->trans_a), cublas_op(g->trans_b), (int)g->m,
                                         (int)g->n, (int)g->k, &g->alpha, g->a, CUDA_R_32F, (int)g->lda, g->b,
                                         CUDA_R_32F, (int)g->ldb, &g->beta, g->c, CUDA_R_32F, (int)g->ldc,
                                         CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT);
        if (st != CUBLAS_STATUS_SUCCESS) {
            snprintf(r->error, sizeof r->error, "cublasGemmEx: %s", cublasGetStatusString(st));
            return -1;
        }
        return 0;
    }
    cudaError_t err;
    if (!r->tune)
        err = tb_kernel_launch((tb_kernel_id)r->variant, g, r->stream);
    else if (r->variant < r->regtile_shapes)
        err = tb_launch_regtile_shape(r->variant, g, r->stream);
    else if (r->variant < r->regtile_shapes + r->multistage_shapes)
        err = tb_launch_multistage_shape(r->variant - r->regtile_shapes, g, r->stream);
    else
        err = tb_launch_multistage_shape_tail(r->variant - r->regtile_shapes - r->multistage_shapes, g,
                                              r->stream);
    if (err != cudaSuccess) {
        snprintf(r->error, sizeof r->error, "launch: %s", cudaGetErrorString(err));
        return -1;
    }
    return 0;
}

/* Waits for the queued work; an error here is sticky, so the run ends. */
static int finish(kernels_run *r, cudaEvent_t event)
{
    cudaError_t err = event ? cudaEventSynchronize(event) : cudaStreamSynchronize(r->stream);
    if (err != cudaSuccess) {
        snprintf(r->error, sizeof r->error, "run: %s", cudaGetErrorString(err));
        r->fatal = 1;
        return -1;
    }
    return 0;
}

static double timed_call(void *ctx)
{
    kernels_run *r = ctx;
    float ms;
    CUDA_CHECK(cudaEventRecord(r->start, r->stream));
    if (launch(r) != 0)
        return -1.0;
    CUDA_CHECK(cudaEventRecord(r->stop, r->stream));
    if (finish(r, r->stop) != 0)
        return -1.0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, r->start, r->stop));
    return ms;
}

static void fail(bench_row *row, const char *why)
{
    row->failed = 1;
    snprintf(row->status, sizeof row->status, "FAIL: %s", why);
}

/*
 * FP32 rounding error grows like sqrt(K) * 2^-24 on random data; 16 times
 * that leaves room for any summation order yet flags wrong results and
 * TF32-class precision (about 2^-11 per product).
 */
static double error_tolerance(int64_t k)
{
    return 16.0 * ldexp(1.0, -24) * sqrt((double)k);
}

/* Points r at variant v of the case. */
static void select_variant(kernels_run *r, const bench_case *bc, const kernels_bufs *d, int variant)
{
    r->variant = variant;
    r->args = bench_colmajor(bc, d->a, d->b, d->c);
    r->args.workspace = d->workspace;
    r->args.workspace_floats = d->workspace_floats;
}

/* One variant on one case, checked: a call on poisoned C, compared with the FP64 reference, then
 * one timed call whose time sets how many calls time_variants makes; 0 when it ran. */
static int check_variant(kernels_run *r, const bench_case *bc, const kernels_bufs *d, int variant,
                         bench_row *row)
{
    char why[64];
    bench_err e;

    select_variant(r, bc, d, variant);
    if (bc->beta == 0.0f) /* all-ones bytes are NaN: C must be written, never read */
        CUDA_CHECK(cudaMemsetAsync(d->c, 0xff, d->nc * sizeof *d->c, r->stream));
    else
        CUDA_CHECK(cudaMemcpyAsync(d->c, d->c0, d->nc * sizeof *d->c,
                                   cudaMemcpyDeviceToDevice, r->stream));
    if (launch(r) != 0 || finish(r, NULL) != 0) {
        fail(row, r->error);
        return -1;
    }
    CUDA_CHECK(bench_compare(d->c, d->ref, d->nc, d->err_sums, &e, r->stream));
    row->error = sqrt(e.diff2 / e.ref2);
    if (e.nonfinite) {
        snprintf(why, sizeof why, "%llu of %zu outputs NaN/Inf", e.nonfinite, d->nc);
        fail(row, why);
    } else if (variant != r->tf32_id && !(row->error <= error_tolerance(bc->k))) {
        snprintf(why, sizeof why, "error above %.1e", error_tolerance(bc->k));
        fail(row, why);
    }
    row->ms = timed_call(r);
    if (row->ms < 0.0) {
        fail(row, r->error);
        return -1;
    }
    return 0;
}

/*
 * Times the case's variants that ran (rows[v]->ms holds a first time; < 0:
 * did not run) in rounds, each round starting one variant further on, so
 * that GPU clocks and temperature, which drift under a long run of calls,
 * fall on all of them alike. Each variant gets as many calls as its own first
 * time allows, so a slow rung does not cut the fast ones' samples.
 */
static void time_variants(kernels_run *r, const bench_opts *o, const bench_case *bc, const kernels_bufs *d,
                          bench_row **rows, const int *variants, int count)
{
    double *t = bench_xmalloc(sizeof(double) * (size_t)count * (size_t)o->reps);
    int *reps = bench_xmalloc(sizeof(int) * (size_t)count), rounds = 0;
    for (int v = 0; v < count; v++) {
        reps[v] = rows[v]->ms < 0.0 ? 0 : bench_reps_within_budget(rows[v]->ms, o->reps);
        rows[v]->reps = 0;
        rounds = reps[v] > rounds ? reps[v] : rounds;
    }
    for (int round = 0; round < rounds && !r->fatal; round++)
        for (int i = 0; i < count && !r->fatal; i++) {
            const int v = (round + i) % count;
            if (rows[v]->reps == reps[v] || rows[v]->reps < 0)
                continue;
            select_variant(r, bc, d, variants[v]);
            const double ms = timed_call(r);
            if (ms < 0.0) {
                fail(rows[v], r->error);
                rows[v]->reps = -1;
                continue;
            }
            t[(size_t)v * (size_t)o->reps + (size_t)rows[v]->reps++] = ms;
        }
    for (int v = 0; v < count; v++) {
        bench_row *row = rows[v];
        if (row->reps > 0) {
            row->ms = bench_median(&t[(size_t)v * (size_t)o->reps], row->reps);
            row->gflops = bench_gflops(bc, row->ms);
        } else {
            row->ms = 0.0;
            row->reps = 0;
            if (!row->failed) /* checked, then the context was lost before its timing */
                fail(row, "not timed: CUDA context lost");
        }
        if (!row->failed)
            snprintf(row->status, sizeof row->status, "ok");
        char plan[128] = "";
        if (!r->tune && variants[v] < r->cublas_id) {
            select_variant(r, bc, d, variants[v]);
            tb_kernel_describe_plan((tb_kernel_id)variants[v], &r->args, plan, sizeof plan);
        }
        fprintf(stderr, "[kernels] %s %s %s: %.3f ms (median of %d), %.1f GFLOP/s, rel.err %.1e, %s%s%s\n",
                bc->shape, bc->op, row->variant, row->ms, row->reps, row->gflops, row->error,
                row->status, plan[0] ? ", plan: " : "", plan);
    }
    free(reps);
    free(t);
}

static float *upload_random(float *host, size_t n, uint64_t seed)
{
    float *dev;
    bench_fill(host, n, seed);
    CUDA_CHECK(cudaMalloc((void **)&dev, n * sizeof *dev));
    CUDA_CHECK(cudaMemcpy(dev, host, n * sizeof *dev, cudaMemcpyHostToDevice));
    return dev;
}

/* Every transpose combination and variant on one shape; 1 once the context is lost. */
static int run_shape(kernels_run *r, const bench_opts *o, bench_shape s, bench_table *t)
{
    const size_t na = (size_t)(s.m * s.k), nb = (size_t)(s.k * s.n), nc = (size_t)(s.m * s.n);
    size_t most = na > nb ? na : nb;
    most = most > nc ? most : nc;
    float *host = bench_xmalloc(most * sizeof *host);
    kernels_bufs d = {0};

    d.nc = nc;
    d.a = upload_random(host, na, 1);
    d.b = upload_random(host, nb, 2);
    if (o->beta != 0.0f)
        d.c0 = upload_random(host, nc, 3);
    free(host);
    CUDA_CHECK(cudaMalloc((void **)&d.c, nc * sizeof *d.c));
    CUDA_CHECK(cudaMalloc((void **)&d.ref, nc * sizeof *d.ref));
    CUDA_CHECK(cudaMalloc((void **)&d.err_sums, sizeof *d.err_sums));
    for (int i = 0; i < o->ntrans; i++) {
        const bench_case bc = bench_case_make(o, s, o->trans[i]);
        const tb_gemm_args g = bench_colmajor(&bc, d.a, d.b, d.c);
        for (int id = 0; id < TB_KERNEL_COUNT; id++) {
            const int64_t need = tb_kernel_workspace_floats((tb_kernel_id)id, &g);
            d.workspace_floats = need > d.workspace_floats ? need : d.workspace_floats;
        }
        for (int shape = 0; r->tune && shape < r->multistage_shapes; shape++) {
            const int64_t need = tb_multistage_shape_tail_workspace_floats(shape, &g);
            d.workspace_floats = need > d.workspace_floats ? need : d.workspace_floats;
        }
    }
    if (d.workspace_floats)
        CUDA_CHECK(cudaMalloc((void **)&d.workspace, (size_t)d.workspace_floats * sizeof(float)));

    for (int i = 0; i < o->ntrans && !r->fatal; i++) {
        const bench_case bc = bench_case_make(o, s, o->trans[i]);
        const tb_gemm_args ref_args = bench_colmajor(&bc, d.a, d.b, d.c0);
        const size_t first = t->len;

        CUDA_CHECK(bench_reference_gemm(&ref_args, d.ref, r->stream));
        CUDA_CHECK(cudaStreamSynchronize(r->stream));
        /* The variants this GPU and build offer (the tensor-core rung needs sm_90a), then cuBLAS, then
         * (with the rung) cuBLAS on TF32 tensor cores. */
        const int tensor = !r->tune && tb_tf32x3_supported(), last = tensor ? r->tf32_id : r->cublas_id;
        int *variants = bench_xmalloc(sizeof *variants * (size_t)(last + 1)), count = 0, cublas_at = 0;
        for (int v = 0; v <= last; v++)
            if (r->tune || v != TB_KERNEL_TF32X3 || tensor) {
                cublas_at = v == r->cublas_id ? count : cublas_at;
                variants[count++] = v;
            }
        /* Adding a row may move the table: the case's rows are added first, then pointed to. */
        bench_row **rows = bench_xmalloc(sizeof *rows * (size_t)count);
        for (int v = 0; v < count; v++) {
            char name[sizeof t->rows->variant];
            variant_name(r, variants[v], name, sizeof name);
            bench_table_add(t, &bc, name);
        }
        for (int v = 0; v < count; v++) {
            rows[v] = &t->rows[first + (size_t)v];
            if (r->fatal)
                fail(rows[v], "not run: CUDA context lost");
            if (r->fatal || check_variant(r, &bc, &d, variants[v], rows[v]) != 0)
                rows[v]->ms = -1.0;
        }
        time_variants(r, o, &bc, &d, rows, variants, count);
        free(rows);
        free(variants);
        /* The ratios of this case are to cuBLAS's row. */
        const bench_row *cublas = &t->rows[first + (size_t)cublas_at];
        if (cublas->gflops > 0.0)
            for (size_t j = first; j < t->len; j++)
                t->rows[j].ratio = t->rows[j].gflops / cublas->gflops;
    }
    if (r->fatal)
        return 1; /* nothing can be freed in a lost context; the run ends */

    CUDA_CHECK(cudaFree(d.a));
    CUDA_CHECK(cudaFree(d.b));
    CUDA_CHECK(cudaFree(d.c0));
    CUDA_CHECK(cudaFree(d.c));
    CUDA_CHECK(cudaFree(d.ref));
    CUDA_CHECK(cudaFree(d.err_sums));
    CUDA_CHECK(cudaFree(d.workspace));
    return 0;
}

int bench_kernels(const bench_opts *o, bench_table *t)
{
    kernels_run r = {.tune = o->tune};
    int version, status = 0;

    r.regtile_shapes = tb_regtile_shape_count();
    r.multistage_shapes = tb_multistage_shape_count();
    r.cublas_id = r.tune ? r.regtile_shapes + 2 * r.multistage_shapes : TB_KERNEL_COUNT;
    r.tf32_id = r.tune ? -1 : r.cublas_id + 1;
    CUDA_CHECK(cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreate(&r.start));
    CUDA_CHECK(cudaEventCreate(&r.stop));
    CUBLAS_CHECK(cublasCreate(&r.cublas));
    CUBLAS_CHECK(cublasSetStream(r.cublas, r.stream));
    /* What a cuBLAS user gets: FP32 SGEMM without TF32 (that needs CUBLAS_TF32_TENSOR_OP_MATH);
     * the error column shows it. */
    CUBLAS_CHECK(cublasSetMathMode(r.cublas, CUBLAS_DEFAULT_MATH));
    CUBLAS_CHECK(cublasGetVersion(r.cublas, &version));

    printf("baseline: cuBLAS %d.%d.%d cublasSgemm, CUBLAS_DEFAULT_MATH (FP32, no TF32)\n",
           version / 10000, version / 100 % 100, version % 100);
    if (!r.tune && tb_tf32x3_supported())
        printf("ceiling of the tensor rung: cublas-tf32, cublasGemmEx with CUBLAS_COMPUTE_32F_FAST_TF32 "
               "(TF32 tensor cores, not FP32-accurate: its error is not checked)\n");
    printf("timing: CUDA events, median of up to %d calls after a checked call, the variants of a case "
           "called in turn\n", o->reps);
    printf("rel.err: ||C - C_ref||_F / ||C_ref||_F, C_ref from an FP64 GPU kernel\n");
    fflush(stdout);

    for (int s = 0; s < o->nshapes && !status; s++)
        status = run_shape(&r, o, o->shapes[s], t);
    if (status) {
        fprintf(stderr, "tiledblas-bench: stopped: a kernel failed while running, the "
                        "CUDA context is lost\n");
        return 1;
    }

    CUBLAS_CHECK(cublasDestroy(r.cublas));
    CUDA_CHECK(cudaEventDestroy(r.start));
    CUDA_CHECK(cudaEventDestroy(r.stop));
    CUDA_CHECK(cudaStreamDestroy(r.stream));
    return status;
}
