/*
 * CUDA's start-up can fail for a while and then succeed: the device held by
 * another process in exclusive mode, its memory full when the context is
 * made, the fabric manager not ready yet. Such a failure must not turn the GPU
 * off for the process's lifetime, nor may every call pay for a failing
 * start-up: it is tried again a few times, a second and then two after the
 * last failure. No driver, no device, a driver older than the runtime or a
 * stub do not change while the process runs: those are not tried again.
 */
#include "gpu/start_retry.h"

static int is_permanent(cudaError_t status)
{
    switch (status) {
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorStubLibrary:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorCompatNotSupportedOnDevice:
        return 1;
    default:
        return 0;
    }
}

/* 1 s after the first failure, 2 s after the second. */
double tb_gpu_start_retry_wait(int failures)
{
    return (double)(1 << (failures - 1));
}

tb_start_retry tb_gpu_start_retry(int failures, cudaError_t status, double seconds_since)
{
    if (is_permanent(status) || failures >= TB_GPU_START_ATTEMPTS)
        return TB_START_NEVER;
    return seconds_since >= tb_gpu_start_retry_wait(failures) ? TB_START_NOW : TB_START_LATER;
}
