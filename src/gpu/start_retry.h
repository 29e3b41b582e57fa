/* When CUDA's start-up, having failed, is tried again (start_retry.c). */
#ifndef TILEDBLAS_GPU_START_RETRY_H
#define TILEDBLAS_GPU_START_RETRY_H

#include <driver_types.h>

/* Attempts at most, the first included. */
#define TB_GPU_START_ATTEMPTS 3

typedef enum {
    TB_START_NOW,   /* try again now */
    TB_START_LATER, /* not yet: too soon after the last failure */
    TB_START_NEVER  /* a permanent condition, or no attempt left */
} tb_start_retry;

/* Seconds after the last of `failures` failed attempts (at least one) before the next may be made. */
double tb_gpu_start_retry_wait(int failures);
/* After `failures` failed attempts (at least one), the last with `status` and `seconds_since` it. */
tb_start_retry tb_gpu_start_retry(int failures, cudaError_t status, double seconds_since);

#endif /* TILEDBLAS_GPU_START_RETRY_H */
