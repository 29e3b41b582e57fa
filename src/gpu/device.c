/*
 * The GPU's set-up and the CUDA driver: whether a GPU is usable and why not,
 * starting CUDA (again, after a failure that may pass: start_retry.c),
 * disabling it after an error it cannot recover from, a forked child's view
 * of it, the state of each device a call runs on, where a pointer lives, and
 * the application's current context, which every call, start-up included,
 * saves and puts back. Nothing here runs before the first GPU-eligible call.
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

#include "core/call.h"
#include "core/config.h"
#include "core/report.h"
#include "gpu/device.h"
#include "gpu/fault.h"
#include "gpu/lanes.h"
#include "gpu/start_retry.h"
#include "kernels.h"

/* Devices the GPU path can run on: the one it started on, and others that hold a call's operands. */
#define MAX_DEVICES 64

/* Events kept for marks of the application's work: more than the calls in flight at once are destroyed. */
#define MARKS_KEPT 64

/* What a call on one device needs besides the lanes' memory, made the first time a call runs there. */
typedef struct {
    atomic_int state; /* DEVICE_* */
    char why_not[160];
    size_t max_pitch;
    size_t kept_workspace_bytes; /* a larger workspace is released after the call */
    int stream_ordered;          /* cudaMallocAsync works here */
    int tensor;                  /* the tensor-core rung runs here (tb_tf32x3_supported) */
    cudaStream_t streams[TB_GPU_LANES]; /* the direct path's: per lane on the first device, else one */
    cudaEvent_t marks[MARKS_KEPT];      /* events for marks of the application's work, free (under marks_lock) */
    int marks_kept;
} device_state;

enum { DEVICE_UNMADE, DEVICE_READY, DEVICE_FAILED };

static struct {
    pthread_mutex_t starting;
    atomic_int usable;
    atomic_int settled; /* started, or failed for good: no further attempt */
    int failures;       /* start-up attempts that failed (under `starting`) */
    cudaError_t last_failure;
    double last_failure_time;
    _Atomic double next_attempt; /* tb_seconds_now() before which no start-up is tried again */
    /* Why the GPU is not usable (NULL: no reason), read without a lock: it points at a completed text,
     * each written once under `reasons`: one per start-up attempt, and the one that disabled the GPU. */
    _Atomic(const char *) why_not;
    pthread_mutex_t reasons;
    char start_failed[TB_GPU_START_ATTEMPTS][160];
    char disabled[160];
    int device; /* the device the GPU path started on: host operands run there */
    int kernel; /* tb_kernel_id */
    atomic_int driver_seen;
    atomic_ullong objects_without_driver; /* the loader's count at the last walk that missed */
} gpu = {.starting = PTHREAD_MUTEX_INITIALIZER, .reasons = PTHREAD_MUTEX_INITIALIZER};

static device_state devices[MAX_DEVICES];
static pthread_mutex_t making_device = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t marks_lock = PTHREAD_MUTEX_INITIALIZER;
/* The device of the calling thread's call; NULL: the one the GPU path started on. */
static _Thread_local device_state *call_device;

static device_state *current_device(void)
{
    return call_device ? call_device : &devices[gpu.device];
}

void tb_gpu_disable(const char *what, cudaError_t status)
{
    /* Both lanes may fail at once: the first reason is kept, published before usable drops. */
    pthread_mutex_lock(&gpu.reasons);
    if (!atomic_load(&gpu.why_not)) {
        snprintf(gpu.disabled, sizeof gpu.disabled, "%s: %s", what, cudaGetErrorString(status));
        atomic_store(&gpu.why_not, gpu.disabled);
    }
    atomic_store(&gpu.usable, 0);
    pthread_mutex_unlock(&gpu.reasons);
}

/* A forked child cannot use its parent's CUDA context, and no thread holds its locks. */
static void after_fork_in_child(void)
{
    tb_lanes_after_fork();
    pthread_mutex_init(&gpu.starting, NULL);
    pthread_mutex_init(&making_device, NULL);
    pthread_mutex_init(&marks_lock, NULL);
    pthread_mutex_init(&gpu.reasons, NULL);
    if (atomic_load(&gpu.usable) || !atomic_load(&gpu.why_not))
        atomic_store(&gpu.why_not, "forked after CUDA was initialised");
    atomic_store(&gpu.usable, 0);
    atomic_store(&gpu.settled, 1);
}

