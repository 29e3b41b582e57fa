/*
 * --timeline: where the time of one host-to-host call goes. Each stage the
 * pipelined path overlaps is timed alone on the same bytes: the host copies
 * between the caller's pageable memory and pinned staging (at 1 thread, the
 * library's default pool and every CPU), the DMA each way, and the kernel
 * (cblas_sgemm on device pointers); then the whole call (cblas_sgemm on host
 * memory). "serial" is the sum of the stages at the library's thread count,
 * "bound" the largest of the host copies together, either DMA and the kernel:
 * the call can beat neither. "overlap" is serial / call.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "tiledblas.h"
#include "bench.h"
#include "core/cpu_count.h" /* tb_usable_cpus, from src/core/cpu_count.c built in */

/* A timed stage that cannot run ends the mode: the rows so far are reported. */
#define CUDA_OK(call) ((call) == cudaSuccess)

typedef struct {
    char *dst;
    const char *src;
    size_t bytes;
    int threads;
} copy_stage;

typedef struct {
    const copy_stage *stage;
    int part;
} copy_part;

static void *copy_slice(void *arg)
{
    const copy_part *p = arg;
    const copy_stage *s = p->stage;
    const size_t begin = s->bytes * (size_t)p->part / (size_t)s->threads;
    const size_t end = s->bytes * (size_t)(p->part + 1) / (size_t)s->threads;
    memcpy(s->dst + begin, s->src + begin, end - begin);
    return NULL;
}

/* One copy split into contiguous slices over `threads` threads, as the library's pool does. */
static double timed_copy(void *ctx)
{
    const copy_stage *s = ctx;
    pthread_t tid[64];
    copy_part parts[64];
    const double t0 = bench_now_ms();
    for (int i = 1; i < s->threads; i++) {
        parts[i] = (copy_part){s, i};
        if (pthread_create(&tid[i], NULL, copy_slice, &parts[i]) != 0)
            return -1.0;
    }
    parts[0] = (copy_part){s, 0};
    copy_slice(&parts[0]);
    for (int i = 1; i < s->threads; i++)
        pthread_join(tid[i], NULL);
    return bench_now_ms() - t0;
}

typedef struct {
    void *dst;
    const void *src;
    size_t bytes;
    enum cudaMemcpyKind kind;
    cudaStream_t stream;
    cudaEvent_t start, stop;
} dma_stage;

static double timed_dma(void *ctx)
{
    dma_stage *d = ctx;
    float ms = 0.0f;
    if (!CUDA_OK(cudaEventRecord(d->start, d->stream)) ||
        !CUDA_OK(cudaMemcpyAsync(d->dst, d->src, d->bytes, d->kind, d->stream)) ||
        !CUDA_OK(cudaEventRecord(d->stop, d->stream)) || !CUDA_OK(cudaEventSynchronize(d->stop)) ||
        !CUDA_OK(cudaEventElapsedTime(&ms, d->start, d->stop)))
        return -1.0;
    return ms;
}

typedef struct {
    const tb_gemm_args *g;
} gemm_stage;

/* cblas_sgemm on the column-major problem; device pointers make it the kernel alone. */
static double timed_gemm(void *ctx)
{
    const tb_gemm_args *g = ((gemm_stage *)ctx)->g;
    const double t0 = bench_now_ms();
    cblas_sgemm(CblasColMajor, g->trans_a ? CblasTrans : CblasNoTrans, g->trans_b ? CblasTrans : CblasNoTrans,
                (int)g->m, (int)g->n, (int)g->k, g->alpha, g->a, (int)g->lda, g->b, (int)g->ldb, g->beta,
                g->c, (int)g->ldc);
    if (!CUDA_OK(cudaDeviceSynchronize()))
        return -1.0;
    return bench_now_ms() - t0;
}

/* The library's copy threads (tb_host_copy_threads): TILEDBLAS_COPY_THREADS, else its usable CPUs; at most 16. */
static int library_copy_threads(void)
{
    const char *env = getenv("TILEDBLAS_COPY_THREADS");
    const int threads = env && atoi(env) > 0 ? atoi(env) : tb_usable_cpus();
    return threads > 16 ? 16 : threads;
}

static double add_row(bench_table *t, const bench_case *bc, const char *variant, double ms,
                      int reps, double call_ms)
{
    bench_row *r = bench_table_add(t, bc, variant);
    r->ms = ms;
    r->reps = reps;
    r->gflops = bench_gflops(bc, ms);
    r->ratio = call_ms > 0.0 ? ms / call_ms : 0.0;
    snprintf(r->status, sizeof r->status, "ok");
    return ms;
}

