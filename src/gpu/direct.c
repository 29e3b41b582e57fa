/*
 * The direct path: operands already on the device (or managed) are used in
 * place, any others are copied whole into the workspace, one kernel of the
 * ladder computes, and C is copied back. Device pointers always take it; a
 * call on host memory too large for the staged and pipelined paths' pinned
 * staging falls back to it (plain pageable copies), and so do calls on
 * operands of a device other than the first. Also the kernel's timing for
 * the cost model.
 */
#include <stdlib.h>

#include <cuda_runtime_api.h>

#include "core/config.h"
#include "gpu/device.h"
#include "gpu/direct.h"
#include "gpu/host_copy.h"
#include "gpu/memory.h"
#include "kernels.h"

/* A column-major rows x cols operand and where its device copy goes. */
typedef struct {
    const float *host;
    int64_t rows, cols, ld;
    int resident; /* already on the device: used in place */
    float *device;
    int64_t device_ld;
} operand;

static operand describe(const float *p, int64_t rows, int64_t cols, int64_t ld, int resident)
{
    operand op = {.host = p, .rows = rows, .cols = cols, .ld = ld, .resident = resident};
    if (resident) {
        op.device = (float *)p;
        op.device_ld = ld;
    }
    return op;
}

static cudaError_t upload(operand *op)
{
    if (op->resident || op->rows == 0 || op->cols == 0)
        return cudaSuccess;
    return tb_gpu_copy_block(op->device, op->device_ld, op->host, op->ld, op->rows, op->cols,
                             cudaMemcpyHostToDevice, tb_gpu_stream());
}

/*
 * C from the device into the caller's host C. With beta != 0 a failed call is
 * redone on the CPU from the caller's C, which must then be as it was: C lands
 * in a host buffer first and is copied in once every step has succeeded.
 */
static cudaError_t download_c(const tb_call *call, const operand *c)
{
    const int64_t m = call->m, n = call->n;
    float *landing = call->beta != 0.0f ? malloc((size_t)m * (size_t)n * sizeof(float)) : NULL;
    if (call->beta != 0.0f && !landing)
        return cudaErrorMemoryAllocation;
    const cudaStream_t stream = tb_gpu_stream();
    cudaError_t status = tb_gpu_copy_block(landing ? landing : call->c, landing ? m : call->ldc, c->device,
                                           c->device_ld, m, n, cudaMemcpyDeviceToHost, stream);
    /* Also after a failed copy: columns already queued must land before their buffer is freed. */
    const cudaError_t synced = cudaStreamSynchronize(stream);
    if (status == cudaSuccess)
        status = synced;
    if (status == cudaSuccess && landing)
        tb_host_copy(call->c, call->ldc, landing, m, m, n);
    free(landing);
    return status;
}

/* Device memory of the call's own (TILEDBLAS_DEVICE_MB caps it too), in stream order where the device can. */
static cudaError_t allocate_own(size_t floats, float **base)
{
    const size_t bytes = floats * sizeof(float), cap = (size_t)tb_config_get()->device_mb << 20;
    if (cap && bytes > cap)
        return cudaErrorMemoryAllocation;
    return tb_gpu_stream_ordered() ? cudaMallocAsync((void **)base, bytes, tb_gpu_stream())
                                   : cudaMalloc((void **)base, bytes);
}

static cudaError_t release_own(float *base)
{
    return tb_gpu_stream_ordered() ? cudaFreeAsync(base, tb_gpu_stream()) : cudaFree(base);
}

/*
 * The call's device memory: `floats` for the copied operands and, where it
 * fits, the kernel's *scratch (else the kernel runs unsplit: *scratch = 0).
 * On the first device the lane's workspace, kept between calls; on another
 * (whose operands the lanes' memory cannot serve), an allocation of the
 * call's own, *own, released after it.
 */