/* TILEDBLAS_KERNEL's rung, or the default with a warning for a name the ladder does not have: asked
 * once, where a GPU is usable, since only there does the kernel matter. `tensor`: the first device
 * runs the tensor-core rung (found while its context was current). */
static int configured_kernel(int tensor)
{
    const char *name = tb_config_get()->kernel;
    if (!name[0])
        return TB_KERNEL_DEFAULT;
    const int id = tb_kernel_from_name(name);
    if (id == TB_KERNEL_TF32X3 && !tensor) {
        tb_warn("ignoring TILEDBLAS_KERNEL=%s (this GPU has no tensor-core path; using %s)", name,
                tb_kernel_name(TB_KERNEL_DEFAULT));
        return TB_KERNEL_DEFAULT;
    }
    if (id >= 0)
        return id;
    tb_warn("ignoring TILEDBLAS_KERNEL=%s (unknown kernel; using %s)", name, tb_kernel_name(TB_KERNEL_DEFAULT));
    return TB_KERNEL_DEFAULT;
}

/* The current device's state, its primary context current: its limits and its streams (one per lane on
 * the first device; calls on another take no lane). After a failure nothing made is left behind. */
static cudaError_t make_device(device_state *state, int device)
{
    int pitch = 0, pools = 0;
    size_t free_bytes = 0, total_bytes = 0;
    const int streams = device == gpu.device ? TB_GPU_LANES : 1;
    cudaError_t status;
    if ((status = cudaDeviceGetAttribute(&pitch, cudaDevAttrMaxPitch, device)) == cudaSuccess &&
        (status = cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, device)) == cudaSuccess)
        status = cudaMemGetInfo(&free_bytes, &total_bytes);
    for (int lane = 0; lane < streams && status == cudaSuccess; lane++)
        status = cudaStreamCreateWithFlags(&state->streams[lane], cudaStreamNonBlocking);
    if (status != cudaSuccess) {
        for (int lane = 0; lane < TB_GPU_LANES; lane++)
            tb_destroy_stream(&state->streams[lane]);
        return status;
    }
    state->max_pitch = (size_t)pitch;
    state->stream_ordered = pools != 0;
    state->tensor = tb_tf32x3_supported();
    /* Up to a quarter of the device stays allocated between calls, both lanes together; more (an
     * out-of-core call takes nearly all of it) would starve the application's own allocations. */
    state->kept_workspace_bytes = total_bytes / 4;
    atomic_store(&state->state, DEVICE_READY);
    return cudaSuccess;
}

static void register_fork_handler(void)
{
    pthread_atfork(NULL, NULL, after_fork_in_child);
}

/* One attempt (under `starting`), the calling thread's current context saved and put back: CUDA started
 * inside a call must leave the application's context as it was. The reason of a failure is kept. */
static cudaError_t start_gpu(void)
{
    tb_gpu_context saved;
    tb_gpu_context_save(&saved);
    int count = 0;
    cudaError_t status = cudaGetDeviceCount(&count);
    const char *what = "CUDA initialisation failed";
    if (status == cudaSuccess && count == 0)
        status = cudaErrorNoDevice;
    if (status == cudaErrorNoDevice || status == cudaErrorInsufficientDriver)
        what = "no CUDA device";
    if (status == cudaSuccess && (status = cudaGetDevice(&gpu.device)) == cudaSuccess &&
        gpu.device >= MAX_DEVICES)
        status = cudaErrorInvalidDevice;
    if (status == cudaSuccess && (status = cudaSetDevice(gpu.device)) == cudaSuccess)
        status = make_device(&devices[gpu.device], gpu.device);
    tb_gpu_context_restore(&saved);
    pthread_mutex_lock(&gpu.reasons);
    if (status != cudaSuccess) {
        cudaGetLastError(); /* not the next call's */
        char *reason = gpu.start_failed[gpu.failures]; /* fewer than TB_GPU_START_ATTEMPTS so far */
        snprintf(reason, sizeof gpu.start_failed[0], "%s: %s", what, cudaGetErrorString(status));
        atomic_store(&gpu.why_not, reason);
    } else {
        atomic_store(&gpu.why_not, NULL);
    }
    pthread_mutex_unlock(&gpu.reasons);
    if (status != cudaSuccess)
        return status;
    gpu.kernel = configured_kernel(devices[gpu.device].tensor);
    atomic_store(&gpu.usable, 1);
    return cudaSuccess;
}

