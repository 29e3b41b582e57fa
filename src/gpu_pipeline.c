/*
 * The pipelined GPU path for operands in host memory.
 *
 * op(A) goes to the device once, in pieces whose kernels for the first panel
 * start as each piece lands; C is computed in panels of columns. While
 * the kernel works on panel p, the host copies B's panel p+1 (and C's, when
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
    cudaEvent_t a_staged[SLOTS]; /* the slot's piece of A has been copied to the device */
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
        (status = cudaStreamCreateWithFlags(&p->d2h, cudaStreamNonBlocking)) != cudaSuccess)
        return status;
    for (int s = 0; s < SLOTS; s++)
        if ((status = cudaEventCreateWithFlags(&p->staged[s], cudaEventDisableTiming)) != cudaSuccess ||
            (status = cudaEventCreateWithFlags(&p->computed[s], cudaEventDisableTiming)) != cudaSuccess ||
            (status = cudaEventCreateWithFlags(&p->drained[s], cudaEventDisableTiming)) != cudaSuccess ||
            (status = cudaEventCreateWithFlags(&p->a_staged[s], cudaEventDisableTiming)) != cudaSuccess)
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
    /* The pieces of A that the first panel's kernels start on (they share a C panel's
     * staging) must be big enough for a kernel: MIN_PANEL rows, or MIN_PANEL steps of K. */
    const int64_t per_piece = call->trans_a ? (int64_t)call->k : (int64_t)call->m;
    return 2.0 * call->m * call->n * call->k >= tb_config_get()->pipeline_min_flops &&
           width >= MIN_PANEL && call->n >= 2 * width && width * call->m >= MIN_PANEL * per_piece;
}

/* Everything one call's panels share. */
typedef struct {
    pipeline *p;
    const tb_call *call;
    int kernel;
    int with_c;
    int64_t width;
    tb_gemm_args args; /* device operands; m, n, a, b, c set per launch */
    float *a_dev, *b_dev[SLOTS], *c_dev[SLOTS];
    float *b_pin[SLOTS], *c_in_pin[SLOTS], *c_out_pin[SLOTS];
} run_state;

static int64_t panel_cols(const run_state *r, int64_t q)
{
    const int64_t j0 = q * r->width;
    return r->call->n - j0 < r->width ? r->call->n - j0 : r->width;
}

/* Host copy of panel q's B (and C) into its slot's pinned input, then the DMA to the device. */
static cudaError_t stage_panel(run_state *r, int64_t q)
{
    const tb_call *call = r->call;
    pipeline *p = r->p;
    const int s = (int)(q % SLOTS);
    const int64_t j0 = q * r->width, cols = panel_cols(r, q), m = call->m;
    /* op(B)'s panel is stored k x cols, or cols x k when B is transposed. */
    const int64_t b_rows = call->trans_b ? cols : call->k, b_cols = call->trans_b ? call->k : cols;
    const float *b_src = call->trans_b ? call->b + j0 : call->b + j0 * call->ldb;
    cudaError_t status;
    /* The slot's pinned input is free once its previous DMA is done. */
    if ((status = cudaEventSynchronize(p->staged[s])) != cudaSuccess)
        return status;
    tb_host_copy(r->b_pin[s], b_rows, b_src, call->ldb, b_rows, b_cols);
    if (r->with_c)
        tb_host_copy(r->c_in_pin[s], m, call->c + j0 * call->ldc, call->ldc, m, cols);
    /* The slot's device panels are free once its previous kernel and drain are done. */
    if ((status = cudaStreamWaitEvent(p->h2d, p->computed[s], 0)) != cudaSuccess ||
        (status = cudaStreamWaitEvent(p->h2d, p->drained[s], 0)) != cudaSuccess ||
        (status = cudaMemcpyAsync(r->b_dev[s], r->b_pin[s], (size_t)(b_rows * b_cols) * sizeof(float),
                                  cudaMemcpyHostToDevice, p->h2d)) != cudaSuccess)
        return status;
    if (r->with_c && (status = cudaMemcpyAsync(r->c_dev[s], r->c_in_pin[s], (size_t)(m * cols) * sizeof(float),
                                               cudaMemcpyHostToDevice, p->h2d)) != cudaSuccess)
        return status;
    return cudaEventRecord(p->staged[s], p->h2d);
}