static cudaError_t take_workspace(size_t floats, int64_t *scratch, float **base, float **own)
{
    if (tb_gpu_on_first_device()) {
        if (*scratch && !tb_gpu_device_fits(floats + (size_t)*scratch))
            *scratch = 0;
        if (!tb_gpu_device_fits(floats + (size_t)*scratch))
            return cudaErrorMemoryAllocation;
        return tb_gpu_workspace(floats + (size_t)*scratch, base);
    }
    *base = NULL;
    if (floats + (size_t)*scratch == 0)
        return cudaSuccess;
    cudaError_t status = allocate_own(floats + (size_t)*scratch, base);
    if (status == cudaErrorMemoryAllocation && *scratch) {
        cudaGetLastError(); /* not sticky */
        *scratch = 0;
        status = floats ? allocate_own(floats, base) : cudaSuccess;
    }
    *own = status == cudaSuccess ? *base : NULL;
    return status;
}

/* The call's operands as the kernel reads them (A and B empty where the reference rule skips them). */
static void describe_call(const tb_call *call, unsigned resident, operand *a, operand *b, operand *c)
{
    const int reads_ab = call->alpha != 0.0f && call->k > 0;
    const int64_t m = call->m, n = call->n, k = reads_ab ? call->k : 0;
    *a = describe(call->a, call->trans_a ? k : m, call->trans_a ? m : k, call->lda, resident & TB_RESIDENT_A);
    *b = describe(call->b, call->trans_b ? n : k, call->trans_b ? k : n, call->ldb, resident & TB_RESIDENT_B);
    *c = describe(call->c, m, n, call->ldc, resident & TB_RESIDENT_C);
}

static size_t copied_floats(const operand *op)
{
    return op->resident ? 0 : (size_t)tb_packed_floats(op->rows * op->cols);
}

size_t tb_direct_copied_floats(const tb_call *call, unsigned resident)
{
    operand a, b, c;
    describe_call(call, resident, &a, &b, &c);
    return copied_floats(&a) + copied_floats(&b) + copied_floats(&c);
}

/*
 * The launch's arguments before the workspace is taken, and the floats the host operands take in it:
 * host operands get their packed leading dimensions and NULL placeholders, 256-byte aligned as their
 * place in the workspace will be, so that the kernel's scratch is planned on what the launch will have.
 */
static tb_gemm_args plan_launch(const tb_call *call, operand *a, operand *b, operand *c, size_t *floats)
{
    const int reads_ab = call->alpha != 0.0f && call->k > 0;
    tb_gemm_args args = {
        .trans_a = call->trans_a, .trans_b = call->trans_b,
        .m = call->m, .n = call->n, .k = reads_ab ? call->k : 0,
        .alpha = reads_ab ? call->alpha : 0.0f, .beta = call->beta,
    };
    operand *staged[3] = {a, b, c};
    *floats = 0;
    for (int i = 0; i < 3; i++)
        if (!staged[i]->resident) {
            *floats += copied_floats(staged[i]);
            staged[i]->device_ld = staged[i]->rows > 0 ? staged[i]->rows : 1;
        }
    args.a = a->device, args.lda = a->device_ld;
    args.b = b->device, args.ldb = b->device_ld;
    args.c = c->device, args.ldc = c->device_ld;
    return args;
}

int64_t tb_direct_scratch_floats(const tb_call *call, unsigned resident, int kernel)
{
    operand a, b, c;
    size_t floats;
    describe_call(call, resident, &a, &b, &c);
    const tb_gemm_args args = plan_launch(call, &a, &b, &c, &floats);
    return tb_kernel_workspace_floats(kernel, &args);
}

