/* Parallel strided host-to-host copies into and out of pinned staging (host_copy.c). */
#ifndef TILEDBLAS_GPU_HOST_COPY_H
#define TILEDBLAS_GPU_HOST_COPY_H

#include <stdint.h>

/* Copies smaller than this are made by the calling thread alone (waking the pool costs more). */
#define TB_HOST_COPY_POOL_MIN_BYTES (512u << 10)

/* Threads the pool copies with, the caller included: TILEDBLAS_COPY_THREADS, else tb_usable_cpus(); at
 * most 16. The pool takes this many when it starts (at its first job), on the process's CPUs. */
int tb_host_copy_threads(void);
void tb_host_copy(float *dst, int64_t dst_ld, const float *src, int64_t src_ld, int64_t rows,
                  int64_t cols);
/* dst = src + beta * dst, element-wise (the host side of C = alpha*op(A)*op(B) + beta*C). */
void tb_host_combine(float *dst, int64_t dst_ld, const float *src, int64_t src_ld, int64_t rows,
                     int64_t cols, float beta);
/* Around a call that hands the pool several jobs in a row (1 before, 0 after): its threads are woken
 * at once and spin between the jobs instead of sleeping. */
void tb_host_copy_burst(int begin);

#endif /* TILEDBLAS_GPU_HOST_COPY_H */
