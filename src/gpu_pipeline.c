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
#include <stdio.h>

#include "internal.h"
#include "kernels.h"

#define SLOTS 4
/* Streams the kernels take in turn; each has its own scratch, since their kernels may run at once. */
#define COMPUTE_STREAMS 2
/* Panels narrower than this starve the kernel; fewer than this many leave nothing to overlap. */
#define MIN_PANEL 128
#define TARGET_PANELS 8
/* Row blocks (when C needs several) are whole multiples of the kernels' tiles. */
#define ROW_ALIGN 128
/* Slices of K are whole tiles deep, so that their offsets keep the kernels' 128-bit loads aligned. */
#define DEPTH_ALIGN 128
/* The first slice of K is this fraction of the largest: the GPU starts as soon as it lands. */
#define FIRST_PIECE_SHARE 4
/* The last panel comes back in parts, each copied into the caller's C as soon as it lands. */
#define LAST_PANEL_PARTS 4
/* Pinned floats a slot holds at least (budget allowing), so that small calls come in few pieces:
 * each piece costs two host copy jobs and a DMA per first panel, tens of microseconds. */
#define MIN_SLOT_FLOATS (2 << 20)

typedef struct {
    cudaStream_t h2d, compute[COMPUTE_STREAMS], d2h;
    cudaEvent_t staged[SLOTS];   /* the slot's pinned input has been copied to the device */
    cudaEvent_t computed[SLOTS]; /* the slot's kernel has finished */
    cudaEvent_t drained[SLOTS];  /* the slot's C panel is back in pinned memory */
    cudaEvent_t part_drained[LAST_PANEL_PARTS]; /* a part of the last panel is */
    int ready;
} pipeline;

/* One per lane: pipelined calls on both lanes run at once, each on its own streams. */
static pipeline pipelines[TB_GPU_LANES];

_Static_assert(SLOTS % COMPUTE_STREAMS == 0, "a slot's kernels keep to one stream, in order");

static int compute_index(int s)
{
    return s % COMPUTE_STREAMS;
}

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

/*
 * Pinned floats per slot: a B panel in and a C panel out, and at least one
 * slice of K of the first panels (a column of op(A), a row of op(B) for each),
 * which is more only when K and the rows are tiny.
 */
static int64_t slot_floats(const tb_call *call, int64_t rows, int64_t width)
{
    const int64_t panels = (call->k + rows) * width, slice = rows + SLOTS * width;
    return panels > slice ? panels : slice;
}

/*
 * Device floats: a row block of op(A), packed so that the panels after it keep
 * the kernels' 128-bit loads aligned, then per slot a B panel and a C panel
 * (whole multiples of MIN_PANEL columns: aligned too).
 */
static int64_t device_floats(const tb_call *call, int64_t rows, int64_t width)
{
    return tb_packed_floats(rows * call->k) + SLOTS * ((int64_t)call->k * width + rows * width);
}

/* The most rows per block that `width`-column panels leave room for, or 0. */
static int64_t rows_that_fit(const tb_call *call, int64_t width, int64_t pinned, int64_t device)
{
    const int64_t k = call->k, per_slot = pinned / SLOTS;
    const int64_t by_panels = (per_slot - k * width) / width, by_slice = per_slot - SLOTS * width;
    const int64_t by_pinned = by_panels < by_slice ? by_panels : by_slice;
    /* tb_packed_floats(1): the most that packing op(A)'s block can add. */
    const int64_t by_device = (device - tb_packed_floats(1) - SLOTS * k * width) / (k + SLOTS * width);
    int64_t rows = by_pinned < by_device ? by_pinned : by_device;
    rows = rows >= call->m ? call->m : rows / ROW_ALIGN * ROW_ALIGN;
    return rows > 0 ? rows : 0;
}

/* The panels' width when the budgets are no limit: about TARGET_PANELS of them, a multiple of MIN_PANEL. */
static int64_t widest_panel(int64_t n)
{
    const int64_t width = (n + TARGET_PANELS - 1) / TARGET_PANELS;
    return (width + MIN_PANEL - 1) / MIN_PANEL * MIN_PANEL;
}

/*
 * The widest panels, with all of C in one row block, when the budgets allow;
 * otherwise the width that needs the fewest row blocks, since each sends B
 * over the bus again.
 */
