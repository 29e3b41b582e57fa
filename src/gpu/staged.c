/*
 * The staged GPU path for calls on host memory too small to pipeline.
 *
 * Pageable memory crosses the bus at 7-10 GB/s, pinned at ~55 GB/s, so each
 * operand is copied by the host copy pool into pinned staging, in chunks of
 * columns whose DMA starts as soon as each is staged: the host copy of chunk
 * i+1 overlaps the DMA of chunk i. After the kernel, C comes back the same way
 * in reverse, each chunk reaching the caller once its DMA is done. Operands
 * already in pinned memory skip the staging. Staged calls run on either lane
 * (route.c), each with its own stream, events and staging, so two of
 * them from different threads overlap.
 */
#include <cuda_runtime_api.h>

#include "gpu/device.h"
#include "gpu/host_copy.h"
#include "gpu/lanes.h"
#include "gpu/memory.h"
#include "gpu/staged.h"
#include "kernels.h"

/* At most this many chunks per operand: enough to overlap, few enough to stay cheap. */
#define CHUNKS 8
/* Smaller chunks cost more in per-copy overhead than their overlap saves. */
#define MIN_CHUNK_BYTES ((int64_t)1 << 20)

/* One per lane: calls on both lanes run at once. */
typedef struct {
    cudaStream_t stream;
    cudaEvent_t landed[CHUNKS]; /* chunk j of C is back in pinned memory */
    int ready;
} staged_lane;

static staged_lane lanes[TB_GPU_LANES];

/* After a failed creation (out of memory leaves the GPU usable): the next call starts afresh. */
static void destroy_resources(staged_lane *staged)
{
    for (int i = 0; i < CHUNKS; i++)
        tb_destroy_event(&staged->landed[i]);
    tb_destroy_stream(&staged->stream);
}

static cudaError_t create_resources(staged_lane *staged)
{
    cudaError_t status = cudaStreamCreateWithFlags(&staged->stream, cudaStreamNonBlocking);
    for (int i = 0; i < CHUNKS && status == cudaSuccess; i++)
        status = cudaEventCreateWithFlags(&staged->landed[i], cudaEventDisableTiming);
    if (status != cudaSuccess)
        destroy_resources(staged);
    staged->ready = status == cudaSuccess;
    return status;
}

/* Columns per chunk of a rows x cols block: at most CHUNKS chunks, none under MIN_CHUNK_BYTES. */
static int64_t chunk_cols(int64_t rows, int64_t cols)
{
    const int64_t per = (cols + CHUNKS - 1) / CHUNKS;
    const int64_t least = rows > 0 ? (MIN_CHUNK_BYTES / (int64_t)sizeof(float) + rows - 1) / rows : cols;
    return per > least ? per : least;
}

/* A column-major operand as stored: rows x cols with leading dimension ld. */
typedef struct {
    const float *host;
    int64_t rows, cols, ld;
    int pinned; /* the copy engines reach it directly: no staging */
} block;

static int64_t floats_of(block b)
{
    return b.rows * b.cols;
}

/* Host block -> pinned (dense) -> device (dense, leading dimension rows), chunk by chunk. */
static cudaError_t upload(staged_lane *staged, block b, float *pinned, float *device)
{
    if (b.pinned)
        return tb_gpu_copy_block(device, b.rows, b.host, b.ld, b.rows, b.cols, cudaMemcpyHostToDevice,
                                 staged->stream);
    const int64_t per = chunk_cols(b.rows, b.cols);
    for (int64_t j0 = 0; j0 < b.cols; j0 += per) {
        const int64_t cols = b.cols - j0 < per ? b.cols - j0 : per;
        tb_host_copy(pinned + j0 * b.rows, b.rows, b.host + j0 * b.ld, b.ld, b.rows, cols);
        cudaError_t status = cudaMemcpyAsync(device + j0 * b.rows, pinned + j0 * b.rows,
                                             (size_t)(b.rows * cols) * sizeof(float),
                                             cudaMemcpyHostToDevice, staged->stream);
        if (status != cudaSuccess)
            return status;
    }
    return cudaSuccess;
}

/*
 * The operands (C only when given) to their places, packed from offset 0 in
 * A, B, C order. Small ones go over in one DMA: each costs microseconds to issue.
 */
static cudaError_t upload_operands(staged_lane *staged, block a, block b, const block *c, float *pinned,
                                   float *device, int64_t c_at)
{
    const int64_t b_at = tb_packed_floats(floats_of(a)), end = c ? c_at + floats_of(*c) : b_at + floats_of(b);
    if (end * (int64_t)sizeof(float) > MIN_CHUNK_BYTES || a.pinned || b.pinned || (c && c->pinned)) {
        cudaError_t status;
        if ((status = upload(staged, a, pinned, device)) != cudaSuccess ||
            (status = upload(staged, b, pinned + b_at, device + b_at)) != cudaSuccess)
            return status;
        return c ? upload(staged, *c, pinned + c_at, device + c_at) : cudaSuccess;
    }
    tb_host_copy(pinned, a.rows, a.host, a.ld, a.rows, a.cols);
    tb_host_copy(pinned + b_at, b.rows, b.host, b.ld, b.rows, b.cols);
    if (c)
        tb_host_copy(pinned + c_at, c->rows, c->host, c->ld, c->rows, c->cols);
    return cudaMemcpyAsync(device, pinned, (size_t)end * sizeof(float), cudaMemcpyHostToDevice, staged->stream);
}

/*
 * Device C -> pinned -> the caller's C, chunk by chunk; *cols_done counts the
 * columns delivered. A pinned C is written by the copy engine directly when
 * beta == 0, since then a copy cut short leaves nothing the CPU would read.
 */
