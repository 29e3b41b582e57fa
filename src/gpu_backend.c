/*
 * The GPU path: device set-up, where pointers live, the device workspace and
 * pinned staging of each lane (the turns: gpu_lanes.c, the budgets here), and
 * the direct path: operands already on the device (or
 * managed) are used in place, any others are copied to the workspace, one
 * kernel of the ladder computes, C is copied back. Calls on host memory take
 * the staged (gpu_staged.c) or pipelined (gpu_pipeline.c) path when they
 * fit it. Nothing here runs before the first GPU-eligible call.
 */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "kernels.h"

static struct {
    pthread_once_t once;
    atomic_int usable;
    char why_not[160];
    int device;
    size_t max_pitch;
    size_t kept_workspace_bytes; /* a larger workspace is released after the call */
    cudaStream_t stream;         /* the direct path's, on the first lane */
    atomic_int driver_seen;
    atomic_ullong objects_without_driver; /* the loader's count at the last walk that missed */
} gpu = {.once = PTHREAD_ONCE_INIT};

/* The lane of the calling thread's turn (valid between begin_turn and end_turn). */
static _Thread_local int current_lane;

/* Per lane, under its turn: the last cudaMemGetInfo's status, and whether the last fit check said no
 * because that query failed. */
static cudaError_t memory_query[TB_GPU_LANES];
static int refused_unknown_budget[TB_GPU_LANES];

int tb_gpu_lane(void)
{
    return current_lane;
}

static void disable(const char *what, cudaError_t status)
{
    /* Both lanes may fail at once: the first reason is kept, written before usable drops. */
    static pthread_mutex_t once_at_a_time = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&once_at_a_time);
    if (!gpu.why_not[0])
        snprintf(gpu.why_not, sizeof gpu.why_not, "%s: %s", what, cudaGetErrorString(status));
    atomic_store(&gpu.usable, 0);
    pthread_mutex_unlock(&once_at_a_time);
}

/* A forked child cannot use its parent's CUDA context, and no thread holds its locks. */
static void after_fork_in_child(void)
{
    tb_lanes_after_fork();
    if (atomic_load(&gpu.usable))
        snprintf(gpu.why_not, sizeof gpu.why_not, "forked after CUDA was initialised");
    atomic_store(&gpu.usable, 0);
}

static void init_gpu(void)
{
    int count = 0;
    cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
        disable("no CUDA device", status);
        return;
    }
    if (count == 0) {
        snprintf(gpu.why_not, sizeof gpu.why_not, "no CUDA device");
        return;
    }
    int pitch = 0;
    size_t free_bytes = 0, total_bytes = 0;
    if ((status = cudaGetDevice(&gpu.device)) != cudaSuccess ||
        (status = cudaSetDevice(gpu.device)) != cudaSuccess ||
        (status = cudaDeviceGetAttribute(&pitch, cudaDevAttrMaxPitch, gpu.device)) != cudaSuccess ||
        (status = cudaMemGetInfo(&free_bytes, &total_bytes)) != cudaSuccess ||
        (status = cudaStreamCreateWithFlags(&gpu.stream, cudaStreamNonBlocking)) != cudaSuccess) {
        disable("CUDA initialisation failed", status);
        return;
    }
    gpu.max_pitch = (size_t)pitch;
    /* Up to a quarter of the device stays allocated between calls, both lanes together; more (an
     * out-of-core call takes nearly all of it) would starve the application's own allocations. */
    gpu.kept_workspace_bytes = total_bytes / 4;
    pthread_atfork(NULL, NULL, after_fork_in_child);
    atomic_store(&gpu.usable, 1);
}

int tb_gpu_usable(void)
{
    pthread_once(&gpu.once, init_gpu);
    return atomic_load(&gpu.usable);
}

const char *tb_gpu_unusable_reason(void)
{
    return gpu.why_not;
}

/* The loader's count of loaded objects when a walk starts; 0 where the loader keeps none. */
typedef struct {
    int visited;
    unsigned long long adds;
} object_walk;

