/*
 * The device memory and pinned staging each lane keeps between calls, grown
 * on demand, and the budgets they grow within: the device's free memory less
 * a reserve, TILEDBLAS_DEVICE_MB for both lanes together, and each lane's
 * share of TILEDBLAS_PINNED_MB. Also the strided copies between host and
 * device every path makes.
 */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "core/config.h"
#include "gpu/device.h"
#include "gpu/lanes.h"
#include "gpu/memory.h"

/* Per lane, under its turn: the last cudaMemGetInfo's status, and whether the last fit check said no
 * because that query failed. */
static cudaError_t memory_query[TB_GPU_LANES];
static int refused_unknown_budget[TB_GPU_LANES];

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
/* A copy of a C in device memory taken before the kernel writes it (tb_gpu_c_copy). */
static kept_buffer c_copies[TB_GPU_LANES] = {{NULL, 0, cudaMalloc, cudaFree}, {NULL, 0, cudaMalloc, cudaFree}};
_Static_assert(TB_GPU_LANES == 2, "one initialiser per lane");

/* Leave the driver and the application this much of the device, at least 256 MB. */
static size_t device_reserve(size_t total)
{
    const size_t least = (size_t)256 << 20;
    return total / 64 > least ? total / 64 : least;
}

/* Device bytes the lanes other than `lane` hold: workspaces and copies of C. */
static size_t held_by_other_lanes(int lane)
{
    size_t others = 0;
    for (int i = 0; i < TB_GPU_LANES; i++)
        others += i == lane ? 0 : atomic_load(&workspaces[i].bytes) + atomic_load(&c_copies[i].bytes);
    return others;
}

/* TILEDBLAS_DEVICE_MB less `held`, the cap being for all lanes: 0 no cap, 1 none left. */
static size_t cap_less(size_t held)
{
    const size_t cap = (size_t)tb_config_get()->device_mb << 20;
    return !cap ? 0 : cap > held ? cap - held : 1;
}

/* What the lane's workspace may take of the cap: less the other lanes' memory and the lane's copy of C. */
static size_t cap_left(int lane)
{
    return cap_less(held_by_other_lanes(lane) + atomic_load(&c_copies[lane].bytes));
}

/* A failed query leaves no budget (see tb_gpu_device_fits). */
size_t tb_gpu_memory_budget(void)
{
    size_t free_bytes = 0, total = 0, budget = 0;
    /* The lane's own workspace counts as free: growing it frees it first. */
    const int lane = tb_gpu_lane();
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
 * fails with the query's error rather than out of memory (route.c's end_turn), so that
 * a broken device is disabled instead of every call going to the CPU as too
 * large; the last check decides, so a real shortage later in the turn stays one.
 */
int tb_gpu_device_fits(size_t floats)
{
    const int lane = tb_gpu_lane();
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

/* Fit checks of the two lanes can race: the cap is checked again where device buffers grow, one at a time. */
static pthread_mutex_t growing = PTHREAD_MUTEX_INITIALIZER;

cudaError_t tb_gpu_workspace(size_t floats, float **base)
{
    const int lane = tb_gpu_lane();
    kept_buffer *workspace = &workspaces[lane];
    if (floats * sizeof(float) <= workspace->bytes)
        return grow(workspace, floats, base);
    pthread_mutex_lock(&growing);
    const size_t cap = cap_left(lane);
    const cudaError_t status =
        cap && floats * sizeof(float) > cap ? cudaErrorMemoryAllocation : grow(workspace, floats, base);
    pthread_mutex_unlock(&growing);
    return status;
}

/* The second lane's share of TILEDBLAS_PINNED_MB; the first has the rest. */
#define SECOND_LANE_PINNED_SHARE 8

size_t tb_gpu_pinned_budget_of(int lane)
{
    const size_t all = ((size_t)tb_config_get()->pinned_mb << 20) / sizeof(float);
    const size_t second = all / SECOND_LANE_PINNED_SHARE;
    return lane == 0 ? all - second : second;
}

size_t tb_gpu_pinned_budget(void)
{
    return tb_gpu_pinned_budget_of(tb_gpu_lane());
}

/* Callers keep within the budget. */
cudaError_t tb_gpu_pinned(size_t floats, float **base)
{
    return grow(&pinned_buffers[tb_gpu_lane()], floats, base);
}

/* 2D copies need pitches below the device's limit; wider leading dimensions go column by column. */
cudaError_t tb_gpu_copy_block(float *dst, int64_t dst_ld, const float *src, int64_t src_ld, int64_t rows,
                              int64_t cols, enum cudaMemcpyKind kind, cudaStream_t stream)
{
    const size_t width = (size_t)rows * sizeof(float);
    if (rows == src_ld && rows == dst_ld)
        return cudaMemcpyAsync(dst, src, width * (size_t)cols, kind, stream);
    const size_t dst_pitch = (size_t)dst_ld * sizeof(float), src_pitch = (size_t)src_ld * sizeof(float);
    if (dst_pitch <= tb_gpu_max_pitch() && src_pitch <= tb_gpu_max_pitch())
        return cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, width, (size_t)cols, kind, stream);
    for (int64_t j = 0; j < cols; j++) {
        cudaError_t status = cudaMemcpyAsync(dst + j * dst_ld, src + j * src_ld, width, kind, stream);
        if (status != cudaSuccess)
            return status;
    }
    return cudaSuccess;
}