static cudaError_t download(staged_lane *staged, const tb_call *call, int c_pinned, const float *device,
                            float *pinned, int64_t *cols_done)
{
    const int64_t m = call->m, n = call->n, per = chunk_cols(m, n);
    cudaError_t status;
    if (c_pinned && call->beta == 0.0f) {
        if ((status = tb_gpu_copy_block(call->c, call->ldc, device, m, m, n, cudaMemcpyDeviceToHost,
                                        staged->stream)) != cudaSuccess ||
            (status = cudaStreamSynchronize(staged->stream)) != cudaSuccess)
            return status;
        *cols_done = n;
        return cudaSuccess;
    }
    for (int64_t j0 = 0, i = 0; j0 < n; j0 += per, i++) {
        const int64_t cols = n - j0 < per ? n - j0 : per;
        if ((status = cudaMemcpyAsync(pinned + j0 * m, device + j0 * m, (size_t)(m * cols) * sizeof(float),
                                      cudaMemcpyDeviceToHost, staged->stream)) != cudaSuccess ||
            (status = cudaEventRecord(staged->landed[i], staged->stream)) != cudaSuccess)
            return status;
    }
    for (int64_t j0 = 0, i = 0; j0 < n; j0 += per, i++) {
        const int64_t cols = n - j0 < per ? n - j0 : per;
        if ((status = cudaEventSynchronize(staged->landed[i])) != cudaSuccess)
            return status;
        tb_host_copy(call->c + j0 * call->ldc, call->ldc, pinned + j0 * m, m, m, cols);
        *cols_done = j0 + cols;
    }
    return cudaSuccess;
}

/* The operands as stored: op(A) is m x k, kept k x m when transposed; likewise B. */
static void operands_of(const tb_call *call, unsigned pinned, block *a, block *b, block *c)
{
    const int64_t m = call->m, n = call->n, k = call->k;
    *a = (block){call->a, call->trans_a ? k : m, call->trans_a ? m : k, call->lda, !!(pinned & TB_RESIDENT_A)};
    *b = (block){call->b, call->trans_b ? n : k, call->trans_b ? k : n, call->ldb, !!(pinned & TB_RESIDENT_B)};
    *c = (block){call->c, m, n, call->ldc, !!(pinned & TB_RESIDENT_C)};
}

/*
 * The kernel's view of the operands packed on the device, pointers aside
 * (set once the workspace exists; packing keeps them 256-byte aligned):
 * the plan and its scratch are sized on the leading dimensions it will run with.
 */
static tb_gemm_args kernel_args(const tb_call *call, const block *a, const block *b, const block *c)
{
    return (tb_gemm_args){.trans_a = call->trans_a, .trans_b = call->trans_b, .m = call->m,
                          .n = call->n, .k = call->k, .alpha = call->alpha, .beta = call->beta,
                          .lda = a->rows > 0 ? a->rows : 1, .ldb = b->rows > 0 ? b->rows : 1, .ldc = c->rows};
}

/* A, B and C packed; C's pinned region serves both directions: in before the kernel, out after it. */
int64_t tb_staged_pinned_floats(const tb_call *call)
{
    block a, b, c;
    operands_of(call, 0, &a, &b, &c);
    return tb_packed_floats(floats_of(a)) + tb_packed_floats(floats_of(b)) + tb_packed_floats(floats_of(c));
}

int tb_staged_fits(const tb_call *call, int kernel)
{
    block a, b, c;
    operands_of(call, 0, &a, &b, &c);
    const tb_gemm_args args = kernel_args(call, &a, &b, &c);
    const int64_t staging = tb_staged_pinned_floats(call);
    return (size_t)staging <= tb_gpu_pinned_budget() &&
           tb_gpu_device_fits((size_t)(staging + tb_kernel_workspace_floats(kernel, &args)));
}

cudaError_t tb_staged_sgemm(const tb_call *call, unsigned pinned_operands, int kernel, tb_gpu_progress *progress)
{
    block a, b, c;
    operands_of(call, pinned_operands, &a, &b, &c);
    tb_gemm_args args = kernel_args(call, &a, &b, &c);
    const int64_t a_at = 0, b_at = tb_packed_floats(floats_of(a)), c_at = b_at + tb_packed_floats(floats_of(b));
    const int64_t staging = c_at + tb_packed_floats(floats_of(c));
    const int64_t scratch = tb_kernel_workspace_floats(kernel, &args);
    staged_lane *staged = &lanes[tb_gpu_lane()];
    float *pinned, *device;
    cudaError_t status;
    if ((!staged->ready && (status = create_resources(staged)) != cudaSuccess) ||
        (status = tb_gpu_pinned((size_t)staging, &pinned)) != cudaSuccess ||
        (status = tb_gpu_workspace((size_t)(staging + scratch), &device)) != cudaSuccess)
        return status;
    args.a = device + a_at;
    args.b = device + b_at;
    args.c = device + c_at;
    args.workspace = device + staging;
    args.workspace_floats = scratch;
    /* beta == 0: C is only written, so it never crosses the bus inward. */
    const int with_c = call->beta != 0.0f;
    if ((status = with_c ? upload_operands(staged, a, b, &c, pinned, device, c_at)
                         : upload_operands(staged, a, b, NULL, pinned, device, c_at)) != cudaSuccess ||
        (status = tb_kernel_launch(kernel, &args, staged->stream)) != cudaSuccess ||
        (status = download(staged, call, c.pinned, device + c_at, pinned + c_at, &progress->cols_done)) != cudaSuccess) {
        cudaStreamSynchronize(staged->stream); /* nothing may still use the staging when the caller moves on */
        return status;
    }
    return cudaSuccess;
}