/* The first call that wants the GPU starts CUDA; a failure that may pass is tried again later. */
static void try_start(void)
{
    static pthread_once_t fork_handler = PTHREAD_ONCE_INIT;
    pthread_mutex_lock(&gpu.starting);
    if (!atomic_load(&gpu.settled)) {
        const tb_start_retry retry =
            gpu.failures ? tb_gpu_start_retry(gpu.failures, gpu.last_failure,
                                              tb_seconds_now() - gpu.last_failure_time)
                         : TB_START_NOW;
        if (retry == TB_START_NOW) {
            pthread_once(&fork_handler, register_fork_handler);
            const cudaError_t status = start_gpu();
            if (status == cudaSuccess) {
                tb_fault_watch_exit(); /* once: the start is settled */
                atomic_store(&gpu.settled, 1);
            } else {
                gpu.failures++;
                gpu.last_failure = status;
                gpu.last_failure_time = tb_seconds_now();
                if (tb_gpu_start_retry(gpu.failures, status, 0.0) == TB_START_NEVER)
                    atomic_store(&gpu.settled, 1);
                else
                    atomic_store(&gpu.next_attempt,
                                 gpu.last_failure_time + tb_gpu_start_retry_wait(gpu.failures));
            }
        } else if (retry == TB_START_NEVER) {
            atomic_store(&gpu.settled, 1);
        }
    }
    pthread_mutex_unlock(&gpu.starting);
}

/* While a start-up that failed waits to be tried again, calls do not take the lock to learn it. */
int tb_gpu_usable(void)
{
    if (atomic_load(&gpu.usable))
        return 1;
    if (!atomic_load(&gpu.settled) && tb_seconds_now() >= atomic_load(&gpu.next_attempt))
        try_start();
    return atomic_load(&gpu.usable);
}

