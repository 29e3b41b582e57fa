/*
 * The pipelined path's plan for one call (pipeline.h): the widest panels with
 * all of C in one row block when the pinned staging and device memory allow,
 * else the panel width that needs the fewest row blocks, since each sends B
 * over the bus again.
 */
#include "core/call.h"
#include "gpu/memory.h"
#include "gpu/pipeline.h"
#include "gpu/pipeline_plan.h"

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
