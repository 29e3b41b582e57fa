/* The steps of one panel of the pipelined path (pipeline_steps.h); pipeline.c orders them. */
#include <cuda_runtime_api.h>

#include "gpu/device.h"
#include "gpu/gpu.h"
#include "gpu/host_copy.h"
#include "gpu/memory.h"
#include "gpu/pipeline_steps.h"
#include "gpu/pipeline_trace.h"
#include "kernels.h"

/*
 * Where the copy engines take rows x cols of an operand (column-major, leading
 * dimension *ld) from: the caller's memory when it is pinned, else the pinned
 * staging at *stage, where the host copies it first (*ld then becomes rows,
 * and *stage moves past it).
 */
const float *tb_pipeline_stage_block(int direct, const float *src, int64_t *ld, int64_t rows, int64_t cols,
                                     float **stage, const char *what, int64_t index)
{
    if (direct)
        return src;
    float *staged = *stage;
    const double begin = tb_trace_host_begin();
    tb_host_copy(staged, rows, src, *ld, rows, cols);
    tb_trace_host_end(begin, what, index);
    *ld = rows;
    *stage += rows * cols;
    return staged;
}

/* Rows x cols from host memory at src to the device at dst, on the h2d stream. */
cudaError_t tb_pipeline_dma_block(run_state *r, float *dst, int64_t dst_ld, const float *src, int64_t src_ld,
                                  int64_t rows, int64_t cols, const char *what, int64_t index)
{
    cudaStream_t h2d = r->p->h2d;
    const int traced = tb_trace_gpu_begin(h2d, what, index);
    const cudaError_t status = tb_gpu_copy_block(dst, dst_ld, src, src_ld, rows, cols, cudaMemcpyHostToDevice, h2d);
    tb_trace_gpu_end(traced, h2d);
    return status;
}

/*
 * After the DMAs out of slot s's staging: it is free again once they are done,
 * and the kernels wait for them (a piece feeds the kernels of every stream).
 */
cudaError_t tb_pipeline_mark_staged(pipeline *p, int s)
{
    cudaError_t status = cudaEventRecord(p->staged[s], p->h2d);
    for (int c = 0; c < COMPUTE_STREAMS && status == cudaSuccess; c++)
        status = cudaStreamWaitEvent(p->compute[c], p->staged[s], 0);
    return status;
}

/*
 * Host copy of panel q's B into its slot's pinned input, then the DMA to the
 * device; a B in pinned memory goes to the device directly.
 */
cudaError_t tb_panel_stage(run_state *r, int64_t q)
{
    const tb_call *call = r->call;
    pipeline *p = r->p;
    const int s = (int)(q % SLOTS);
    const int64_t j0 = panel_start(&r->panels, q), cols = panel_cols(&r->panels, q);
    /* op(B)'s panel is stored k x cols, or cols x k when B is transposed. */
    const int64_t b_rows = call->trans_b ? cols : call->k, b_cols = call->trans_b ? call->k : cols;
    const float *b_src = call->trans_b ? call->b + j0 : call->b + j0 * call->ldb;
    float *stage = r->b_pin[s];
    int64_t ld = call->ldb;
    /* The slot's pinned input is free once its previous DMA is done. */
    cudaError_t status = cudaEventSynchronize(p->staged[s]);
    if (status != cudaSuccess)
        return status;
    b_src =
        tb_pipeline_stage_block(r->pinned & TB_RESIDENT_B, b_src, &ld, b_rows, b_cols, &stage, "copy in B panel", q);
    /* The slot's B panel on the device is free once its previous kernel is done (its C panel may
     * still be on the way out: launch waits for that). */
    if ((status = cudaStreamWaitEvent(p->h2d, p->computed[s], 0)) != cudaSuccess ||
        (status = tb_pipeline_dma_block(r, r->b_dev[s], b_rows, b_src, ld, b_rows, b_cols, "DMA in B panel", q)) !=
            cudaSuccess)
        return status;
    return tb_pipeline_mark_staged(p, s);
}

/*
 * The kernel's arguments for panel q over `depth` of K, pointers aside: beta
 * is 0 for the first slice of a sum over K and 1 for those that add to it.
 * op(B)'s slice is stored alone, depth x cols (cols x depth when transposed).
 */
tb_gemm_args tb_panel_launch_shape(const run_state *r, int64_t q, int64_t depth, float beta)
{
    tb_gemm_args args = r->args;
    args.n = panel_cols(&r->panels, q);
    args.k = depth;
    args.beta = beta;
    args.ldb = r->call->trans_b ? args.n : depth;
    return args;
}