/* dl_iterate_phdr visitor: 1 at the CUDA driver; -1 at once if nothing was loaded since the last miss. */
static int find_cuda_driver(struct dl_phdr_info *info, size_t size, void *data)
{
    object_walk *walk = data;
    if (!walk->visited++) {
        walk->adds = size >= offsetof(struct dl_phdr_info, dlpi_subs) ? info->dlpi_adds : 0;
        if (walk->adds && walk->adds == atomic_load(&gpu.objects_without_driver))
            return -1;
    }
    return info->dlpi_name && strstr(info->dlpi_name, "libcuda.so") != NULL;
}

/*
 * A process that never loaded the CUDA driver cannot hold device pointers.
 * The loader counts the objects it has loaded, so after one walk of the list
 * that missed, a call costs one visit until something new is loaded; once
 * seen, the driver stays.
 */
int tb_process_has_cuda(void)
{
    if (atomic_load(&gpu.driver_seen))
        return 1;
    object_walk walk = {0, 0};
    const int found = dl_iterate_phdr(find_cuda_driver, &walk);
    if (found == 1)
        atomic_store(&gpu.driver_seen, 1);
    else if (found == 0)
        atomic_store(&gpu.objects_without_driver, walk.adds);
    return found == 1;
}

/*
 * The driver's own entry points, from the libcuda.so.1 the process has loaded:
 * they answer where our runtime cannot start (a driver older than it), create
 * no context, and save and restore the application's current context.
 */
static struct {
    pthread_once_t once;
    CUresult (*pointer_attributes)(unsigned count, CUpointer_attribute *attributes, void **data,
                                   CUdeviceptr ptr);
    CUresult (*get_current)(CUcontext *context);
    CUresult (*set_current)(CUcontext context);
} driver = {.once = PTHREAD_ONCE_INIT};

static void find_driver(void)
{
    void *handle = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (!handle)
        return;
    *(void **)&driver.pointer_attributes = dlsym(handle, "cuPointerGetAttributes");
    *(void **)&driver.get_current = dlsym(handle, "cuCtxGetCurrent");
    *(void **)&driver.set_current = dlsym(handle, "cuCtxSetCurrent");
}

