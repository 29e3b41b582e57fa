/* The device and the CUDA driver, as the GPU paths share them (device.c). */
#ifndef TILEDBLAS_GPU_DEVICE_H
#define TILEDBLAS_GPU_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "gpu/gpu.h"

/* After an error the GPU cannot recover from: records why (the first reason stays) and disables it. */
void tb_gpu_disable(const char *what, cudaError_t status);
/* The kernel of the ladder calls run with: TILEDBLAS_KERNEL, else the default (valid once usable). */
int tb_gpu_kernel(void);
/* The kernel an m x n x k call starting now runs with on its device: the tensor-core rung where the
 * math asks for it (TILEDBLAS_MATH, tiledblas_set_math), the device has it and the shape is large
 * enough for it to pay, else tb_gpu_kernel(). */
int tb_gpu_call_kernel(int64_t m, int64_t n, int64_t k);
/* The kernel one m x n x k launch of a call that chose call_kernel runs: that one, but where the call
 * chose the tensor-core rung for the tensor math and the launch is too small for it to pay (a panel or
 * a piece of K of the pipelined path), the FP32 kernel. */
int tb_gpu_launch_kernel(int call_kernel, int64_t m, int64_t n, int64_t k);

/*
 * --- Each of the getters below answers for the device the calling thread's
 * call runs on: the one the GPU path started on, or another between
 * tb_gpu_enter_device and tb_gpu_leave_device. ---
 */

/* The widest pitch a 2D copy takes there, in bytes. */
size_t tb_gpu_max_pitch(void);
/* Device bytes kept allocated between calls, both lanes together; more is released after a call. */
size_t tb_gpu_kept_bytes(void);
/* The direct path's stream on the calling thread's lane (the first lane's also times the kernel). */
cudaStream_t tb_gpu_stream(void);
/*
 * Orders the direct path's stream after the work the application queued
 * before the call on the legacy default stream, and so on every blocking
 * stream (the per-thread default streams included): the order of a CUDA call
 * without a stream, cudaMemcpy's. The GPU waits, not the host. Work on the
 * application's non-blocking streams is not waited for.
 */
cudaError_t tb_gpu_follow_application(void);
/*
 * The same in two steps: the mark, an event recorded on the legacy default
 * stream, which may wait inside the driver behind the application's own CUDA
 * calls (pageable copies from other threads), made before a call takes its
 * lane; then the lane's stream waits for the mark once the lane is taken,
 * which gives the mark back. A mark no stream will wait for is given back
 * with tb_gpu_drop_mark (a mark never made or already given back: nothing).
 */
typedef struct {
    cudaEvent_t event; /* NULL: none held */
    int device;        /* whose events it came from */
} tb_gpu_mark;
cudaError_t tb_gpu_mark_application(tb_gpu_mark *mark);
cudaError_t tb_gpu_wait_application(tb_gpu_mark *mark);
void tb_gpu_drop_mark(tb_gpu_mark *mark);
/* Whether stream-ordered allocation (cudaMallocAsync) works on this device. */
int tb_gpu_stream_ordered(void);
/* Whether the call runs on the device the GPU path started on, with the lanes' memory. */
int tb_gpu_on_first_device(void);

/* Makes `device` (not the first) current for the calling thread's call, its state made on first use. */
cudaError_t tb_gpu_enter_device(int device);
void tb_gpu_leave_device(void);
/* After an error on a device other than the first: calls on it are refused from now on. */
void tb_gpu_device_failed(int device, cudaError_t status);

/* The calling thread's current context, saved at a call's start and put back at its end. */
typedef struct {
    void *context;
    int saved;
} tb_gpu_context;
void tb_gpu_context_save(tb_gpu_context *context);
void tb_gpu_context_restore(const tb_gpu_context *context);

/* Destroy a stream or event if made, and forget it: after a failed creation, a retry leaks nothing. */
static inline void tb_destroy_stream(cudaStream_t *stream)
{
    if (*stream)
        cudaStreamDestroy(*stream);
    *stream = NULL;
}
static inline void tb_destroy_event(cudaEvent_t *event)
{
    if (*event)
        cudaEventDestroy(*event);
    *event = NULL;
}

#endif /* TILEDBLAS_GPU_DEVICE_H */
