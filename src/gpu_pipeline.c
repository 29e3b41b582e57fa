/*
 * The pipelined GPU path for operands in host memory.
 *
 * op(A) goes to the device once; C is computed in panels of columns. While the
 * kernel works on panel p, the host copies B's panel p+1 (and C's, when
 * beta != 0) from the caller's pageable memory into pinned staging with a pool
 * of threads, the copy engines move staged panels in and finished panels out,
 * and the host copies panel p-1 of C from pinned staging into the caller's C.
 * Two staging slots on each side keep all of these in flight at once.
 *
 * Each panel of C reaches the caller only once its kernel and copy succeeded:
 * on an error the columns done so far are final and the caller computes the
 * rest elsewhere.
 */
#include <cuda_runtime_api.h>
#include <stdio.h>

#include "internal.h"
#include "kernels.h"

#define SLOTS 2
/* Panels narrower than this starve the kernel; fewer than this many leave nothing to overlap. */
#define MIN_PANEL 128
#define TARGET_PANELS 8

typedef struct {
    cudaStream_t h2d, compute, d2h;
    cudaEvent_t staged[SLOTS];   /* the slot's pinned input has been copied to the device */
    cudaEvent_t computed[SLOTS]; /* the slot's kernel has finished */
    cudaEvent_t drained[SLOTS];  /* the slot's C panel is back in pinned memory */
    cudaEvent_t a_ready;
    float *pinned; /* SLOTS x (input region, output region) */
    size_t pinned_floats;
    int ready;
} pipeline;

static pipeline pipe_state;

static cudaError_t create_resources(pipeline *p)
{
    cudaError_t status;
    if ((status = cudaStreamCreateWithFlags(&p->h2d, cudaStreamNonBlocking)) != cudaSuccess ||
        (status = cudaStreamCreateWithFlags(&p->compute, cudaStreamNonBlocking)) != cudaSuccess ||
        (status = cudaStreamCreateWithFlags(&p->d2h, cudaStreamNonBlocking)) != cudaSuccess ||
        (status = cudaEventCreateWithFlags(&p->a_ready, cudaEventDisableTiming)) != cudaSuccess)
        return status;
    for (int s = 0; s < SLOTS; s++)
        if ((status = cudaEventCreateWithFlags(&p->staged[s], cudaEventDisableTiming)) != cudaSuccess ||
            (status = cudaEventCreateWithFlags(&p->computed[s], cudaEventDisableTiming)) != cudaSuccess ||
            (status = cudaEventCreateWithFlags(&p->drained[s], cudaEventDisableTiming)) != cudaSuccess)
            return status;
    p->ready = 1;
    return cudaSuccess;
}

/* Pinned staging grows on demand up to TILEDBLAS_PINNED_MB and is kept for later calls. */
static cudaError_t ensure_pinned(pipeline *p, size_t floats)
{
    if (floats <= p->pinned_floats)
        return cudaSuccess;
    if (p->pinned) {
        cudaError_t status = cudaFreeHost(p->pinned);
        p->pinned = NULL;
        p->pinned_floats = 0;
        if (status != cudaSuccess)
            return status;
    }
    cudaError_t status = cudaHostAlloc((void **)&p->pinned, floats * sizeof(float), cudaHostAllocDefault);
    if (status != cudaSuccess) {
        p->pinned = NULL;
        return status;
    }
    p->pinned_floats = floats;
    return cudaSuccess;
}

/* Columns per panel: about TARGET_PANELS panels, a multiple of the tile, within the staging cap. */
static int64_t panel_width(const tb_call *call)
{
    const int64_t cap_floats = (int64_t)tb_config_get()->pinned_mb * (1 << 20) / (int64_t)sizeof(float);
    const int64_t per_column = (int64_t)call->k + (call->beta != 0.0f ? 2 : 1) * (int64_t)call->m;
    int64_t width = (call->n + TARGET_PANELS - 1) / TARGET_PANELS;
    width = (width + MIN_PANEL - 1) / MIN_PANEL * MIN_PANEL;
    const int64_t fits = cap_floats / SLOTS / per_column / MIN_PANEL * MIN_PANEL;
    return width < fits ? width : fits;
}

