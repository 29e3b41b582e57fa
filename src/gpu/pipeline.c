/*
 * The pipelined GPU path for operands in host memory.
 *
 * C is computed in blocks of rows, each with its rows of op(A) resident on the
 * device, and each block in panels of columns. The first panels (one per
 * slot) are computed over slices of K while op(A) and their part of op(B)
 * arrive: each piece carries op(A)'s columns k0.. and those rows of op(B),
 * and the kernels start on it as soon as it lands; the first pieces are small,
 * so the GPU starts within a fraction of a millisecond. Four first panels
 * give the GPU enough work per byte of op(A) to keep ahead of the host copies
 * while it arrives. After them, while the kernels work on panels p-3..p, the
 * host copies B's panel p+1 from the caller's pageable memory into pinned
 * staging with a pool of threads, the copy engines move staged panels in and
 * finished panels out, and the host copies panel p-3 of C from pinned staging
 * into the caller's C. Four staging slots keep all of these in flight at once,
 * so the host copies, the one resource every byte passes through, never wait.
 * Panels' kernels go to two streams in turn, so that the next one starts on
 * the SMs that the last wave of the one before leaves idle.
 * The last panel comes as two halves, so that what is left to go out after
 * the last kernel is half as large, and that half comes back in parts, each
 * copied into C while the next is on the bus. Operands in pinned memory skip
 * the host copies (C on the way out only when beta == 0, see
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

#include "core/call.h"
#include "gpu/device.h"
#include "gpu/lanes.h"
#include "gpu/memory.h"
#include "gpu/pipeline.h"
#include "gpu/pipeline_plan.h"
#include "gpu/pipeline_steps.h"
#include "gpu/pipeline_trace.h"
#include "kernels.h"

/* Pinned floats a slot holds at least (budget allowing), so that small calls come in few pieces:
 * each piece costs two host copy jobs and a DMA per first panel, tens of microseconds. */
#define MIN_SLOT_FLOATS (2 << 20)

/* One per lane: pipelined calls on both lanes run at once, each on its own streams. */
static pipeline pipelines[TB_GPU_LANES];

/* After a failed creation (out of memory leaves the GPU usable): the next call starts afresh. */
static void destroy_resources(pipeline *p)
{
    tb_destroy_stream(&p->h2d);
    tb_destroy_stream(&p->d2h);
    for (int c = 0; c < COMPUTE_STREAMS; c++)
        tb_destroy_stream(&p->compute[c]);
    for (int s = 0; s < SLOTS; s++) {
        tb_destroy_event(&p->staged[s]);
        tb_destroy_event(&p->computed[s]);
        tb_destroy_event(&p->drained[s]);
    }
    for (int part = 0; part < LAST_PANEL_PARTS; part++)
        tb_destroy_event(&p->part_drained[part]);
}

static cudaError_t create_streams_and_events(pipeline *p)
{
    cudaError_t status;
    if ((status = cudaStreamCreateWithFlags(&p->h2d, cudaStreamNonBlocking)) != cudaSuccess ||
        (status = cudaStreamCreateWithFlags(&p->d2h, cudaStreamNonBlocking)) != cudaSuccess)
        return status;
    for (int c = 0; c < COMPUTE_STREAMS; c++)
        if ((status = cudaStreamCreateWithFlags(&p->compute[c], cudaStreamNonBlocking)) != cudaSuccess)
            return status;
    for (int s = 0; s < SLOTS; s++)
        if ((status = cudaEventCreateWithFlags(&p->staged[s], cudaEventDisableTiming)) != cudaSuccess ||
            (status = cudaEventCreateWithFlags(&p->computed[s], cudaEventDisableTiming)) != cudaSuccess ||
            (status = cudaEventCreateWithFlags(&p->drained[s], cudaEventDisableTiming)) != cudaSuccess)
            return status;
    for (int part = 0; part < LAST_PANEL_PARTS; part++)
        if ((status = cudaEventCreateWithFlags(&p->part_drained[part], cudaEventDisableTiming)) != cudaSuccess)
            return status;
    return cudaSuccess;
}

static cudaError_t create_resources(pipeline *p)
{
    const cudaError_t status = create_streams_and_events(p);
    if (status != cudaSuccess)
        destroy_resources(p);
    p->ready = status == cudaSuccess;
    return status;
}

/* Row block `block` is the one the launches from here on compute. */
static void enter_block(run_state *r, const tb_call *block)
{
    r->call = block;
    r->args.m = block->m;
    r->args.lda = block->trans_a ? block->k : block->m;
    r->args.ldc = block->m;
}

/*
 * The deepest slice of K one slot's staging holds for the first panels:
 * op(A)'s columns and op(B)'s rows for each of them, less what the copy
 * engines take from pinned operands directly; whole tiles deep where it can.
 */