tb_mem_kind tb_gpu_mem_kind(const void *p, int *device)
{
    pthread_once(&driver.once, find_driver);
    unsigned type = 0, managed = 0;
    int ordinal = -1;
    /* One query per pointer (this runs on every call): a pointer the driver does not
     * know comes back with the attributes unset, which reads as plain host memory. */
    CUpointer_attribute attributes[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                         CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
    void *values[3] = {&type, &managed, &ordinal};
    if (!p || !driver.pointer_attributes ||
        driver.pointer_attributes(3, attributes, values, (CUdeviceptr)(uintptr_t)p) != CUDA_SUCCESS)
        return TB_MEM_HOST;
    *device = ordinal;
    if (managed)
        return TB_MEM_MANAGED;
    return type == CU_MEMORYTYPE_DEVICE ? TB_MEM_DEVICE : type == CU_MEMORYTYPE_HOST ? TB_MEM_PINNED : TB_MEM_HOST;
}

int tb_gpu_device(void)
{
    return gpu.device;
}

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

/* A buffer kept between calls and grown on demand: what it takes to allocate and free one. */
typedef struct {
    float *base;
    _Atomic size_t bytes; /* read by the other lane's budget */
    cudaError_t (*allocate)(void **p, size_t bytes);
    cudaError_t (*release)(void *p);
} kept_buffer;

static cudaError_t allocate_pinned(void **p, size_t bytes)
{
    return cudaHostAlloc(p, bytes, cudaHostAllocDefault);
}

static kept_buffer workspaces[TB_GPU_LANES] = {{NULL, 0, cudaMalloc, cudaFree}, {NULL, 0, cudaMalloc, cudaFree}};
static kept_buffer pinned_buffers[TB_GPU_LANES] = {{NULL, 0, allocate_pinned, cudaFreeHost},
                                                   {NULL, 0, allocate_pinned, cudaFreeHost}};
_Static_assert(TB_GPU_LANES == 2, "one initialiser per lane");

/* Leave the driver and the application this much of the device, at least 256 MB. */
static size_t device_reserve(size_t total)
{
    const size_t least = (size_t)256 << 20;
    return total / 64 > least ? total / 64 : least;
}

/* Device bytes the lanes other than `lane` hold. */
static size_t held_by_other_lanes(int lane)
{
    size_t others = 0;
    for (int i = 0; i < TB_GPU_LANES; i++)
        others += i == lane ? 0 : atomic_load(&workspaces[i].bytes);
    return others;
}

/* TILEDBLAS_DEVICE_MB less what the other lanes hold, the cap being for all of them: 0 no cap, 1 none left. */
static size_t cap_left(int lane)
{
    const size_t cap = (size_t)tb_config_get()->device_mb << 20;
    const size_t others = held_by_other_lanes(lane);
    return !cap ? 0 : cap > others ? cap - others : 1;
}

/* A failed query leaves no budget (see tb_gpu_device_fits). */
size_t tb_gpu_memory_budget(void)
{
    size_t free_bytes = 0, total = 0, budget = 0;
    /* The lane's own workspace counts as free: growing it frees it first. */
    const int lane = current_lane;
    memory_query[lane] = cudaMemGetInfo(&free_bytes, &total);
    if (memory_query[lane] == cudaSuccess) {
        const size_t usable = free_bytes + workspaces[lane].bytes, reserve = device_reserve(total);
        budget = usable > reserve ? usable - reserve : 0;
    } else {
        cudaGetLastError(); /* a later launch check must not take it for its own */
    }
    const size_t cap = cap_left(lane);
    if (cap && cap < budget)
        budget = cap;
    return budget / sizeof(float);
}

/*
 * A call refused because the device could not say how much memory is free
 * fails with the query's error rather than out of memory (end_turn), so that
 * a broken device is disabled instead of every call going to the CPU as too
 * large; the last check decides, so a real shortage later in the turn stays one.
 */
int tb_gpu_device_fits(size_t floats)
{
    const int lane = current_lane;
    const size_t cap = cap_left(lane);
    refused_unknown_budget[lane] = 0;
    if (cap && floats * sizeof(float) > cap)
        return 0;
    if (floats * sizeof(float) <= workspaces[lane].bytes)
        return 1;
    const int fits = floats <= tb_gpu_memory_budget();
    refused_unknown_budget[lane] = !fits && memory_query[lane] != cudaSuccess;
    return fits;
}

/* The old buffer goes first: both may not fit at once. */
static cudaError_t grow(kept_buffer *buffer, size_t floats, float **base)
{
    const size_t bytes = floats * sizeof(float);
    *base = buffer->base;
    if (bytes <= buffer->bytes)
        return cudaSuccess;
    if (buffer->base) {
        cudaError_t status = buffer->release(buffer->base);
        buffer->base = NULL;
        buffer->bytes = 0;
        if (status != cudaSuccess)
            return status;
    }
    cudaError_t status = buffer->allocate((void **)&buffer->base, bytes);
    if (status != cudaSuccess) {
        buffer->base = NULL;
        return status;
    }
    buffer->bytes = bytes;
    *base = buffer->base;
    return cudaSuccess;
}

/* Fit checks of the two lanes can race: the cap is checked again where the workspace grows, one lane at a time. */
cudaError_t tb_gpu_workspace(size_t floats, float **base)
{
    static pthread_mutex_t growing = PTHREAD_MUTEX_INITIALIZER;
    kept_buffer *workspace = &workspaces[current_lane];
    if (floats * sizeof(float) <= workspace->bytes)
        return grow(workspace, floats, base);
    pthread_mutex_lock(&growing);
    const size_t cap = cap_left(current_lane);
    const cudaError_t status =
        cap && floats * sizeof(float) > cap ? cudaErrorMemoryAllocation : grow(workspace, floats, base);
    pthread_mutex_unlock(&growing);
    return status;
}

/* The second lane's share of TILEDBLAS_PINNED_MB; the first has the rest. */
#define SECOND_LANE_PINNED_SHARE 8

static size_t pinned_budget_of(int lane)
{
    const size_t all = ((size_t)tb_config_get()->pinned_mb << 20) / sizeof(float);
    const size_t second = all / SECOND_LANE_PINNED_SHARE;
    return lane == 0 ? all - second : second;
}

size_t tb_gpu_pinned_budget(void)
{
    return pinned_budget_of(current_lane);
}

/* Callers keep within the budget. */
cudaError_t tb_gpu_pinned(size_t floats, float **base)
{
    return grow(&pinned_buffers[current_lane], floats, base);
}

/* 2D copies need pitches below the device's limit; wider leading dimensions go column by column. */
cudaError_t tb_gpu_copy_block(float *dst, int64_t dst_ld, const float *src, int64_t src_ld, int64_t rows,
                              int64_t cols, enum cudaMemcpyKind kind, cudaStream_t stream)
{
    const size_t width = (size_t)rows * sizeof(float);
    if (rows == src_ld && rows == dst_ld)
        return cudaMemcpyAsync(dst, src, width * (size_t)cols, kind, stream);
    const size_t dst_pitch = (size_t)dst_ld * sizeof(float), src_pitch = (size_t)src_ld * sizeof(float);
    if (dst_pitch <= gpu.max_pitch && src_pitch <= gpu.max_pitch)
        return cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, width, (size_t)cols, kind, stream);
    for (int64_t j = 0; j < cols; j++) {
        cudaError_t status = cudaMemcpyAsync(dst + j * dst_ld, src + j * src_ld, width, kind, stream);
        if (status != cudaSuccess)
            return status;
    }
    return cudaSuccess;
}