const char *tb_gpu_unusable_reason(void)
{
    const char *reason = atomic_load(&gpu.why_not);
    return reason ? reason : "";
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
 * no context, and save and restore the application's current context. Looked
 * up until found (before CUDA starts the driver may not be loaded yet), without
 * a lock, so that a child forked during a look-up can look up too: threads
 * that look at once each make a set, and the first published is kept.
 */
typedef struct {
    CUresult (*pointer_attributes)(unsigned count, CUpointer_attribute *attributes, void **data,
                                   CUdeviceptr ptr);
    CUresult (*get_current)(CUcontext *context);
    CUresult (*set_current)(CUcontext context);
} driver_entries;

static _Atomic(driver_entries *) driver;

/* The entry points, NULL while the driver is not loaded; the handle is kept, so they stay valid. */
static const driver_entries *find_driver(void)
{
    driver_entries *found = atomic_load_explicit(&driver, memory_order_acquire);
    if (found)
        return found;
    void *handle = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    driver_entries *entries = handle ? malloc(sizeof *entries) : NULL;
    if (!entries)
        return NULL;
    *(void **)&entries->pointer_attributes = dlsym(handle, "cuPointerGetAttributes");
    *(void **)&entries->get_current = dlsym(handle, "cuCtxGetCurrent");
    *(void **)&entries->set_current = dlsym(handle, "cuCtxSetCurrent");
    if (atomic_compare_exchange_strong_explicit(&driver, &found, entries, memory_order_acq_rel,
                                                memory_order_acquire))
        return entries;
    free(entries);
    return found;
}

tb_mem_kind tb_gpu_mem_kind(const void *p, int *device)
{
    unsigned type = 0, managed = 0;
    int ordinal = -1;
    /* One query per pointer (this runs on every call): a pointer the driver does not
     * know comes back with the attributes unset, which reads as plain host memory. */
    CUpointer_attribute attributes[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                         CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
    void *values[3] = {&type, &managed, &ordinal};
    const driver_entries *entries = p ? find_driver() : NULL;
    if (!entries || !entries->pointer_attributes ||
        entries->pointer_attributes(3, attributes, values, (CUdeviceptr)(uintptr_t)p) != CUDA_SUCCESS)
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
    const driver_entries *entries = find_driver();
    CUdeviceptr start = 0;
    size_t size = 0;
    CUpointer_attribute attributes[2] = {CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE};
    void *values[2] = {&start, &size};
    const uintptr_t first = (uintptr_t)p;
    if (!entries || !entries->pointer_attributes ||
        entries->pointer_attributes(2, attributes, values, (CUdeviceptr)first) != CUDA_SUCCESS)
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

/*
 * Under the tensor math, a call runs the tensor-core rung only where it pays
 * (cblas_sgemm on device pointers, H200, the rung's time over FP32's):
 * - K of at least TENSOR_MIN_K products per element: on 4096 x 4096 x K, 1.06
 *   at K = 128, 0.79 at 256, 0.68 at 384, 0.54 at 768. Shallower, the rung's
 *   error also exceeds SGEMM's on some inputs: at 1280 x 1280 x 256 its
 *   largest was 1.8 times SGEMM's with magnitudes spread over 2^-20..2^20,
 *   and at K = 128 its median 1.13 times where nothing cancels; at K = 384,
 *   512 and 768 both were at or below SGEMM's on every input of
 *   tiledblas-bench --accuracy (README.md gives the deeper K's figures);
 * - a C wide both ways, m n / (m + n) of at least TENSOR_MIN_SIDE: splitting
 *   op(A) and op(B) into their parts is a pass over both, of cost growing
 *   with (m + n) k where the product's grows with m n k. 8192 x 128 x 8192
 *   (126): 1.04, 8192 x 192 x 8192 (188): 0.84, 8192 x 256 x 8192 (248): 0.68;
 *   the bound sits just above the narrowest gain measured. A narrow C may
 *   still see a larger error than SGEMM's where magnitudes spread widely
 *   (8192 x 256 x 2048: 1.76 times its largest);
 * - m n k of at least TENSOR_MIN_PRODUCTS, where the rung's fixed costs (a
 *   second launch, its deeper ring's fill) are paid back: 512^3: 1.47,
 *   768^3: 1.04, 896^3: 0.93, 1024^3: 0.83.
 */
#define TENSOR_MIN_K 384
#define TENSOR_MIN_SIDE 192
#define TENSOR_MIN_PRODUCTS 536870912.0 /* 2^29: between 768^3 and 896^3 */

static int tensor_pays(int64_t m, int64_t n, int64_t k)
{
    return k >= TENSOR_MIN_K && (double)m * (double)n >= TENSOR_MIN_SIDE * ((double)m + (double)n) &&
           (double)m * (double)n * (double)k >= TENSOR_MIN_PRODUCTS;
}

int tb_gpu_call_kernel(int64_t m, int64_t n, int64_t k)
{
    /* TILEDBLAS_KERNEL=tf32x3 was checked on the first device only; another may not run it. */
    const int tensor = current_device()->tensor;
    const int fp32 = gpu.kernel == TB_KERNEL_TF32X3 && !tensor ? TB_KERNEL_DEFAULT : gpu.kernel;
    if (atomic_load_explicit(&tb_config_get()->math, memory_order_relaxed) != TILEDBLAS_MATH_TENSOR)
        return fp32;
    if (tensor)
        return tensor_pays(m, n, k) ? TB_KERNEL_TF32X3 : fp32;
    TB_WARN_ONCE("TILEDBLAS_MATH=tensor: this GPU has no tensor-core path (it needs a build for sm_90a and "
                 "a GPU of compute capability 9.0); calls compute in FP32");
    return fp32;
}

int tb_gpu_launch_kernel(int call_kernel, int64_t m, int64_t n, int64_t k)
{
    /* Forced (TILEDBLAS_KERNEL=tf32x3), the rung runs every launch. */
    if (call_kernel != TB_KERNEL_TF32X3 || gpu.kernel == TB_KERNEL_TF32X3 || tensor_pays(m, n, k))
        return call_kernel;
    return gpu.kernel;
}

size_t tb_gpu_max_pitch(void)
{
    return current_device()->max_pitch;
}

size_t tb_gpu_kept_bytes(void)
{
    return current_device()->kept_workspace_bytes;
}

cudaStream_t tb_gpu_stream(void)
{
    return call_device ? call_device->streams[0] : devices[gpu.device].streams[tb_gpu_lane()];
}

/*
 * Each mark has an event of its own: a stream waiting for an event shared by
 * the calls would wait for its latest record, which another call may have
 * made after later work of the application, work that might wait for
 * something this call's thread does only once the call returns.
 */
cudaError_t tb_gpu_mark_application(tb_gpu_mark *mark)
{
    device_state *state = current_device();
    mark->device = (int)(state - devices);
    mark->event = NULL;
    pthread_mutex_lock(&marks_lock);
    if (state->marks_kept > 0)
        mark->event = state->marks[--state->marks_kept];
    pthread_mutex_unlock(&marks_lock);
    cudaError_t status = cudaSuccess;
    if (!mark->event && (status = cudaEventCreateWithFlags(&mark->event, cudaEventDisableTiming)) != cudaSuccess)
        mark->event = NULL;
    if (status == cudaSuccess && (status = cudaEventRecord(mark->event, cudaStreamLegacy)) != cudaSuccess)
        tb_gpu_drop_mark(mark);
    return status;
}

/* Once the wait is queued, later records of the event do not change it: the event can serve another mark. */
cudaError_t tb_gpu_wait_application(tb_gpu_mark *mark)
{
    const cudaError_t status = cudaStreamWaitEvent(tb_gpu_stream(), mark->event, 0);
    tb_gpu_drop_mark(mark);
    return status;
}

void tb_gpu_drop_mark(tb_gpu_mark *mark)
{
    if (!mark->event)
        return;
    device_state *state = &devices[mark->device];
    pthread_mutex_lock(&marks_lock);
    const int kept = state->marks_kept < MARKS_KEPT;
    if (kept)
        state->marks[state->marks_kept++] = mark->event;
    pthread_mutex_unlock(&marks_lock);
    if (!kept)
        cudaEventDestroy(mark->event);
    mark->event = NULL;
}

cudaError_t tb_gpu_follow_application(void)
{
    tb_gpu_mark mark;
    const cudaError_t status = tb_gpu_mark_application(&mark);
    return status == cudaSuccess ? tb_gpu_wait_application(&mark) : status;
}

int tb_gpu_stream_ordered(void)
{
    return current_device()->stream_ordered;
}

int tb_gpu_on_first_device(void)
{
    return call_device == NULL;
}

int tb_gpu_device_usable(int device)
{
    if (device == gpu.device)
        return 1;
    return device >= 0 && device < MAX_DEVICES && atomic_load(&devices[device].state) != DEVICE_FAILED;
}

const char *tb_gpu_refusal(int device)
{
    if (!tb_gpu_usable())
        return tb_gpu_unusable_reason();
    if (device == -2)
        return "operands on different devices";
    if (device >= 0 && device < MAX_DEVICES && atomic_load(&devices[device].state) == DEVICE_FAILED)
        return devices[device].why_not;
    return "a device the GPU path cannot reach";
}

cudaError_t tb_gpu_enter_device(int device)
{
    cudaError_t status = cudaSetDevice(device);
    if (status != cudaSuccess)
        return status;
    device_state *state = &devices[device];
    if (atomic_load(&state->state) != DEVICE_READY) {
        pthread_mutex_lock(&making_device);
        if (atomic_load(&state->state) == DEVICE_UNMADE)
            status = make_device(state, device);
        pthread_mutex_unlock(&making_device);
        if (status != cudaSuccess)
            return status;
        if (atomic_load(&state->state) != DEVICE_READY)
            return cudaErrorDevicesUnavailable;
    }
    call_device = state;
    return cudaSuccess;
}

void tb_gpu_leave_device(void)
{
    call_device = NULL;
}

void tb_gpu_device_failed(int device, cudaError_t status)
{
    device_state *state = &devices[device];
    pthread_mutex_lock(&making_device);
    if (atomic_load(&state->state) != DEVICE_FAILED) {
        snprintf(state->why_not, sizeof state->why_not, "device %d failed: %s", device, cudaGetErrorString(status));
        atomic_store(&state->state, DEVICE_FAILED);
    }
    pthread_mutex_unlock(&making_device);
}

/* Before CUDA is started, or before the driver is even loaded, no context is current on the thread:
 * after the call none may be. */
void tb_gpu_context_save(tb_gpu_context *context)
{
    const driver_entries *entries = find_driver();
    CUcontext current = NULL;
    if (!entries) {
        context->saved = 1;
    } else {
        const CUresult status = entries->get_current ? entries->get_current(&current) : CUDA_ERROR_NOT_FOUND;
        context->saved = status == CUDA_SUCCESS || status == CUDA_ERROR_NOT_INITIALIZED;
        if (status != CUDA_SUCCESS)
            current = NULL;
    }
    context->context = current;
}

void tb_gpu_context_restore(const tb_gpu_context *context)
{
    const driver_entries *entries = context->saved ? find_driver() : NULL;
    if (entries && entries->set_current)
        entries->set_current((CUcontext)context->context);
}