static int64_t deepest_piece(const run_state *r)
{
    const tb_call *call = r->call;
    const int64_t per_depth = (r->pinned & TB_RESIDENT_A ? 0 : call->m) +
                              (r->pinned & TB_RESIDENT_B ? 0 : panel_start(&r->panels, r->lead));
    int64_t most = per_depth > 0 ? r->slot_floats / per_depth : call->k;
    /* Shallower than a tile, still a multiple of 4: a transposed op(A)'s slices keep 16-byte alignment. */
    most -= most >= DEPTH_ALIGN ? most % DEPTH_ALIGN : most >= 4 ? most % 4 : 0;
    return most < 1 ? 1 : most > call->k ? call->k : most;
}

/*
 * The first panels, computed over slices of K as they arrive. Each piece
 * carries op(A)'s columns k0.. into place and those rows of op(B) for every
 * first panel (alone on the device: no kernel reads two pieces' rows at once),
 * through one slot's whole pinned staging, unused by panels until the first
 * goes out. The kernels of every first panel start on a piece as soon as it
 * lands, and each panel goes out as soon as its last piece is computed.
 */
static cudaError_t first_panels(run_state *r)
{
    const tb_call *call = r->call;
    pipeline *p = r->p;
    const int64_t m = call->m, k = call->k, most = deepest_piece(r), lead_cols = panel_start(&r->panels, r->lead);
    cudaError_t status;
    for (int64_t k0 = 0, i = 0, depth; k0 < k; k0 += depth, i++) {
        const int s = (int)(i % SLOTS);
        depth = piece_depth(i, k0, k, most);
        float *stage = r->b_pin[s];
        /* The slot's staging is free once its previous piece is on the device. */
        if ((status = cudaEventSynchronize(p->staged[s])) != cudaSuccess)
            return status;
        /* op(A)'s columns k0..: stored m x depth, or depth x m within k x m when A is transposed. */
        const int64_t a_rows = call->trans_a ? depth : m, a_cols = call->trans_a ? m : depth;
        int64_t a_ld = call->lda;
        const float *a =
            tb_pipeline_stage_block(r->pinned & TB_RESIDENT_A, call->trans_a ? call->a + k0 : call->a + k0 * a_ld,
                                    &a_ld, a_rows, a_cols, &stage, "copy in A piece", i);
        status = tb_pipeline_dma_block(r, r->a_dev + (call->trans_a ? k0 : k0 * m), call->trans_a ? k : m, a, a_ld,
                                       a_rows, a_cols, "DMA in A piece", i);
        /* op(B)'s rows k0.. of all first panels in one host copy (depth x lead_cols, or lead_cols x depth
         * when B is transposed), then each panel's part to its own slot. */
        const int64_t b_rows = call->trans_b ? lead_cols : depth, b_cols = call->trans_b ? depth : lead_cols;
        int64_t b_ld = call->ldb;
        const float *b =
            tb_pipeline_stage_block(r->pinned & TB_RESIDENT_B, call->trans_b ? call->b + k0 * b_ld : call->b + k0,
                                    &b_ld, b_rows, b_cols, &stage, "copy in B piece", i);
        for (int64_t q = 0; q < r->lead && status == cudaSuccess; q++) {
            const int64_t j0 = panel_start(&r->panels, q), cols = panel_cols(&r->panels, q);
            float *b_dev = r->b_dev[q] + k0 * cols;
            status =
                call->trans_b
                    ? tb_pipeline_dma_block(r, b_dev, cols, b + j0, b_ld, cols, depth, "DMA in B piece", i)
                    : tb_pipeline_dma_block(r, b_dev, depth, b + j0 * b_ld, b_ld, depth, cols, "DMA in B piece", i);
        }
        if (status != cudaSuccess || (status = tb_pipeline_mark_staged(p, s)) != cudaSuccess)
            return status;
        for (int64_t q = 0; q < r->lead; q++)
            if ((status = tb_panel_launch(r, q, k0, depth, k0 == 0 ? 0.0f : 1.0f)) != cudaSuccess ||
                (k0 + depth == k && (status = tb_panel_drain(r, q)) != cudaSuccess))
                return status;
    }
    return cudaSuccess;
}