/* The kernel of panel q over k0.. (depth of them), once its slot's C panel has gone out. */
cudaError_t tb_panel_launch(run_state *r, int64_t q, int64_t k0, int64_t depth, float beta)
{
    pipeline *p = r->p;
    const int s = (int)(q % SLOTS);
    tb_gemm_args args = tb_panel_launch_shape(r, q, depth, beta);
    /* op(A) is stored k x m (transposed) or m x k on the device. */
    args.a = r->a_dev + (r->call->trans_a ? k0 : k0 * r->call->m);
    args.b = r->b_dev[s] + k0 * args.n;
    args.c = r->c_dev[s];
    if (args.workspace)
        args.workspace += compute_index(s) * args.workspace_floats;
    cudaStream_t compute = p->compute[compute_index(s)];
    cudaError_t status = cudaStreamWaitEvent(compute, p->drained[s], 0);
    if (status != cudaSuccess)
        return status;
    const int kernel = tb_gpu_launch_kernel(r->kernel, args.m, args.n, depth);
    r->tensor_runs += kernel == TB_KERNEL_TF32X3;
    const int traced = tb_trace_gpu_begin(compute, "kernel panel", q);
    status = tb_kernel_launch(kernel, &args, compute);
    tb_trace_gpu_end(traced, compute);
    return status;
}

/* Parts panel q comes back in: the last panel's host copy out overlaps its own DMA. */
static int64_t out_parts(const run_state *r, int64_t q)
{
    const int64_t cols = panel_cols(&r->panels, q);
    return q == r->panels.count - 1 && !r->direct_out ? (cols < LAST_PANEL_PARTS ? cols : LAST_PANEL_PARTS) : 1;
}

/* The first of `cols` columns in part `part` of `parts`, or cols for part == parts. */
static int64_t part_start(int64_t cols, int64_t part, int64_t parts)
{
    return cols * part / parts;
}

/*
 * Panel q's C from the device into its slot's pinned output (which, for the
 * first panels, staged pieces: their DMAs precede this on the GPU).
 */
cudaError_t tb_panel_drain(run_state *r, int64_t q)
{
    pipeline *p = r->p;
    const int s = (int)(q % SLOTS);
    cudaError_t status;
    /* The pinned output was emptied by tb_panel_finish(q - SLOTS), which ran before this. */
    const int64_t m = r->call->m, cols = panel_cols(&r->panels, q);
    if ((status = cudaEventRecord(p->computed[s], p->compute[compute_index(s)])) != cudaSuccess ||
        (status = cudaStreamWaitEvent(p->d2h, p->computed[s], 0)) != cudaSuccess)
        return status;
    const int traced = tb_trace_gpu_begin(p->d2h, "DMA out C panel", q);
    if (r->direct_out)
        status = tb_gpu_copy_block(r->call->c + panel_start(&r->panels, q) * r->call->ldc, r->call->ldc, r->c_dev[s],
                                   m, m, cols, cudaMemcpyDeviceToHost, p->d2h);
    else
        for (int64_t part = 0, parts = out_parts(r, q); part < parts && status == cudaSuccess; part++) {
            const int64_t j0 = part_start(cols, part, parts), j1 = part_start(cols, part + 1, parts);
            status = cudaMemcpyAsync(r->c_out_pin[s] + j0 * m, r->c_dev[s] + j0 * m,
                                     (size_t)(m * (j1 - j0)) * sizeof(float), cudaMemcpyDeviceToHost, p->d2h);
            if (status == cudaSuccess && parts > 1)
                status = cudaEventRecord(p->part_drained[part], p->d2h);
        }
    tb_trace_gpu_end(traced, p->d2h);
    return status != cudaSuccess ? status : cudaEventRecord(p->drained[s], p->d2h);
}

/*
 * Panel q's alpha*op(A)*op(B) from pinned memory into the caller's C, plus
 * beta*C when beta != 0 (reference rule: beta == 0 never reads C): from here
 * on the panel is final. *cols_done moves past each part as it lands in C,
 * so that after an error the CPU computes only what C does not hold yet
 * (with beta != 0, a part combined twice would be wrong).
 */
cudaError_t tb_panel_finish(run_state *r, int64_t q, int64_t *cols_done)
{
    const int s = (int)(q % SLOTS);
    const tb_call *call = r->call;
    const int64_t m = call->m, j_first = panel_start(&r->panels, q), cols = panel_cols(&r->panels, q);
    for (int64_t part = 0, parts = out_parts(r, q); part < parts; part++) {
        double begin = tb_trace_host_begin();
        const cudaError_t status = cudaEventSynchronize(parts > 1 ? r->p->part_drained[part] : r->p->drained[s]);
        tb_trace_host_end(begin, "wait C panel", q);
        if (status != cudaSuccess)
            return status;
        const int64_t j0 = part_start(cols, part, parts), j1 = part_start(cols, part + 1, parts);
        if (!r->direct_out) { /* else the copy engine wrote C itself (in one part) */
            float *c = call->c + (j_first + j0) * call->ldc;
            const float *out = r->c_out_pin[s] + j0 * m;
            begin = tb_trace_host_begin();
            if (call->beta == 0.0f)
                tb_host_copy(c, call->ldc, out, m, m, j1 - j0);
            else
                tb_host_combine(c, call->ldc, out, m, m, j1 - j0, call->beta);
            tb_trace_host_end(begin, "copy out C panel", q);
        }
        *cols_done = j_first + j1;
    }
    return cudaSuccess;
}