int tb_pipeline_suits(const tb_call *call)
{
    const int64_t width = panel_width(call);
    return 2.0 * call->m * call->n * call->k >= tb_config_get()->pipeline_min_flops &&
           width >= MIN_PANEL && call->n >= 2 * width;
}

/* Where panel j0..j0+cols of op(B) is stored, and as how many rows and columns. */
static const float *b_panel(const tb_call *call, int64_t j0, int64_t cols, int64_t *rows_out,
                            int64_t *cols_out)
{
    *rows_out = call->trans_b ? cols : call->k;
    *cols_out = call->trans_b ? call->k : cols;
    return call->trans_b ? call->b + j0 : call->b + j0 * call->ldb;
}

/*
 * Uploads op(A)'s storage in column chunks through the staging slots: the host
 * copy of chunk i+1 overlaps the DMA of chunk i.
 */
static cudaError_t upload_a(pipeline *p, const tb_call *call, float *a_dev, size_t slot_floats)
{
    const int64_t rows = call->trans_a ? call->k : call->m, cols = call->trans_a ? call->m : call->k;
    int64_t chunk = (int64_t)slot_floats / rows;
    chunk = chunk < 1 ? 1 : chunk;
    cudaError_t status = cudaSuccess;
    for (int64_t j0 = 0, i = 0; j0 < cols && status == cudaSuccess; j0 += chunk, i++) {
        const int s = (int)(i % SLOTS);
        const int64_t width = cols - j0 < chunk ? cols - j0 : chunk;
        float *stage = p->pinned + (size_t)s * slot_floats;
        if ((status = cudaEventSynchronize(p->staged[s])) != cudaSuccess)
            break;
        tb_host_copy(stage, rows, call->a + j0 * call->lda, call->lda, rows, width);
        if ((status = cudaMemcpyAsync(a_dev + j0 * rows, stage, (size_t)(rows * width) * sizeof(float),
                                      cudaMemcpyHostToDevice, p->h2d)) == cudaSuccess)
            status = cudaEventRecord(p->staged[s], p->h2d);
    }
    if (status == cudaSuccess)
        status = cudaEventRecord(p->a_ready, p->h2d);
    return status;
}

