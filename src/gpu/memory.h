/* Device workspace and pinned staging per lane, their budgets, and host-device copies (memory.c). */
#ifndef TILEDBLAS_GPU_MEMORY_H
#define TILEDBLAS_GPU_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

/* Floats an operand packed on the device takes: each starts 256-byte aligned, as cudaMalloc's own
 * allocations do, for the kernels' 128-bit loads. */
static inline int64_t tb_packed_floats(int64_t floats)
{
    return (floats + 63) / 64 * 64;
}

/* Floats of device memory the calling lane may hold at most (free memory and TILEDBLAS_DEVICE_MB). */
size_t tb_gpu_memory_budget(void);
/* Whether the lane's workspace may grow to `floats` (cheap while it is already that large). */
int tb_gpu_device_fits(size_t floats);
/* The lane's device workspace, grown to at least `floats`. */
cudaError_t tb_gpu_workspace(size_t floats, float **workspace);
/* Whether `lane` keeps its workspace between calls: all but the second lane under TILEDBLAS_DEVICE_MB. */
int tb_gpu_lane_keeps_workspace(int lane);
/* The lane's pinned staging for the host-operand paths, grown to at least `floats`. */
cudaError_t tb_gpu_pinned(size_t floats, float **pinned);
/* Floats of pinned staging allowed: a lane's share of TILEDBLAS_PINNED_MB (the calling one's, or `lane`'s). */
size_t tb_gpu_pinned_budget(void);
size_t tb_gpu_pinned_budget_of(int lane);
/* The lane's buffer for a copy of C taken before a kernel writes C in place, grown to at least `floats`;
 * out of memory where it and the workspace the call needs beside it (`beside` floats, at least what the
 * lane holds) would pass TILEDBLAS_DEVICE_MB. */
cudaError_t tb_gpu_c_copy(size_t floats, size_t beside, float **copy);
/* After a call: releases the lane's workspace (and copy of C) if more is held than is kept between calls. */
cudaError_t tb_gpu_release_large_workspace(void);
/* At a turn's start: no fit check has refused yet. */
void tb_gpu_budget_turn_begin(void);
/* The memory query's error if the turn's last fit check refused because the query failed; else cudaSuccess. */
cudaError_t tb_gpu_budget_refusal(void);

/* Copies a strided column-major block on `stream` (2D copies where the pitches allow). */
cudaError_t tb_gpu_copy_block(float *dst, int64_t dst_ld, const float *src, int64_t src_ld, int64_t rows,
                              int64_t cols, enum cudaMemcpyKind kind, cudaStream_t stream);

#endif /* TILEDBLAS_GPU_MEMORY_H */