static cudaError_t upload(operand *op)
{
    if (op->resident || op->rows == 0 || op->cols == 0)
        return cudaSuccess;
    return tb_gpu_copy_block(op->device, op->device_ld, op->host, op->ld, op->rows, op->cols,
                             cudaMemcpyHostToDevice, gpu.stream);
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
    cudaError_t status = tb_gpu_copy_block(landing ? landing : call->c, landing ? m : call->ldc, c->device,
                                           c->device_ld, m, n, cudaMemcpyDeviceToHost, gpu.stream);
    /* Also after a failed copy: columns already queued must land before their buffer is freed. */
    const cudaError_t synced = cudaStreamSynchronize(gpu.stream);
    if (status == cudaSuccess)
        status = synced;
    if (status == cudaSuccess && landing)
        tb_host_copy(call->c, call->ldc, landing, m, m, n);
    free(landing);
    return status;
}

static cudaError_t queue_call(const tb_call *call, unsigned resident, int kernel)
{
    const int reads_ab = call->alpha != 0.0f && call->k > 0;
    const int64_t m = call->m, n = call->n, k = reads_ab ? call->k : 0;
    operand a = describe(call->a, call->trans_a ? k : m, call->trans_a ? m : k, call->lda,
                         resident & TB_RESIDENT_A);
    operand b = describe(call->b, call->trans_b ? n : k, call->trans_b ? k : n, call->ldb,
                         resident & TB_RESIDENT_B);
    operand c = describe(call->c, m, n, call->ldc, resident & TB_RESIDENT_C);

    tb_gemm_args args = {
        .trans_a = call->trans_a, .trans_b = call->trans_b,
        .m = m, .n = n, .k = k,
        .alpha = reads_ab ? call->alpha : 0.0f, .beta = call->beta,
    };
    /* The workspace holds the host operands, packed, then the kernel's scratch. */
    operand *staged[3] = {&a, &b, &c};
    size_t floats = 0;
    for (int i = 0; i < 3; i++)
        if (!staged[i]->resident) {
            floats += (size_t)tb_packed_floats(staged[i]->rows * staged[i]->cols);
            staged[i]->device_ld = staged[i]->rows > 0 ? staged[i]->rows : 1;
        }
    /* The scratch is planned on the leading dimensions and alignment the launch will have (packed
     * operands are 256-byte aligned, as their NULL placeholders are). Without room for it (split-K),
     * the kernel runs unsplit. */
    args.a = a.device, args.lda = a.device_ld;
    args.b = b.device, args.ldb = b.device_ld;
    args.c = c.device, args.ldc = c.device_ld;
    int64_t scratch = tb_kernel_workspace_floats(kernel, &args);
    if (scratch && !tb_gpu_device_fits(floats + (size_t)scratch))
        scratch = 0;
    if (!tb_gpu_device_fits(floats + (size_t)scratch))
        return cudaErrorMemoryAllocation;
    float *next;
    cudaError_t status = tb_gpu_workspace(floats + (size_t)scratch, &next);
    if (status != cudaSuccess)
        return status;
    for (int i = 0; i < 3; i++) {
        if (staged[i]->resident)
            continue;
        staged[i]->device = next;
        next += tb_packed_floats(staged[i]->rows * staged[i]->cols);
    }
    args.workspace = next;
    args.workspace_floats = scratch;

    /* The application may still be writing resident operands on its own streams. */
    if (a.resident || b.resident || c.resident)
        if ((status = cudaDeviceSynchronize()) != cudaSuccess)
            return status;
    if ((status = upload(&a)) != cudaSuccess || (status = upload(&b)) != cudaSuccess)
        return status;
    /* beta == 0: C is only written, so it never crosses the bus inward. */
    if (call->beta != 0.0f && (status = upload(&c)) != cudaSuccess)
        return status;

    args.a = a.device, args.lda = a.device_ld;
    args.b = b.device, args.ldb = b.device_ld;
    args.c = c.device, args.ldc = c.device_ld;
    if ((status = tb_kernel_launch(kernel, &args, gpu.stream)) != cudaSuccess)
        return status;
    return c.resident ? cudaStreamSynchronize(gpu.stream) : download_c(call, &c);
}