int tb_pipeline_plan_for(const tb_call *call, int kernel, tb_pipeline_plan *plan)
{
    (void)kernel;
    const int64_t n = call->n;
    if (n < 2 * MIN_PANEL)
        return 0;
    const int64_t pinned = (int64_t)tb_gpu_pinned_budget(), device = (int64_t)tb_gpu_memory_budget();
    int64_t width = widest_panel(n);
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

int tb_pipeline_plan_is_unlimited(const tb_call *call, const tb_pipeline_plan *plan)
{
    return plan->rows >= call->m && plan->width >= widest_panel(call->n);
}

int64_t tb_pipeline_unlimited_pinned_floats(const tb_call *call)
{
    return call->n < 2 * MIN_PANEL ? 0 : SLOTS * slot_floats(call, call->m, widest_panel(call->n));
}

/*
 * C's panels: `width` columns each, except that the last, when at least two
 * MIN_PANEL wide and not among the first panels, comes as two halves (a
 * multiple of MIN_PANEL, then the rest): after the last kernel only the second
 * half is left to go out.
 */
typedef struct {
    int64_t n, width, count;
    int64_t halved; /* index of the first half; count when no panel is halved */
    int64_t half;   /* columns of the first half */
} panel_layout;

static panel_layout layout_panels(int64_t n, int64_t width)
{
    const int64_t whole = (n + width - 1) / width, last = n - (whole - 1) * width;
    panel_layout layout = {n, width, whole, whole, 0};
    if (whole - 1 >= SLOTS && last >= 2 * MIN_PANEL)
        layout = (panel_layout){n, width, whole + 1, whole - 1, last / 2 / MIN_PANEL * MIN_PANEL};
    return layout;
}

/* The first column of panel q, or n for q == count. */
static int64_t panel_start(const panel_layout *layout, int64_t q)
{
    if (q >= layout->count)
        return layout->n;
    return q <= layout->halved ? q * layout->width : layout->halved * layout->width + layout->half;
}

static int64_t panel_cols(const panel_layout *layout, int64_t q)
{
    return panel_start(layout, q + 1) - panel_start(layout, q);
}

/* Everything one row block's panels share. */
typedef struct {
    pipeline *p;
    const tb_call *call; /* the row block */
    int kernel;
    unsigned pinned;     /* TB_RESIDENT_* bits of operands the copy engines reach directly */
    int direct_out;      /* C is pinned and beta == 0: panels go straight to the caller's C */
    panel_layout panels;
    int64_t lead;        /* the first panels, one per slot, computed as op(A) arrives */
    int64_t slot_floats; /* pinned floats per slot: a B panel in and a C panel out, or a piece of the first panels */
    tb_gemm_args args;   /* what all launches share: transposes, alpha, m, lda, ldc, scratch */
    float *a_dev, *b_dev[SLOTS], *c_dev[SLOTS];
    float *b_pin[SLOTS], *c_out_pin[SLOTS];
} run_state;

/* Row block `block` is the one the launches from here on compute. */
static void enter_block(run_state *r, const tb_call *block)
{
    r->call = block;
    r->args.m = block->m;
    r->args.lda = block->trans_a ? block->k : block->m;
    r->args.ldc = block->m;
}

/*
 * Where the copy engines take rows x cols of an operand (column-major, leading
 * dimension *ld) from: the caller's memory when it is pinned, else the pinned
 * staging at *stage, where the host copies it first (*ld then becomes rows,
 * and *stage moves past it).
 */
static const float *stage_block(int direct, const float *src, int64_t *ld, int64_t rows, int64_t cols, float **stage,
                                const char *what, int64_t index)
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
static cudaError_t dma_block(run_state *r, float *dst, int64_t dst_ld, const float *src, int64_t src_ld, int64_t rows,
                             int64_t cols, const char *what, int64_t index)
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
static cudaError_t mark_staged(pipeline *p, int s)
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
static cudaError_t stage_panel(run_state *r, int64_t q)
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
    b_src = stage_block(r->pinned & TB_RESIDENT_B, b_src, &ld, b_rows, b_cols, &stage, "copy in B panel", q);
    /* The slot's B panel on the device is free once its previous kernel is done (its C panel may
     * still be on the way out: launch waits for that). */
    if ((status = cudaStreamWaitEvent(p->h2d, p->computed[s], 0)) != cudaSuccess ||
        (status = dma_block(r, r->b_dev[s], b_rows, b_src, ld, b_rows, b_cols, "DMA in B panel", q)) != cudaSuccess)
        return status;
    return mark_staged(p, s);
}

/*
 * The kernel's arguments for panel q over `depth` of K, pointers aside: beta
 * is 0 for the first slice of a sum over K and 1 for those that add to it.
 * op(B)'s slice is stored alone, depth x cols (cols x depth when transposed).
 */
static tb_gemm_args launch_shape(const run_state *r, int64_t q, int64_t depth, float beta)
{
    tb_gemm_args args = r->args;
    args.n = panel_cols(&r->panels, q);
    args.k = depth;
    args.beta = beta;
    args.ldb = r->call->trans_b ? args.n : depth;
    return args;
}