static int timeline_case(const bench_opts *o, const bench_case *bc, bench_table *t)
{
    const size_t m = (size_t)bc->m, n = (size_t)bc->n, k = (size_t)bc->k;
    const size_t in_bytes = 4 * (m * k + k * n + (bc->beta != 0.0f ? m * n : 0)), out_bytes = 4 * m * n;
    const size_t a_floats = m * k, b_floats = k * n;
    char *host = bench_xmalloc(in_bytes + out_bytes);
    bench_fill((float *)host, (in_bytes + out_bytes) / 4, 1);
    void *pinned = NULL, *device = NULL;
    cudaStream_t stream = NULL;
    dma_stage dma = {0};
    int rc = 1;
    if (!CUDA_OK(cudaHostAlloc(&pinned, in_bytes + out_bytes, cudaHostAllocDefault)) ||
        !CUDA_OK(cudaMalloc(&device, in_bytes + out_bytes)) ||
        !CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)) ||
        !CUDA_OK(cudaEventCreate(&dma.start)) || !CUDA_OK(cudaEventCreate(&dma.stop))) {
        fprintf(stderr, "tiledblas-bench: --timeline: CUDA set-up failed at %s\n", bc->shape);
        goto done;
    }
    memset(pinned, 0, in_bytes + out_bytes);
    double ms, copy_ms = 0.0, h2d_ms, d2h_ms, kernel_ms, call_ms;
    int reps;

    /* The whole call first: every other row is a share of it. Operands are dense. */
    float *a = (float *)host, *b = a + a_floats, *c = b + b_floats;
    tb_gemm_args g = bench_colmajor(bc, a, b, c);
    gemm_stage gemm = {&g};
    if (timed_gemm(&gemm) < 0 || (reps = bench_time(timed_gemm, &gemm, o->reps, &call_ms)) < 0)
        goto done;
    add_row(t, bc, "call (host)", call_ms, reps, call_ms);

    /* Host copies: inward bytes pageable -> pinned, C pinned -> pageable. */
    const int pool_threads = library_copy_threads();
    const int threads_list[] = {1, pool_threads, (int)sysconf(_SC_NPROCESSORS_ONLN)};
    for (int i = 0; i < 3; i++) {
        const int threads = threads_list[i] > 64 ? 64 : threads_list[i];
        if (i > 0 && threads == threads_list[i - 1])
            continue;
        copy_stage in = {pinned, host, in_bytes, threads}, out = {host + in_bytes, (char *)pinned + in_bytes,
                                                                   out_bytes, threads};
        char name[32];
        timed_copy(&in);
        snprintf(name, sizeof name, "host copy in %dt", threads);
        if ((reps = bench_time(timed_copy, &in, o->reps, &ms)) < 0)
            goto done;
        const double in_ms = add_row(t, bc, name, ms, reps, call_ms);
        timed_copy(&out);
        snprintf(name, sizeof name, "host copy out %dt", threads);
        if ((reps = bench_time(timed_copy, &out, o->reps, &ms)) < 0)
            goto done;
        add_row(t, bc, name, ms, reps, call_ms);
        if (threads == pool_threads)
            copy_ms = in_ms + ms;
    }

    dma = (dma_stage){device, pinned, in_bytes, cudaMemcpyHostToDevice, stream, dma.start, dma.stop};
    if (timed_dma(&dma) < 0 || (reps = bench_time(timed_dma, &dma, o->reps, &h2d_ms)) < 0)
        goto done;
    add_row(t, bc, "DMA in", h2d_ms, reps, call_ms);
    dma = (dma_stage){(char *)pinned + in_bytes, (char *)device + in_bytes, out_bytes, cudaMemcpyDeviceToHost,
                      stream, dma.start, dma.stop};
    if (timed_dma(&dma) < 0 || (reps = bench_time(timed_dma, &dma, o->reps, &d2h_ms)) < 0)
        goto done;
    add_row(t, bc, "DMA out", d2h_ms, reps, call_ms);

    g = bench_colmajor(bc, device, (float *)device + a_floats, (float *)device + a_floats + b_floats);
    if (timed_gemm(&gemm) < 0 || (reps = bench_time(timed_gemm, &gemm, o->reps, &kernel_ms)) < 0)
        goto done;
    add_row(t, bc, "kernel (device)", kernel_ms, reps, call_ms);

    const double serial = copy_ms + h2d_ms + kernel_ms + d2h_ms;
    double bound = copy_ms;
    bound = h2d_ms > bound ? h2d_ms : bound;
    bound = d2h_ms > bound ? d2h_ms : bound;
    bound = kernel_ms > bound ? kernel_ms : bound;
    add_row(t, bc, "serial sum", serial, 1, call_ms);
    add_row(t, bc, "bound", bound, 1, call_ms);
    printf("[timeline] %s %s: call %.3f ms; stages %.3f ms in series (host copies %.3f at %d threads, "
           "DMA %.3f + %.3f, kernel %.3f); overlap %.2fx; bound %.3f ms (call at %.0f%% of it)\n",
           bc->shape, bc->op, call_ms, serial, copy_ms, pool_threads, h2d_ms, d2h_ms, kernel_ms,
           serial / call_ms, bound, 100.0 * bound / call_ms);
    rc = 0;
done:
    if (rc)
        fprintf(stderr, "tiledblas-bench: --timeline %s: a stage failed\n", bc->shape);
    if (dma.start)
        cudaEventDestroy(dma.start);
    if (dma.stop)
        cudaEventDestroy(dma.stop);
    if (stream)
        cudaStreamDestroy(stream);
    cudaFree(device);
    cudaFreeHost(pinned);
    free(host);
    return rc;
}

int bench_timeline(const bench_opts *o, bench_table *t)
{
    int status = 0;
    for (int s = 0; s < o->nshapes; s++)
        for (int x = 0; x < o->ntrans; x++) {
            const bench_case bc = bench_case_make(o, o->shapes[s], o->trans[x]);
            if (timeline_case(o, &bc, t))
                status = 1;
        }
    return status;
}