/* After an error, copies already queued must not outlive the call: the CPU fallback writes C. */
static cudaError_t run_call(const tb_call *call, unsigned resident, int kernel)
{
    const cudaError_t status = queue_call(call, resident, kernel);
    if (status != cudaSuccess)
        cudaStreamSynchronize(gpu.stream);
    return status;
}

/* An n^3 launch on whatever the workspace holds: only its duration matters. */
static cudaError_t time_kernel_locked(int kernel, int n, double *seconds)
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
    float ms = 0.0f;
    if ((status = cudaMemsetAsync(device, 0, (size_t)(2 * size * size) * sizeof(float), gpu.stream)) == cudaSuccess &&
        (status = cudaEventCreate(&start)) == cudaSuccess && (status = cudaEventCreate(&stop)) == cudaSuccess &&
        (status = tb_kernel_launch(kernel, &args, gpu.stream)) == cudaSuccess && /* warm-up */
        (status = cudaEventRecord(start, gpu.stream)) == cudaSuccess &&
        (status = tb_kernel_launch(kernel, &args, gpu.stream)) == cudaSuccess &&
        (status = cudaEventRecord(stop, gpu.stream)) == cudaSuccess &&
        (status = cudaEventSynchronize(stop)) == cudaSuccess)
        status = cudaEventElapsedTime(&ms, start, stop);
    if (start)
        cudaEventDestroy(start);
    if (stop)
        cudaEventDestroy(stop);
    *seconds = 1e-3 * ms;
    return status;
}

static int is_large(const tb_call *call)
{
    return 2.0 * call->m * call->n * call->k >= tb_config_get()->pipeline_min_flops;
}

