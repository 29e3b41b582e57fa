/*
 * The one rule for small calls, which the tiny call's gate, the framework's
 * short path and its general path all apply: a call below the GPU floor
 * (TILEDBLAS_GPU_MIN_FLOPS, about 70^3 by default) never pays for the GPU.
 */
#ifndef TILEDBLAS_DISPATCH_SMALL_CALL_H
#define TILEDBLAS_DISPATCH_SMALL_CALL_H

#include "tiledblas.h"

/* Whether an M x N x K product is below the GPU floor. */
static inline int tb_below_gpu_floor(int m, int n, int k, double gpu_min_flops)
{
    return 2.0 * m * n * k < gpu_min_flops;
}

/*
 * Whether a call stays on the CPU BLAS without consulting the cost model or
 * starting CUDA: it reads A and B (M, N and K positive, alpha != 0; else only
 * C is scaled), it is below the GPU floor, and the configured path (`device`,
 * a tiledblas_device) is not the GPU forced. Operands in device memory are
 * another matter: the callers find those first, or know there are none.
 */
static inline int tb_small_call(int m, int n, int k, float alpha, double gpu_min_flops, int device)
{
    return m > 0 && n > 0 && k > 0 && alpha != 0.0f && tb_below_gpu_floor(m, n, k, gpu_min_flops) &&
           device != TILEDBLAS_DEVICE_GPU;
}

#endif /* TILEDBLAS_DISPATCH_SMALL_CALL_H */
