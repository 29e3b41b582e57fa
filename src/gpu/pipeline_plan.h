/*
 * How the pipelined path cuts a call (pipeline.h): slots of pinned staging,
 * panels of C's columns, row blocks, and the slices of K of the first panels.
 * Shared by pipeline_plan.c, which plans a call within the memory budgets,
 * and pipeline_steps.c and pipeline.c, which run it; nothing outside the
 * pipelined path includes it.
 */
#ifndef TILEDBLAS_GPU_PIPELINE_PLAN_H
#define TILEDBLAS_GPU_PIPELINE_PLAN_H

#include <stdint.h>

#include "core/call.h"
#include "gpu/memory.h"

/* Staging slots: each holds a B panel in and a C panel out. */
#define SLOTS 4
/* Panels narrower than this starve the kernel; fewer than this many leave nothing to overlap. */
#define MIN_PANEL 128
#define TARGET_PANELS 8
/* Row blocks (when C needs several) are whole multiples of the kernels' tiles. */
#define ROW_ALIGN 128
/* Slices of K are whole tiles deep, so that their offsets keep the kernels' 128-bit loads aligned. */
#define DEPTH_ALIGN 128
/* The first slice of K is this fraction of the largest: the GPU starts as soon as it lands. */
#define FIRST_PIECE_SHARE 4

/*
 * Pinned floats per slot: a B panel in and a C panel out, and at least one
 * slice of K of the first panels (a column of op(A), a row of op(B) for each),
 * which is more only when K and the rows are tiny.
 */
static inline int64_t slot_floats(const tb_call *call, int64_t rows, int64_t width)
{
    const int64_t panels = (call->k + rows) * width, slice = rows + SLOTS * width;
    return panels > slice ? panels : slice;
}

/*
 * Device floats: a row block of op(A), packed so that the panels after it keep
 * the kernels' 128-bit loads aligned, then per slot a B panel and a C panel
 * (whole multiples of MIN_PANEL columns: aligned too).
 */
static inline int64_t device_floats(const tb_call *call, int64_t rows, int64_t width)
{
    return tb_packed_floats(rows * call->k) + SLOTS * ((int64_t)call->k * width + rows * width);
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

static inline panel_layout layout_panels(int64_t n, int64_t width)
{
    const int64_t whole = (n + width - 1) / width, last = n - (whole - 1) * width;
    panel_layout layout = {n, width, whole, whole, 0};
    if (whole - 1 >= SLOTS && last >= 2 * MIN_PANEL)
        layout = (panel_layout){n, width, whole + 1, whole - 1, last / 2 / MIN_PANEL * MIN_PANEL};
    return layout;
}

/* The first column of panel q, or n for q == count. */
static inline int64_t panel_start(const panel_layout *layout, int64_t q)
{
    if (q >= layout->count)
        return layout->n;
    return q <= layout->halved ? q * layout->width : layout->halved * layout->width + layout->half;
}

static inline int64_t panel_cols(const panel_layout *layout, int64_t q)
{
    return panel_start(layout, q + 1) - panel_start(layout, q);
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
static inline int64_t piece_depth(int64_t i, int64_t k0, int64_t k, int64_t most)
{
    int64_t first = most / FIRST_PIECE_SHARE / DEPTH_ALIGN * DEPTH_ALIGN;
    first = first > DEPTH_ALIGN ? first : DEPTH_ALIGN;
    const int64_t half = first / 2 / DEPTH_ALIGN * DEPTH_ALIGN, step = half > DEPTH_ALIGN ? half : DEPTH_ALIGN;
    const int64_t depth = first + i * step < most ? first + i * step : most;
    return k - k0 < depth ? k - k0 : depth;
}

#endif /* TILEDBLAS_GPU_PIPELINE_PLAN_H */