/*
 * Host operands: large calls are pipelined, smaller ones staged through pinned
 * memory whole; a call too large for both (tiny N, huge A) falls back to plain
 * pageable copies, and one too large for the device to the CPU. On the second
 * lane a call runs as second_lane_runs admitted it: `admitted` is its plan
 * when pipelined.
 */
static cudaError_t run_host_path(const tb_call *call, unsigned pinned, int kernel, const tb_pipeline_plan *admitted,
                                 tb_gpu_progress *progress)
{
    const int large = is_large(call);
    if (current_lane != 0)
        return large ? tb_pipeline_sgemm(call, pinned, kernel, admitted, progress)
                     : tb_staged_sgemm(call, pinned, kernel, progress);
    if (!large && tb_staged_fits(call, kernel))
        return tb_staged_sgemm(call, pinned, kernel, progress);
    tb_pipeline_plan plan;
    if (tb_pipeline_plan_for(call, kernel, &plan))
        return tb_pipeline_sgemm(call, pinned, kernel, &plan, progress);
    if (large && tb_staged_fits(call, kernel))
        return tb_staged_sgemm(call, pinned, kernel, progress);
    return run_call(call, 0, kernel);
}

/*
 * The largest operand the host copies through pinned staging, in bytes (0:
 * none). A pinned C is copied too unless beta == 0: only then do the copy
 * engines write it directly.
 */
static size_t largest_host_copied_operand(const tb_call *call, unsigned pinned)
{
    const size_t a = pinned & TB_RESIDENT_A ? 0 : (size_t)call->m * (size_t)call->k;
    const size_t b = pinned & TB_RESIDENT_B ? 0 : (size_t)call->k * (size_t)call->n;
    const size_t c = pinned & TB_RESIDENT_C && call->beta == 0.0f ? 0 : (size_t)call->m * (size_t)call->n;
    const size_t most = a > b ? a : b;
    return (most > c ? most : c) * sizeof(float);
}

/*
 * The host copies of one call come in a burst of jobs: the copy threads wait
 * for them awake. A call whose copies the caller makes alone (small operands,
 * or pinned ones) leaves them asleep: spinning, they would only take CPUs
 * from the application.
 */
static cudaError_t run_on_host_operands(const tb_call *call, unsigned pinned, int kernel,
                                        const tb_pipeline_plan *admitted, tb_gpu_progress *progress)
{
    const int burst = largest_host_copied_operand(call, pinned) >= TB_HOST_COPY_POOL_MIN_BYTES;
    if (burst)
        tb_host_copy_burst(1);
    const cudaError_t status = run_host_path(call, pinned, kernel, admitted, progress);
    if (burst)
        tb_host_copy_burst(0);
    return status;
}

/* Under a device cap the second lane keeps nothing between calls: the first would have less for good. */
static cudaError_t release_large_workspace(void)
{
    kept_buffer *workspace = &workspaces[current_lane];
    const int capped_second = current_lane != 0 && tb_config_get()->device_mb;
    /* Another lane holding more than is kept releases it itself, at the end of its call. */
    const size_t others = held_by_other_lanes(current_lane), kept = gpu.kept_workspace_bytes;
    if (workspace->bytes + (others > kept ? 0 : others) <= kept && !(capped_second && workspace->bytes))
        return cudaSuccess;
    const cudaError_t status = workspace->release(workspace->base);
    workspace->base = NULL;
    workspace->bytes = 0;
    return status;
}

/*
 * Whether the second lane may run the call, as far as its pinned staging (a
 * fixed share) tells before holding it: host operands, staged whole or, when
 * large enough to pipeline, as the first lane would (second_lane_runs then
 * asks the device).
 */
static int second_lane_can_take(const tb_call *call, unsigned resident)
{
    if (resident)
        return 0;
    const int64_t floats = is_large(call) ? tb_pipeline_unlimited_pinned_floats(call) : tb_staged_pinned_floats(call);
    return floats > 0 && (size_t)floats <= pinned_budget_of(1);
}

