/* TILEDBLAS_VERBOSE=3: the stages of a pipelined call on one clock (pipeline_trace.c). */
#ifndef TILEDBLAS_GPU_PIPELINE_TRACE_H
#define TILEDBLAS_GPU_PIPELINE_TRACE_H

#include <stdint.h>

#include <cuda_runtime_api.h>

void tb_trace_pipeline_begin(cudaStream_t stream);
/* A GPU stage about to be enqueued on `stream` (what: e.g. "kernel panel", then its index); its id for
 * tb_trace_gpu_end (-1: not traced), which is due whether or not the enqueue succeeded. */
int tb_trace_gpu_begin(cudaStream_t stream, const char *what, int64_t panel);
void tb_trace_gpu_end(int id, cudaStream_t stream);
/* A host stage: tb_trace_host_end(tb_trace_host_begin(), ...) around it. */
double tb_trace_host_begin(void);
void tb_trace_host_end(double begin, const char *what, int64_t panel);
/* Once the call's work is done: prints the stages by start time. */
void tb_trace_pipeline_end(void);

#endif /* TILEDBLAS_GPU_PIPELINE_TRACE_H */