/* The copy takes the place of the lane's last one, beside its workspace grown to `beside` floats. */
cudaError_t tb_gpu_c_copy(size_t floats, size_t beside, float **base)
{
    const int lane = tb_gpu_lane();
    kept_buffer *copy = &c_copies[lane];
    const size_t workspace = atomic_load(&workspaces[lane].bytes);
    const size_t bytes = floats * sizeof(float), beside_bytes = beside * sizeof(float);
    if (bytes <= copy->bytes && beside_bytes <= workspace)
        return grow(copy, floats, base);
    pthread_mutex_lock(&growing);
    const size_t cap = cap_less(held_by_other_lanes(lane));
    const size_t needed = bytes + (beside_bytes > workspace ? beside_bytes : workspace);
    const cudaError_t status = cap && needed > cap ? cudaErrorMemoryAllocation : grow(copy, floats, base);
    pthread_mutex_unlock(&growing);
    return status;
}

static cudaError_t release(kept_buffer *buffer)
{
    const cudaError_t status = buffer->base ? buffer->release(buffer->base) : cudaSuccess;
    buffer->base = NULL;
    buffer->bytes = 0;
    return status;
}

int tb_gpu_lane_keeps_workspace(int lane)
{
    return lane == 0 || !tb_config_get()->device_mb;
}

/* Under a device cap the second lane keeps nothing between calls: the first would have less for good. */
cudaError_t tb_gpu_release_large_workspace(void)
{
    const int lane = tb_gpu_lane();
    kept_buffer *workspace = &workspaces[lane];
    /* The copy of C is kept where it is small beside what the lanes may keep (under a cap, the cap): freed
     * after every call, it would make each wait for the whole device (cudaFree). */
    const size_t kept = tb_gpu_kept_bytes(), cap = (size_t)tb_config_get()->device_mb << 20;
    if (c_copies[lane].bytes > (cap && cap < kept ? cap : kept) / 16) {
        const cudaError_t status = release(&c_copies[lane]);
        if (status != cudaSuccess)
            return status;
    }
    const int capped_second = !tb_gpu_lane_keeps_workspace(lane);
    /* Another lane holding more than is kept releases it itself, at the end of its call. */
    const size_t others = held_by_other_lanes(lane);
    if (workspace->bytes + (others > kept ? 0 : others) <= kept && !(capped_second && workspace->bytes))
        return cudaSuccess;
    return release(workspace);
}

void tb_gpu_budget_turn_begin(void)
{
    refused_unknown_budget[tb_gpu_lane()] = 0;
}

cudaError_t tb_gpu_budget_refusal(void)
{
    const int lane = tb_gpu_lane();
    return refused_unknown_budget[lane] ? memory_query[lane] : cudaSuccess;
}