/*
 * Holding the second lane: whether its buffers can grow to the call, staged,
 * or pipelined as the first lane would (one row block, the widest panels).
 * Two pipelined calls then run at once, each one's host copies beside the
 * other's transfers and kernels. A plan cut down to the second lane's
 * smaller pinned share would cost more: B over the bus once per row block,
 * or narrow panels, whose kernels fill the GPU poorly.
 */
static int second_lane_runs(const tb_call *call, int kernel, tb_pipeline_plan *plan)
{
    if (!is_large(call))
        return tb_staged_fits(call, kernel);
    return tb_pipeline_plan_for(call, kernel, plan) && tb_pipeline_plan_is_unlimited(call, plan);
}

/* Calls take turns on the lanes; the application's current context on this thread is put back. */
typedef struct {
    CUcontext saved;
    int restore;
    tb_lane_choice lanes;
} gpu_turn;

static cudaError_t begin_turn(gpu_turn *turn, tb_lane_choice lanes)
{
    turn->lanes = lanes;
    current_lane = tb_lane_take(lanes);
    pthread_once(&driver.once, find_driver);
    turn->saved = NULL;
    turn->restore = driver.get_current && driver.set_current &&
                    driver.get_current(&turn->saved) == CUDA_SUCCESS;
    refused_unknown_budget[current_lane] = 0;
    return cudaSetDevice(gpu.device);
}

/* Out of memory leaves the GPU usable (later calls may fit); any other error disables it. */
static tb_gpu_status end_turn(gpu_turn *turn, cudaError_t status)
{
    tb_gpu_status result = TB_GPU_OK;
    if (status == cudaErrorMemoryAllocation && refused_unknown_budget[current_lane])
        status = memory_query[current_lane]; /* out of memory only because the device could not say */
    if (status == cudaErrorMemoryAllocation) {
        cudaGetLastError(); /* not sticky */
        result = TB_GPU_NO_MEMORY;
    } else if (status != cudaSuccess) {
        disable("CUDA error", status);
        /* Once: calls already waiting for their turn fail the same way. */
        TB_WARN_ONCE("GPU path failed (%s); this and later calls use the CPU BLAS", gpu.why_not);
        result = TB_GPU_FAILED;
    }
    if (turn->restore)
        driver.set_current(turn->saved);
    tb_lane_give(current_lane, turn->lanes);
    return result;
}

tb_gpu_status tb_gpu_sgemm(const tb_call *call, unsigned resident, unsigned pinned, int kernel,
                           tb_gpu_progress *progress)
{
    gpu_turn turn;
    tb_pipeline_plan admitted = {0, 0};
    *progress = (tb_gpu_progress){0, call->m, 0};
    cudaError_t status = begin_turn(&turn, second_lane_can_take(call, resident) ? TB_EITHER_LANE : TB_FIRST_LANE);
    if (status == cudaSuccess && current_lane != 0 && !second_lane_runs(call, kernel, &admitted)) {
        /* The second lane cannot run it as the first would (second_lane_runs): the first takes it. */
        end_turn(&turn, cudaSuccess);
        status = begin_turn(&turn, TB_FIRST_LANE);
    }
    if (status == cudaSuccess)
        status = resident ? run_call(call, resident, kernel)
                          : run_on_host_operands(call, pinned, kernel, &admitted, progress);
    if (status == cudaSuccess) {
        *progress = (tb_gpu_progress){call->m, 0, 0};
        status = release_large_workspace();
    }
    return end_turn(&turn, status);
}

tb_gpu_status tb_gpu_time_kernel(int kernel, int n, double *seconds)
{
    gpu_turn turn;
    cudaError_t status = begin_turn(&turn, TB_BOTH_LANES); /* no other kernel beside the timed one */
    if (status == cudaSuccess)
        status = time_kernel_locked(kernel, n, seconds);
    return end_turn(&turn, status);
}
