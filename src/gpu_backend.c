/*
 * The GPU path: device set-up, where pointers live, the device workspace, and
 * the direct path: operands in host memory are copied to the workspace, one
 * kernel of the ladder computes, C is copied back; operands already on the
 * device (or managed) are used in place. Large calls on host memory take the
 * pipelined path instead (gpu_pipeline.c). Nothing here runs before the first
 * GPU-eligible call.
 */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "kernels.h"

static struct {
    pthread_once_t once;
    atomic_int usable;
    char why_not[160];
    int device;
    size_t max_pitch;
    cudaStream_t stream;
    /* One workspace shared by all calls, grown on demand; calls take turns on it. */
    pthread_mutex_t lock;
    float *workspace;
    size_t workspace_bytes;
    atomic_int driver_seen;
    atomic_ullong objects_without_driver; /* the loader's count at the last walk that missed */
} gpu = {.once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER};

static void disable(const char *what, cudaError_t status)
{
    snprintf(gpu.why_not, sizeof gpu.why_not, "%s: %s", what, cudaGetErrorString(status));
    atomic_store(&gpu.usable, 0);
}

/* A forked child cannot use its parent's CUDA context, and no thread holds its locks. */
static void after_fork_in_child(void)
{
    pthread_mutex_init(&gpu.lock, NULL);
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
    if ((status = cudaGetDevice(&gpu.device)) != cudaSuccess ||
        (status = cudaSetDevice(gpu.device)) != cudaSuccess ||
        (status = cudaDeviceGetAttribute(&pitch, cudaDevAttrMaxPitch, gpu.device)) != cudaSuccess ||
        (status = cudaStreamCreateWithFlags(&gpu.stream, cudaStreamNonBlocking)) != cudaSuccess) {
        disable("CUDA initialisation failed", status);
        return;
    }
    gpu.max_pitch = (size_t)pitch;
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
    CUresult (*pointer_attribute)(void *data, CUpointer_attribute attribute, CUdeviceptr ptr);
    CUresult (*get_current)(CUcontext *context);
    CUresult (*set_current)(CUcontext context);
} driver = {.once = PTHREAD_ONCE_INIT};

static void find_driver(void)
{
    void *handle = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (!handle)
        return;
    *(void **)&driver.pointer_attribute = dlsym(handle, "cuPointerGetAttribute");
    *(void **)&driver.get_current = dlsym(handle, "cuCtxGetCurrent");
    *(void **)&driver.set_current = dlsym(handle, "cuCtxSetCurrent");
}

tb_mem_kind tb_gpu_mem_kind(const void *p, int *device)
{
    pthread_once(&driver.once, find_driver);
    unsigned int type = 0, managed = 0;
    const CUdeviceptr address = (CUdeviceptr)(uintptr_t)p;
    /* An error means a pointer the driver does not know: plain host memory. */
    if (!p || !driver.pointer_attribute ||
        driver.pointer_attribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, address) != CUDA_SUCCESS ||
        driver.pointer_attribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, address) != CUDA_SUCCESS ||
        driver.pointer_attribute(device, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, address) != CUDA_SUCCESS)
        return TB_MEM_HOST;
    if (managed)
        return TB_MEM_MANAGED;
    return type == CU_MEMORYTYPE_DEVICE ? TB_MEM_DEVICE : TB_MEM_HOST;
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

/* Packed operands start 256-byte aligned, as cudaMalloc's own allocations do (128-bit loads). */
static size_t round_up(int64_t floats)
{
    return ((size_t)floats + 63) / 64 * 64;
}

cudaError_t tb_gpu_workspace(size_t floats, float **workspace)
{
    const size_t bytes = floats * sizeof(float);
    *workspace = gpu.workspace;
    if (bytes <= gpu.workspace_bytes)
        return cudaSuccess;
    if (gpu.workspace) {
        cudaError_t status = cudaFree(gpu.workspace);
        gpu.workspace = NULL;
        gpu.workspace_bytes = 0;
        if (status != cudaSuccess)
            return status;
    }
    cudaError_t status = cudaMalloc((void **)&gpu.workspace, bytes);
    if (status != cudaSuccess) {
        gpu.workspace = NULL;
        return status;
    }
    gpu.workspace_bytes = bytes;
    *workspace = gpu.workspace;
    return cudaSuccess;
}

