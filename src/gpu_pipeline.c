/*
 * The pipelined GPU path for operands in host memory.
 *
 * C is computed in blocks of rows, each with its rows of op(A) resident on the
 * device, and each block in panels of columns. A block's op(A) goes to the
 * device once, in pieces whose kernels for the first panels start as each
 * piece lands. While the kernels work on panels p-2..p, the host copies B's
 * panel p+1 from the caller's pageable memory into pinned staging with a pool
 * of threads, the copy engines move staged panels in and finished panels out,
 * and the host copies panel p-2 of C from pinned staging into the caller's C.
 * Three staging slots keep all of these in flight at once, so the host copies,
 * the one resource every byte passes through, never wait. Operands in pinned
 * memory skip the host copies (C on the way out only when beta == 0, see
 * tb_pipeline_sgemm).
 *
 * The kernels compute alpha*op(A)*op(B) alone; beta*C is added by the host as
 * it copies each panel out. C then never crosses the bus inward, which saves
 * host memory traffic (the bound here): each element of C is read once by
 * that copy instead of being copied in, moved in, moved out and copied out.
 *
 * One row block holds all of C unless op(A) and two panels exceed the device
 * memory (or pinned staging) allowed: then B crosses the bus once per block.
 * Each panel of C reaches the caller only once its kernel and copy succeeded:
 * on an error what is done so far is final and the caller computes the rest
 * elsewhere.
 */
#include <cuda_runtime_api.h>
#include <stdio.h>

#include "internal.h"
#include "kernels.h"

#define SLOTS 3
/* Panels narrower than this starve the kernel; fewer than this many leave nothing to overlap. */
#define MIN_PANEL 128
#define TARGET_PANELS 8
/* Row blocks (when C needs several) are whole multiples of the kernels' tiles. */
#define ROW_ALIGN 128