static cudaError_t queue_call(const tb_call *call, unsigned resident, int kernel, float **own, int *launched)
{
    operand a, b, c;
    describe_call(call, resident, &a, &b, &c);
    /* The workspace holds the host operands, packed, then the kernel's scratch; without room for the
     * scratch (split-K), the kernel runs unsplit. */
    size_t floats;
    tb_gemm_args args = plan_launch(call, &a, &b, &c, &floats);
    operand *staged[3] = {&a, &b, &c};
    int64_t scratch = tb_kernel_workspace_floats(kernel, &args);
    float *next;
    cudaError_t status;
    if ((status = take_workspace(floats, &scratch, &next, own)) != cudaSuccess)
        return status;
    for (int i = 0; i < 3; i++) {
        if (staged[i]->resident)
            continue;
        staged[i]->device = next;
        next += tb_packed_floats(staged[i]->rows * staged[i]->cols);
    }
    args.workspace = next;
    args.workspace_floats = scratch;

    if ((status = upload(&a)) != cudaSuccess || (status = upload(&b)) != cudaSuccess)
        return status;
    /* beta == 0: C is only written, so it never crosses the bus inward. */
    if (call->beta != 0.0f && (status = upload(&c)) != cudaSuccess)
        return status;

    args.a = a.device, args.lda = a.device_ld;
    args.b = b.device, args.ldb = b.device_ld;
    args.c = c.device, args.ldc = c.device_ld;
    *launched = 1; /* from here a resident C may be written, also by a launch that fails part-way */
    if ((status = tb_kernel_launch(kernel, &args, tb_gpu_stream())) != cudaSuccess)
        return status;
    return c.resident ? cudaStreamSynchronize(tb_gpu_stream()) : download_c(call, &c);
}

/* After an error, copies already queued must not outlive the call: the CPU fallback writes C. */
cudaError_t tb_direct_sgemm(const tb_call *call, unsigned resident, int kernel, int *launched)
{
    float *own = NULL;
    int reached = 0;
    cudaError_t status = queue_call(call, resident, kernel, &own, &reached);
    if (launched)
        *launched = reached;
    if (status != cudaSuccess)
        cudaStreamSynchronize(tb_gpu_stream());
    if (own) {
        const cudaError_t released = release_own(own);
        if (status == cudaSuccess)
            status = released;
    }
    return status;
}

/* An n^3 launch on whatever the workspace holds: only its duration matters. */
cudaError_t tb_direct_time_kernel(int kernel, int n, double *seconds)
{
    const int64_t size = n;
    tb_gemm_args args = {.m = size, .n = size, .k = size, .alpha = 1.0f, .beta = 0.0f,
                         .lda = size, .ldb = size, .ldc = size};
    const int64_t scratch = tb_kernel_workspace_floats(kernel, &args);
    float *device;
    cudaEvent_t start = NULL, stop = NULL;
    cudaError_t status;
    if (!tb_gpu_device_fits((size_t)(3 * size * size + scratch)))
        return cudaErrorMemoryAllocation;
    if ((status = tb_gpu_workspace((size_t)(3 * size * size + scratch), &device)) != cudaSuccess)
        return status;
    args.a = device, args.b = device + size * size, args.c = device + 2 * size * size;
    args.workspace = device + 3 * size * size, args.workspace_floats = scratch;
    const cudaStream_t stream = tb_gpu_stream();
    float ms = 0.0f;
    if ((status = cudaMemsetAsync(device, 0, (size_t)(2 * size * size) * sizeof(float), stream)) == cudaSuccess &&
        (status = cudaEventCreate(&start)) == cudaSuccess && (status = cudaEventCreate(&stop)) == cudaSuccess &&
        (status = tb_kernel_launch(kernel, &args, stream)) == cudaSuccess && /* warm-up */
        (status = cudaEventRecord(start, stream)) == cudaSuccess &&
        (status = tb_kernel_launch(kernel, &args, stream)) == cudaSuccess &&
        (status = cudaEventRecord(stop, stream)) == cudaSuccess &&
        (status = cudaEventSynchronize(stop)) == cudaSuccess)
        status = cudaEventElapsedTime(&ms, start, stop);
    if (start)
        cudaEventDestroy(start);
    if (stop)
        cudaEventDestroy(stop);
    *seconds = 1e-3 * ms;
    return status;
}