cudaError_t tb_pipeline_sgemm(const tb_call *call, int kernel, int64_t *done_cols)
{
    pipeline *p = &pipe_state;
    *done_cols = 0;
    cudaError_t status;
    if (!p->ready && (status = create_resources(p)) != cudaSuccess)
        return status;

    const int64_t m = call->m, n = call->n, k = call->k;
    const int with_c = call->beta != 0.0f;
    const int64_t width = panel_width(call);
    const int64_t panels = (n + width - 1) / width;

    /* Pinned: per slot an input region (B panel, then C panel) and an output region (C panel). */
    const size_t in_floats = (size_t)(k * width + (with_c ? m * width : 0));
    const size_t slot_floats = in_floats + (size_t)(m * width);
    if ((status = ensure_pinned(p, SLOTS * slot_floats)) != cudaSuccess)
        return status;

    /* Device: op(A) whole, then per slot a B panel and a C panel, then the kernel's scratch. */
    tb_gemm_args args = {.trans_a = call->trans_a, .trans_b = call->trans_b,
                         .m = m, .n = width, .k = k, .alpha = call->alpha, .beta = call->beta};
    const int64_t scratch = tb_kernel_workspace_floats(kernel, &args);
    const size_t a_floats = (size_t)(m * k);
    const size_t panel_floats = (size_t)(k * width + m * width);
    float *device;
    if ((status = tb_gpu_workspace(a_floats + SLOTS * panel_floats + (size_t)scratch, &device)) != cudaSuccess)
        return status;
    float *const a_dev = device;
    float *b_dev[SLOTS], *c_dev[SLOTS], *b_pin[SLOTS], *c_in_pin[SLOTS], *c_out_pin[SLOTS];
    for (int s = 0; s < SLOTS; s++) {
        b_dev[s] = a_dev + a_floats + (size_t)s * panel_floats;
        c_dev[s] = b_dev[s] + k * width;
        b_pin[s] = p->pinned + (size_t)s * slot_floats;
        c_in_pin[s] = b_pin[s] + k * width;
        c_out_pin[s] = b_pin[s] + in_floats;
    }
    args.workspace = a_dev + a_floats + SLOTS * panel_floats;
    args.workspace_floats = scratch;
    args.a = a_dev;
    args.lda = call->trans_a ? k : m;

    if ((status = upload_a(p, call, a_dev, slot_floats)) != cudaSuccess)
        return status;

    /* Panel q: stage in (host copy, DMA), compute, drain into pinned; C reaches the caller in finish. */
    int64_t q_finished = 0;
    for (int64_t q = 0; q <= panels && status == cudaSuccess; q++) {
        if (q < panels) {
            const int s = (int)(q % SLOTS);
            const int64_t j0 = q * width, cols = n - j0 < width ? n - j0 : width;
            int64_t b_rows, b_cols;
            const float *b_src = b_panel(call, j0, cols, &b_rows, &b_cols);
            /* The slot's pinned input is free once its previous DMA is done. */
            if ((status = cudaEventSynchronize(p->staged[s])) != cudaSuccess)
                break;
            tb_host_copy(b_pin[s], b_rows, b_src, call->ldb, b_rows, b_cols);
            if (with_c)
                tb_host_copy(c_in_pin[s], m, call->c + j0 * call->ldc, call->ldc, m, cols);
            /* The slot's device panels are free once its previous kernel and drain are done. */
            if ((status = cudaStreamWaitEvent(p->h2d, p->computed[s], 0)) != cudaSuccess ||
                (status = cudaStreamWaitEvent(p->h2d, p->drained[s], 0)) != cudaSuccess ||
                (status = cudaMemcpyAsync(b_dev[s], b_pin[s], (size_t)(b_rows * b_cols) * sizeof(float),
                                          cudaMemcpyHostToDevice, p->h2d)) != cudaSuccess ||
                (with_c && (status = cudaMemcpyAsync(c_dev[s], c_in_pin[s], (size_t)(m * cols) * sizeof(float),
                                                     cudaMemcpyHostToDevice, p->h2d)) != cudaSuccess) ||
                (status = cudaEventRecord(p->staged[s], p->h2d)) != cudaSuccess)
                break;

            args.n = cols;
            args.b = b_dev[s];
            args.ldb = b_rows;
            args.c = c_dev[s];
            args.ldc = m;
            if ((status = cudaStreamWaitEvent(p->compute, p->a_ready, 0)) != cudaSuccess ||
                (status = cudaStreamWaitEvent(p->compute, p->staged[s], 0)) != cudaSuccess ||
                (status = cudaStreamWaitEvent(p->compute, p->drained[s], 0)) != cudaSuccess ||
                (status = tb_kernel_launch(kernel, &args, p->compute)) != cudaSuccess ||
                (status = cudaEventRecord(p->computed[s], p->compute)) != cudaSuccess)
                break;

            /* The pinned output was emptied by finish(q - SLOTS), which ran before this. */
            if ((status = cudaStreamWaitEvent(p->d2h, p->computed[s], 0)) != cudaSuccess ||
                (status = cudaMemcpyAsync(c_out_pin[s], c_dev[s], (size_t)(m * cols) * sizeof(float),
                                          cudaMemcpyDeviceToHost, p->d2h)) != cudaSuccess ||
                (status = cudaEventRecord(p->drained[s], p->d2h)) != cudaSuccess)
                break;
        }
        /* finish(q - 1): the previous panel, while the GPU works on this one. */
        if (q >= 1) {
            const int64_t f = q - 1;
            const int s = (int)(f % SLOTS);
            const int64_t j0 = f * width, cols = n - j0 < width ? n - j0 : width;
            if ((status = cudaEventSynchronize(p->drained[s])) != cudaSuccess)
                break;
            tb_host_copy(call->c + j0 * call->ldc, call->ldc, c_out_pin[s], m, m, cols);
            q_finished = f + 1;
        }
    }
    *done_cols = q_finished * width < n ? q_finished * width : n;
    if (status != cudaSuccess)
        cudaDeviceSynchronize(); /* nothing may still write the staging when the caller moves on */
    return status;
}