/* The kernel of panel q over k0.. (depth of them), once its slot's C panel has gone out. */
static cudaError_t launch(run_state *r, int64_t q, int64_t k0, int64_t depth, float beta)
{
    pipeline *p = r->p;
    const int s = (int)(q % SLOTS);
    tb_gemm_args args = launch_shape(r, q, depth, beta);
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
    const int traced = tb_trace_gpu_begin(compute, "kernel panel", q);
    status = tb_kernel_launch(r->kernel, &args, compute);
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
static cudaError_t drain_panel(run_state *r, int64_t q)
{
    pipeline *p = r->p;
    const int s = (int)(q % SLOTS);
    cudaError_t status;
    /* The pinned output was emptied by finish_panel(q - SLOTS), which ran before this. */
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
static cudaError_t finish_panel(run_state *r, int64_t q, int64_t *cols_done)
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
 * Depth of the piece that starts at k0, the i-th: the first a
 * FIRST_PIECE_SHARE of the deepest, each next deeper by half the first in
 * whole DEPTH_ALIGN (at least one) up to the deepest, the last what is left
 * of K. While op(A) arrives, the host copies a piece about as fast as the
 * kernels compute one (at 8192^3 on the H100 machine 0.9-1.2 us per unit of
 * depth, against 1.34), so a piece twice as deep as the one before kept the
 * GPU waiting for it: 1.1-1.3 ms of gaps in a 24 ms call when depths
 * doubled, 0.15-0.18 with steps of 128 from 256. Steps in proportion to the
 * first keep the pieces few where a slot holds deep ones (long K, few rows).
 */
static int64_t piece_depth(int64_t i, int64_t k0, int64_t k, int64_t most)
{
    int64_t first = most / FIRST_PIECE_SHARE / DEPTH_ALIGN * DEPTH_ALIGN;
    first = first > DEPTH_ALIGN ? first : DEPTH_ALIGN;
    const int64_t half = first / 2 / DEPTH_ALIGN * DEPTH_ALIGN, step = half > DEPTH_ALIGN ? half : DEPTH_ALIGN;
    const int64_t depth = first + i * step < most ? first + i * step : most;
    return k - k0 < depth ? k - k0 : depth;
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
        const float *a = stage_block(r->pinned & TB_RESIDENT_A, call->trans_a ? call->a + k0 : call->a + k0 * a_ld,
                                     &a_ld, a_rows, a_cols, &stage, "copy in A piece", i);
        status = dma_block(r, r->a_dev + (call->trans_a ? k0 : k0 * m), call->trans_a ? k : m, a, a_ld, a_rows, a_cols,
                           "DMA in A piece", i);
        /* op(B)'s rows k0.. of all first panels in one host copy (depth x lead_cols, or lead_cols x depth
         * when B is transposed), then each panel's part to its own slot. */
        const int64_t b_rows = call->trans_b ? lead_cols : depth, b_cols = call->trans_b ? depth : lead_cols;
        int64_t b_ld = call->ldb;
        const float *b = stage_block(r->pinned & TB_RESIDENT_B, call->trans_b ? call->b + k0 * b_ld : call->b + k0,
                                     &b_ld, b_rows, b_cols, &stage, "copy in B piece", i);
        for (int64_t q = 0; q < r->lead && status == cudaSuccess; q++) {
            const int64_t j0 = panel_start(&r->panels, q), cols = panel_cols(&r->panels, q);
            float *b_dev = r->b_dev[q] + k0 * cols;
            status = call->trans_b ? dma_block(r, b_dev, cols, b + j0, b_ld, cols, depth, "DMA in B piece", i)
                                   : dma_block(r, b_dev, depth, b + j0 * b_ld, b_ld, depth, cols, "DMA in B piece", i);
        }
        if (status != cudaSuccess || (status = mark_staged(p, s)) != cudaSuccess)
            return status;
        for (int64_t q = 0; q < r->lead; q++)
            if ((status = launch(r, q, k0, depth, k0 == 0 ? 0.0f : 1.0f)) != cudaSuccess ||
                (k0 + depth == k && (status = drain_panel(r, q)) != cudaSuccess))
                return status;
    }
    return cudaSuccess;
}

/* Finishes panels in order up to `last`; *next is the first unfinished one. */
static cudaError_t finish_through(run_state *r, int64_t last, int64_t *next, int64_t *cols_done)
{
    for (; *next <= last; ++*next) {
        const cudaError_t status = finish_panel(r, *next, cols_done);
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
        if (q < panels &&
            ((status = stage_panel(r, q)) != cudaSuccess || (status = launch(r, q, 0, k, 0.0f)) != cudaSuccess))
            break;
        if ((status = finish_through(r, q - SLOTS, &next, cols_done)) != cudaSuccess)
            break;
        if (q < panels)
            status = drain_panel(r, q);
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
            const tb_gemm_args shape = launch_shape(r, q, depth, k0 == 0 ? 0.0f : 1.0f);
            const int64_t floats = tb_kernel_workspace_floats(r->kernel, &shape);
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
        *progress = (tb_gpu_progress){i0, block.m, 0};
        status = run_block(&r, &progress->cols_done);
    }
    if (status != cudaSuccess) { /* nothing may still use the staging when the caller moves on */
        cudaStreamSynchronize(p->h2d);
        for (int c = 0; c < COMPUTE_STREAMS; c++)
            cudaStreamSynchronize(p->compute[c]);
        cudaStreamSynchronize(p->d2h);
    }
    tb_trace_pipeline_end();
    return status;
}