/*
 * The kernel for rows r0.. (rows of them) of panel q over k0.. (depth of them),
 * once its inputs are on the device; beta is the call's for the first piece of
 * a sum over K and 1 for the pieces that add to it.
 */
static cudaError_t compute_piece(run_state *r, int64_t q, int64_t r0, int64_t rows, int64_t k0,
                                 int64_t depth, float beta)
{
    pipeline *p = r->p;
    const int s = (int)(q % SLOTS);
    const tb_call *call = r->call;
    tb_gemm_args *args = &r->args;
    const int64_t m = call->m, k = call->k, cols = panel_cols(r, q);
    args->m = rows;
    args->n = cols;
    args->k = depth;
    args->beta = beta;
    /* op(A) is stored k x m (transposed) or m x k on the device; its B panel k x cols or cols x k. */
    args->a = r->a_dev + (call->trans_a ? k0 + r0 * k : r0 + k0 * m);
    args->b = r->b_dev[s] + (call->trans_b ? k0 * cols : k0);
    args->ldb = call->trans_b ? cols : k;
    args->c = r->c_dev[s] + r0;
    cudaError_t status;
    if ((status = cudaStreamWaitEvent(p->compute, p->staged[s], 0)) != cudaSuccess ||
        (status = cudaStreamWaitEvent(p->compute, p->drained[s], 0)) != cudaSuccess)
        return status;
    return tb_kernel_launch(r->kernel, args, p->compute);
}

/* Panel q's C from the device into its slot's pinned output. */
static cudaError_t drain_panel(run_state *r, int64_t q)
{
    pipeline *p = r->p;
    const int s = (int)(q % SLOTS);
    cudaError_t status;
    /* The pinned output was emptied by finish_panel(q - SLOTS), which ran before this. */
    if ((status = cudaEventRecord(p->computed[s], p->compute)) != cudaSuccess ||
        (status = cudaStreamWaitEvent(p->d2h, p->computed[s], 0)) != cudaSuccess ||
        (status = cudaMemcpyAsync(r->c_out_pin[s], r->c_dev[s],
                                  (size_t)(r->call->m * panel_cols(r, q)) * sizeof(float),
                                  cudaMemcpyDeviceToHost, p->d2h)) != cudaSuccess)
        return status;
    return cudaEventRecord(p->drained[s], p->d2h);
}

/* Panel q's C from pinned memory into the caller's C: from here on it is final. */
static cudaError_t finish_panel(run_state *r, int64_t q)
{
    const int s = (int)(q % SLOTS);
    const tb_call *call = r->call;
    cudaError_t status = cudaEventSynchronize(r->p->drained[s]);
    if (status == cudaSuccess)
        tb_host_copy(call->c + q * r->width * call->ldc, call->ldc, r->c_out_pin[s], call->m,
                     call->m, panel_cols(r, q));
    return status;
}

/*
 * Panel 0 with op(A) arriving in pieces that are contiguous in its storage:
 * blocks of rows when A is transposed (whole stored columns), slices of K
 * otherwise. Each piece goes through a staging buffer (the slots' pinned
 * outputs, unused until the first drain) and its kernel starts as soon as it
 * lands, so the upload of A overlaps compute; slices of K add up in C.
 */
