/* What a CUDA status means for the GPU path: retry, fall back, give the GPU up, or stop (fault.c). */
#ifndef TILEDBLAS_GPU_FAULT_H
#define TILEDBLAS_GPU_FAULT_H

#include <cuda_runtime_api.h>

#include "gpu/gpu.h" /* tb_gpu_status, tb_fault_shutting_down */

typedef enum {
    TB_FAULT_NONE = 0,
    TB_FAULT_NO_MEMORY, /* the call did not fit; later ones may */
    TB_FAULT_CALL,      /* this call failed, the context still works: another path may succeed */
    TB_FAULT_CONTEXT,   /* the context is lost (a sticky error): nothing more runs on this GPU */
    TB_FAULT_SHUTDOWN   /* CUDA is being torn down with the process */
} tb_fault;

/*
 * The fault behind `status`, asked in the call's context: a status that does
 * not say whether the context survived is followed by a probe of it, and a
 * per-call error is cleared so that a later launch check does not take it
 * for its own. Once shutdown has been seen, it is remembered.
 */
tb_fault tb_fault_of(cudaError_t status);
/* What a fault makes of the call, for the dispatcher (gpu.h). */
static inline tb_gpu_status tb_gpu_status_of(tb_fault fault)
{
    static const tb_gpu_status status[] = {
        [TB_FAULT_NONE] = TB_GPU_OK,          [TB_FAULT_NO_MEMORY] = TB_GPU_NO_MEMORY,
        [TB_FAULT_CALL] = TB_GPU_CALL_FAILED, [TB_FAULT_CONTEXT] = TB_GPU_FAILED,
        [TB_FAULT_SHUTDOWN] = TB_GPU_SHUTDOWN,
    };
    return status[fault];
}
/* Once CUDA has started: an exit handler that marks the exiting thread (tb_fault_exiting_here), closes the GPU
 * path to other threads (tb_fault_closed; calls waiting for a lane give up) and waits for their calls in
 * flight (tb_fault_enter, at most 30 s). Registered after CUDA's own start, it runs before CUDA's teardown
 * and before every handler registered earlier. */
void tb_fault_watch_exit(void);

#endif /* TILEDBLAS_GPU_FAULT_H */