/* Finishes panels in order up to `last`; *next is the first unfinished one. */
static cudaError_t finish_through(run_state *r, int64_t last, int64_t *next, int64_t *cols_done)
{
    for (; *next <= last; ++*next) {
        const cudaError_t status = tb_panel_finish(r, *next, cols_done);
        if (status != cudaSuccess)
            return status;
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
    const int64_t panels = r->panels.count, k = r->call->k;
    int64_t next = 0; /* the first panel not yet finished */
    cudaError_t status = first_panels(r);
    for (int64_t q = r->lead; q < panels + SLOTS && status == cudaSuccess; q++) {
        if (q < panels && ((status = tb_panel_stage(r, q)) != cudaSuccess ||
                           (status = tb_panel_launch(r, q, 0, k, 0.0f)) != cudaSuccess))
            break;
        if ((status = finish_through(r, q - SLOTS, &next, cols_done)) != cudaSuccess)
            break;
        if (q < panels)
            status = tb_panel_drain(r, q);
    }
    return status;
}

/*
 * The most scratch (split-K, a re-stored operand) any launch of the row block
 * asks for, planned as the launches will run but on aligned placeholders.
 */
static int64_t largest_scratch(run_state *r)
{
    const int64_t k = r->call->k, most = deepest_piece(r);
    int64_t largest = 0;
    for (int64_t q = 0; q < r->panels.count; q++)
        for (int64_t k0 = 0, i = 0, depth; k0 < k; k0 += depth, i++) {
            depth = q < r->lead ? piece_depth(i, k0, k, most) : k;
            const tb_gemm_args shape = tb_panel_launch_shape(r, q, depth, k0 == 0 ? 0.0f : 1.0f);
            const int64_t floats =
                tb_kernel_workspace_floats(tb_gpu_launch_kernel(r->kernel, shape.m, shape.n, depth), &shape);
            largest = floats > largest ? floats : largest;
        }
    return largest;
}

cudaError_t tb_pipeline_sgemm(const tb_call *call, unsigned pinned_operands, int kernel,
                              const tb_pipeline_plan *plan, tb_gpu_progress *progress)
{
    pipeline *p = &pipelines[tb_gpu_lane()];
    cudaError_t status;
    if (!p->ready && (status = create_resources(p)) != cudaSuccess)
        return status;

    const int64_t m = call->m, k = call->k, rows = plan->rows, width = plan->width;
    const panel_layout panels = layout_panels(call->n, width);
    /* A pinned C is written directly only when beta == 0: a copy cut short by an error then
     * leaves nothing the CPU would read when it computes the rest. */
    run_state r = {.p = p, .kernel = kernel, .pinned = pinned_operands,
                   .direct_out = (pinned_operands & TB_RESIDENT_C) && call->beta == 0.0f, .panels = panels,
                   .lead = panels.count < SLOTS ? panels.count : SLOTS, .slot_floats = slot_floats(call, rows, width),
                   .args = {.trans_a = call->trans_a, .trans_b = call->trans_b, .alpha = call->alpha}};
    if (r.slot_floats < MIN_SLOT_FLOATS && SLOTS * MIN_SLOT_FLOATS <= (int64_t)tb_gpu_pinned_budget())
        r.slot_floats = MIN_SLOT_FLOATS;
    float *pinned, *device;
    if ((status = tb_gpu_pinned((size_t)(SLOTS * r.slot_floats), &pinned)) != cudaSuccess)
        return status;
    /* The kernels' scratch when the budget leaves room; they run without, slower. */
    const tb_call first_block = tb_call_block(call, 0, m < rows ? m : rows, 0, call->n);
    enter_block(&r, &first_block);
    const int64_t needed = device_floats(call, rows, width);
    /* Packed: the second stream's scratch follows the first. */
    int64_t scratch = tb_packed_floats(largest_scratch(&r));
    if (scratch > 0 && !tb_gpu_device_fits((size_t)(needed + COMPUTE_STREAMS * scratch)))
        scratch = 0;
    if (!tb_gpu_device_fits((size_t)needed))
        return cudaErrorMemoryAllocation;
    if ((status = tb_gpu_workspace((size_t)(needed + COMPUTE_STREAMS * scratch), &device)) != cudaSuccess)
        return status;
    r.a_dev = device;
    for (int s = 0; s < SLOTS; s++) {
        r.b_dev[s] = device + tb_packed_floats(rows * k) + s * (k * width + rows * width);
        r.c_dev[s] = r.b_dev[s] + k * width;
        r.b_pin[s] = pinned + s * r.slot_floats;
        r.c_out_pin[s] = r.b_pin[s] + k * width;
    }
    r.args.workspace = scratch > 0 ? device + needed : NULL;
    r.args.workspace_floats = scratch;

    tb_trace_pipeline_begin(p->h2d);
    for (int64_t i0 = 0; i0 < m && status == cudaSuccess; i0 += rows) {
        const tb_call block = tb_call_block(call, i0, m - i0 < rows ? m - i0 : rows, 0, call->n);
        enter_block(&r, &block);
        *progress = (tb_gpu_progress){.rows_done = i0, .block_rows = block.m};
        status = run_block(&r, &progress->cols_done);
    }
    if (status != cudaSuccess) { /* nothing may still use the staging when the caller moves on */
        cudaStreamSynchronize(p->h2d);
        for (int c = 0; c < COMPUTE_STREAMS; c++)
            cudaStreamSynchronize(p->compute[c]);
        cudaStreamSynchronize(p->d2h);
    }
    tb_trace_pipeline_end();
    progress->no_tensor_runs = kernel == TB_KERNEL_TF32X3 && r.tensor_runs == 0;
    return status;
}