static cudaError_t first_panel(run_state *r)
{
    const tb_call *call = r->call;
    pipeline *p = r->p;
    const int64_t m = call->m, k = call->k;
    cudaError_t status = stage_panel(r, 0);
    if (status != cudaSuccess)
        return status;
    /* A piece fills one pinned output (m x width floats) at most. */
    const int64_t extent = call->trans_a ? m : k, per_unit = call->trans_a ? k : m;
    int64_t piece = m * r->width / per_unit;
    piece = piece < 1 ? 1 : piece > extent ? extent : piece;
    for (int64_t x0 = 0, i = 0; x0 < extent; x0 += piece, i++) {
        const int s = (int)(i % SLOTS);
        const int64_t units = extent - x0 < piece ? extent - x0 : piece;
        float *stage = r->c_out_pin[s];
        /* Stored columns x0.. of A: k x units (transposed) or m x units, dense on the device. */
        if ((status = cudaEventSynchronize(p->a_staged[s])) != cudaSuccess)
            return status;
        tb_host_copy(stage, per_unit, call->a + x0 * call->lda, call->lda, per_unit, units);
        if ((status = cudaMemcpyAsync(r->a_dev + x0 * per_unit, stage,
                                      (size_t)(per_unit * units) * sizeof(float),
                                      cudaMemcpyHostToDevice, p->h2d)) != cudaSuccess ||
            (status = cudaEventRecord(p->a_staged[s], p->h2d)) != cudaSuccess ||
            (status = cudaStreamWaitEvent(p->compute, p->a_staged[s], 0)) != cudaSuccess)
            return status;
        status = call->trans_a ? compute_piece(r, 0, x0, units, 0, k, call->beta)
                               : compute_piece(r, 0, 0, m, x0, units, x0 == 0 ? call->beta : 1.0f);
        if (status != cudaSuccess)
            return status;
    }
    return drain_panel(r, 0);
}

cudaError_t tb_pipeline_sgemm(const tb_call *call, int kernel, int64_t *done_cols)
{
    pipeline *p = &pipe_state;
    *done_cols = 0;
    cudaError_t status;
    if (!p->ready && (status = create_resources(p)) != cudaSuccess)
        return status;

    const int64_t m = call->m, n = call->n, k = call->k;
    run_state r = {.p = p, .call = call, .kernel = kernel, .with_c = call->beta != 0.0f,
                   .width = panel_width(call)};
    const int64_t width = r.width, panels = (n + width - 1) / width;

    /* Pinned: per slot an input region (B panel, then C panel) and an output region (C panel). */
    const size_t in_floats = (size_t)(k * width + (r.with_c ? m * width : 0));
    const size_t slot_floats = in_floats + (size_t)(m * width);
    if ((status = ensure_pinned(p, SLOTS * slot_floats)) != cudaSuccess)
        return status;

    /* Device: op(A) whole, then per slot a B panel and a C panel, then the kernel's scratch. */
    r.args = (tb_gemm_args){.trans_a = call->trans_a, .trans_b = call->trans_b, .m = m, .n = width,
                            .k = k, .alpha = call->alpha, .beta = call->beta,
                            .lda = call->trans_a ? k : m, .ldc = m};
    const int64_t scratch = tb_kernel_workspace_floats(kernel, &r.args);
    const size_t a_floats = (size_t)(m * k), panel_floats = (size_t)(k * width + m * width);
    float *device;
    if ((status = tb_gpu_workspace(a_floats + SLOTS * panel_floats + (size_t)scratch, &device)) != cudaSuccess)
        return status;
    r.a_dev = device;
    for (int s = 0; s < SLOTS; s++) {
        r.b_dev[s] = device + a_floats + (size_t)s * panel_floats;
        r.c_dev[s] = r.b_dev[s] + k * width;
        r.b_pin[s] = p->pinned + (size_t)s * slot_floats;
        r.c_in_pin[s] = r.b_pin[s] + k * width;
        r.c_out_pin[s] = r.b_pin[s] + in_floats;
    }
    r.args.workspace = device + a_floats + SLOTS * panel_floats;
    r.args.workspace_floats = scratch;

    /* While the GPU works on panel q, the host stages panel q+1 and finishes panel q-1. */
    int64_t finished = 0;
    status = first_panel(&r);
    for (int64_t q = 1; q <= panels && status == cudaSuccess; q++) {
        if (q < panels && ((status = stage_panel(&r, q)) != cudaSuccess ||
                           (status = compute_piece(&r, q, 0, m, 0, k, call->beta)) != cudaSuccess ||
                           (status = drain_panel(&r, q)) != cudaSuccess))
            break;
        if ((status = finish_panel(&r, q - 1)) == cudaSuccess)
            finished = q;
    }
    *done_cols = finished * width < n ? finished * width : n;
    if (status != cudaSuccess)
        cudaDeviceSynchronize(); /* nothing may still write the staging when the caller moves on */
    return status;
}
