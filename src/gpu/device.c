/*
 * The GPU's set-up and the CUDA driver: whether a GPU is usable and why not,
 * disabling it after an error it cannot recover from, a forked child's view
 * of it, where a pointer lives, and the application's current context, which
 * every call saves and puts back. Nothing here runs before the first
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

#include "core/config.h"
#include "core/report.h"
#include "gpu/device.h"
#include "gpu/lanes.h"
#include "kernels.h"

static struct {
    pthread_once_t once;
    atomic_int usable;
    char why_not[160];
    int device;
    int kernel;                  /* tb_kernel_id */
    size_t max_pitch;
    size_t kept_workspace_bytes; /* a larger workspace is released after the call */
    cudaStream_t stream;         /* the direct path's, on the first lane */
    atomic_int driver_seen;
    atomic_ullong objects_without_driver; /* the loader's count at the last walk that missed */
} gpu = {.once = PTHREAD_ONCE_INIT};

void tb_gpu_disable(const char *what, cudaError_t status)
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

/* TILEDBLAS_KERNEL's rung, or the default with a warning for a name the ladder does not have: asked
 * once, where a GPU is usable, since only there does the kernel matter. */
static int configured_kernel(void)
{
    const char *name = tb_config_get()->kernel;
    if (!name[0])
        return TB_KERNEL_DEFAULT;
    const int id = tb_kernel_from_name(name);
    if (id >= 0)
        return id;
    tb_warn("ignoring TILEDBLAS_KERNEL=%s (unknown kernel; using %s)", name, tb_kernel_name(TB_KERNEL_DEFAULT));
    return TB_KERNEL_DEFAULT;
}

static void init_gpu(void)
{
    int count = 0;
    cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
        tb_gpu_disable("no CUDA device", status);
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
        tb_gpu_disable("CUDA initialisation failed", status);
        return;
    }
    gpu.max_pitch = (size_t)pitch;
    /* Up to a quarter of the device stays allocated between calls, both lanes together; more (an
     * out-of-core call takes nearly all of it) would starve the application's own allocations. */
    gpu.kept_workspace_bytes = total_bytes / 4;
    gpu.kernel = configured_kernel();
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

/* The allocation's range, as the driver knows it: a span reaching past it is not pinned as a whole, and the
 * copy engines refuse it. */
int tb_gpu_pinned_span(const void *p, size_t bytes)
{
    pthread_once(&driver.once, find_driver);
    CUdeviceptr start = 0;
    size_t size = 0;
    CUpointer_attribute attributes[2] = {CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE};
    void *values[2] = {&start, &size};
    const uintptr_t first = (uintptr_t)p;
    if (!driver.pointer_attributes ||
        driver.pointer_attributes(2, attributes, values, (CUdeviceptr)first) != CUDA_SUCCESS)
        return 0;
    return first >= start && first - start <= size && bytes <= size - (first - start);
}

int tb_gpu_device(void)
{
    return gpu.device;
}

int tb_gpu_kernel(void)
{
    return gpu.kernel;
}

size_t tb_gpu_max_pitch(void)
{
    return gpu.max_pitch;
}

size_t tb_gpu_kept_bytes(void)
{
    return gpu.kept_workspace_bytes;
}

cudaStream_t tb_gpu_stream(void)
{
    return gpu.stream;
}

void tb_gpu_context_save(tb_gpu_context *context)
{
    pthread_once(&driver.once, find_driver);
    CUcontext current = NULL;
    context->saved = driver.get_current && driver.set_current && driver.get_current(&current) == CUDA_SUCCESS;
    context->context = current;
}

void tb_gpu_context_restore(const tb_gpu_context *context)
{
    if (context->saved)
        driver.set_current((CUcontext)context->context);
}