typedef struct {
    cudaStream_t h2d, compute, d2h;
    cudaEvent_t staged[SLOTS];   /* the slot's pinned input has been copied to the device */
    cudaEvent_t computed[SLOTS]; /* the slot's kernel has finished */
    cudaEvent_t drained[SLOTS];  /* the slot's C panel is back in pinned memory */
    cudaEvent_t a_staged[SLOTS]; /* the slot's piece of A has been copied to the device */
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

/* Pinned floats per slot: a B panel in and a C panel out. */
static int64_t slot_floats(const tb_call *call, int64_t rows, int64_t width)
{
    return (int64_t)call->k * width + rows * width;
}

/* Device floats: a row block of op(A), then per slot a B panel and a C panel. */
static int64_t device_floats(const tb_call *call, int64_t rows, int64_t width)
{
    return rows * call->k + SLOTS * ((int64_t)call->k * width + rows * width);
}

static tb_gemm_args panel_args(const tb_call *call, int64_t rows, int64_t width)
{
    return (tb_gemm_args){.trans_a = call->trans_a, .trans_b = call->trans_b, .m = rows, .n = width,
                          .k = call->k, .alpha = call->alpha, .beta = 0.0f,
                          .lda = call->trans_a ? call->k : rows, .ldb = call->trans_b ? width : call->k,
                          .ldc = rows};
}

/* The most rows per block that `width`-column panels leave room for, or 0. */
static int64_t rows_that_fit(const tb_call *call, int64_t width, int64_t pinned, int64_t device)
{
    const int64_t k = call->k;
    const int64_t by_pinned = (pinned / SLOTS - k * width) / width;
    const int64_t by_device = (device - SLOTS * k * width) / (k + SLOTS * width);
    int64_t rows = by_pinned < by_device ? by_pinned : by_device;
    rows = rows >= call->m ? call->m : rows / ROW_ALIGN * ROW_ALIGN;
    /* The pieces op(A) is uploaded in share a C panel's staging: when A is transposed
     * a piece is whole stored columns of k floats, and one at least must fit. */
    if (call->trans_a && rows * width < k)
        return 0;
    return rows > 0 ? rows : 0;
}

/*
 * About TARGET_PANELS panels of C, a multiple of MIN_PANEL wide, with all of
 * C in one row block when the budgets allow; otherwise the width that needs
 * the fewest row blocks, since each sends B over the bus again.
 */
int tb_pipeline_plan_for(const tb_call *call, int kernel, tb_pipeline_plan *plan)
{
    (void)kernel;
    const int64_t n = call->n;
    if (n < 2 * MIN_PANEL)
        return 0;
    const int64_t pinned = (int64_t)tb_gpu_pinned_budget(), device = (int64_t)tb_gpu_memory_budget();
    int64_t width = (n + TARGET_PANELS - 1) / TARGET_PANELS;
    width = (width + MIN_PANEL - 1) / MIN_PANEL * MIN_PANEL;
    *plan = (tb_pipeline_plan){0, 0};
    int64_t fewest_blocks = 0;
    for (; width >= MIN_PANEL; width = width / 2 / MIN_PANEL * MIN_PANEL) {
        const int64_t rows = rows_that_fit(call, width, pinned, device);
        if (rows == 0 || n < 2 * width)
            continue;
        const int64_t blocks = (call->m + rows - 1) / rows;
        if (fewest_blocks == 0 || blocks < fewest_blocks) {
            fewest_blocks = blocks;
            *plan = (tb_pipeline_plan){rows, width};
        }
        if (blocks == 1)
            break;
    }
    return plan->rows > 0;
}

/* Everything one row block's panels share. */
typedef struct {
    pipeline *p;
    const tb_call *call; /* the row block */
    int kernel;
    unsigned pinned;   /* TB_RESIDENT_* bits of operands the copy engines reach directly */
    int direct_out;    /* C is pinned and beta == 0: panels go straight to the caller's C */
    int64_t width;
    int64_t out_floats; /* capacity of each pinned output, which also stages pieces of A */
    tb_gemm_args args; /* device operands; m, n, a, b, c set per launch */
    float *a_dev, *b_dev[SLOTS], *c_dev[SLOTS];
    float *b_pin[SLOTS], *c_out_pin[SLOTS];
} run_state;

static int64_t panel_cols(const run_state *r, int64_t q)
{
    const int64_t j0 = q * r->width;
    return r->call->n - j0 < r->width ? r->call->n - j0 : r->width;
}

/*
 * Host copy of panel q's B into its slot's pinned input, then the DMA to the
 * device; a B in pinned memory goes to the device directly.
 */
static cudaError_t stage_panel(run_state *r, int64_t q)
{
    const tb_call *call = r->call;
    pipeline *p = r->p;
    const int s = (int)(q % SLOTS);
    const int64_t j0 = q * r->width, cols = panel_cols(r, q);
    /* op(B)'s panel is stored k x cols, or cols x k when B is transposed. */
    const int64_t b_rows = call->trans_b ? cols : call->k, b_cols = call->trans_b ? call->k : cols;
    const float *b_src = call->trans_b ? call->b + j0 : call->b + j0 * call->ldb;
    const int b_direct = r->pinned & TB_RESIDENT_B;
    cudaError_t status;
    /* The slot's pinned input is free once its previous DMA is done. */
    if ((status = cudaEventSynchronize(p->staged[s])) != cudaSuccess)
        return status;
    if (!b_direct) {
        const double begin = tb_trace_host_begin();
        tb_host_copy(r->b_pin[s], b_rows, b_src, call->ldb, b_rows, b_cols);
        tb_trace_host_end(begin, "copy in B panel", q);
    }
    /* The slot's B panel on the device is free once its previous kernel is done (its C
     * panel may still be on the way out: compute_piece waits for that). */
    if ((status = cudaStreamWaitEvent(p->h2d, p->computed[s], 0)) != cudaSuccess)
        return status;
    const int traced = tb_trace_gpu_begin(p->h2d, "DMA in B panel", q);
    status = b_direct ? tb_gpu_copy_block(r->b_dev[s], b_rows, b_src, call->ldb, b_rows, b_cols,
                                          cudaMemcpyHostToDevice, p->h2d)
                      : cudaMemcpyAsync(r->b_dev[s], r->b_pin[s], (size_t)(b_rows * b_cols) * sizeof(float),
                                        cudaMemcpyHostToDevice, p->h2d);
    tb_trace_gpu_end(traced, p->h2d);
    return status != cudaSuccess ? status : cudaEventRecord(p->staged[s], p->h2d);
}

/*
 * The kernel for rows r0.. (rows of them) of panel q over k0.. (depth of them),
 * once its inputs are on the device; beta is 0 for the first piece of a sum
 * over K and 1 for the pieces that add to it.
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
    const int traced = tb_trace_gpu_begin(p->compute, "kernel panel", q);
    status = tb_kernel_launch(r->kernel, args, p->compute);
    tb_trace_gpu_end(traced, p->compute);
    return status;
}

/*
 * Panel q's C from the device into its slot's pinned output (which, for the
 * first panels, staged pieces of A: their DMAs precede this on the GPU).
 */
static cudaError_t drain_panel(run_state *r, int64_t q)
{
    pipeline *p = r->p;
    const int s = (int)(q % SLOTS);
    cudaError_t status;
    /* The pinned output was emptied by finish_panel(q - SLOTS), which ran before this. */
    const int64_t m = r->call->m, cols = panel_cols(r, q);
    if ((status = cudaEventRecord(p->computed[s], p->compute)) != cudaSuccess ||
        (status = cudaStreamWaitEvent(p->d2h, p->computed[s], 0)) != cudaSuccess)
        return status;
    const int traced = tb_trace_gpu_begin(p->d2h, "DMA out C panel", q);
    status = r->direct_out ? tb_gpu_copy_block(r->call->c + q * r->width * r->call->ldc, r->call->ldc,
                                                    r->c_dev[s], m, m, cols, cudaMemcpyDeviceToHost, p->d2h)
                                : cudaMemcpyAsync(r->c_out_pin[s], r->c_dev[s], (size_t)(m * cols) * sizeof(float),
                                                  cudaMemcpyDeviceToHost, p->d2h);
    tb_trace_gpu_end(traced, p->d2h);
    return status != cudaSuccess ? status : cudaEventRecord(p->drained[s], p->d2h);
}

/*
 * Panel q's alpha*op(A)*op(B) from pinned memory into the caller's C, plus
 * beta*C when beta != 0 (reference rule: beta == 0 never reads C): from here
 * on the panel is final.
 */
static cudaError_t finish_panel(run_state *r, int64_t q)
{
    const int s = (int)(q % SLOTS);
    const tb_call *call = r->call;
    float *c = call->c + q * r->width * call->ldc;
    double begin = tb_trace_host_begin();
    cudaError_t status = cudaEventSynchronize(r->p->drained[s]);
    tb_trace_host_end(begin, "wait C panel", q);
    if (status != cudaSuccess || r->direct_out)
        return status;
    begin = tb_trace_host_begin();
    if (call->beta == 0.0f)
        tb_host_copy(c, call->ldc, r->c_out_pin[s], call->m, call->m, panel_cols(r, q));
    else
        tb_host_combine(c, call->ldc, r->c_out_pin[s], call->m, call->m, panel_cols(r, q), call->beta);
    tb_trace_host_end(begin, "copy out C panel", q);
    return status;
}

/* The kernel of piece x0.. (units of them) of op(A) for panel q: rows of C, or a slice of K. */
static cudaError_t compute_a_piece(run_state *r, int64_t q, int64_t x0, int64_t units)
{
    const tb_call *call = r->call;
    return call->trans_a ? compute_piece(r, q, x0, units, 0, call->k, 0.0f)
                         : compute_piece(r, q, 0, call->m, x0, units, x0 == 0 ? 0.0f : 1.0f);
}

/*
 * How much of op(A) one piece carries in first_panels, in its units (stored
 * columns: rows of C when A is transposed, a slice of K otherwise): what one
 * pinned output holds, in whole tiles (or float4s) so that the pieces'
 * offsets keep the kernels' 128-bit loads aligned.
 */
static int64_t a_piece_units(int trans_a, int64_t m, int64_t k, int64_t out_floats)
{
    const int64_t extent = trans_a ? m : k, per_unit = trans_a ? k : m;
    int64_t piece = per_unit > 0 ? out_floats / per_unit : extent;
    piece -= piece >= 128 ? piece % 128 : piece >= 4 ? piece % 4 : 0;
    return piece < 1 ? 1 : piece > extent ? extent : piece;
}

/*
 * The first `lead` panels (one per slot) with op(A) arriving in pieces that
 * are contiguous in its storage: blocks of rows when A is transposed (whole
 * stored columns), slices of K otherwise. Each piece goes through a staging
 * buffer (the slots' pinned outputs, unused until the first drain) and the
 * kernels of every panel staged so far start on it as soon as it lands, so
 * the GPU keeps busy while A, the largest single transfer, comes in. Panels
 * 1.. are staged between the first pieces and catch up on the pieces before.
 */
static cudaError_t first_panels(run_state *r, int64_t lead)
{
    const tb_call *call = r->call;
    pipeline *p = r->p;
    const int64_t m = call->m, k = call->k;
    cudaError_t status = stage_panel(r, 0);
    if (status != cudaSuccess)
        return status;
    int64_t staged = 1;
    const int64_t extent = call->trans_a ? m : k, per_unit = call->trans_a ? k : m;
    const int64_t piece = a_piece_units(call->trans_a, m, k, r->out_floats);
    for (int64_t x0 = 0, i = 0; x0 < extent; x0 += piece, i++) {
        const int s = (int)(i % SLOTS);
        const int64_t units = extent - x0 < piece ? extent - x0 : piece;
        float *stage = r->c_out_pin[s];
        const float *source = call->a + x0 * call->lda;
        /* Stored columns x0.. of A: k x units (transposed) or m x units, dense on the device. */
        if ((status = cudaEventSynchronize(p->a_staged[s])) != cudaSuccess)
            return status;
        int traced;
        if (r->pinned & TB_RESIDENT_A) {
            traced = tb_trace_gpu_begin(p->h2d, "DMA in A piece", i);
            status = tb_gpu_copy_block(r->a_dev + x0 * per_unit, per_unit, source, call->lda, per_unit, units,
                                       cudaMemcpyHostToDevice, p->h2d);
        } else {
            const double begin = tb_trace_host_begin();
            tb_host_copy(stage, per_unit, source, call->lda, per_unit, units);
            tb_trace_host_end(begin, "copy in A piece", i);
            traced = tb_trace_gpu_begin(p->h2d, "DMA in A piece", i);
            status = cudaMemcpyAsync(r->a_dev + x0 * per_unit, stage, (size_t)(per_unit * units) * sizeof(float),
                                     cudaMemcpyHostToDevice, p->h2d);
        }
        tb_trace_gpu_end(traced, p->h2d);
        if (status != cudaSuccess ||
            (status = cudaEventRecord(p->a_staged[s], p->h2d)) != cudaSuccess ||
            (status = cudaStreamWaitEvent(p->compute, p->a_staged[s], 0)) != cudaSuccess)
            return status;
        /* A panel goes out as soon as its last piece is computed: its slot is the next one reused. */
        const int last = x0 + units == extent;
        for (int64_t q = 0; q < staged; q++)
            if ((status = compute_a_piece(r, q, x0, units)) != cudaSuccess ||
                (last && (status = drain_panel(r, q)) != cudaSuccess))
                return status;
        if (staged < lead) {
            if ((status = stage_panel(r, staged)) != cudaSuccess)
                return status;
            for (int64_t y0 = 0; y0 <= x0; y0 += piece)
                if ((status = compute_a_piece(r, staged, y0, extent - y0 < piece ? extent - y0 : piece)) !=
                    cudaSuccess)
                    return status;
            if (last && (status = drain_panel(r, staged)) != cudaSuccess)
                return status;
            staged++;
        }
    }
    for (int64_t q = staged; q < lead; q++) /* A came in fewer pieces than there are slots */
        if ((status = stage_panel(r, q)) != cudaSuccess ||
            (status = compute_piece(r, q, 0, m, 0, k, 0.0f)) != cudaSuccess ||
            (status = drain_panel(r, q)) != cudaSuccess)
            return status;
    return cudaSuccess;
}

/* Finishes panels in order up to `last`; *next is the first unfinished one. */
static cudaError_t finish_through(run_state *r, int64_t last, int64_t *next, int64_t *cols_done)
{
    for (; *next <= last; ++*next) {
        cudaError_t status = finish_panel(r, *next);
        if (status != cudaSuccess)
            return status;
        *cols_done = (*next + 1) * r->width < r->call->n ? (*next + 1) * r->width : r->call->n;
    }
    return cudaSuccess;
}

/*
 * One row block: the first panels with op(A) arriving, then the others.
 * Panel q is staged and queued, then panel q - SLOTS finished (its pinned
 * output is what panel q's drain reuses), then panel q drained: the host runs
 * up to SLOTS panels ahead of the GPU, and copies each B panel in before the
 * C panels that finished meanwhile go out, so the GPU never waits for those.
 */
static cudaError_t run_block(run_state *r, int64_t *cols_done)
{
    const int64_t width = r->width, n = r->call->n, panels = (n + width - 1) / width;
    const int64_t lead = panels < SLOTS ? panels : SLOTS;
    int64_t next = 0; /* the first panel not yet finished */
    r->args.m = r->call->m;
    r->args.lda = r->call->trans_a ? r->call->k : r->call->m;
    r->args.ldc = r->call->m;
    cudaError_t status = first_panels(r, lead);
    for (int64_t q = lead; q < panels + SLOTS && status == cudaSuccess; q++) {
        if (q < panels && ((status = stage_panel(r, q)) != cudaSuccess ||
                           (status = compute_piece(r, q, 0, r->call->m, 0, r->call->k, 0.0f)) != cudaSuccess))
            break;
        if ((status = finish_through(r, q - SLOTS, &next, cols_done)) != cudaSuccess)
            break;
        if (q < panels)
            status = drain_panel(r, q);
    }
    return status;
}

cudaError_t tb_pipeline_sgemm(const tb_call *call, unsigned pinned_operands, int kernel,
                              const tb_pipeline_plan *plan, tb_gpu_progress *progress)
{
    pipeline *p = &pipe_state;
    cudaError_t status;
    if (!p->ready && (status = create_resources(p)) != cudaSuccess)
        return status;

    const int64_t m = call->m, k = call->k, rows = plan->rows, width = plan->width;
    /* A pinned C is written directly only when beta == 0: a copy cut short by an error then
     * leaves nothing the CPU would read when it computes the rest. */
    run_state r = {.p = p, .kernel = kernel, .pinned = pinned_operands,
                   .direct_out = (pinned_operands & TB_RESIDENT_C) && call->beta == 0.0f, .width = width,
                   .out_floats = rows * width};
    const int64_t per_slot = slot_floats(call, rows, width);
    float *pinned, *device;
    if ((status = tb_gpu_pinned((size_t)(SLOTS * per_slot), &pinned)) != cudaSuccess)
        return status;
    /*
     * The kernel's scratch (split-K, a re-stored operand) when the budget leaves room; it
     * runs without, slower. A transposed op(A) arrives in blocks of rows: those first
     * kernels have a small C over all of K, and need the scratch to split it.
     */
    r.args = panel_args(call, rows, width);
    tb_gemm_args first_piece = r.args;
    const int64_t units = a_piece_units(call->trans_a, rows, k, r.out_floats);
    if (call->trans_a)
        first_piece.m = units;
    else
        first_piece.k = units;
    const int64_t needed = device_floats(call, rows, width);
    int64_t scratch = tb_kernel_workspace_floats(kernel, &r.args);
    const int64_t piece_scratch = tb_kernel_workspace_floats(kernel, &first_piece);
    scratch = piece_scratch > scratch ? piece_scratch : scratch;
    if (scratch > 0 && !tb_gpu_device_fits((size_t)(needed + scratch)))
        scratch = 0;
    if (!tb_gpu_device_fits((size_t)needed))
        return cudaErrorMemoryAllocation;
    if ((status = tb_gpu_workspace((size_t)(needed + scratch), &device)) != cudaSuccess)
        return status;
    r.a_dev = device;
    for (int s = 0; s < SLOTS; s++) {
        r.b_dev[s] = device + rows * k + s * (k * width + rows * width);
        r.c_dev[s] = r.b_dev[s] + k * width;
        r.b_pin[s] = pinned + s * per_slot;
        r.c_out_pin[s] = r.b_pin[s] + k * width;
    }
    r.args.workspace = scratch > 0 ? device + needed : NULL;
    r.args.workspace_floats = scratch;

    tb_trace_pipeline_begin(p->h2d);
    for (int64_t i0 = 0; i0 < m && status == cudaSuccess; i0 += rows) {
        const tb_call block = tb_call_block(call, i0, m - i0 < rows ? m - i0 : rows, 0, call->n);
        r.call = &block;
        *progress = (tb_gpu_progress){i0, block.m, 0};
        status = run_block(&r, &progress->cols_done);
    }
    if (status != cudaSuccess) { /* nothing may still use the staging when the caller moves on */
        cudaStreamSynchronize(p->h2d);
        cudaStreamSynchronize(p->compute);
        cudaStreamSynchronize(p->d2h);
    }
    tb_trace_pipeline_end();
    return status;
}
