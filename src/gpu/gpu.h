/*
 * What the framework sees of the GPU: whether it is usable, where a pointer
 * lives, and one SGEMM on it. Nothing here runs before the first call that
 * wants the GPU; CUDA's own headers stay behind this one.
 */
#ifndef TILEDBLAS_GPU_GPU_H
#define TILEDBLAS_GPU_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "core/call.h"

typedef enum {
    TB_GPU_OK = 0,
    TB_GPU_NO_MEMORY,   /* this call does not fit; the GPU stays usable */
    TB_GPU_CALL_FAILED, /* this call failed on every GPU path it was tried on; the GPU stays usable */
    TB_GPU_FAILED,      /* the context is lost; the GPU (or the other device) is disabled */
    TB_GPU_SHUTDOWN     /* CUDA is being torn down with the exiting process: nothing more is computed */
} tb_gpu_status;

typedef enum {
    TB_MEM_HOST = 0, /* ordinary (pageable) host memory */
    TB_MEM_PINNED,   /* host memory pinned or registered with CUDA: the copy engines reach it directly */
    TB_MEM_MANAGED,  /* managed: the GPU uses it in place, the CPU can read it too */
    TB_MEM_DEVICE    /* device memory: only the GPU can read it */
} tb_mem_kind;

/* Which operands already live on the device (or are managed), or are pinned: bits of a mask. */
enum { TB_RESIDENT_A = 1, TB_RESIDENT_B = 2, TB_RESIDENT_C = 4 };

/* Whether CUDA was seen shutting down (fault.c): the process is exiting. */
int tb_fault_shutting_down(void);
/* Whether the calling thread is the exiting one, past the GPU path's exit handler (tb_fault_watch_exit):
 * CUDA is shut down or about to be. */
int tb_fault_exiting_here(void);
/* Work that uses the GPU or memory CUDA owns begins: 0 when the process is exiting and the calling thread
 * is not the exiting one (the work must not start, tb_fault_closed); else 1, and the work ends with
 * tb_fault_leave. The exit waits for work so begun, CUDA's teardown then taking its memory. */
int tb_fault_enter(void);
void tb_fault_leave(void);
int tb_fault_closed(void);
/* Whether the GPU path can run; initialises CUDA on first use. */
int tb_gpu_usable(void);
const char *tb_gpu_unusable_reason(void);
/* Whether [p, p + bytes) lies in one pinned or registered host allocation (p is pinned memory). */
int tb_gpu_pinned_span(const void *p, size_t bytes);
/* Whether the CUDA driver is loaded: without it no pointer can be a device pointer. */
int tb_process_has_cuda(void);
/* Where p lives and, unless host memory, on which device (ask only when tb_process_has_cuda()). */
tb_mem_kind tb_gpu_mem_kind(const void *p, int *device);
/* The device the GPU path started on, which host operands run on (valid once tb_gpu_usable()). */
int tb_gpu_device(void);
/* Whether calls on operands in memory of `device` can run there (valid once tb_gpu_usable()); -2, operands
 * on several devices: no. */
int tb_gpu_device_usable(int device);
/* Why calls on operands of `device` cannot run on the GPU (tb_gpu_device_usable said no). */
const char *tb_gpu_refusal(int device);

/*
 * What of C is final after a GPU path stopped: rows [0, rows_done) wholly, and
 * rows [rows_done, rows_done + block_rows) in columns [0, cols_done). Nothing
 * else has been written, or only where beta == 0 (computing it again gives
 * the same), unless c_unknown: C in device memory may hold part of the
 * product and could not be put back, so nothing can finish the call.
 * c_written: a kernel ran on C in device or managed memory, so that where the
 * call cannot be finished (the CPU cannot read C), C may hold part of the
 * product even with beta == 0.
 */
typedef struct tb_gpu_progress {
    int64_t rows_done, block_rows, cols_done;
    int c_unknown, c_written;
    int tensor;         /* the call ran (or was to run) on the tensor cores */
    int no_tensor_runs; /* of a call that chose them, no launch was large enough for the tensor cores */
} tb_gpu_progress;

/* The three below run between the caller's tb_fault_enter and tb_fault_leave, so that the exit waits for
 * them; a call refused a lane because the exit began returns TB_GPU_SHUTDOWN. */
/* Runs the call with the configured kernel; operands named in `resident` are used in place, those
 * named in `pinned` are copied to and from without staging. */
tb_gpu_status tb_gpu_sgemm(const tb_call *call, unsigned resident, unsigned pinned, tb_gpu_progress *progress);
/* The same on operands in memory of `device`, one the GPU path did not start on (tb_gpu_device_usable):
 * resident ones used in place, any others copied; the calling thread's current device is put back. */
tb_gpu_status tb_gpu_sgemm_on(int device, const tb_call *call, unsigned resident, tb_gpu_progress *progress);
/* Times the configured kernel on an n^3 problem in the workspace (CUDA events). */
tb_gpu_status tb_gpu_time_kernel(int n, double *seconds);

#endif /* TILEDBLAS_GPU_GPU_H */
