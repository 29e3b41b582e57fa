/*
 * The steps the pipelined path takes for each panel of C (pipeline_steps.c),
 * and the state they share with the phases that order them (pipeline.c):
 * stage its B in, launch its kernel, drain its C out to pinned memory,
 * finish it into the caller's C. Nothing else includes this header.
 */
#ifndef TILEDBLAS_GPU_PIPELINE_STEPS_H
#define TILEDBLAS_GPU_PIPELINE_STEPS_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#include "core/call.h"
#include "gpu/pipeline_plan.h"
#include "kernels.h"

/* Streams the kernels take in turn; each has its own scratch, since their kernels may run at once. */
#define COMPUTE_STREAMS 2
/* The last panel comes back in parts, each copied into the caller's C as soon as it lands. */
#define LAST_PANEL_PARTS 4

/* A lane's streams and events. */
typedef struct {
    cudaStream_t h2d, compute[COMPUTE_STREAMS], d2h;
    cudaEvent_t staged[SLOTS];   /* the slot's pinned input has been copied to the device */
    cudaEvent_t computed[SLOTS]; /* the slot's kernel has finished */
    cudaEvent_t drained[SLOTS];  /* the slot's C panel is back in pinned memory */
    cudaEvent_t part_drained[LAST_PANEL_PARTS]; /* a part of the last panel is */
    int ready;
} pipeline;

_Static_assert(SLOTS % COMPUTE_STREAMS == 0, "a slot's kernels keep to one stream, in order");

/* The compute stream of slot s's kernels. */
static inline int compute_index(int s)
{
    return s % COMPUTE_STREAMS;
}

/* Everything one row block's panels share. */
typedef struct {
    pipeline *p;
    const tb_call *call; /* the row block */
    int kernel;          /* the call's; each launch runs tb_gpu_launch_kernel's choice for its shape */
    int tensor_runs;     /* launches that ran the tensor-core rung */
    unsigned pinned;     /* TB_RESIDENT_* bits of operands the copy engines reach directly */
    int direct_out;      /* C is pinned and beta == 0: panels go straight to the caller's C */
    panel_layout panels;
    int64_t lead;        /* the first panels, one per slot, computed as op(A) arrives */
    int64_t slot_floats; /* pinned floats per slot: a B panel in and a C panel out, or a piece of the first panels */
    tb_gemm_args args;   /* what all launches share: transposes, alpha, m, lda, ldc, scratch */
    float *a_dev, *b_dev[SLOTS], *c_dev[SLOTS];
    float *b_pin[SLOTS], *c_out_pin[SLOTS];
} run_state;

/*
 * Where the copy engines take rows x cols of an operand (column-major, leading
 * dimension *ld) from: the caller's memory when it is pinned, else the pinned
 * staging at *stage, where the host copies it first (*ld then becomes rows,
 * and *stage moves past it).
 */
const float *tb_pipeline_stage_block(int direct, const float *src, int64_t *ld, int64_t rows, int64_t cols,
                                     float **stage, const char *what, int64_t index);

/* Rows x cols from host memory at src to the device at dst, on the h2d stream. */
cudaError_t tb_pipeline_dma_block(run_state *r, float *dst, int64_t dst_ld, const float *src, int64_t src_ld,
                                  int64_t rows, int64_t cols, const char *what, int64_t index);

/*
 * After the DMAs out of slot s's staging: it is free again once they are done,
 * and the kernels wait for them (a piece feeds the kernels of every stream).
 */
cudaError_t tb_pipeline_mark_staged(pipeline *p, int s);

/*
 * Host copy of panel q's B into its slot's pinned input, then the DMA to the
 * device; a B in pinned memory goes to the device directly.
 */
cudaError_t tb_panel_stage(run_state *r, int64_t q);

/*
 * The kernel's arguments for panel q over `depth` of K, pointers aside: beta
 * is 0 for the first slice of a sum over K and 1 for those that add to it.
 * op(B)'s slice is stored alone, depth x cols (cols x depth when transposed).
 */
tb_gemm_args tb_panel_launch_shape(const run_state *r, int64_t q, int64_t depth, float beta);

/* The kernel of panel q over k0.. (depth of them), once its slot's C panel has gone out. */
cudaError_t tb_panel_launch(run_state *r, int64_t q, int64_t k0, int64_t depth, float beta);

/*
 * Panel q's C from the device into its slot's pinned output (which, for the
 * first panels, staged pieces: their DMAs precede this on the GPU).
 */
cudaError_t tb_panel_drain(run_state *r, int64_t q);

/*
 * Panel q's alpha*op(A)*op(B) from pinned memory into the caller's C, plus
 * beta*C when beta != 0 (reference rule: beta == 0 never reads C): from here
 * on the panel is final. *cols_done moves past each part as it lands in C,
 * so that after an error the CPU computes only what C does not hold yet
 * (with beta != 0, a part combined twice would be wrong).
 */
cudaError_t tb_panel_finish(run_state *r, int64_t q, int64_t *cols_done);

#endif /* TILEDBLAS_GPU_PIPELINE_STEPS_H */