/*
 * Copies a strided column-major block. 2D copies need pitches below the
 * device's limit; wider leading dimensions go column by column.
 */
static cudaError_t copy_block(float *dst, int64_t dst_ld, const float *src, int64_t src_ld,
                              int64_t rows, int64_t cols, enum cudaMemcpyKind kind)
{
    const size_t width = (size_t)rows * sizeof(float);
    if (rows == src_ld && rows == dst_ld)
        return cudaMemcpyAsync(dst, src, width * (size_t)cols, kind, gpu.stream);
    const size_t dst_pitch = (size_t)dst_ld * sizeof(float), src_pitch = (size_t)src_ld * sizeof(float);
    if (dst_pitch <= gpu.max_pitch && src_pitch <= gpu.max_pitch)
        return cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, width, (size_t)cols, kind,
                                 gpu.stream);
    for (int64_t j = 0; j < cols; j++) {
        cudaError_t status =
            cudaMemcpyAsync(dst + j * dst_ld, src + j * src_ld, width, kind, gpu.stream);
        if (status != cudaSuccess)
            return status;
    }
    return cudaSuccess;
}

static cudaError_t upload(operand *op)
{
    if (op->resident || op->rows == 0 || op->cols == 0)
        return cudaSuccess;
    return copy_block(op->device, op->device_ld, op->host, op->ld, op->rows, op->cols,
                      cudaMemcpyHostToDevice);
}

static cudaError_t run_call(const tb_call *call, unsigned resident, int kernel)
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
        if (!staged[i]->resident)
            floats += round_up(staged[i]->rows * staged[i]->cols);
    const int64_t scratch = tb_kernel_workspace_floats(kernel, &args);
    float *next;
    cudaError_t status = tb_gpu_workspace(floats + (size_t)scratch, &next);
    if (status != cudaSuccess)
        return status;
    for (int i = 0; i < 3; i++) {
        if (staged[i]->resident)
            continue;
        staged[i]->device = next;
        staged[i]->device_ld = staged[i]->rows > 0 ? staged[i]->rows : 1;
        next += round_up(staged[i]->rows * staged[i]->cols);
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
    if (!c.resident &&
        (status = copy_block(call->c, call->ldc, c.device, c.device_ld, m, n,
                             cudaMemcpyDeviceToHost)) != cudaSuccess)
        return status;
    return cudaStreamSynchronize(gpu.stream);
}

tb_gpu_status tb_gpu_sgemm(const tb_call *call, unsigned resident, int kernel, int *done_cols)
{
    pthread_mutex_lock(&gpu.lock);
    /* The application's current context on this thread is put back afterwards. */
    pthread_once(&driver.once, find_driver);
    CUcontext saved = NULL;
    const int restore = driver.get_current && driver.set_current &&
                        driver.get_current(&saved) == CUDA_SUCCESS;
    int64_t done = 0;
    cudaError_t status = cudaSetDevice(gpu.device);
    if (status == cudaSuccess)
        status = !resident && tb_pipeline_suits(call) ? tb_pipeline_sgemm(call, kernel, &done)
                                                      : run_call(call, resident, kernel);
    *done_cols = status == cudaSuccess ? call->n : (int)done;
    tb_gpu_status result = TB_GPU_OK;
    if (status == cudaErrorMemoryAllocation) {
        cudaGetLastError(); /* not sticky: later calls may fit */
        result = TB_GPU_NO_MEMORY;
    } else if (status != cudaSuccess) {
        disable("CUDA error", status);
        tb_warn("GPU path failed (%s); this and later calls use the CPU BLAS", gpu.why_not);
        result = TB_GPU_FAILED;
    }
    if (restore)
        driver.set_current(saved);
    pthread_mutex_unlock(&gpu.lock);
    return result;
}
